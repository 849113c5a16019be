import type { TestEnv } from './test-env.js';

export interface PageResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
  /** The `Location` of a redirect. */
  location: string | undefined;
}

export type FormFields = Record<string, string | string[]>;

/** The CSRF token of the (first) form on a page. */
export function csrfFrom(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF token on the page');
  return match[1]!;
}

/** Text of an element's content with tags removed and entities for the common characters undone. */
export function textOf(html: string): string {
  return html
    .replace(/<wbr\s*\/?>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&mdash;/g, '—')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The text of the page's notices (role="status" boxes), joined. */
export function noticeOf(html: string): string {
  return [...html.matchAll(/<div class="notice" role="status">([\s\S]*?)<\/div>/g)].map((m) => textOf(m[1]!)).join(' ');
}

/** The rows of the table with this caption, as text per row. */
export function tableRows(html: string, caption: string): string[] {
  const table = new RegExp(`<table><caption[^>]*>${caption}</caption>([\\s\\S]*?)</table>`).exec(html);
  if (!table) throw new Error(`no table "${caption}"`);
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table[1]!)![1]!;
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => textOf(m[1]!));
}

/**
 * A browser stand-in over `app.inject`: a cookie jar, form posts (urlencoded, like a browser without
 * JavaScript) that carry the CSRF token of the last page it loaded, and no redirect following.
 */
export class DashboardClient {
  readonly cookies = new Map<string, string>();
  lastCsrf: string | null = null;
  /** The session `signInAs` started. */
  sessionId: string | null = null;

  /** A client already signed in as the user. */
  static async signedIn(env: TestEnv, orgId: string, userId: string): Promise<DashboardClient> {
    const client = new DashboardClient(env);
    await client.signInAs(orgId, userId);
    return client;
  }

  /** `remoteAddress`: the client address the service sees (sign-in limits count per address). */
  constructor(
    private readonly env: TestEnv,
    private readonly options: { remoteAddress?: string } = {},
  ) {}

  private cookieHeader(): string | undefined {
    if (this.cookies.size === 0) return undefined;
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private remember(setCookie: string | string[] | number | undefined): void {
    const list = setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [String(setCookie)];
    for (const line of list) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(method: string, url: string, options: { payload?: string; headers?: Record<string, string> } = {}): Promise<PageResponse> {
    const headers: Record<string, string> = { ...options.headers };
    const cookie = this.cookieHeader();
    if (cookie) headers.cookie = cookie;
    const res = await this.env.app.inject({ method: method as 'GET', url, headers, payload: options.payload, ...(this.options.remoteAddress ? { remoteAddress: this.options.remoteAddress } : {}) });
    this.remember(res.headers['set-cookie']);
    const location = res.headers.location === undefined ? undefined : String(res.headers.location);
    const text = res.body;
    const token = /name="_csrf" value="([^"]+)"/.exec(text);
    if (token) this.lastCsrf = token[1]!;
    return { status: res.statusCode, headers: res.headers, text, location };
  }

  /** The page a 303 leads to (where the session's one-time notice, refusal or secret is shown, once). */
  async follow(res: PageResponse): Promise<PageResponse> {
    if (res.status !== 303 || !res.location) throw new Error(`expected a 303, got ${res.status}`);
    return this.get(res.location);
  }

  get(url: string, headers?: Record<string, string>): Promise<PageResponse> {
    return this.request('GET', url, { headers });
  }

  /** Posts a form; `_csrf` defaults to the token of the last page loaded (pass `csrf: null` to send none). */
  post(url: string, fields: FormFields = {}, options: { csrf?: string | null; headers?: Record<string, string> } = {}): Promise<PageResponse> {
    const body = new URLSearchParams();
    const csrf = options.csrf === undefined ? this.lastCsrf : options.csrf;
    if (csrf !== null) body.append('_csrf', csrf);
    for (const [name, value] of Object.entries(fields)) {
      for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
    }
    return this.request('POST', url, {
      payload: body.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...options.headers },
    });
  }

  /** Signs in as an existing active user without the login form (a session made by the service itself). */
  async signInAs(orgId: string, userId: string): Promise<void> {
    const { store, services } = this.env.container;
    const user = await store.repos.users.findById(orgId, userId);
    if (!user) throw new Error(`no user ${userId}`);
    const started = await store.transaction((repos) =>
      services.sessions.start(repos, user, { source: 'dashboard', ip: '127.0.0.1', userAgent: 'test', requestId: null }, 'password'),
    );
    const name = this.env.config.publicBaseUrl.startsWith('https:') ? '__Host-ws_session' : 'ws_session';
    this.cookies.set(name, started.token);
    this.sessionId = started.sessionId;
  }
}

/** The status of the page an invitation e-mail links to, following its redirect to the dashboard's form. */
export async function invitationPageStatus(env: TestEnv, token: string): Promise<number> {
  let res = await env.request('GET', `/invitations/${token}`);
  if (res.status === 303 && typeof res.headers.location === 'string') res = await env.request('GET', res.headers.location);
  return res.status;
}
