import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashPassword, sha256Hex } from '../../src/lib/crypto.js';
import { SEALED_PREFIX } from '../../src/lib/secret-box.js';
import { totpCodeAt } from '../../src/lib/totp.js';
import { cliActor } from '../../src/services/access/actor.js';
import { DOMAIN_GRACE_MS, DOMAIN_RECHECK_MS } from '../../src/services/identity/sso-service.js';
import { TWO_STEP_GRACE_MS } from '../../src/services/identity/sessions-service.js';
import { DashboardClient, noticeOf, tableRows, textOf, type PageResponse } from '../helpers/dashboard.js';
import { startDnsResponder, type DnsResponder } from '../helpers/dns-responder.js';
import { makeSelfSignedCertificate, waitFor, type TestCertificate } from '../helpers/https-receiver.js';
import { decodeQuotedPrintable, outboxMessages } from '../helpers/mail-outbox.js';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.js';
import { startSecondInstance } from '../helpers/second-instance.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const PASSWORD = 'a good long password';
const KEY = Buffer.alloc(32, 9).toString('base64');
const BASE = 'http://ws.test';
const CALLBACK = `${BASE}/dashboard/sso/callback`;
const MINUTE = 60_000;

/** The identity provider's address on a "Continue to your identity provider" page. */
function providerUrl(page: PageResponse): string {
  const match = /<meta http-equiv="refresh" content="0;url=([^"]+)"/.exec(page.text);
  if (!match) throw new Error(`no redirect to the provider on a ${page.status} page: ${textOf(page.text).slice(0, 300)}`);
  return match[1]!.replaceAll('&amp;', '&');
}

/**
 * Single sign-on per organisation (DASHBOARD 12) against a real OpenID provider (`oidc-provider` over HTTPS
 * with a test certificate) and a real DNS round trip (an in-test responder behind DNS_SERVERS), through the
 * dashboard's forms, on both dialects: connection and domains, the code flow, linking and its refusals,
 * members created on first sign-in, every ID token check, the test sign-in, the requirement with the
 * owners' break glass, "Confirm it's you" at the provider, a callback on another instance, and the daily
 * re-check of domains.
 */
describe.each(testDialects())('single sign-on (%s)', (dialect) => {
  let env: TestEnv;
  let cert: TestCertificate;
  let idp: TestOidcProvider;
  let dns: DnsResponder;
  let org: TestOrg;
  /** An owner's browser: owners change single sign-on (DASHBOARD 12, "Who may change sign-in"). */
  let settings: DashboardClient;
  /** An admin's browser: admins see the page and change nothing. */
  let admin: DashboardClient;
  let counter = 0;
  const domain = `acme-${dialect}.test`;

  beforeAll(async () => {
    cert = makeSelfSignedCertificate();
    dns = await startDnsResponder();
    idp = await startOidcProvider(cert, { redirectUri: CALLBACK });
    env = await createTestEnv(dialect, {
      env: { WEBHOOK_SECRETS_KEY: KEY, PUBLIC_BASE_URL: BASE, DNS_SERVERS: dns.server },
      outboundCa: cert.cert,
    });
    org = await env.createOrg('Acme');
    const settingsOwner = await newMember('owner');
    settings = await DashboardClient.signedIn(env, org.id, settingsOwner.id);
    const adminUser = await newMember('admin');
    admin = await DashboardClient.signedIn(env, org.id, adminUser.id);
  });
  afterAll(async () => {
    await env?.close();
    await idp?.close();
    await dns?.close();
  });
  beforeEach(() => {
    idp.tamper = null;
  });

  const db = () => env.container.database.db;
  const repos = () => env.container.store.repos;

  async function newMember(role: 'owner' | 'admin' | 'member' | 'viewer' = 'member', email = `person${++counter}@${domain}`, orgId = org?.id) {
    const user = await env.container.services.admin.addUser({ orgId, email, role, name: `Person ${counter}` });
    await repos().users.update(orgId, user.id, { password_hash: await hashPassword(PASSWORD) });
    return { id: user.id, email };
  }

  async function connect(fields: Record<string, string> = {}) {
    await settings.get('/dashboard/settings/sso');
    return settings.post('/dashboard/settings/sso/connection', { issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, default_role: 'member', ...fields });
  }

  async function verifiedDomain(name = domain, client = settings): Promise<void> {
    await client.get('/dashboard/settings/sso');
    await client.post('/dashboard/settings/sso/domains', { domain: name });
    const row = await db().selectFrom('sso_domains').selectAll().where('domain', '=', name).where('org_id', '=', org.id).executeTakeFirstOrThrow();
    dns.txt.set(`_workspace-verification.${name}`, [`workspace-verification=${row.token}`]);
    await client.get('/dashboard/settings/sso');
    const res = await client.post('/dashboard/settings/sso/domains/verify', { domain: name });
    expect(res.status).toBe(303);
  }

  /** "Sign in with single sign-on" → "Work email" → the provider (as `login`) → back at the callback. */
  async function ssoSignIn(email: string, login: string, browser = new DashboardClient(env)): Promise<{ browser: DashboardClient; res: PageResponse; back: URL }> {
    await browser.get('/dashboard/login/sso');
    const start = await browser.post('/dashboard/login/sso', { email });
    expect(start.status, textOf(start.text)).toBe(200);
    const back = await idp.signInAt(providerUrl(start), login);
    const res = await browser.get(back.pathname + back.search);
    return { browser, res, back };
  }

  /** What a refused form shows: the page it came from (a 303) or the error page. */
  async function shown(client: DashboardClient, res: PageResponse): Promise<string> {
    return textOf(res.status === 303 ? (await client.follow(res)).text : res.text);
  }

  const sessionsOf = (userId: string) => db().selectFrom('sessions').selectAll().where('user_id', '=', userId).execute();
  const identitiesOf = (userId: string) => db().selectFrom('sso_identities').selectAll().where('user_id', '=', userId).execute();
  const auditRows = (action: string) => db().selectFrom('audit_log').selectAll().where('org_id', '=', org.id).where('action', '=', action).orderBy('seq').execute();
  const mailsTo = (email: string) => outboxMessages(env.dataDir).filter((m) => m.raw.includes(`To: ${email}`)).map((m) => decodeQuotedPrintable(m.raw));

  describe('connection and domains', () => {
    it('saves a connection only after its discovery document checks out; the secret is sealed and never shown', async () => {
      const unreachable = await connect({ issuer: 'https://localhost:1' });
      expect(unreachable.status).toBe(400);
      expect(await shown(settings, unreachable)).toMatch(/was refused: the issuer's discovery document .* could not be used/);
      expect(await repos().sso.findConnection(org.id)).toBeUndefined();

      const plain = await connect({ issuer: idp.issuer.replace('https:', 'http:') });
      expect(await shown(settings, plain)).toContain('must start with https://');
      const adminRole = await connect({ default_role: 'admin' });
      expect(adminRole.status).toBe(400);
      expect(await shown(settings, adminRole)).toContain('must be viewer or member');
      expect(await repos().sso.findConnection(org.id)).toBeUndefined();

      const saved = await connect();
      expect(saved.status).toBe(303);
      expect(noticeOf((await settings.follow(saved)).text)).toContain('Connection saved');
      const row = (await repos().sso.findConnection(org.id))!;
      expect(row.client_secret.startsWith(SEALED_PREFIX)).toBe(true);
      expect(row.client_secret).not.toContain(idp.clientSecret);
      const page = await settings.get('/dashboard/settings/sso');
      expect(page.text).not.toContain(idp.clientSecret);
      expect(textOf(page.text)).toContain(`Redirect URL: ${CALLBACK}`);
      const [audit] = await auditRows('sso.connection_saved');
      expect(JSON.stringify(audit)).not.toContain(idp.clientSecret);

      // Saved again without a secret: the stored one is kept (and still opens).
      await connect({ client_secret: '' });
      expect(env.container.secretBox.open((await repos().sso.findConnection(org.id))!.client_secret)).toBe(idp.clientSecret);
    });

    it('is seen by admins and changed by owners only: a member cannot open it, an admin changes nothing', async () => {
      const member = await newMember('member');
      const browser = await DashboardClient.signedIn(env, org.id, member.id);
      expect((await browser.get('/dashboard/settings/sso')).status).toBe(403);
      const before = await repos().sso.findConnection(org.id);
      await browser.get('/dashboard');
      const refused = await browser.post('/dashboard/settings/sso/connection', { issuer: 'https://evil.example', client_id: 'x', client_secret: 'y', default_role: 'member' });
      expect(refused.status).toBe(403);
      expect(await repos().sso.findConnection(org.id)).toEqual(before);

      // The admin's page shows the settings, offers no control that changes them, and says who may.
      const page = await admin.get('/dashboard/settings/sso');
      expect(page.status).toBe(200);
      expect(textOf(page.text)).toContain('Only owners change single sign-on');
      for (const control of ['Save connection', 'Delete connection', 'Add domain', 'Test single sign-on', 'Require single sign-on<']) expect(page.text).not.toContain(control);
      const domainsBefore = await repos().sso.listDomains(org.id);
      for (const [path, form] of [
        ['connection', { issuer: 'https://evil.example', client_id: 'x', client_secret: 'y', default_role: 'member' }],
        ['connection/delete', {}],
        ['domains', { domain: 'evil.test' }],
        ['domains/verify', { domain: domain }],
        ['domains/remove', { domain: domain }],
        ['test', {}],
        ['require', { required: 'on' }],
      ] as const) {
        const res = await admin.post(`/dashboard/settings/sso/${path}`, form);
        expect(res.status, path).toBe(403);
      }
      expect(await repos().sso.findConnection(org.id)).toEqual(before);
      expect(await repos().sso.listDomains(org.id)).toEqual(domainsBefore);
    });

    it('verifies a domain by its DNS TXT record, for one organisation at a time', async () => {
      await settings.get('/dashboard/settings/sso');
      const bad = await settings.post('/dashboard/settings/sso/domains', { domain: 'not a domain' });
      expect(await shown(settings, bad)).toContain('must be a domain name');

      const name = `verify-${dialect}.test`;
      const added = await settings.post('/dashboard/settings/sso/domains', { domain: name.toUpperCase() });
      const notice = noticeOf((await settings.follow(added)).text);
      const row = await db().selectFrom('sso_domains').selectAll().where('domain', '=', name).executeTakeFirstOrThrow();
      expect(notice).toContain(`_workspace-verification.${name}`);
      expect(notice).toContain(`workspace-verification=${row.token}`);

      // Nothing published yet: refused, and still pending.
      const early = await settings.post('/dashboard/settings/sso/domains/verify', { domain: name });
      expect(early.status).toBe(409);
      expect(await shown(settings, early)).toContain(`No TXT record "workspace-verification=${row.token}" was found`);
      expect(dns.questions).toContain(`_workspace-verification.${name}`);
      expect((await repos().sso.findDomain(org.id, name))!.verified_at).toBeNull();

      dns.txt.set(`_workspace-verification.${name}`, ['v=spf1 -all', `workspace-verification=${row.token}`]);
      await settings.get('/dashboard/settings/sso');
      const ok = await settings.post('/dashboard/settings/sso/domains/verify', { domain: name });
      expect(noticeOf((await settings.follow(ok)).text)).toContain(`${name} is verified`);
      expect((await repos().sso.findDomain(org.id, name))!.verified_at).not.toBeNull();
      expect((await auditRows('sso.domain_verified')).map((r) => r.changes)).toContainEqual(expect.stringContaining(name));

      // Another organisation cannot add (or verify) it while it is verified here.
      const other = await env.createOrg('Other');
      await expect(env.container.services.sso.addDomain(cliActor(other.id), name)).rejects.toMatchObject({ status: 409, code: 'domain_taken' });
      expect(await repos().sso.findDomain(other.id, name)).toBeUndefined();
    });
  });

  describe('signing in', () => {
    beforeAll(async () => {
      if (!(await repos().sso.findConnection(org.id))) await connect();
      await verifiedDomain();
    });

    it('links an existing member on the code flow when the domain is verified and the provider vouches for the address', async () => {
      const alice = await newMember('member');
      idp.accounts.set('alice-sub', { email: alice.email, email_verified: true, name: 'Alice' });
      const { res, browser, back } = await ssoSignIn(alice.email, 'alice-sub');
      expect(back.searchParams.get('code')).toBeTruthy();
      expect(res.status, textOf(res.text)).toBe(303);
      expect(res.location).toBe('/dashboard');
      expect((await browser.get('/dashboard')).status).toBe(200);
      const [session] = await sessionsOf(alice.id);
      expect(session).toMatchObject({ method: 'sso', stage: 'active' });
      const [identity] = await identitiesOf(alice.id);
      expect(identity).toMatchObject({ issuer: idp.issuer, subject: 'alice-sub' });
      const signedIn = (await auditRows('user.signed_in')).filter((r) => r.target_id === alice.id);
      expect(signedIn.at(-1)!.changes).toContain('sso');
      expect((await auditRows('sso.identity_linked')).some((r) => r.target_id === alice.id)).toBe(true);
      // Admins see who is linked: single sign-on counts as two-step.
      const members = await admin.get('/dashboard/members');
      expect(tableRows(members.text, 'Members').find((row) => row.includes(alice.email))).toContain('Single sign-on');
    });

    it('refuses to link when the provider does not say email_verified: true; nothing is signed in or linked', async () => {
      const bob = await newMember('member');
      for (const [login, verified] of [['bob-unverified', false], ['bob-unsaid', undefined]] as const) {
        idp.accounts.set(login, { email: bob.email, ...(verified === undefined ? {} : { email_verified: verified }) });
        const { res } = await ssoSignIn(bob.email, login);
        expect(res.status).toBe(403);
        expect(textOf(res.text)).toContain('did not confirm this email address');
      }
      expect(await sessionsOf(bob.id)).toHaveLength(0);
      expect(await identitiesOf(bob.id)).toHaveLength(0);
    });

    it("links on Entra ID's xms_edov when the provider sends no email_verified", async () => {
      const kim = await newMember('member');
      idp.accounts.set('kim-entra', { email: kim.email, xms_edov: true });
      const { res } = await ssoSignIn(kim.email, 'kim-entra');
      expect(res.status, textOf(res.text)).toBe(303);
      expect(await identitiesOf(kim.id)).toHaveLength(1);
    });

    it('creates members on first sign-in only when switched on, never above the default role, and only on a verified domain', async () => {
      await connect({ client_secret: '' });
      const email = `newcomer-${dialect}@${domain}`;
      idp.accounts.set('newcomer', { email, email_verified: true, name: 'New Comer' });
      const off = await ssoSignIn(email, 'newcomer');
      expect(off.res.status).toBe(403);
      expect(textOf(off.res.text)).toContain('Ask an administrator of Acme to invite you.');
      expect(await repos().users.findByEmail(org.id, email)).toBeUndefined();

      await connect({ client_secret: '', jit: 'on', default_role: 'viewer' });
      const on = await ssoSignIn(email, 'newcomer');
      expect(on.res.status).toBe(303);
      const user = (await repos().users.findByEmail(org.id, email))!;
      expect(user).toMatchObject({ role: 'viewer', status: 'active', password_hash: null, name: 'New Comer' });
      expect((await auditRows('member.added')).some((r) => r.target_id === user.id)).toBe(true);

      // An address outside the verified domains is never created, even with creation on.
      idp.accounts.set('outsider', { email: 'outsider@elsewhere.test', email_verified: true });
      const outside = await ssoSignIn(`someone@${domain}`, 'outsider');
      expect(outside.res.status).toBe(403);
      expect(await repos().users.findByEmail(org.id, 'outsider@elsewhere.test')).toBeUndefined();
      await connect({ client_secret: '' });
    });

    it('keeps the person by subject when the provider changes their email; the new address does not take over another member', async () => {
      const dana = await newMember('member');
      const other = await newMember('member');
      idp.accounts.set('dana-sub', { email: dana.email, email_verified: true });
      expect((await ssoSignIn(dana.email, 'dana-sub')).res.status).toBe(303);
      // The provider now says dana has the other member's address.
      idp.accounts.set('dana-sub', { email: other.email, email_verified: true });
      const again = await ssoSignIn(other.email, 'dana-sub');
      expect(again.res.status).toBe(303);
      expect((await sessionsOf(dana.id)).length).toBe(2);
      expect(await sessionsOf(other.id)).toHaveLength(0);
      expect(await identitiesOf(other.id)).toHaveLength(0);
      expect((await identitiesOf(dana.id))[0]!.email).toBe(other.email);
    });

    it('refuses a callback whose state is wrong, used twice, or from another browser', async () => {
      const erin = await newMember('member');
      idp.accounts.set('erin-sub', { email: erin.email, email_verified: true });
      const browser = new DashboardClient(env);
      await browser.get('/dashboard/login/sso');
      const start = await browser.post('/dashboard/login/sso', { email: erin.email });
      const back = await idp.signInAt(providerUrl(start), 'erin-sub');

      const forged = new URL(back);
      forged.searchParams.set('state', 'forged-state');
      const wrongState = await browser.get(forged.pathname + forged.search);
      expect(wrongState.status).toBe(400);
      expect(textOf(wrongState.text)).toContain('Single sign-on failed');

      const elsewhere = await new DashboardClient(env).get(back.pathname + back.search);
      expect(elsewhere.status).toBe(400);
      // The state was taken by the other browser's try: good once, whatever the outcome.
      const replay = await browser.get(back.pathname + back.search);
      expect(replay.status).toBe(400);
      expect(await sessionsOf(erin.id)).toHaveLength(0);

      const noState = await browser.get('/dashboard/sso/callback?code=abc');
      expect(noState.status).toBe(400);
      const providerError = await browser.get('/dashboard/sso/callback?error=access_denied&session_state=x');
      expect(providerError.status).toBe(400);
    });

    it.each([
      ['a wrong nonce', (c: Record<string, unknown>) => ({ claims: { ...c, nonce: 'not-ours' } }), /nonce/],
      ['another audience', (c: Record<string, unknown>) => ({ claims: { ...c, aud: 'someone-else' } }), /aud/],
      ['an expired ID token', (c: Record<string, unknown>) => ({ claims: { ...c, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 } }), /exp|expired/i],
      ['another issuer', (c: Record<string, unknown>) => ({ claims: { ...c, iss: 'https://attacker.example' } }), /iss/],
    ])('refuses an ID token with %s: nothing signed in', async (_what, tamper, reason) => {
      const frank = await newMember('member');
      idp.accounts.set(`frank-${counter}`, { email: frank.email, email_verified: true });
      idp.tamper = tamper;
      const { res } = await ssoSignIn(frank.email, `frank-${counter}`);
      expect(res.status).toBe(400);
      expect(textOf(res.text)).toMatch(reason);
      expect(await sessionsOf(frank.id)).toHaveLength(0);
      expect(await identitiesOf(frank.id)).toHaveLength(0);
    });

    it('refuses an ID token signed by a key the issuer does not publish', async () => {
      const gus = await newMember('member');
      idp.accounts.set('gus-sub', { email: gus.email, email_verified: true });
      idp.tamper = (claims) => ({ claims, key: idp.otherKey });
      const { res } = await ssoSignIn(gus.email, 'gus-sub');
      expect(res.status).toBe(400);
      expect(textOf(res.text)).toContain('Single sign-on failed');
      expect(await sessionsOf(gus.id)).toHaveLength(0);
    });

    it('answers an email no organisation signs in for with the reason, on the form', async () => {
      const browser = new DashboardClient(env);
      await browser.get('/dashboard/login/sso');
      const res = await browser.post('/dashboard/login/sso', { email: 'someone@nobody.test' });
      expect(res.status).toBe(404);
      expect(textOf(res.text)).toContain('No organisation signs in with single sign-on for nobody.test');
      const empty = await browser.post('/dashboard/login/sso', { email: '' });
      expect(empty.status).toBe(400);
    });

    it('satisfies the two-step requirement: a member without a factor is not sent to set one up', async () => {
      const hana = await newMember('member');
      idp.accounts.set('hana-sub', { email: hana.email, email_verified: true });
      await env.container.services.accountSecurity.setRequirement(cliActor(org.id), true);
      try {
        await db().updateTable('users').set({ created_at: Date.now() - TWO_STEP_GRACE_MS - MINUTE }).where('id', '=', hana.id).execute();
        await db().updateTable('organizations').set({ two_step_required_at: Date.now() - TWO_STEP_GRACE_MS - MINUTE }).where('id', '=', org.id).execute();
        const { browser } = await ssoSignIn(hana.email, 'hana-sub');
        expect((await browser.get('/dashboard/projects')).status).toBe(200);
        // The same member signing in with a password is sent to set up a factor.
        const password = new DashboardClient(env);
        await password.get('/dashboard/login');
        await password.post('/dashboard/login', { email: hana.email, password: PASSWORD });
        expect((await password.get('/dashboard/projects')).location).toBe('/dashboard/account/security?required=1');
      } finally {
        await env.container.services.accountSecurity.setRequirement(cliActor(org.id), false);
      }
    });

    it('lands on another instance: the round trip is kept in the database', async () => {
      const ivan = await newMember('member');
      idp.accounts.set('ivan-sub', { email: ivan.email, email_verified: true });
      const second = await startSecondInstance(env, { outboundCa: cert.cert });
      try {
        const browser = new DashboardClient(env);
        await browser.get('/dashboard/login/sso');
        const start = await browser.post('/dashboard/login/sso', { email: ivan.email });
        const back = await idp.signInAt(providerUrl(start), 'ivan-sub');
        const other = new DashboardClient({ ...env, app: second.app });
        for (const [name, value] of browser.cookies) other.cookies.set(name, value);
        const res = await other.get(back.pathname + back.search);
        expect(res.status).toBe(303);
        expect((await other.get('/dashboard')).status).toBe(200);
        expect((await sessionsOf(ivan.id))[0]).toMatchObject({ method: 'sso' });
      } finally {
        await second.close();
      }
    });
  });

  describe('test sign-in, requirement and break glass', () => {
    let owner: { id: string; email: string };
    let ownerBrowser: DashboardClient;

    beforeAll(async () => {
      if (!(await repos().sso.findConnection(org.id))) await connect();
      if (!(await repos().sso.findDomain(org.id, domain))?.verified_at) await verifiedDomain();
      owner = await newMember('owner');
      ownerBrowser = await DashboardClient.signedIn(env, org.id, owner.id);
    });

    it('"Require single sign-on" waits for a successful test; the test signs nobody in and shows what the provider said', async () => {
      await db().updateTable('sso_connections').set({ tested_at: null }).where('org_id', '=', org.id).execute();
      await ownerBrowser.get('/dashboard/settings/sso');
      const early = await ownerBrowser.post('/dashboard/settings/sso/require', { required: 'on' });
      expect(await shown(ownerBrowser, early)).toContain('Run "Test single sign-on" successfully first.');
      expect((await repos().sso.findConnection(org.id))!.required_at).toBeNull();
      expect(textOf((await ownerBrowser.get('/dashboard/settings/sso')).text)).not.toContain('Require single sign-on Once');

      idp.accounts.set('tester', { email: `tester@${domain}`, email_verified: true });
      const sessionsBefore = await db().selectFrom('sessions').select('id').execute();
      await settings.get('/dashboard/settings/sso');
      const start = await settings.post('/dashboard/settings/sso/test');
      const url = providerUrl(start);
      expect(new URL(url).searchParams.get('prompt')).toBe('login');
      const back = await idp.signInAt(url, 'tester');
      const done = await settings.get(back.pathname + back.search);
      expect(done.status).toBe(303);
      expect(noticeOf((await settings.follow(done)).text)).toContain(`tester@${domain} (subject tester; e-mail confirmed by the provider: yes)`);
      expect(await db().selectFrom('sessions').select('id').execute()).toHaveLength(sessionsBefore.length);
      expect((await repos().sso.findConnection(org.id))!.tested_at).not.toBeNull();
      expect(textOf((await admin.get('/dashboard/settings/sso')).text)).toContain('Only an owner can require single sign-on.');

      // An admin cannot require it; an owner can.
      await admin.get('/dashboard/settings/sso');
      expect((await admin.post('/dashboard/settings/sso/require', { required: 'on' })).status).toBe(403);
      expect((await repos().sso.findConnection(org.id))!.required_at).toBeNull();
      await ownerBrowser.get('/dashboard/settings/sso');
      const on = await ownerBrowser.post('/dashboard/settings/sso/require', { required: 'on' });
      expect(noticeOf((await ownerBrowser.follow(on)).text)).toContain('Single sign-on is now required.');
      expect(await auditRows('sso.required')).toHaveLength(1);
    });

    it('then refuses password and passkey sign-in to members in verified domains, not to others', async () => {
      const member = await newMember('member');
      const browser = new DashboardClient(env);
      await browser.get('/dashboard/login');
      const refused = await browser.post('/dashboard/login', { email: member.email, password: PASSWORD });
      expect(refused.status).toBe(403);
      expect(textOf(refused.text)).toContain('Your organisation signs in with single sign-on.');
      expect(await sessionsOf(member.id)).toHaveLength(0);
      // A wrong password gets the password's answer: the requirement is told only after a right one (security review F3).
      const wrong = await browser.post('/dashboard/login', { email: member.email, password: 'not the password at all' });
      expect(wrong.status).toBe(401);
      expect(textOf(wrong.text)).toContain('Email or password is incorrect');
      // "Forgot password?" makes no link a member could not use.
      await browser.get('/dashboard/forgot-password');
      expect((await browser.post('/dashboard/forgot-password', { email: member.email })).status).toBe(303);
      expect(await db().selectFrom('auth_tokens').select('id').where('user_id', '=', member.id).where('purpose', '=', 'reset').execute()).toHaveLength(0);
      // The gate is the sessions service's, for every method but single sign-on (a passkey here).
      const user = (await repos().users.findById(org.id, member.id))!;
      const context = { source: 'dashboard' as const, ip: null, userAgent: null, requestId: null };
      await expect(env.container.store.transaction((r) => env.container.services.sessions.start(r, user, context, 'passkey'))).rejects.toMatchObject({ code: 'sso_required' });

      const contractor = await newMember('member', `contractor-${dialect}@elsewhere.test`);
      await browser.get('/dashboard/login');
      expect((await browser.post('/dashboard/login', { email: contractor.email, password: PASSWORD })).status).toBe(303);

      // Single sign-on still signs the member in.
      idp.accounts.set(`member-${member.id}`, { email: member.email, email_verified: true });
      expect((await ssoSignIn(member.email, `member-${member.id}`)).res.status).toBe(303);
    });

    it('lets an owner break the glass with a password and a second factor: audited and mailed to every owner', async () => {
      const loneOwner = await newMember('owner');
      const browser = new DashboardClient(env);
      await browser.get('/dashboard/login');
      const noFactor = await browser.post('/dashboard/login', { email: loneOwner.email, password: PASSWORD });
      expect(noFactor.status).toBe(403);
      expect(textOf(noFactor.text)).toContain('Owners may also sign in with a password and a second factor');

      // The owner with an authenticator app (set up through the service, as the security page does).
      await db().updateTable('sso_connections').set({ required_at: null }).where('org_id', '=', org.id).execute();
      const ownerSelf = await DashboardClient.signedIn(env, org.id, loneOwner.id);
      await ownerSelf.get('/dashboard/account/security');
      const setup = await ownerSelf.follow(await ownerSelf.post('/dashboard/account/security/totp/setup'));
      const secret = /Setup key: <code class="setup-key">([A-Z2-7 ]+)<\/code>/.exec(setup.text)![1]!.replaceAll(' ', '');
      await ownerSelf.post('/dashboard/account/security/totp/enable', { code: await totpCodeAt(secret, Date.now() - 30_000) });
      await db().updateTable('sso_connections').set({ required_at: Date.now() }).where('org_id', '=', org.id).execute();

      await browser.get('/dashboard/login');
      const first = await browser.post('/dashboard/login', { email: loneOwner.email, password: PASSWORD });
      expect(first.location).toBe('/dashboard/login/two-step');
      await browser.get('/dashboard/login/two-step');
      const second = await browser.post('/dashboard/login/two-step', { code: await totpCodeAt(secret, Date.now()) });
      expect(second.status, textOf(second.text)).toBe(303);
      expect((await browser.get('/dashboard')).status).toBe(200);
      const glass = (await auditRows('sso.break_glass')).filter((r) => r.target_id === loneOwner.id);
      expect(glass).toHaveLength(1);
      for (const o of [owner, loneOwner]) {
        await waitFor(`the break-glass mail to ${o.email}`, () => mailsTo(o.email).some((m) => m.includes('signed in without single sign-on')));
      }
    });

    it('confirms it is you through the provider (prompt=login, max_age=0), and only as the same person', async () => {
      const jo = await newMember('member');
      idp.accounts.set('jo-sub', { email: jo.email, email_verified: true });
      const { browser } = await ssoSignIn(jo.email, 'jo-sub');
      await db().updateTable('sessions').set({ confirmed_at: Date.now() - 20 * MINUTE }).where('user_id', '=', jo.id).execute();
      await browser.get('/dashboard/api-keys');
      const ask = await browser.post('/dashboard/api-keys', { name: 'from sso', access: 'full', _from: '/dashboard/api-keys' });
      expect(ask.status).toBe(403);
      expect(textOf(ask.text)).toContain('Confirm with single sign-on');

      const start = await browser.post('/dashboard/sso/confirm', { next: '/dashboard/api-keys' });
      const url = new URL(providerUrl(start));
      expect(url.searchParams.get('max_age')).toBe('0');
      // Someone else at the provider: refused, the session stays unconfirmed.
      idp.accounts.set('not-jo', { email: `not-jo@${domain}`, email_verified: true });
      const wrong = await browser.get(((b) => b.pathname + b.search)(await idp.signInAt(url.href, 'not-jo')));
      expect(wrong.status).toBe(400);
      expect(textOf(wrong.text)).toContain('signed in someone else');

      await browser.get('/dashboard/api-keys');
      const again = await browser.post('/dashboard/sso/confirm', { next: '/dashboard/api-keys' });
      const back = await idp.signInAt(providerUrl(again), 'jo-sub');
      const done = await browser.get(back.pathname + back.search);
      expect(done.location).toBe('/dashboard/api-keys');
      const [session] = await sessionsOf(jo.id);
      expect(session!.confirmed_at).toBeGreaterThan(Date.now() - MINUTE);
    });

    it('keeps the issuer while required, refuses removing the last verified domain, and the CLI sees and changes it', async () => {
      await db().updateTable('sso_connections').set({ required_at: Date.now() }).where('org_id', '=', org.id).execute();
      const changed = await connect({ issuer: 'https://other.example', client_secret: '' });
      expect(await shown(settings, changed)).toContain('stop requiring it before you change the issuer');
      for (const other of (await repos().sso.listDomains(org.id)).filter((d) => d.domain !== domain)) await env.container.services.sso.removeDomain(cliActor(org.id), other.domain);
      await expect(env.container.services.sso.removeDomain(cliActor(org.id), domain)).rejects.toMatchObject({ status: 409 });
      expect(await repos().sso.findDomain(org.id, domain)).toBeDefined();
      await expect(env.container.services.sso.deleteConnection(cliActor(org.id))).rejects.toMatchObject({ status: 409 });
      expect((await repos().sso.findConnection(org.id))!.issuer).toBe(idp.issuer);

      await env.container.services.sso.setRequired(cliActor(org.id), false);
      expect((await repos().sso.findConnection(org.id))!.required_at).toBeNull();
      expect((await auditRows('sso.not_required')).at(-1)!.source).toBe('cli');
    });

    it('re-checks verified domains daily: a missing record is flagged, and after 7 days the domain is unverified', async () => {
      const name = `recheck-${dialect}.test`;
      await verifiedDomain(name);
      const service = env.container.services.sso;
      const at = (ms: number) => db().updateTable('sso_domains').set({ last_checked_at: ms }).where('domain', '=', name).execute();
      dns.txt.delete(`_workspace-verification.${name}`);
      await at(Date.now() - DOMAIN_RECHECK_MS - MINUTE);
      await service.recheckDomains();
      let row = (await repos().sso.findDomain(org.id, name))!;
      expect(row.missing_since).not.toBeNull();
      expect(row.verified_at).not.toBeNull();
      expect(textOf((await settings.get('/dashboard/settings/sso')).text)).toContain('Verified; record missing');

      await db().updateTable('sso_domains').set({ missing_since: Date.now() - DOMAIN_GRACE_MS - MINUTE }).where('domain', '=', name).execute();
      await at(Date.now() - DOMAIN_RECHECK_MS - MINUTE);
      await service.recheckDomains();
      row = (await repos().sso.findDomain(org.id, name))!;
      expect(row.verified_at).toBeNull();
      expect((await auditRows('sso.domain_unverified')).at(-1)!.changes).toContain(name);

      // Published again: verified again.
      dns.txt.set(`_workspace-verification.${name}`, [`workspace-verification=${row.token}`]);
      await service.verifyDomain(cliActor(org.id), name);
      expect((await repos().sso.findDomain(org.id, name))!.verified_at).not.toBeNull();
    });
  });

  it('keeps the token of a finished round trip nowhere: attempts are single use and pruned', async () => {
    await db().insertInto('sso_attempts').values({ state_hash: sha256Hex('old'), org_id: org.id, connection_id: 'x', purpose: 'sign_in', binding: 'b', code_verifier: 'v', nonce: 'n', user_id: null, next: null, expires_at: Date.now() - 1 }).execute();
    expect(await env.container.services.sso.prune()).toBeGreaterThanOrEqual(1);
    expect(await db().selectFrom('sso_attempts').select('state_hash').where('state_hash', '=', sha256Hex('old')).execute()).toHaveLength(0);
  });
});

describe('single sign-on issuers on private networks', () => {
  it('refuses an issuer on a loopback address unless the operator allows private networks', async () => {
    const env = await createTestEnv('sqlite', { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false', SSO_ALLOW_PRIVATE_NETWORKS: 'false' } });
    try {
      const org = await env.createOrg('Private');
      const input = { issuer: 'https://127.0.0.1:8443', clientId: 'c', clientSecret: 's', jit: false, defaultRole: 'member' };
      await expect(env.container.services.sso.saveConnection(cliActor(org.id), input)).rejects.toMatchObject({ status: 400, message: expect.stringContaining('SSO_ALLOW_PRIVATE_NETWORKS') });
      await expect(env.container.services.sso.saveConnection(cliActor(org.id), { ...input, issuer: 'https://localhost:8443' })).rejects.toMatchObject({ status: 400 });
      expect(await env.container.store.repos.sso.findConnection(org.id)).toBeUndefined();
    } finally {
      await env.close();
    }
  });
});
