import { createHash } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { DashboardClient, type PageResponse } from './dashboard.js';
import type { TestEnv } from './test-env.js';

export const REDIRECT_URI = 'http://127.0.0.1:8976/callback';

/** `fetch` over the app in process (`app.inject`): what a client library sends reaches the real routes, no port needed. */
export function injectFetch(env: TestEnv): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const request = input instanceof Request ? input : new Request(input, init);
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : Buffer.from(await request.arrayBuffer());
    const res = await env.app.inject({ method: request.method as 'GET', url: url.pathname + url.search, headers, payload: body && body.length > 0 ? body : undefined });
    const out = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [String(value)]) out.append(name, v);
    }
    const status = res.statusCode;
    return new Response(status === 204 || status === 304 ? null : new Uint8Array(res.rawPayload), { status, headers: out });
  }) as typeof fetch;
}

/** oauth4webapi's options for the in-process server (plain http, our fetch). */
export const clientOptions = (env: TestEnv) => ({ [oauth.allowInsecureRequests]: true, [oauth.customFetch]: injectFetch(env) });

export async function discover(env: TestEnv): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(env.config.publicBaseUrl);
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...clientOptions(env) });
  return oauth.processDiscoveryResponse(issuer, response);
}

export async function register(env: TestEnv, as: oauth.AuthorizationServer, metadata: Partial<oauth.OmitSymbolProperties<oauth.Client>> = {}): Promise<oauth.Client> {
  const response = await oauth.dynamicClientRegistrationRequest(
    as,
    { client_name: 'Claude', redirect_uris: [REDIRECT_URI], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', ...metadata },
    clientOptions(env),
  );
  return oauth.processDynamicClientRegistrationResponse(response);
}

export interface AuthorizationRequest {
  url: URL;
  verifier: string;
  state: string;
}

/** An authorization request as an MCP client builds it: PKCE S256, the resource, state. */
export function authorizationRequest(as: oauth.AuthorizationServer, client: oauth.Client, params: { scope?: string; resource?: string | null; redirectUri?: string; method?: string; challenge?: string } = {}): AuthorizationRequest {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', client.client_id);
  url.searchParams.set('redirect_uri', params.redirectUri ?? REDIRECT_URI);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', params.challenge ?? createHash('sha256').update(verifier).digest('base64url'));
  url.searchParams.set('code_challenge_method', params.method ?? 'S256');
  if (params.scope !== undefined) url.searchParams.set('scope', params.scope);
  if (params.resource !== null) url.searchParams.set('resource', params.resource ?? `${as.issuer}/mcp`);
  return { url, verifier, state };
}

/** The person's browser: follows the server's redirects to the consent page, and through it on a decision. */
export async function visit(browser: DashboardClient, url: URL | string): Promise<PageResponse> {
  const target = typeof url === 'string' ? new URL(url, 'http://x') : url;
  return browser.get(target.pathname + target.search);
}

/** Follows redirects within the service until one leaves it (to the app) or a page is shown. */
export async function follow(browser: DashboardClient, base: string, first: { status: number; location?: string; text: string }) {
  let res = first;
  for (let hops = 0; hops < 10 && res.status >= 300 && res.status < 400 && res.location; hops++) {
    const next = new URL(res.location, base);
    if (next.origin !== new URL(base).origin) return { ...res, left: next };
    res = await browser.get(next.pathname + next.search);
  }
  return { ...res, left: null as URL | null };
}

/** Signs the person in, opens the consent page and answers it; the URL the browser is sent back to the app with. */
export async function consent(env: TestEnv, browser: DashboardClient, request: AuthorizationRequest, decision: 'allow' | 'deny' = 'allow'): Promise<URL> {
  const base = env.config.publicBaseUrl;
  const page = await follow(browser, base, await visit(browser, request.url));
  if (page.left) return page.left;
  if (page.status !== 200 || !/Allow|Deny/.test(page.text)) throw new Error(`expected the consent page, got ${page.status}: ${page.text.slice(0, 300)}`);
  const uid = /action="\/dashboard\/authorize\/([^"]+)"/.exec(page.text)?.[1];
  if (!uid) throw new Error('no consent form');
  const answered = await follow(browser, base, await browser.post(`/dashboard/authorize/${uid}`, { decision }));
  if (!answered.left) throw new Error(`expected a redirect to the app, got ${answered.status}: ${answered.text.slice(0, 300)}`);
  return answered.left;
}

/** The whole flow to tokens: register, authorize, consent as `userId`, exchange the code. */
export async function connectApp(env: TestEnv, orgId: string, userId: string, params: { scope?: string; resource?: string; name?: string } = {}) {
  const as = await discover(env);
  const client = await register(env, as, params.name ? { client_name: params.name } : {});
  const browser = await DashboardClient.signedIn(env, orgId, userId);
  const request = authorizationRequest(as, client, { scope: params.scope ?? 'full', ...(params.resource ? { resource: params.resource } : {}) });
  const back = await consent(env, browser, request);
  const tokens = await exchange(env, as, client, request, back);
  return { as, client, browser, tokens };
}

export async function exchange(env: TestEnv, as: oauth.AuthorizationServer, client: oauth.Client, request: AuthorizationRequest, back: URL, options: { verifier?: string; resource?: string } = {}) {
  const params = oauth.validateAuthResponse(as, client, back, request.state);
  const resource = options.resource ?? request.url.searchParams.get('resource');
  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT_URI, options.verifier ?? request.verifier, {
    ...clientOptions(env),
    ...(resource ? { additionalParameters: { resource } } : {}),
  });
  return oauth.processAuthorizationCodeResponse(as, client, response);
}

export async function refresh(env: TestEnv, as: oauth.AuthorizationServer, client: oauth.Client, refreshToken: string) {
  const response = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, clientOptions(env));
  return oauth.processRefreshTokenResponse(as, client, response);
}

/** The first message of every MCP client, and the Accept header the transport requires. */
export const MCP_INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
export const MCP_ACCEPT = 'application/json, text/event-stream';

/** An MCP `initialize` with this credential, through the app: 200 while it works, 401 once it does not. */
export function mcpInitialize(env: TestEnv, token: string) {
  return env.request('POST', '/mcp', { key: token, headers: { accept: MCP_ACCEPT }, body: MCP_INITIALIZE });
}
