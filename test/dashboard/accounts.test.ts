import { pino } from 'pino';
import type { Browser as Chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, sha256Hex, verifyPassword } from '../../src/lib/crypto.js';
import { cliActor } from '../../src/services/access/actor.js';
import { SESSION_IDLE_MS } from '../../src/services/identity/sessions-service.js';
import { launchChromium } from '../helpers/browser.js';
import { DashboardClient, textOf, type PageResponse } from '../helpers/dashboard.js';
import { decodeQuotedPrintable, latestInvitationToken, outboxMessages } from '../helpers/mail-outbox.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const PASSWORD = 'correct horse battery';
const INCORRECT = 'Email or password is incorrect';
const TOO_MANY = /Too many attempts; try again in \d+ minutes?/;

let addressCounter = 0;

/**
 * A browser with its own client address (X-Forwarded-For, TRUST_PROXY on), so the per-address sign-in
 * limit of one test never reaches another.
 */
class Browser extends DashboardClient {
  readonly ip: string;

  constructor(env: TestEnv) {
    super(env);
    const n = ++addressCounter;
    this.ip = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  }

  override request(method: string, url: string, options: { payload?: string; headers?: Record<string, string> } = {}): Promise<PageResponse> {
    return super.request(method, url, { ...options, headers: { 'x-forwarded-for': this.ip, ...options.headers } });
  }

  /** The sign-in form as a person fills it in: the page first (its CSRF token), then the post. */
  async signIn(email: string, password: string, next?: string): Promise<PageResponse> {
    const page = await this.get(next === undefined ? '/dashboard/login' : `/dashboard/login?next=${encodeURIComponent(next)}`);
    expect(page.status).toBe(200);
    return this.post('/dashboard/login', { email, password, ...(next === undefined ? {} : { next }) });
  }
}

function setCookies(res: PageResponse): string[] {
  const header = res.headers['set-cookie'];
  return header === undefined ? [] : Array.isArray(header) ? header : [String(header)];
}

function sessionCookie(res: PageResponse, name = 'ws_session'): string | undefined {
  return setCookies(res).find((line) => line.startsWith(`${name}=`));
}

/** A link's token out of a `.../dashboard/password/<token>` URL. */
const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);

describe.each(testDialects())('accounts on the dashboard (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  const clock = new ManualClock();
  let counter = 0;

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock, env: { TRUST_PROXY: 'true', PUBLIC_BASE_URL: 'http://ws.test' } });
    org = await env.createOrg('Acme');
    await givePassword(org.id, org.ownerId, PASSWORD);
  });
  afterAll(async () => env?.close());

  const db = () => env.container.database.db;

  async function givePassword(orgId: string, userId: string, password: string): Promise<void> {
    await env.container.store.repos.users.update(orgId, userId, { password_hash: await hashPassword(password) });
  }

  /** An active member with a password; returns their id and e-mail. */
  async function newMember(role: 'owner' | 'admin' | 'member' | 'viewer' = 'member', orgId = org.id, email = `person${++counter}@example.com`) {
    const name = `Person ${counter}`;
    const user = await env.container.services.admin.addUser({ orgId, email, role, name });
    await givePassword(orgId, user.id, PASSWORD);
    return { id: user.id, email, name };
  }

  async function sessionRows(userId: string) {
    return db().selectFrom('sessions').selectAll().where('user_id', '=', userId).execute();
  }

  async function auditRows(orgId: string, action: string) {
    return db().selectFrom('audit_log').selectAll().where('org_id', '=', orgId).where('action', '=', action).orderBy('seq').execute();
  }

  async function passwordHash(userId: string): Promise<string | null> {
    const row = await db().selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirstOrThrow();
    return row.password_hash;
  }

  async function signedIn(browser: Browser): Promise<boolean> {
    const res = await browser.get('/dashboard');
    if (res.status === 200) return true;
    expect(res.status).toBe(303);
    expect(res.location).toMatch(/^\/dashboard\/login/);
    return false;
  }

  describe('signing in', () => {
    it('shows the form with its labelled fields, button and link', async () => {
      const browser = new Browser(env);
      const page = await browser.get('/dashboard/login');
      expect(page.status).toBe(200);
      expect(page.text).toContain('<label for="email">Email</label>');
      expect(page.text).toContain('<label for="password">Password</label>');
      expect(page.text).toMatch(/<button type="submit"[^>]*>Sign in<\/button>/);
      expect(page.text).toContain('<a href="/dashboard/forgot-password">Forgot password?</a>');
      expect(page.text).toContain('<title>Sign in · Workspace</title>');
      expect(page.headers['referrer-policy']).toBe('no-referrer');
    });

    it('sets a new HttpOnly, SameSite=Lax session cookie at every sign-in, stored only as its hash', async () => {
      const member = await newMember();
      const first = new Browser(env);
      const res = await first.signIn(member.email, PASSWORD);
      expect(res.status).toBe(303);
      expect(res.location).toBe('/dashboard');
      const cookie = sessionCookie(res)!;
      expect(cookie).toBeDefined();
      expect(cookie).toMatch(/; HttpOnly/);
      expect(cookie).toMatch(/; SameSite=Lax/);
      expect(cookie).toMatch(/; Path=\/(;|$)/);
      expect(cookie).not.toMatch(/; Secure/);
      const token = first.cookies.get('ws_session')!;
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 random bits

      const rows = await sessionRows(member.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.token_hash).toBe(sha256Hex(token));
      expect(JSON.stringify(rows)).not.toContain(token);
      expect(await signedIn(first)).toBe(true);

      const second = new Browser(env);
      expect((await second.signIn(member.email.toUpperCase(), PASSWORD)).status).toBe(303);
      expect(second.cookies.get('ws_session')).not.toBe(token);
      expect(await sessionRows(member.id)).toHaveLength(2);

      const audit = await auditRows(org.id, 'user.signed_in');
      const mine = audit.filter((row) => row.actor_id === member.id);
      expect(mine).toHaveLength(2);
      expect(mine[0]).toMatchObject({ source: 'dashboard', outcome: 'success', ip: first.ip, target_id: member.id, actor_label: member.email });
      expect(mine.map((row) => row.session_id).sort()).toEqual((await sessionRows(member.id)).map((row) => row.id).sort());
    });

    it('answers a wrong password and an unknown e-mail with the same text and status, keeping the e-mail', async () => {
      const member = await newMember();
      const failedBefore = (await auditRows(org.id, 'user.sign_in_failed')).length;
      const results: PageResponse[] = [];
      for (const [email, password] of [
        [member.email, 'not the password'],
        ['nobody-at-all@example.com', 'not the password'],
      ] as const) {
        const browser = new Browser(env);
        const res = await browser.signIn(email, password);
        expect(res.status).toBe(401);
        expect(sessionCookie(res)).toBeUndefined();
        expect(res.text).toContain('role="alert"');
        expect(res.text).toContain(`value="${email}"`);
        expect(res.text).not.toContain('not the password');
        results.push(res);
      }
      const message = (res: PageResponse) => /<div class="error-summary"[\s\S]*?<\/div>/.exec(res.text)![0];
      expect(textOf(message(results[0]!))).toContain(INCORRECT);
      expect(message(results[0]!)).toBe(message(results[1]!));
      expect(await sessionRows(member.id)).toEqual([]);

      // The failure is audited in the organisation the e-mail belongs to, as that user.
      const failed = await auditRows(org.id, 'user.sign_in_failed');
      expect(failed).toHaveLength(failedBefore + 1);
      expect(failed.at(-1)).toMatchObject({ actor_id: member.id, outcome: 'failure', source: 'dashboard', target_id: member.id });
    });

    it('asks for both fields before checking anything', async () => {
      const browser = new Browser(env);
      await browser.get('/dashboard/login');
      const res = await browser.post('/dashboard/login', { email: '', password: '' });
      expect(res.status).toBe(400);
      expect(textOf(res.text)).toContain('Email is required');
      expect(textOf(res.text)).toContain('Password is required');
      expect(res.text).toContain('aria-invalid="true"');
    });

    it('refuses the sixth attempt for one e-mail within 15 minutes, even with the right password', async () => {
      const member = await newMember();
      for (let i = 0; i < 5; i++) {
        // A new address each time: only the per-e-mail limit is at work.
        expect((await new Browser(env).signIn(member.email, `wrong password ${i}`)).status).toBe(401);
      }
      const browser = new Browser(env);
      const refused = await browser.signIn(member.email, PASSWORD);
      expect(refused.status).toBe(429);
      expect(textOf(refused.text)).toMatch(TOO_MANY);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(sessionCookie(refused)).toBeUndefined();
      expect(await sessionRows(member.id)).toEqual([]);

      clock.advance(15 * MINUTE);
      expect((await browser.signIn(member.email, PASSWORD)).status).toBe(303);
    });

    it('refuses the eleventh attempt from one address within 15 minutes, whatever the e-mails', async () => {
      const member = await newMember();
      const browser = new Browser(env);
      for (let i = 0; i < 10; i++) expect((await browser.signIn(`stranger${i}-${counter}@example.com`, 'guess')).status).toBe(401);
      const refused = await browser.signIn(member.email, PASSWORD);
      expect(refused.status).toBe(429);
      expect(textOf(refused.text)).toMatch(TOO_MANY);
      expect(refused.headers['retry-after']).toBeDefined();
      expect(await sessionRows(member.id)).toEqual([]);
      // Another address is not affected.
      expect((await new Browser(env).signIn(member.email, PASSWORD)).status).toBe(303);
    });

    it('goes back to a dashboard path after sign-in, and nowhere else', async () => {
      const member = await newMember();
      const good = new Browser(env);
      const page = await good.get(`/dashboard/login?next=${encodeURIComponent('/dashboard/members?x=1')}`);
      expect(page.text).toContain('name="next" value="/dashboard/members?x=1"');
      const res = await good.post('/dashboard/login', { email: member.email, password: PASSWORD, next: '/dashboard/members?x=1' });
      expect(res.location).toBe('/dashboard/members?x=1');

      for (const next of ['//evil.com', 'https://evil.com', '/dashboard\\@evil', '/v1/projects', '/dashboardx', 'javascript:alert(1)']) {
        const browser = new Browser(env);
        const shown = await browser.get(`/dashboard/login?next=${encodeURIComponent(next)}`);
        expect(shown.status).toBe(200);
        expect(shown.text).not.toContain('name="next"');
        const signed = await browser.post('/dashboard/login', { email: member.email, password: PASSWORD, next });
        expect(signed.status, next).toBe(303);
        expect(signed.location, next).toBe('/dashboard');
      }
    });

    it('sends a signed-in visitor of the sign-in page to the dashboard, and says when one signed out', async () => {
      const member = await newMember();
      const browser = new Browser(env);
      await browser.signIn(member.email, PASSWORD);
      const again = await browser.get('/dashboard/login');
      expect(again.status).toBe(303);
      expect(again.location).toBe('/dashboard');

      await browser.get('/dashboard');
      const out = await browser.post('/dashboard/logout');
      expect(out.location).toBe('/dashboard/login?signed_out=1');
      const page = await browser.get(out.location!);
      expect(page.status).toBe(200);
      expect(textOf(page.text)).toContain('You have signed out.');
      expect(await signedIn(browser)).toBe(false);
    });

    it('refuses a sign-in form without its CSRF token or from another site, signing nobody in', async () => {
      const member = await newMember();
      const browser = new Browser(env);
      await browser.get('/dashboard/login');
      const bare = await browser.post('/dashboard/login', { email: member.email, password: PASSWORD }, { csrf: null });
      expect(bare.status).toBe(403);
      expect(sessionCookie(bare)).toBeUndefined();
      const forged = await browser.post('/dashboard/login', { email: member.email, password: PASSWORD }, { csrf: 'forged-token' });
      expect(forged.status).toBe(403);
      const crossSite = await browser.post('/dashboard/login', { email: member.email, password: PASSWORD }, { headers: { origin: 'https://evil.example' } });
      expect(crossSite.status).toBe(403);
      const fetchSite = await browser.post('/dashboard/login', { email: member.email, password: PASSWORD }, { headers: { 'sec-fetch-site': 'cross-site' } });
      expect(fetchSite.status).toBe(403);
      const nullOrigin = await browser.post('/dashboard/login', { email: member.email, password: PASSWORD }, { headers: { origin: 'null', 'sec-fetch-site': 'cross-site' } });
      expect(nullOrigin.status).toBe(403);
      // A browser that never loaded the form has no pre-session secret at all.
      const stranger = new Browser(env);
      expect((await stranger.post('/dashboard/login', { email: member.email, password: PASSWORD }, { csrf: browser.lastCsrf })).status).toBe(403);
      expect(await sessionRows(member.id)).toEqual([]);

      // Under our `Referrer-Policy: no-referrer` browsers send `Origin: null` with our own forms: accepted
      // when the browser says the request is same-origin and the token matches.
      const own = await browser.post('/dashboard/login', { email: member.email, password: PASSWORD }, { headers: { origin: 'null', 'sec-fetch-site': 'same-origin' } });
      expect(own.status).toBe(303);
    });

    it('offers a choice when the password matches accounts in several organisations', async () => {
      const email = `multi${++counter}@example.com`;
      const zeta = await env.createOrg('Zeta & Sons');
      const alpha = await env.createOrg('Alpha <Labs>');
      const other = await env.createOrg('Other password');
      const inZeta = await newMember('member', zeta.id, email);
      const inAlpha = await newMember('admin', alpha.id, email.toUpperCase());
      const inOther = await newMember('viewer', other.id, email);
      await givePassword(other.id, inOther.id, 'a different password');

      const browser = new Browser(env);
      const page = await browser.signIn(email, PASSWORD);
      expect(page.status).toBe(200);
      expect(sessionCookie(page)).toBeUndefined();
      expect(page.text).toContain('<h1>Choose an organisation</h1>');
      const buttons = [...page.text.matchAll(/<button type="submit"[^>]*>([^<]*)<\/button>/g)].map((m) => textOf(m[1]!));
      expect(buttons).toEqual(['Alpha <Labs>', 'Zeta & Sons']);
      expect(page.text).not.toContain('<Labs>');
      const token = /name="token" value="([^"]+)"/.exec(page.text)![1]!;

      const chosen = await browser.post('/dashboard/login/choose', { token, organization: zeta.id });
      expect(chosen.status).toBe(303);
      expect(chosen.location).toBe('/dashboard');
      expect(await sessionRows(inZeta.id)).toHaveLength(1);
      expect(await sessionRows(inAlpha.id)).toEqual([]);
      const account = await browser.get('/dashboard/account');
      expect(textOf(account.text)).toContain('Zeta & Sons');

      // Single use: the same choice again, for either organisation, is refused.
      const again = new Browser(env);
      await again.get('/dashboard/login');
      const reused = await again.post('/dashboard/login/choose', { token, organization: alpha.id });
      expect(reused.status).toBe(404);
      expect(sessionCookie(reused)).toBeUndefined();

      // An organisation the password did not match is not on offer.
      const second = await new Browser(env).signIn(email, PASSWORD);
      const secondToken = /name="token" value="([^"]+)"/.exec(second.text)![1]!;
      const late = new Browser(env);
      await late.get('/dashboard/login');
      expect((await late.post('/dashboard/login/choose', { token: secondToken, organization: other.id })).status).toBe(404);
      // And the choice lasts 5 minutes.
      clock.advance(5 * MINUTE);
      const expired = await late.post('/dashboard/login/choose', { token: secondToken, organization: alpha.id });
      expect(expired.status).toBe(410);
      expect(await sessionRows(inAlpha.id)).toEqual([]);
    });
  });

  describe('sessions', () => {
    it('ends after 2 hours without a request', async () => {
      const member = await newMember();
      const browser = new Browser(env);
      await browser.signIn(member.email, PASSWORD);
      clock.advance(SESSION_IDLE_MS - MINUTE);
      expect(await signedIn(browser)).toBe(true);
      clock.advance(SESSION_IDLE_MS);
      const res = await browser.get('/dashboard/account');
      expect(res.status).toBe(303);
      expect(res.location).toBe(`/dashboard/login?next=${encodeURIComponent('/dashboard/account')}`);
      expect(await sessionRows(member.id)).toEqual([]);
    });

    it('stays alive with a request every hour until 12 hours after sign-in', async () => {
      const member = await newMember();
      const browser = new Browser(env);
      await browser.signIn(member.email, PASSWORD);
      for (let hour = 1; hour <= 11; hour++) {
        clock.advance(HOUR);
        expect(await signedIn(browser), `hour ${hour}`).toBe(true);
      }
      clock.advance(HOUR);
      expect(await signedIn(browser)).toBe(false);
    });

    it("stops working once the user is removed", async () => {
      const member = await newMember();
      const browser = new Browser(env);
      await browser.signIn(member.email, PASSWORD);
      expect(await signedIn(browser)).toBe(true);
      await env.container.services.users.remove(cliActor(org.id), member.id);
      expect(await signedIn(browser)).toBe(false);
    });

    it('reads the role on every request', async () => {
      const admin = await newMember('admin');
      const browser = new Browser(env);
      await browser.signIn(admin.email, PASSWORD);
      const before = await browser.get('/dashboard');
      expect(before.text).toContain('href="/dashboard/audit-log"');
      await env.container.services.users.changeRole(cliActor(org.id), admin.id, 'viewer');
      const after = await browser.get('/dashboard');
      expect(after.status).toBe(200);
      expect(after.text).not.toContain('href="/dashboard/audit-log"');
      expect(textOf(after.text)).toContain('· viewer');
    });
  });

  describe('password links', () => {
    async function link(userId: string, purpose: 'setup' | 'reset' = 'setup') {
      return env.container.services.accounts.issuePasswordLink(cliActor(org.id), userId, purpose);
    }

    it('sets the password from a setup link and signs in; the link then is dead', async () => {
      const member = await newMember();
      const other = new Browser(env);
      await other.signIn(member.email, PASSWORD);
      const issued = await link(member.id);
      expect(issued.url).toMatch(/^http:\/\/ws\.test\/dashboard\/password\/[A-Za-z0-9_-]{43}$/);
      expect(Date.parse(issued.expires_at) - clock.now()).toBe(72 * HOUR);
      const path = new URL(issued.url).pathname;
      const row = await db().selectFrom('auth_tokens').selectAll().where('user_id', '=', member.id).executeTakeFirstOrThrow();
      expect(row.token_hash).toBe(sha256Hex(tokenOf(issued.url)));

      const browser = new Browser(env);
      const page = await browser.get(path);
      expect(page.status).toBe(200);
      expect(page.headers['referrer-policy']).toBe('no-referrer');
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.text).toContain('<label for="password">New password</label>');
      expect(page.text).toMatch(/<button type="submit"[^>]*>Save password<\/button>/);
      expect(page.text).not.toContain(tokenOf(issued.url));

      // Code points, not UTF-16 units: seven keys are 14 units but still too short.
      const emoji = await browser.post(path, { password: '\u{1F511}'.repeat(7) });
      expect(emoji.status).toBe(400);
      expect(textOf(emoji.text)).toContain('New password must be at least 8 characters');
      const short = await browser.post(path, { password: 'short' });
      expect(short.status).toBe(400);
      expect(textOf(short.text)).toContain('New password must be at least 8 characters');
      expect(sessionCookie(short)).toBeUndefined();

      const saved = await browser.post(path, { password: 'a brand new password' });
      expect(saved.status).toBe(303);
      expect(saved.location).toBe('/dashboard');
      expect(sessionCookie(saved)).toBeDefined();
      expect(await signedIn(browser)).toBe(true);
      expect(await signedIn(other)).toBe(false); // every other session ended
      expect(await verifyPassword('a brand new password', (await passwordHash(member.id))!)).toBe(true);
      expect(await auditRows(org.id, 'user.password_changed')).toEqual(
        expect.arrayContaining([expect.objectContaining({ actor_id: member.id, target_id: member.id, changes: null })]),
      );

      const used = await new Browser(env).get(path);
      expect(used.status).toBe(404);
      expect(used.headers['content-type']).toMatch(/^text\/html/);
      const usedPost = await browser.post(path, { password: 'yet another password' });
      expect(usedPost.status).toBe(404);
      expect(await verifyPassword('a brand new password', (await passwordHash(member.id))!)).toBe(true);
    });

    it('kills an older link when a newer one is made', async () => {
      const member = await newMember();
      const older = new URL((await link(member.id)).url).pathname;
      const newer = new URL((await link(member.id, 'reset')).url).pathname;
      const browser = new Browser(env);
      expect((await browser.get(older)).status).toBe(404);
      expect((await browser.get(newer)).status).toBe(200);
    });

    it('answers 410 for an expired link and 404 for an unknown one', async () => {
      const member = await newMember();
      const reset = new URL((await link(member.id, 'reset')).url).pathname;
      const browser = new Browser(env);
      clock.advance(HOUR - 1);
      expect((await browser.get(reset)).status).toBe(200);
      clock.advance(1);
      const expired = await browser.get(reset);
      expect(expired.status).toBe(410);
      expect(textOf(expired.text)).toContain('This link has expired');
      expect((await browser.post(reset, { password: 'too late for this' })).status).toBe(410);

      const setup = new URL((await link(member.id, 'setup')).url).pathname;
      clock.advance(72 * HOUR - 1);
      expect((await browser.get(setup)).status).toBe(200);
      clock.advance(1);
      expect((await browser.get(setup)).status).toBe(410);

      for (const token of ['nope', 'A'.repeat(43), 'x'.repeat(300)]) expect((await browser.get(`/dashboard/password/${token}`)).status).toBe(404);
    });

    it('keeps the token out of the request log', async () => {
      const lines: string[] = [];
      const logged = await createTestEnv(dialect, { logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }) });
      try {
        const loggedOrg = await logged.createOrg('Logged');
        const issued = await logged.container.services.accounts.issuePasswordLink(cliActor(loggedOrg.id), loggedOrg.ownerId, 'setup');
        const path = new URL(issued.url).pathname;
        const browser = new DashboardClient(logged);
        expect((await browser.get(path)).status).toBe(200);
        expect((await browser.post(path, { password: 'logged but not the link' })).status).toBe(303);
        expect(lines.join('')).toContain('/dashboard/password/[redacted]');
        expect(lines.join('')).not.toContain(tokenOf(issued.url));
      } finally {
        await logged.close();
      }
    });
  });

  describe('forgot password', () => {
    it('e-mails a working 1-hour link, and answers the same for an unknown address', async () => {
      const member = await newMember();
      const before = outboxMessages(env.dataDir).length;
      const browser = new Browser(env);
      const form = await browser.get('/dashboard/forgot-password');
      expect(form.text).toContain('<label for="email">Email</label>');
      expect(form.text).toMatch(/<button type="submit"[^>]*>Send reset link<\/button>/);

      const answers: string[] = [];
      for (const email of ['no-such-person@example.com', member.email]) {
        const res = await browser.post('/dashboard/forgot-password', { email });
        expect(res.status).toBe(303);
        const page = await browser.get(res.location!);
        expect(page.status).toBe(200);
        answers.push(textOf(/<div class="notice"[\s\S]*?<\/div>/.exec(page.text)![0]));
      }
      expect(answers[0]).toBe('If that address belongs to an account, a link is on its way');
      expect(answers[1]).toBe(answers[0]);

      // Mail goes out after the answer; the unknown address was asked first and got none.
      await expect.poll(() => outboxMessages(env.dataDir).length).toBe(before + 1);
      const raw = decodeQuotedPrintable(outboxMessages(env.dataDir).at(-1)!.raw);
      expect(raw).toMatch(new RegExp(`^To: ${member.email}$`, 'm'));
      const url = /http:\/\/ws\.test\/dashboard\/password\/([A-Za-z0-9_-]{43})/.exec(raw)!;
      const row = await db().selectFrom('auth_tokens').selectAll().where('token_hash', '=', sha256Hex(url[1]!)).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ purpose: 'reset', user_id: member.id, used_at: null });
      expect(row.expires_at - row.created_at).toBe(HOUR);

      const reset = new Browser(env);
      const path = `/dashboard/password/${url[1]}`;
      expect((await reset.get(path)).status).toBe(200);
      expect((await reset.post(path, { password: 'reset and fine' })).status).toBe(303);
      expect(await signedIn(reset)).toBe(true);
      expect((await new Browser(env).signIn(member.email, 'reset and fine')).status).toBe(303);
    });
  });

  describe('account page', () => {
    it('changes the name, audited old → new', async () => {
      const member = await newMember();
      const browser = new Browser(env);
      await browser.signIn(member.email, PASSWORD);
      const page = await browser.get('/dashboard/account');
      expect(page.status).toBe(200);
      expect(page.text).toContain('<label for="name">Name</label>');
      expect(page.text).toMatch(/>Save name<\/button>/);
      expect(page.text).toContain('<label for="current_password">Current password</label>');
      expect(page.text).toContain('<label for="new_password">New password</label>');
      expect(page.text).toMatch(/>Change password<\/button>/);

      const empty = await browser.post('/dashboard/account/name', { name: '' });
      expect(empty.status).toBe(400);
      expect(textOf(empty.text)).toContain('Name must be 1 to 255 characters');
      expect(empty.text).toContain('aria-invalid="true"');

      const saved = await browser.post('/dashboard/account/name', { name: 'Grace Hopper' });
      expect(saved.status).toBe(303);
      expect(saved.location).toBe('/dashboard/account');
      expect(textOf((await browser.get(saved.location!)).text)).toContain('Your name was saved as "Grace Hopper".');
      const user = await env.container.store.repos.users.findById(org.id, member.id);
      expect(user!.name).toBe('Grace Hopper');
      const audit = (await auditRows(org.id, 'user.name_changed')).filter((row) => row.actor_id === member.id);
      expect(audit).toHaveLength(1);
      expect(JSON.parse(audit[0]!.changes!)).toEqual({ name: { old: member.name, new: 'Grace Hopper' } });
      expect(audit[0]).toMatchObject({ source: 'dashboard', target_id: member.id, session_id: expect.stringMatching(/^sess_/) });
    });

    it('changes the password: the current one must match; other sessions end, this one stays', async () => {
      const member = await newMember();
      const browser = new Browser(env);
      await browser.signIn(member.email, PASSWORD);
      const elsewhere = new Browser(env);
      await elsewhere.signIn(member.email, PASSWORD);
      const hashBefore = await passwordHash(member.id);

      await browser.get('/dashboard/account');
      const wrong = await browser.post('/dashboard/account/password', { current_password: 'not it at all', new_password: 'something new here' });
      expect(wrong.status).toBe(400);
      expect(textOf(wrong.text)).toContain('Current password is incorrect');
      expect(wrong.text).not.toContain('something new here');
      expect(await passwordHash(member.id)).toBe(hashBefore);
      expect(await signedIn(elsewhere)).toBe(true);

      const short = await browser.post('/dashboard/account/password', { current_password: PASSWORD, new_password: 'short' });
      expect(short.status).toBe(400);
      expect(textOf(short.text)).toContain('New password must be at least 8 characters');
      expect(await passwordHash(member.id)).toBe(hashBefore);

      const changed = await browser.post('/dashboard/account/password', { current_password: PASSWORD, new_password: 'something new here' });
      expect(changed.status).toBe(303);
      expect(changed.location).toBe('/dashboard/account');
      expect(await signedIn(browser)).toBe(true);
      expect(await signedIn(elsewhere)).toBe(false);
      const audit = (await auditRows(org.id, 'user.password_changed')).filter((row) => row.actor_id === member.id);
      expect(audit).toHaveLength(1);
      expect(audit[0]!.changes).toBeNull();
      expect(JSON.stringify(audit)).not.toContain('something new here');

      expect((await new Browser(env).signIn(member.email, PASSWORD)).status).toBe(401);
      expect((await new Browser(env).signIn(member.email, 'something new here')).status).toBe(303);
    });

    it('sends a visitor without a session to sign in', async () => {
      const res = await new Browser(env).get('/dashboard/account');
      expect(res.status).toBe(303);
      expect(res.location).toBe(`/dashboard/login?next=${encodeURIComponent('/dashboard/account')}`);
    });
  });

  describe('invitations without JavaScript', () => {
    it('accepts the form, lands signed in on the dashboard, and audits both', async () => {
      const email = `invitee${++counter}@example.com`;
      const invited = await env.request('POST', '/v1/users', { key: org.ownerKey, body: { email, role: 'member' } });
      expect(invited.status).toBe(201);
      const token = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email);

      const browser = new Browser(env);
      const link = await browser.get(`/invitations/${token}`);
      expect(link.status).toBe(303);
      expect(link.location).toBe(`/dashboard/invitations/${token}`);
      expect(link.headers['referrer-policy']).toBe('no-referrer');

      const page = await browser.get(link.location!);
      expect(page.status).toBe(200);
      expect(page.text).toContain('<title>Join Acme · Workspace</title>');
      expect(page.text).toContain('<label for="name">Your name</label>');
      expect(page.text).toContain('<label for="password">Password</label>');
      expect(page.text).toContain(`value="${email}"`);
      expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
      expect(page.text).not.toMatch(/\sstyle=/);
      expect(page.text).not.toContain(token);

      const bad = await browser.post(link.location!, { email, name: '', password: 'short' });
      expect(bad.status).toBe(400);
      expect(textOf(bad.text)).toContain('Your name must be 1 to 255 characters');
      expect(textOf(bad.text)).toContain('Password must be at least 8 characters');
      expect((await env.request('GET', `/v1/users/${invited.body.id}`, { key: org.ownerKey })).body.status).toBe('invited');

      const accepted = await browser.post(link.location!, { email, name: 'Ada Lovelace', password: 'analytical engine' });
      expect(accepted.status).toBe(303);
      expect(accepted.location).toBe('/dashboard');
      expect(sessionCookie(accepted)).toBeDefined();
      const home = await browser.get('/dashboard');
      expect(home.status).toBe(200);
      expect(textOf(home.text)).toContain('Ada Lovelace');

      const user = await env.request('GET', `/v1/users/${invited.body.id}`, { key: org.ownerKey });
      expect(user.body).toMatchObject({ status: 'active', name: 'Ada Lovelace' });
      const acceptedRows = (await auditRows(org.id, 'invitation.accepted')).filter((row) => row.actor_id === invited.body.id);
      const signedInRows = (await auditRows(org.id, 'user.signed_in')).filter((row) => row.actor_id === invited.body.id);
      expect(acceptedRows).toHaveLength(1);
      expect(acceptedRows[0]).toMatchObject({ source: 'dashboard', outcome: 'success' });
      expect(signedInRows).toHaveLength(1);
      expect(signedInRows[0]).toMatchObject({ source: 'dashboard', session_id: (await sessionRows(invited.body.id))[0]!.id });

      const used = await new Browser(env).get(`/dashboard/invitations/${token}`);
      expect(used.status).toBe(404);
      expect(textOf(used.text)).toContain('Invitation not found');
      // And the new password signs in.
      expect((await new Browser(env).signIn(email, 'analytical engine')).status).toBe(303);
    });
  });
});

describe.each(testDialects())('session cookie over https (%s)', (dialect) => {
  let env: TestEnv;

  beforeAll(async () => {
    env = await createTestEnv(dialect, { env: { PUBLIC_BASE_URL: 'https://ws.example.com' } });
  });
  afterAll(async () => env?.close());

  it('is __Host-ws_session with Secure', async () => {
    const org = await env.createOrg();
    const owner = await env.container.store.repos.users.findById(org.id, org.ownerId);
    await env.container.store.repos.users.update(org.id, org.ownerId, { password_hash: await hashPassword(PASSWORD) });
    const browser = new DashboardClient(env);
    const page = await browser.get('/dashboard/login');
    expect(setCookies(page).find((line) => line.startsWith('__Host-ws_csrf='))).toMatch(/; Secure/);
    const res = await browser.post('/dashboard/login', { email: owner!.email, password: PASSWORD });
    expect(res.status).toBe(303);
    const cookie = sessionCookie(res, '__Host-ws_session')!;
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\/(;|$)/);
    expect(cookie).not.toMatch(/Domain=/i);
    expect((await browser.get('/dashboard')).status).toBe(200);
  });
});

// A real browser sends what app.inject does not (Origin, Sec-Fetch-Site, cookies by its own rules); the
// pages are the same whatever the database, so one dialect is enough here.
describe('signing in with a browser (sqlite)', () => {
  let env: TestEnv;
  let chromium: Chromium;
  let baseUrl: string;

  beforeAll(async () => {
    env = await createTestEnv('sqlite');
    baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
    chromium = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
    await env?.close();
  });

  it('signs in from the form, goes back to the page asked for, and signs out', async () => {
    const org = await env.createOrg('Browsed');
    const owner = await env.container.store.repos.users.findById(org.id, org.ownerId);
    await env.container.store.repos.users.update(org.id, org.ownerId, { password_hash: await hashPassword(PASSWORD) });
    const page = await chromium.newPage();
    // Only what the CSP refused: a 401 answer or a missing favicon is also reported on the console.
    const blocked: string[] = [];
    page.on('console', (msg) => msg.type() === 'error' && /Content Security Policy|Refused to/.test(msg.text()) && blocked.push(msg.text()));
    try {
      await page.goto(`${baseUrl}/dashboard/account`);
      expect(page.url()).toBe(`${baseUrl}/dashboard/login?next=${encodeURIComponent('/dashboard/account')}`);
      await page.getByLabel('Email').fill(owner!.email);
      await page.getByLabel('Password').fill('not the password');
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
      expect(await page.getByRole('alert').textContent()).toContain(INCORRECT);
      await page.getByLabel('Password').fill(PASSWORD);
      await Promise.all([page.waitForURL(`${baseUrl}/dashboard/account`), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
      expect(await page.textContent('h1')).toBe('Account');
      await page.getByLabel('Name', { exact: true }).fill('Browsing Owner');
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Save name' }).click()]);
      expect(page.url()).toBe(`${baseUrl}/dashboard/account`);
      expect(await page.locator('.notice').textContent()).toBe('Your name was saved as "Browsing Owner".');
      // Reloading shows the page, not the notice, and saves nothing again.
      await page.reload();
      expect(await page.locator('.notice').count()).toBe(0);
      await Promise.all([page.waitForURL(`${baseUrl}/dashboard/login?signed_out=1`), page.getByRole('button', { name: 'Sign out' }).click()]);
      expect(await page.getByRole('status').textContent()).toContain('You have signed out.');
      expect(blocked).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
