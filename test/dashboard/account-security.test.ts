import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, sha256Hex } from '../../src/lib/crypto.js';
import { totpCodeAt } from '../../src/lib/totp.js';
import { cliActor } from '../../src/services/access/actor.js';
import { TWO_STEP_GRACE_MS } from '../../src/services/identity/sessions-service.js';
import { DashboardClient, noticeOf, tableRows, textOf, type PageResponse } from '../helpers/dashboard.js';
import { decodeQuotedPrintable, latestInvitationToken, outboxMessages } from '../helpers/mail-outbox.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { waitFor } from '../helpers/https-receiver.js';
import { startSecondInstance, type SecondInstance } from '../helpers/second-instance.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const PASSWORD = 'a good long password';
const MINUTE = 60_000;
const KEY = Buffer.alloc(32, 7).toString('base64');

/**
 * Account security (DASHBOARD 11) through the dashboard's forms, without JavaScript, on both dialects, with
 * a clock the tests move: the authenticator app and its codes (window, replay), recovery codes, the two-step
 * sign-in and its limits, every sign-in path meeting the same gate, "Confirm it's you", sessions, the
 * organisation's requirement with its grace period, and the operator's reset. Passkeys need a browser:
 * test/dashboard/account-security-browser.test.ts.
 */
describe.each(testDialects())('account security (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  const clock = new ManualClock();
  let counter = 0;

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock, env: { WEBHOOK_SECRETS_KEY: KEY, PUBLIC_BASE_URL: 'http://ws.test' } });
    org = await env.createOrg('Acme');
  });
  afterAll(async () => env?.close());

  const db = () => env.container.database.db;

  async function newMember(role: 'owner' | 'admin' | 'member' | 'viewer' = 'member', orgId = org.id) {
    const email = `person${++counter}.${dialect}@example.com`;
    const user = await env.container.services.admin.addUser({ orgId, email, role, name: `Person ${counter}` });
    await env.container.store.repos.users.update(orgId, user.id, { password_hash: await hashPassword(PASSWORD) });
    return { id: user.id, email };
  }

  /** The password step through the login form; the answer to it. */
  async function passwordStep(email: string, password = PASSWORD): Promise<{ browser: DashboardClient; res: PageResponse }> {
    const browser = new DashboardClient(env);
    await browser.get('/dashboard/login');
    const res = await browser.post('/dashboard/login', { email, password });
    // The next page's forms carry the token of the new (or two-step) session, as a browser's would.
    if (res.status === 303 && res.location) await browser.get(res.location);
    return { browser, res };
  }

  async function signIn(email: string): Promise<DashboardClient> {
    const { browser, res } = await passwordStep(email);
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard');
    return browser;
  }

  /** Turns the authenticator app on through the forms; returns its secret and the recovery codes shown. */
  async function enableTotp(browser: DashboardClient): Promise<{ secret: string; codes: string[] }> {
    await browser.get('/dashboard/account/security');
    const started = await browser.post('/dashboard/account/security/totp/setup');
    expect(started.status).toBe(303);
    const setup = await browser.follow(started);
    const secret = /Setup key: <code class="setup-key">([A-Z2-7 ]+)<\/code>/.exec(setup.text)![1]!.replaceAll(' ', '');
    const on = await browser.post('/dashboard/account/security/totp/enable', { code: await totpCodeAt(secret, clock.now()) });
    expect(on.status).toBe(303);
    const shown = await browser.follow(on);
    const codes = [...shown.text.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!);
    return { secret, codes };
  }

  async function memberWithTotp(role: 'owner' | 'admin' | 'member' = 'member') {
    const member = await newMember(role);
    const browser = await signIn(member.email);
    const { secret, codes } = await enableTotp(browser);
    // Each test's codes come from a later time step than any used before.
    clock.advance(MINUTE);
    return { ...member, secret, codes, browser };
  }

  const auditRows = (action: string, userId?: string) => {
    let query = db().selectFrom('audit_log').selectAll().where('org_id', '=', org.id).where('action', '=', action);
    if (userId) query = query.where('target_id', '=', userId);
    return query.orderBy('seq').execute();
  };
  /** The session a browser's cookie names. */
  async function sessionIdOf(browser: DashboardClient): Promise<string> {
    const row = await db().selectFrom('sessions').select('id').where('token_hash', '=', sha256Hex(browser.cookies.get('ws_session')!)).executeTakeFirstOrThrow();
    return row.id;
  }
  const sessionsOf = (userId: string) => db().selectFrom('sessions').selectAll().where('user_id', '=', userId).execute();
  /** Waits for a mail to `email` containing `text` (mails go out after the answer). */
  async function mailed(email: string, text: string, count = 1): Promise<void> {
    await waitFor(`a mail to ${email} with "${text}"`, () => mailsTo(email).filter((m) => m.includes(text)).length >= count);
    expect(mailsTo(email).filter((m) => m.includes(text))).toHaveLength(count);
  }
  const mailsTo = (email: string) => outboxMessages(env.dataDir).filter((m) => m.raw.includes(`To: ${email}`)).map((m) => decodeQuotedPrintable(m.raw));

  describe('authenticator app', () => {
    it('sets up without JavaScript: QR code and setup key, a wrong code refused, ten recovery codes shown once', async () => {
      const member = await newMember();
      const browser = await signIn(member.email);
      const page = await browser.get('/dashboard/account/security');
      expect(page.status).toBe(200);
      expect(textOf(page.text)).toContain('Set up authenticator app');

      const setup = await browser.follow(await browser.post('/dashboard/account/security/totp/setup'));
      expect(setup.text).toMatch(/<div class="qr-code" role="img" aria-label="QR code for your authenticator app"><svg [^>]*viewBox/);
      expect(setup.text).not.toMatch(/style=/);
      const secret = /Setup key: <code class="setup-key">([A-Z2-7 ]+)<\/code>/.exec(setup.text)![1]!.replaceAll(' ', '');
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);

      const wrong = await browser.post('/dashboard/account/security/totp/enable', { code: '000000' });
      expect(wrong.status).toBe(400);
      expect(textOf(wrong.text)).toContain('That code is not valid.');
      expect((await env.container.store.repos.secondFactors.findTotp(org.id, member.id))!.enabled_at).toBeNull();

      const on = await browser.post('/dashboard/account/security/totp/enable', { code: await totpCodeAt(secret, clock.now()) });
      expect(on.status).toBe(303);
      expect(on.location).toBe('/dashboard/account/security/recovery-codes');
      const shown = await browser.follow(on);
      const list = /<ul aria-label="Recovery codes" class="recovery-codes">([\s\S]*?)<\/ul>/.exec(shown.text)![1]!;
      const codes = [...list.matchAll(/<code>([a-z0-9-]+)<\/code>/g)].map((m) => m[1]!);
      expect(codes).toHaveLength(10);
      expect(new Set(codes).size).toBe(10);
      for (const code of codes) expect(code).toMatch(/^[a-z2-9]{4}(-[a-z2-9]{4}){3}$/);
      // "Download recovery codes": a text file made from the page itself, nothing fetched again.
      const download = /<a class="button" href="(data:text\/plain;charset=utf-8,[^"]+)" download="workspace-recovery-codes.txt">Download recovery codes<\/a>/.exec(shown.text)!;
      expect(decodeURIComponent(download[1]!.slice('data:text/plain;charset=utf-8,'.length).replaceAll('&amp;', '&'))).toContain(codes.join('\n'));
      expect(shown.headers['cache-control']).toBe('no-store');
      // Shown once: a reload shows none.
      const again = await browser.get('/dashboard/account/security/recovery-codes');
      expect(again.text).not.toContain(codes[0]!);

      // Stored: the secret sealed, the codes only as hashes.
      const stored = await env.container.store.repos.secondFactors.findTotp(org.id, member.id);
      expect(stored!.secret.startsWith('wsk1:')).toBe(true);
      expect(stored!.secret).not.toContain(secret);
      const hashes = await db().selectFrom('recovery_codes').select('code_hash').where('user_id', '=', member.id).execute();
      expect(hashes).toHaveLength(10);
      for (const { code_hash } of hashes) for (const code of codes) expect(code_hash).not.toContain(code.replaceAll('-', ''));
      if (dialect === 'sqlite') {
        await db().executeQuery({ sql: 'pragma wal_checkpoint(truncate)', parameters: [], query: { kind: 'RawNode' } } as never);
        const files = fs.readdirSync(env.dataDir).filter((f) => f.startsWith('workspace'));
        for (const file of files) expect(fs.readFileSync(path.join(env.dataDir, file)).includes(secret), file).toBe(false);
      }

      expect(await auditRows('user.mfa_enabled', member.id)).toHaveLength(1);
      await mailed(member.email, 'An authenticator app was turned on');
      const page2 = await browser.get('/dashboard/account/security');
      expect(textOf(page2.text)).toContain('10 of 10 recovery codes left');
    });

    it('turning on consumes the set-up code: it cannot sign in afterwards', async () => {
      const member = await newMember();
      const browser = await signIn(member.email);
      await browser.follow(await browser.post('/dashboard/account/security/totp/setup'));
      const row = await env.container.store.repos.secondFactors.findTotp(org.id, member.id);
      const secret = env.container.secretBox.open(row!.secret);
      const code = await totpCodeAt(secret, clock.now());
      expect((await browser.post('/dashboard/account/security/totp/enable', { code })).status).toBe(303);
      const { browser: next, res } = await passwordStep(member.email);
      expect(res.location).toBe('/dashboard/login/two-step');
      const replay = await next.post('/dashboard/login/two-step', { code });
      expect(replay.status).toBe(400);
      expect(textOf(replay.text)).toContain('That code is not valid.');
    });
  });

  describe('two-step sign-in', () => {
    it('asks for the code after the password; the two-step session opens no page; a code works once', async () => {
      const m = await memberWithTotp();
      const { browser, res } = await passwordStep(m.email);
      expect(res.status).toBe(303);
      expect(res.location).toBe('/dashboard/login/two-step');
      const page = await browser.get('/dashboard/login/two-step');
      expect(page.status).toBe(200);
      expect(textOf(page.text)).toContain('Two-step verification');
      expect(page.text).toContain('>Verify<');
      expect(page.text).toContain('Use a recovery code');
      // Owing its second factor, the session opens nothing.
      for (const url of ['/dashboard', '/dashboard/api-keys', '/dashboard/account/security']) {
        const refused = await browser.get(url);
        expect(refused.status, url).toBe(303);
        expect(refused.location).toBe('/dashboard/login/two-step');
      }
      const [pending] = await sessionsOf(m.id).then((rows) => rows.filter((r) => r.stage === 'two_step'));
      expect(pending).toBeDefined();
      expect(await auditRows('user.signed_in', m.id).then((rows) => rows.filter((r) => r.session_id === pending!.id))).toHaveLength(0);

      const code = await totpCodeAt(m.secret, clock.now());
      const done = await browser.post('/dashboard/login/two-step', { code });
      expect(done.status).toBe(303);
      expect(done.location).toBe('/dashboard');
      expect((await browser.get('/dashboard')).status).toBe(200);
      const row = (await sessionsOf(m.id)).find((r) => r.id === pending!.id)!;
      expect(row.stage).toBe('active');
      expect(row.method).toBe('password_code');
      expect(row.token_hash).not.toBe(pending!.token_hash);
      const signedIn = (await auditRows('user.signed_in', m.id)).at(-1)!;
      expect(JSON.parse(signedIn.changes!)).toEqual({ method: { old: null, new: 'password_code' } });

      // The same code again, in another sign-in: refused (RFC 6238 5.2).
      const other = await passwordStep(m.email);
      const replay = await other.browser.post('/dashboard/login/two-step', { code });
      expect(replay.status).toBe(400);
      expect(textOf(replay.text)).toContain('That code is not valid.');
    });

    it('accepts the code of the step before or after, not two steps away', async () => {
      const m = await memberWithTotp();
      const { browser } = await passwordStep(m.email);
      expect((await browser.post('/dashboard/login/two-step', { code: await totpCodeAt(m.secret, clock.now() - 60_000) })).status).toBe(400);
      expect((await browser.post('/dashboard/login/two-step', { code: await totpCodeAt(m.secret, clock.now() + 60_000) })).status).toBe(400);
      expect((await browser.post('/dashboard/login/two-step', { code: await totpCodeAt(m.secret, clock.now() - 30_000) })).status).toBe(303);
      clock.advance(MINUTE);
      const second = await passwordStep(m.email);
      expect((await second.browser.post('/dashboard/login/two-step', { code: await totpCodeAt(m.secret, clock.now() + 30_000) })).status).toBe(303);
      clock.advance(2 * MINUTE);
    });

    it('five wrong codes end the attempt: back to the password, the session gone', async () => {
      const m = await memberWithTotp();
      const { browser } = await passwordStep(m.email);
      for (let i = 1; i <= 4; i++) expect((await browser.post('/dashboard/login/two-step', { code: '111111' })).status).toBe(400);
      const ended = await browser.post('/dashboard/login/two-step', { code: '111111' });
      expect(ended.status).toBe(401);
      expect(textOf(ended.text)).toContain('Too many wrong codes. Sign in again.');
      expect(ended.text).toContain('action="/dashboard/login"');
      expect((await sessionsOf(m.id)).filter((r) => r.stage === 'two_step')).toHaveLength(0);
      // The right code now changes nothing: there is no sign-in to complete.
      const late = await browser.post('/dashboard/login/two-step', { code: await totpCodeAt(m.secret, clock.now()) });
      expect(late.status).toBe(303);
      expect(late.location).toBe('/dashboard/login');
      expect((await browser.get('/dashboard')).location).toMatch(/^\/dashboard\/login/);
    });

    it('ten failures per account in 15 minutes: 429 with an audit row and a mail, then it works again', async () => {
      const m = await memberWithTotp();
      const before = mailsTo(m.email).length;
      for (let round = 0; round < 2; round++) {
        const { browser } = await passwordStep(m.email);
        for (let i = 0; i < 4; i++) expect((await browser.post('/dashboard/login/two-step', { code: '222222' })).status).toBe(400);
      }
      const { browser } = await passwordStep(m.email);
      expect((await browser.post('/dashboard/login/two-step', { code: '222222' })).status).toBe(400);
      expect((await browser.post('/dashboard/login/two-step', { code: '222222' })).status).toBe(400);
      expect(await auditRows('user.two_step_locked', m.id)).toHaveLength(1);
      const locked = await browser.post('/dashboard/login/two-step', { code: await totpCodeAt(m.secret, clock.now()) });
      expect(locked.status).toBe(429);
      expect(textOf(locked.text)).toMatch(/Too many attempts; try again in \d+ minutes?/);
      expect(locked.headers['retry-after']).toBeDefined();
      expect(await auditRows('user.two_step_locked', m.id)).toHaveLength(1);
      await mailed(m.email, 'sign-in paused after wrong codes');
      expect(mailsTo(m.email).length).toBeGreaterThan(before);
      // The row of the locked account: nothing signed in meanwhile.
      expect((await sessionsOf(m.id)).filter((r) => r.stage === 'active' && r.method === 'password_code')).toHaveLength(0);

      clock.advance(15 * MINUTE + 1000);
      const later = await passwordStep(m.email);
      expect((await later.browser.post('/dashboard/login/two-step', { code: await totpCodeAt(m.secret, clock.now()) })).status).toBe(303);
      clock.advance(MINUTE);
    });

    it('a recovery code signs in once, is mailed, and never confirms a sensitive action', async () => {
      const m = await memberWithTotp();
      const { browser } = await passwordStep(m.email);
      const used = m.codes[3]!;
      const res = await browser.post('/dashboard/login/two-step', { recovery_code: used.toUpperCase().replaceAll('-', ' ') });
      expect(res.status).toBe(303);
      const row = (await sessionsOf(m.id)).find((r) => r.method === 'password_recovery')!;
      expect(row.confirmed_at).toBeNull();
      expect(await auditRows('user.recovery_code_used', m.id)).toHaveLength(1);
      await mailed(m.email, 'a recovery code was used to sign in');
      expect(mailsTo(m.email).find((mail) => mail.includes('a recovery code was used to sign in'))).toContain('9 codes are left');

      const again = await passwordStep(m.email);
      const refused = await again.browser.post('/dashboard/login/two-step', { recovery_code: used });
      expect(refused.status).toBe(400);
      expect(textOf(refused.text)).toContain('That recovery code is not valid.');

      // Creating an API key on the recovery-code session asks "Confirm it's you" first.
      await browser.get('/dashboard/api-keys');
      const asked = await browser.post('/dashboard/api-keys', { name: 'after recovery', access: 'full' });
      expect(asked.status).toBe(403);
      expect(textOf(asked.text)).toContain("Confirm it's you");
      expect(await db().selectFrom('api_keys').select('id').where('user_id', '=', m.id).execute()).toHaveLength(0);
    });
  });

  describe('every sign-in path meets the same second-factor rule', () => {
    const paths: { name: string; twin?: boolean; start(m: { id: string; email: string }): Promise<{ browser: DashboardClient; res: PageResponse }> }[] = [
      { name: 'password', start: (m) => passwordStep(m.email) },
      {
        name: 'organisation chooser',
        twin: true,
        async start(m) {
          const { browser, res } = await passwordStep(m.email);
          expect(res.status).toBe(200);
          const token = /name="token" value="([^"]+)"/.exec(res.text)![1]!;
          return { browser, res: await browser.post('/dashboard/login/choose', { token, organization: org.id }) };
        },
      },
      {
        name: 'password reset link',
        async start(m) {
          const browser = new DashboardClient(env);
          await browser.get('/dashboard/forgot-password');
          await browser.post('/dashboard/forgot-password', { email: m.email });
          await mailed(m.email, '/dashboard/password/');
          const mail = mailsTo(m.email).filter((raw) => raw.includes('/dashboard/password/')).at(-1)!;
          const link = /http:\/\/ws\.test(\/dashboard\/password\/[A-Za-z0-9_-]+)/.exec(mail)![1]!;
          await browser.get(link);
          return { browser, res: await browser.post(link, { password: 'a brand new password' }) };
        },
      },
      {
        name: 'set-password link (CLI)',
        async start(m) {
          const browser = new DashboardClient(env);
          const issued = await env.container.services.accounts.issuePasswordLink(cliActor(''), m.id, 'setup');
          const link = new URL(issued.url).pathname;
          await browser.get(link);
          return { browser, res: await browser.post(link, { password: 'another new password' }) };
        },
      },
    ];

    it.each(paths.map((p) => [p.name, p] as const))('%s: a user with a factor is asked for it; one without signs in', async (_name, p) => {
      const orgB = await env.createOrg('Beta');
      const withFactor = await memberWithTotp();
      const without = await newMember();
      for (const m of p.twin ? [withFactor, without] : []) {
        // The chooser needs the same e-mail and password in a second organisation.
        const user = await env.container.services.admin.addUser({ orgId: orgB.id, email: m.email, role: 'member', name: 'Twin' });
        await env.container.store.repos.users.update(orgB.id, user.id, { password_hash: await hashPassword(PASSWORD) });
      }
      const asked = await p.start(withFactor);
      expect(asked.res.status).toBe(303);
      expect(asked.res.location).toBe('/dashboard/login/two-step');
      expect((await asked.browser.get('/dashboard')).location).toBe('/dashboard/login/two-step');
      const direct = await p.start(without);
      expect(direct.res.status).toBe(303);
      expect(direct.res.location).toBe('/dashboard');
      expect((await direct.browser.get('/dashboard')).status).toBe(200);
    });

    it('invitation acceptance: the new member signs in (no factor yet), and the requirement still applies to them', async () => {
      const owner = await signInOwner();
      const email = `invitee${++counter}.${dialect}@example.com`;
      await env.container.services.users.invite(await ownerActor(), { email, role: 'member' });
      const token = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email);
      const browser = new DashboardClient(env);
      const form = await browser.get(`/dashboard/invitations/${token}`);
      expect(form.status).toBe(200);
      const res = await browser.post(`/dashboard/invitations/${token}`, { email, name: 'Invitee', password: PASSWORD });
      expect(res.status).toBe(303);
      expect((await browser.get('/dashboard')).status).toBe(200);
      void owner;
    });
  });

  async function ownerActor() {
    const { sessionActorOf } = await import('../helpers/read-only.js');
    return sessionActorOf(env.container, org.id, org.ownerId);
  }

  async function signInOwner(): Promise<DashboardClient> {
    await env.container.store.repos.users.update(org.id, org.ownerId, { password_hash: await hashPassword(PASSWORD) });
    const owner = await env.container.store.repos.users.findById(org.id, org.ownerId);
    return signIn(owner!.email);
  }

  describe("confirm it's you", () => {
    it('asks after 15 minutes before creating a key, refuses a wrong answer, then creates the key that was asked for', async () => {
      const m = await memberWithTotp();
      const { browser } = await passwordStep(m.email);
      await browser.post('/dashboard/login/two-step', { code: await totpCodeAt(m.secret, clock.now()) });
      // Within 15 minutes of a strong sign-in: no question.
      await browser.get('/dashboard/api-keys');
      expect((await browser.post('/dashboard/api-keys', { name: 'first', access: 'full' })).status).toBe(303);

      clock.advance(16 * MINUTE);
      await browser.get('/dashboard/api-keys');
      const asked = await browser.post('/dashboard/api-keys', { name: 'deploy bot', access: 'read' });
      expect(asked.status).toBe(403);
      expect(textOf(asked.text)).toContain("Confirm it's you");
      // The form posts the same request again, its fields as typed, with the proof beside them.
      expect(asked.text).toContain('action="/dashboard/api-keys"');
      expect(asked.text).toContain('name="name" value="deploy bot"');
      expect(asked.text).toContain('name="access" value="read"');
      expect(asked.text).toContain('name="_confirm_password"');
      expect(asked.text).toContain('name="_confirm_code"');

      const wrong = await browser.post('/dashboard/api-keys', { name: 'deploy bot', access: 'read', _confirm_password: 'not it', _confirm_code: await totpCodeAt(m.secret, clock.now()) });
      expect(wrong.status).toBe(400);
      expect(textOf(wrong.text)).toContain('Password is incorrect');
      expect(await db().selectFrom('api_keys').select('name').where('user_id', '=', m.id).where('name', '=', 'deploy bot').execute()).toHaveLength(0);
      // A recovery code never confirms: there is no field for it, and a code from the list is not a TOTP code.
      const withRecovery = await browser.post('/dashboard/api-keys', { name: 'deploy bot', access: 'read', _confirm_password: PASSWORD, _confirm_code: m.codes[0]! });
      expect(withRecovery.status).toBe(400);

      clock.advance(MINUTE);
      const done = await browser.post('/dashboard/api-keys', { name: 'deploy bot', access: 'read', _confirm_password: PASSWORD, _confirm_code: await totpCodeAt(m.secret, clock.now()) });
      expect(done.status).toBe(303);
      expect((await browser.follow(done)).text).toContain('Your new API key');
      const keys = await db().selectFrom('api_keys').select(['name', 'scope']).where('user_id', '=', m.id).where('name', '=', 'deploy bot').execute();
      expect(keys).toEqual([{ name: 'deploy bot', scope: 'read' }]);
      // Confirmed: the next sensitive action within 15 minutes goes straight through.
      await browser.get('/dashboard/api-keys');
      expect((await browser.post('/dashboard/api-keys', { name: 'third', access: 'full' })).status).toBe(303);
      clock.advance(MINUTE);
    });

    it('asks before granting admin, rotating a webhook secret and changing the security settings', async () => {
      const owner = await signInOwner();
      clock.advance(16 * MINUTE);
      const member = await newMember('member');
      await owner.get('/dashboard/members');
      const grant = await owner.post(`/dashboard/members/${member.id}/role`, { role: 'admin' });
      expect(grant.status).toBe(403);
      expect(textOf(grant.text)).toContain("Confirm it's you");
      expect((await env.container.store.repos.users.findById(org.id, member.id))!.role).toBe('member');
      // A role that grants nothing more needs no confirmation.
      expect((await owner.post(`/dashboard/members/${member.id}/role`, { role: 'viewer' })).status).toBe(303);

      await owner.get('/dashboard/settings/security');
      const settings = await owner.post('/dashboard/settings/security', { require_two_step: 'on' });
      expect(settings.status).toBe(403);
      expect((await env.container.store.repos.organizations.findById(org.id))!.two_step_required_at).toBeNull();

      const webhook = await env.container.services.webhooks.create(cliActor(org.id), { url: 'https://example.com/hook', events: ['project.created'] });
      const secretBefore = (await env.container.store.repos.webhooks.findById(org.id, webhook.id))!.secret;
      await owner.get(`/dashboard/webhooks/${webhook.id}/rotate-secret`);
      const rotate = await owner.post(`/dashboard/webhooks/${webhook.id}/rotate-secret`, { previous_expires_in: '0' });
      expect(rotate.status).toBe(403);
      expect(rotate.text).toContain('name="previous_expires_in" value="0"');
      expect((await env.container.store.repos.webhooks.findById(org.id, webhook.id))!.secret).toBe(secretBefore);

      const done = await owner.post(`/dashboard/members/${member.id}/role`, { role: 'admin', _confirm_password: PASSWORD });
      expect(done.status).toBe(303);
      expect((await env.container.store.repos.users.findById(org.id, member.id))!.role).toBe('admin');
      // Confirmed now: the rotation goes straight through.
      expect((await owner.post(`/dashboard/webhooks/${webhook.id}/rotate-secret`, { previous_expires_in: '0' })).status).toBe(303);
      expect((await env.container.store.repos.webhooks.findById(org.id, webhook.id))!.secret).not.toBe(secretBefore);
    });
  });

  describe('sessions', () => {
    it('lists device, IP, method and last seen; signs out one, then all others', async () => {
      const m = await newMember();
      const first = await signIn(m.email);
      const second = await signIn(m.email);
      const third = new DashboardClient(env);
      await third.get('/dashboard/login');
      await third.post('/dashboard/login', { email: m.email, password: PASSWORD }, { headers: { 'user-agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15' } });
      clock.advance(2 * MINUTE);
      const page = await first.get('/dashboard/account/security');
      const rows = tableRows(page.text, 'Sessions');
      expect(rows).toHaveLength(3);
      expect(rows.filter((r) => r.includes('This session'))).toHaveLength(1);
      expect(rows.some((r) => r.startsWith('Safari on macOS'))).toBe(true);
      for (const row of rows) expect(row).toContain('with password');

      const ids = [...page.text.matchAll(/action="\/dashboard\/account\/security\/sessions\/(sess_[a-z0-9]+)\/revoke"/g)].map((x) => x[1]!);
      expect(ids).toHaveLength(3);
      const currentId = await sessionIdOf(first);
      const other = await sessionIdOf(second);
      expect(ids).toContain(currentId);
      expect(ids).toContain(other);
      const ended = await first.post(`/dashboard/account/security/sessions/${other}/revoke`);
      expect(ended.status).toBe(303);
      expect(noticeOf((await first.follow(ended)).text)).toContain('That session was signed out.');
      expect(await sessionsOf(m.id)).toHaveLength(2);
      expect(await auditRows('user.session_revoked', m.id)).toHaveLength(1);

      const all = await first.post('/dashboard/account/security/sessions/revoke-others');
      expect(all.status).toBe(303);
      expect(await sessionsOf(m.id)).toHaveLength(1);
      expect((await first.get('/dashboard')).status).toBe(200);
      expect((await second.get('/dashboard')).status).toBe(303);
      expect((await third.get('/dashboard')).status).toBe(303);
      // Another user's session id names nothing here.
      const stranger = await newMember();
      const strangerBrowser = await signIn(stranger.email);
      const [strangerSession] = await sessionsOf(stranger.id);
      expect((await first.post(`/dashboard/account/security/sessions/${strangerSession!.id}/revoke`)).status).toBe(404);
      expect((await strangerBrowser.get('/dashboard')).status).toBe(200);
    });
  });

  describe("the organisation's requirement", () => {
    it('owner only; 7 days of grace with a notice, then every page sends the member to set it up; API keys keep working', async () => {
      const owner = await signInOwner();
      const member = await newMember('member');
      const memberBrowser = await signIn(member.email);
      const memberKey = (await env.container.services.apiKeys.create(cliActor(org.id), { scope: 'full', userId: member.id })).key;

      // Not an owner: refused, nothing changed.
      const admin = await newMember('admin');
      const adminBrowser = await signIn(admin.email);
      expect((await adminBrowser.get('/dashboard/settings/security')).status).toBe(403);
      const refused = await adminBrowser.post('/dashboard/settings/security', { require_two_step: 'on' }, { csrf: adminBrowser.lastCsrf });
      expect(refused.status).toBe(403);
      expect((await env.container.store.repos.organizations.findById(org.id))!.two_step_required_at).toBeNull();

      await owner.get('/dashboard/settings/security');
      const saved = await owner.post('/dashboard/settings/security', { require_two_step: 'on', _confirm_password: PASSWORD });
      expect(saved.status).toBe(303);
      const since = (await env.container.store.repos.organizations.findById(org.id))!.two_step_required_at;
      expect(since).toBe(clock.now());
      expect(await auditRows('organization.security_changed')).toHaveLength(1);
      // The API says so too (GET /v1/organization), to any key of the organisation.
      const orgView = await env.request('GET', '/v1/organization', { key: memberKey });
      expect(orgView.body).toMatchObject({ two_step_required_at: new Date(since!).toISOString() });
      await mailed(member.email, 'requires two-step verification');

      // Grace: the notice, every page open.
      const during = await memberBrowser.get('/dashboard/projects');
      expect(during.status).toBe(200);
      expect(textOf(during.text)).toContain('Set up two-step verification by');
      // The members table shows who has it (admins and owners).
      const members = await owner.get('/dashboard/members');
      expect(tableRows(members.text, 'Members').find((r) => r.includes(member.email))).toMatch(/ Off( |$)/);

      clock.advance(TWO_STEP_GRACE_MS + MINUTE);
      // A fresh sign-in (the old session has ended by now) meets the check on every page, GET or POST.
      const { browser: fresh } = await passwordStep(member.email);
      for (const url of ['/dashboard', '/dashboard/projects', '/dashboard/api-keys']) {
        const sent = await fresh.get(url);
        expect(sent.status, url).toBe(303);
        expect(sent.location).toBe('/dashboard/account/security?required=1');
      }
      const post = await fresh.post('/dashboard/projects', { name: 'Sneaky' });
      expect(post.location).toBe('/dashboard/account/security?required=1');
      expect(await db().selectFrom('projects').select('id').where('org_id', '=', org.id).where('name', '=', 'Sneaky').execute()).toHaveLength(0);
      const security = await fresh.get('/dashboard/account/security?required=1');
      expect(security.status).toBe(200);
      expect(textOf(security.text)).toContain('Your organisation requires two-step verification');
      // The API is not the dashboard: keys keep working.
      expect((await env.request('GET', '/v1/projects', { headers: { authorization: `Bearer ${memberKey}` } })).status).toBe(200);

      // Setting it up lifts it; turning it off is then refused.
      const { codes } = await enableTotp(fresh);
      expect(codes).toHaveLength(10);
      expect((await fresh.get('/dashboard')).status).toBe(200);
      const off = await fresh.post('/dashboard/account/security/totp/disable', { _from: '/dashboard/account/security' });
      expect(off.status).toBe(303);
      expect(textOf((await fresh.follow(off)).text)).toContain('Your organisation requires two-step verification: add another factor before you remove this one.');
      expect((await env.container.store.repos.secondFactors.findTotp(org.id, member.id))!.enabled_at).not.toBeNull();
      const membersAfter = await owner.get('/dashboard/members');
      void membersAfter;

      // Off again (owner), with a confirmation: members are free.
      clock.advance(MINUTE);
      // The owner is a member like any other: past the grace, set it up first.
      const { browser: ownerBrowser } = await passwordStep((await env.container.store.repos.users.findById(org.id, org.ownerId))!.email);
      expect((await ownerBrowser.get('/dashboard/settings/security')).location).toBe('/dashboard/account/security?required=1');
      await enableTotp(ownerBrowser);
      await ownerBrowser.get('/dashboard/settings/security');
      const freed = await ownerBrowser.post('/dashboard/settings/security', {});
      expect(freed.location).toBe('/dashboard/settings/security');
      expect((await env.container.store.repos.organizations.findById(org.id))!.two_step_required_at).toBeNull();
    });
  });

  describe('operator reset (CLI user reset-mfa)', () => {
    it("removes the user's factors and sessions, audits it as the CLI, mails the user and the owners", async () => {
      const m = await memberWithTotp();
      expect(await sessionsOf(m.id)).not.toHaveLength(0);
      const result = await env.container.services.accountSecurity.resetSecondFactors(cliActor(''), m.id);
      expect(result.user_id).toBe(m.id);
      expect(await env.container.store.repos.secondFactors.hasAny(org.id, m.id)).toBe(false);
      expect(await db().selectFrom('recovery_codes').select('seq').where('user_id', '=', m.id).execute()).toHaveLength(0);
      expect(await sessionsOf(m.id)).toHaveLength(0);
      const [row] = await auditRows('user.mfa_disabled', m.id);
      expect(row!.source).toBe('cli');
      expect(mailsTo(m.email).some((mail) => mail.includes('your two-step verification was reset'))).toBe(true);
      const owner = await env.container.store.repos.users.findById(org.id, org.ownerId);
      expect(mailsTo(owner!.email).some((mail) => mail.includes(`the second factors and passkeys of ${m.email}`))).toBe(true);
      // The password alone signs in again.
      expect((await passwordStep(m.email)).res.location).toBe('/dashboard');
      // Unknown user: 404, nothing else touched.
      await expect(env.container.services.accountSecurity.resetSecondFactors(cliActor(''), 'user_nobody')).rejects.toMatchObject({ status: 404 });
    });
  });

  describe('passkey refusals without a browser', () => {
    it('garbage, an unknown credential, or a challenge from another browser: refused, nothing signed in or stored', async () => {
      const browser = new DashboardClient(env);
      await browser.get('/dashboard/login');
      const options = await browser.post('/dashboard/login/passkey/options');
      expect(options.status).toBe(200);
      const parsed = JSON.parse(options.text) as { challenge: string; rpId: string; userVerification: string; allowCredentials: unknown[] };
      expect(parsed.rpId).toBe('ws.test');
      expect(parsed.userVerification).toBe('required');
      expect(parsed.allowCredentials).toEqual([]);
      for (const response of ['', 'not json', JSON.stringify({ id: 'abc', rawId: 'abc', type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: '', signature: '' } })]) {
        const refused = await browser.post('/dashboard/login/passkey', { response });
        expect(refused.status).toBe(400);
        expect(textOf(refused.text)).toContain('That passkey was not accepted.');
        expect(browser.cookies.has('ws_session')).toBe(false);
      }
      // Anyone may ask for a sign-in challenge, each one stored: 60 a minute per client address.
      const spammer = new DashboardClient(env);
      await spammer.get('/dashboard/login');
      const before = (await db().selectFrom('webauthn_challenges').select('challenge').execute()).length;
      const statuses = [];
      for (let i = 0; i < 61; i++) statuses.push((await spammer.post('/dashboard/login/passkey/options')).status);
      const counted = statuses.filter((s) => s === 200).length;
      expect(statuses.at(-1)).toBe(429);
      expect((await db().selectFrom('webauthn_challenges').select('challenge').execute()).length - before).toBe(counted);
      clock.advance(MINUTE);

      const member = await newMember();
      const signedIn = await signIn(member.email);
      await signedIn.get('/dashboard/account/security');
      const bad = await signedIn.post('/dashboard/account/security/passkeys', { name: 'Fake', response: JSON.stringify({ id: 'x', rawId: 'x', type: 'public-key', response: { clientDataJSON: 'e30', attestationObject: '' } }) });
      expect(bad.status).toBe(400);
      expect(await env.container.store.repos.secondFactors.listPasskeys(org.id, member.id)).toHaveLength(0);
      // A name too long is named as the problem before any credential is looked at.
      const long = await signedIn.post('/dashboard/account/security/passkeys', { name: 'x'.repeat(101), response: '{}' });
      expect(long.status).toBe(400);
      expect(textOf(long.text)).toContain('Passkey name must be at most 100 characters');
      // Codes that cannot be codes: the same clear refusal, no 500; a field longer than a form sends: 400.
      await signedIn.post('/dashboard/account/security/totp/setup');
      for (const code of ['abcdef', '12345', '1234567', ' ']) {
        const refused = await signedIn.post('/dashboard/account/security/totp/enable', { code });
        expect(refused.status, code).toBe(400);
        expect(textOf(refused.text)).toMatch(/That code is not valid\.|Code is required/);
      }
      expect((await signedIn.post('/dashboard/account/security/totp/enable', { code: '1'.repeat(65) })).status).toBe(400);
      expect(await env.container.store.repos.secondFactors.hasAny(org.id, member.id)).toBe(false);
    });
  });
});

/**
 * The account's 10 failures in 15 minutes are counted in Redis when it is configured, so two instances
 * behind a load balancer share one count: five wrong codes on each, then both answer 429.
 */
describe.skipIf(!testDialects().includes('postgres'))('two-step lockout across instances (postgres + Redis)', () => {
  let env: TestEnv;
  let second: SecondInstance;
  let org: TestOrg;

  beforeAll(async () => {
    env = await createTestEnv('postgres', { env: { REDIS_URL: 'redis://127.0.0.1:6379' } });
    second = await startSecondInstance(env);
    org = await env.createOrg();
  });
  afterAll(async () => {
    await second?.close();
    await env?.close();
  });

  it('wrong codes on two instances add up to one lockout', async () => {
    const { userId } = await org.member('member');
    await env.container.store.repos.users.update(org.id, userId, { password_hash: await hashPassword(PASSWORD) });
    const email = (await env.container.store.repos.users.findById(org.id, userId))!.email;
    const setupBrowser = new DashboardClient(env);
    await setupBrowser.get('/dashboard/login');
    await setupBrowser.post('/dashboard/login', { email, password: PASSWORD });
    await setupBrowser.get('/dashboard/account/security');
    await setupBrowser.post('/dashboard/account/security/totp/setup');
    const secret = env.container.secretBox.open((await env.container.store.repos.secondFactors.findTotp(org.id, userId))!.secret);
    await setupBrowser.get('/dashboard/account/security/totp');
    expect((await setupBrowser.post('/dashboard/account/security/totp/enable', { code: await totpCodeAt(secret, Date.now()) })).status).toBe(303);

    const statuses: number[] = [];
    for (const app of [env.app, second.app, env.app, second.app]) {
      const browser = new DashboardClient({ ...env, app });
      await browser.get('/dashboard/login');
      await browser.post('/dashboard/login', { email, password: PASSWORD });
      await browser.get('/dashboard/login/two-step');
      for (let i = 0; i < (statuses.length < 8 ? 4 : 2); i++) statuses.push((await browser.post('/dashboard/login/two-step', { code: '333333' })).status);
    }
    // 4 + 4 + 2 wrong codes, spread over both instances: the tenth is the last one counted.
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(400));
    for (const app of [env.app, second.app]) {
      const browser = new DashboardClient({ ...env, app });
      await browser.get('/dashboard/login');
      await browser.post('/dashboard/login', { email, password: PASSWORD });
      await browser.get('/dashboard/login/two-step');
      const locked = await browser.post('/dashboard/login/two-step', { code: await totpCodeAt(secret, Date.now()) });
      expect(locked.status).toBe(429);
    }
    const rows = await env.container.database.db.selectFrom('audit_log').select('id').where('org_id', '=', org.id).where('action', '=', 'user.two_step_locked').execute();
    expect(rows).toHaveLength(1);
  });
});
