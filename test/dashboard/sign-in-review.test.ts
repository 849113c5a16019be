import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { hashPassword, scryptAsync } from '../../src/lib/crypto.js';
import { cliActor } from '../../src/services/access/actor.js';
import { DashboardClient, noticeOf, tableRows, textOf, type PageResponse } from '../helpers/dashboard.js';
import { startDnsResponder, type DnsResponder } from '../helpers/dns-responder.js';
import { makeSelfSignedCertificate, waitFor, type TestCertificate } from '../helpers/https-receiver.js';
import { decodeQuotedPrintable, latestInvitationToken, outboxMessages } from '../helpers/mail-outbox.js';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const PASSWORD = 'a good long password';
const KEY = Buffer.alloc(32, 7).toString('base64');
const BASE = 'http://ws.test';
const CALLBACK = `${BASE}/dashboard/sso/callback`;
const MINUTE = 60_000;
const SECRET_A = 'secret-a-VERY-DISTINCTIVE-123';
const SECRET_B = 'the attacker provider secret';

/** The identity provider's address on a "Continue to your identity provider" page. */
function providerUrl(page: PageResponse): string {
  const match = /<meta http-equiv="refresh" content="0;url=([^"]+)"/.exec(page.text);
  if (!match) throw new Error(`no redirect to the provider on a ${page.status} page: ${textOf(page.text).slice(0, 300)}`);
  return match[1]!.replaceAll('&amp;', '&');
}

/** The hidden fields of the form posting to `action` (what "Confirm it's you" posts again). */
function hiddenFields(html: string, action: string): Record<string, string> {
  const form = new RegExp(`<form method="post" action="${action}"[^>]*>([\\s\\S]*?)</form>`).exec(html);
  if (!form) throw new Error(`no form posting to ${action}`);
  const fields: Record<string, string> = {};
  for (const m of form[1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) fields[m[1]!] = m[2]!.replaceAll('&amp;', '&').replaceAll('&quot;', '"');
  // The client sends the page's token itself.
  delete fields._csrf;
  return fields;
}

/** The settings page a browser sends its forms from: a refusal comes back to it (`_from`). */
const FROM_SETTINGS = { _from: '/dashboard/settings/sso' };

/**
 * The security review of sign-in (issue 41, ../shared/research/security-review-5.md): each finding replayed as
 * the review did it, against two real OpenID providers (the organisation's, A, and one an attacker controls, B,
 * which also records every client secret its token endpoint is sent), the DNS responder, and a software
 * passkey authenticator; each must now be refused with nothing changed. Both dialects.
 */
describe.each(testDialects())('sign-in security review (%s)', (dialect) => {
  let env: TestEnv;
  let cert: TestCertificate;
  let idpA: TestOidcProvider;
  let idpB: TestOidcProvider;
  let dns: DnsResponder;
  let org: TestOrg;
  let counter = 0;
  let derivations = 0;
  const domain = `acme-review-${dialect}.test`;

  beforeAll(async () => {
    cert = makeSelfSignedCertificate();
    dns = await startDnsResponder();
    idpA = await startOidcProvider(cert, { redirectUri: CALLBACK, clientId: 'client-a', clientSecret: SECRET_A });
    // The attacker's provider also knows a client named client-a, with its own secret (F2).
    idpB = await startOidcProvider(cert, { redirectUri: CALLBACK, clientId: 'client-a', clientSecret: SECRET_B });
    env = await createTestEnv(dialect, {
      env: { WEBHOOK_SECRETS_KEY: KEY, PUBLIC_BASE_URL: BASE, DNS_SERVERS: dns.server },
      outboundCa: cert.cert,
      passwordKdf: (password, salt) => {
        derivations++;
        return scryptAsync(password, salt);
      },
    });
    org = await env.createOrg('Acme');
    await env.container.services.sso.saveConnection(cliActor(org.id), { issuer: idpA.issuer, clientId: 'client-a', clientSecret: SECRET_A, jit: false, defaultRole: 'member' });
    await verify(org.id, domain);
  });
  afterAll(async () => {
    await env?.close();
    await idpA?.close();
    await idpB?.close();
    await dns?.close();
  });

  const db = () => env.container.database.db;
  const repos = () => env.container.store.repos;
  const sso = () => env.container.services.sso;

  async function verify(orgId: string, name: string): Promise<void> {
    const added = await sso().addDomain(cliActor(orgId), name);
    dns.txt.set(added.recordName, [added.recordValue]);
    await sso().verifyDomain(cliActor(orgId), name);
  }

  async function person(role: 'owner' | 'admin' | 'member' | 'viewer', email = `person${++counter}@${domain}`, orgId = org.id) {
    const user = await env.container.services.admin.addUser({ orgId, email, role, name: `Person ${counter}` });
    await repos().users.update(orgId, user.id, { password_hash: await hashPassword(PASSWORD) });
    return { id: user.id, email };
  }

  async function connectTo(idp: TestOidcProvider, secret: string): Promise<void> {
    await db().updateTable('sso_connections').set({ required_at: null }).where('org_id', '=', org.id).execute();
    await sso().saveConnection(cliActor(org.id), { issuer: idp.issuer, clientId: 'client-a', clientSecret: secret, jit: false, defaultRole: 'member' });
  }

  /** "Sign in with single sign-on" → "Work email" → the provider (as `login`) → back at the callback. */
  async function ssoSignIn(idp: TestOidcProvider, email: string, login: string, browser = new DashboardClient(env)) {
    await browser.get('/dashboard/login/sso');
    const start = await browser.post('/dashboard/login/sso', { email });
    expect(start.status, textOf(start.text)).toBe(200);
    const back = await idp.signInAt(providerUrl(start), login);
    return { browser, res: await browser.get(back.pathname + back.search) };
  }

  const sessionsOf = (userId: string) => db().selectFrom('sessions').selectAll().where('user_id', '=', userId).execute();
  const identitiesOf = (userId: string) => db().selectFrom('sso_identities').selectAll().where('user_id', '=', userId).execute();
  const auditRows = (action: string, orgId = org.id) => db().selectFrom('audit_log').selectAll().where('org_id', '=', orgId).where('action', '=', action).orderBy('seq').execute();
  const mailsTo = (email: string) => outboxMessages(env.dataDir).filter((m) => m.raw.includes(`To: ${email}`)).map((m) => decodeQuotedPrintable(m.raw));
  const ownersOf = async (orgId = org.id) => (await repos().users.findActiveOwners(orgId)).map((o) => o.email);

  /** What a refused form shows: the page it came from (a 303) or the error page. */
  async function shown(client: DashboardClient, res: PageResponse): Promise<string> {
    return textOf(res.status === 303 ? (await client.follow(res)).text : res.text);
  }

  async function linkAt(idp: TestOidcProvider, browser: DashboardClient, login: string): Promise<PageResponse> {
    await browser.get('/dashboard/account/security');
    const start = await browser.post('/dashboard/sso/link', { next: '/dashboard/account/security' });
    const url = providerUrl(start);
    expect(new URL(url).searchParams.get('prompt')).toBe('login');
    const back = await idp.signInAt(url, login);
    return browser.get(back.pathname + back.search);
  }

  describe('F1: who may change sign-in, and who is linked by e-mail', () => {
    let alice: { id: string; email: string };
    let oscar: { id: string; email: string };
    let adam: { id: string; email: string };
    let adamBrowser: DashboardClient;

    beforeAll(async () => {
      await connectTo(idpA, SECRET_A);
      alice = await person('owner');
      oscar = await person('owner');
      adam = await person('admin');
      adamBrowser = await DashboardClient.signedIn(env, org.id, adam.id);
      // Alice links her account herself, from a confirmed session, as owners do.
      const aliceBrowser = await DashboardClient.signedIn(env, org.id, alice.id);
      idpA.accounts.set('sub-alice', { email: alice.email, email_verified: true, name: 'Alice' });
      const linked = await linkAt(idpA, aliceBrowser, 'sub-alice');
      expect(linked.status, textOf(linked.text)).toBe(303);
      expect(await identitiesOf(alice.id)).toHaveLength(1);
    });

    it('an admin can neither delete nor repoint the connection (403); the connection and the links stay as they were', async () => {
      const before = await repos().sso.findConnection(org.id);
      await adamBrowser.get('/dashboard/settings/sso');
      // Not its confirmation step either (DASHBOARD 1: destructive actions are confirmed first).
      expect((await adamBrowser.get('/dashboard/settings/sso/connection/delete')).status).toBe(403);
      expect((await adamBrowser.post('/dashboard/settings/sso/connection/delete')).status).toBe(403);
      const repoint = await adamBrowser.post('/dashboard/settings/sso/connection', { issuer: idpB.issuer, client_id: 'client-a', client_secret: SECRET_B, default_role: 'member' });
      expect(repoint.status).toBe(403);
      expect(await repos().sso.findConnection(org.id)).toEqual(before);
      expect(await identitiesOf(alice.id)).toHaveLength(1);
    });

    it('re-created at another provider by an owner: the links are kept, and the new provider cannot claim an owner or an admin by e-mail', async () => {
      const owner = await DashboardClient.signedIn(env, org.id, oscar.id);
      // The danger zone leads to a confirmation page; reading it changes nothing.
      const settings = await owner.get('/dashboard/settings/sso');
      expect(settings.text).toMatch(/<section class="danger-zone"[^]*<a href="\/dashboard\/settings\/sso\/connection\/delete" class="button danger-outline">Delete connection<\/a>/);
      const confirm = await owner.get('/dashboard/settings/sso/connection/delete');
      expect(confirm.status).toBe(200);
      expect(confirm.text).toContain('<button type="submit" class="button danger">Delete connection</button>');
      expect(confirm.text).toContain('<a href="/dashboard/settings/sso">Keep the connection</a>');
      expect(await repos().sso.findConnection(org.id)).not.toBeNull();
      expect((await owner.post('/dashboard/settings/sso/connection/delete')).status).toBe(303);
      // Deleting the connection forgets nobody's link.
      expect(await identitiesOf(alice.id)).toHaveLength(1);
      await owner.get('/dashboard/settings/sso');
      const saved = await owner.post('/dashboard/settings/sso/connection', { issuer: idpB.issuer, client_id: 'client-a', client_secret: SECRET_B, default_role: 'member' });
      expect(saved.status, textOf(saved.text)).toBe(303);

      // Mallory at B claims alice's address (verified, in the verified domain): refused, nothing signed in or linked.
      for (const victim of [alice, oscar, adam]) {
        idpB.accounts.set(`mallory-${victim.id}`, { email: victim.email, email_verified: true });
        const { res } = await ssoSignIn(idpB, victim.email, `mallory-${victim.id}`);
        expect(res.status, victim.email).toBe(403);
        expect(textOf(res.text)).toContain('link single sign-on to their account themselves');
        expect((await identitiesOf(victim.id)).filter((i) => i.issuer === idpB.issuer)).toHaveLength(0);
        expect((await sessionsOf(victim.id)).filter((s) => s.method === 'sso')).toHaveLength(0);
      }

      // A member is still linked by e-mail at the new provider, and every owner and the member hear of it.
      const carol = await person('member');
      idpB.accounts.set('carol-b', { email: carol.email, email_verified: true });
      expect((await ssoSignIn(idpB, carol.email, 'carol-b')).res.status).toBe(303);
      for (const to of await ownersOf()) {
        await waitFor(`the link mail to ${to}`, () => mailsTo(to).some((m) => m.includes(`the account of ${carol.email} in Acme was linked to`) && m.includes(idpB.issuer)));
      }
      await waitFor('the link mail to carol', () => mailsTo(carol.email).some((m) => m.includes('your Acme account was linked to')));
      // Every owner heard of the deletion and of the new connection.
      for (const to of await ownersOf()) {
        await waitFor(`the settings mails to ${to}`, () => {
          const settings = mailsTo(to).filter((m) => m.includes('changed the single sign-on settings of Acme'));
          return settings.some((m) => m.includes(`deleted the connection to ${idpA.issuer}`)) && settings.some((m) => m.includes(`connected ${idpB.issuer}`));
        });
      }

      // Back at provider A (its secret typed again): alice's old link signs her in as herself.
      await owner.get('/dashboard/settings/sso');
      expect((await owner.post('/dashboard/settings/sso/connection', { issuer: idpA.issuer, client_id: 'client-a', client_secret: SECRET_A, default_role: 'member' })).status).toBe(303);
      const back = await ssoSignIn(idpA, alice.email, 'sub-alice');
      expect(back.res.status).toBe(303);
      expect((await sessionsOf(alice.id)).some((s) => s.method === 'sso')).toBe(true);
    });

    it('repointed by changing only the issuer: an owner who never used single sign-on is not claimed', async () => {
      await connectTo(idpA, SECRET_A);
      await sso().saveConnection(cliActor(org.id), { issuer: idpB.issuer, clientId: 'client-a', clientSecret: SECRET_B, jit: true, defaultRole: 'member' });
      idpB.accounts.set('eve-as-oscar', { email: oscar.email, email_verified: true });
      const { res } = await ssoSignIn(idpB, oscar.email, 'eve-as-oscar');
      expect(res.status).toBe(403);
      expect(await identitiesOf(oscar.id)).toHaveLength(0);
      expect((await sessionsOf(oscar.id)).filter((s) => s.method === 'sso')).toHaveLength(0);
      expect((await repos().users.findById(org.id, oscar.id))!.role).toBe('owner');
      await connectTo(idpA, SECRET_A);
    });

    it('"Link my single sign-on account": confirmed session only, a fresh sign-in at the provider, mailed; a subject links one member', async () => {
      await connectTo(idpA, SECRET_A);
      idpA.accounts.set('sub-adam', { email: `adam.at.provider@${domain}`, email_verified: true });
      // Not confirmed in the last 15 minutes: "Confirm it's you" first.
      await db().updateTable('sessions').set({ confirmed_at: Date.now() - 20 * MINUTE }).where('user_id', '=', adam.id).execute();
      await adamBrowser.get('/dashboard/account/security');
      const asked = await adamBrowser.post('/dashboard/sso/link', { next: '/dashboard/account/security' });
      expect(asked.status).toBe(403);
      expect(textOf(asked.text)).toContain("Confirm it's you");
      await db().updateTable('sessions').set({ confirmed_at: Date.now() }).where('user_id', '=', adam.id).execute();

      const done = await linkAt(idpA, adamBrowser, 'sub-adam');
      expect(done.status, textOf(done.text)).toBe(303);
      expect(noticeOf((await adamBrowser.follow(done)).text)).toContain(`Your account is now linked to adam.at.provider@${domain}`);
      const [identity] = await identitiesOf(adam.id);
      expect(identity).toMatchObject({ issuer: idpA.issuer, subject: 'sub-adam' });
      expect((await auditRows('sso.identity_linked')).filter((r) => r.target_id === adam.id).at(-1)!.changes).toContain('self');
      for (const to of (await ownersOf()).concat(adam.email)) {
        await waitFor(`the link mail to ${to}`, () => mailsTo(to).some((m) => m.includes('(subject sub-adam)')));
      }
      // The admin now signs in through the provider as himself.
      expect((await ssoSignIn(idpA, adam.email, 'sub-adam')).res.status).toBe(303);

      // The same provider account cannot be linked to another member.
      const dave = await person('member');
      const daveBrowser = await DashboardClient.signedIn(env, org.id, dave.id);
      const refused = await linkAt(idpA, daveBrowser, 'sub-adam');
      expect(refused.status).toBe(400);
      expect(textOf(refused.text)).toContain('already linked to another member');
      expect(await identitiesOf(dave.id)).toHaveLength(0);
    });
  });

  describe('admins who have not linked their account when single sign-on is required', () => {
    it('are named on the page, told how to get in, and get in as a member first', async () => {
      await connectTo(idpA, SECRET_A);
      const admin = await person('admin');
      const owner = await person('owner');
      const browser = await DashboardClient.signedIn(env, org.id, owner.id);
      const before = textOf((await browser.get('/dashboard/settings/sso')).text);
      expect(before).toContain('Once single sign-on is required, an admin who is not linked cannot sign in');
      expect(before).toMatch(new RegExp(`Not linked yet: [^.]*Person ${admin.email.match(/\d+/)![0]}`));
      await db().updateTable('sso_connections').set({ tested_at: Date.now(), required_at: Date.now() }).where('org_id', '=', org.id).execute();
      try {
        idpA.accounts.set(`sub-${admin.id}`, { email: admin.email, email_verified: true });
        const refused = await ssoSignIn(idpA, admin.email, `sub-${admin.id}`);
        expect(refused.res.status).toBe(403);
        expect(textOf(refused.res.text)).toContain('ask an owner to make you a member until your first single sign-on');
        // The way in: a member for the first single sign-on (linked by e-mail), then an admin again.
        await env.container.services.users.changeRole(cliActor(org.id), admin.id, 'member');
        expect((await ssoSignIn(idpA, admin.email, `sub-${admin.id}`)).res.status).toBe(303);
        await env.container.services.users.changeRole(cliActor(org.id), admin.id, 'admin');
        expect((await ssoSignIn(idpA, admin.email, `sub-${admin.id}`)).res.status).toBe(303);
        expect(textOf((await browser.get('/dashboard/settings/sso')).text)).not.toMatch(new RegExp(`Not linked yet: [^.]*Person ${admin.email.match(/\d+/)![0]}\b`));
      } finally {
        await db().updateTable('sso_connections').set({ required_at: null }).where('org_id', '=', org.id).execute();
      }
    });
  });

  describe('F2: the stored secret is never sent to another provider', () => {
    it('a new issuer (or client ID) without the secret is refused; provider B never receives provider A\'s secret', async () => {
      await connectTo(idpA, SECRET_A);
      const owner = await person('owner');
      const browser = await DashboardClient.signedIn(env, org.id, owner.id);
      const before = await repos().sso.findConnection(org.id);
      await browser.get('/dashboard/settings/sso');
      const changed = await browser.post('/dashboard/settings/sso/connection', { issuer: idpB.issuer, client_id: 'client-a', client_secret: '', default_role: 'member', ...FROM_SETTINGS });
      expect(changed.status).toBe(303);
      expect(await shown(browser, changed)).toContain('must be typed again when the issuer or the client ID changes');
      await browser.get('/dashboard/settings/sso');
      const clientOnly = await browser.post('/dashboard/settings/sso/connection', { issuer: idpA.issuer, client_id: 'client-b', client_secret: '', default_role: 'member', ...FROM_SETTINGS });
      expect(await shown(browser, clientOnly)).toContain('must be typed again');
      expect(await repos().sso.findConnection(org.id)).toEqual(before);

      // As the review did next: anyone starts a sign-in; it still goes to A, and B hears nothing.
      const probe = await person('member');
      idpA.accounts.set('probe', { email: probe.email, email_verified: true });
      expect((await ssoSignIn(idpA, probe.email, 'probe')).res.status).toBe(303);
      expect(idpB.receivedSecrets).not.toContain(SECRET_A);

      // Typed again, it is saved and only the typed secret goes to B.
      await browser.get('/dashboard/settings/sso');
      expect((await browser.post('/dashboard/settings/sso/connection', { issuer: idpB.issuer, client_id: 'client-a', client_secret: SECRET_B, default_role: 'member' })).status).toBe(303);
      idpB.accounts.set('probe-b', { email: probe.email, email_verified: true });
      await ssoSignIn(idpB, probe.email, 'probe-b');
      expect(idpB.receivedSecrets.length).toBeGreaterThan(0);
      expect(idpB.receivedSecrets.every((s) => s === SECRET_B)).toBe(true);
      await connectTo(idpA, SECRET_A);
    });
  });

  describe('F3: the single sign-on refusal is no free list of members', () => {
    it('12 wrong passwords for a member who must use single sign-on: 401 five times, then 429; the right password gets the refusal and counts', async () => {
      await connectTo(idpA, SECRET_A);
      await db().updateTable('sso_connections').set({ tested_at: Date.now(), required_at: Date.now() }).where('org_id', '=', org.id).execute();
      try {
        const dave = await person('member');
        const browser = new DashboardClient(env, { remoteAddress: '127.0.0.41' });
        const statuses: number[] = [];
        for (let i = 0; i < 12; i++) {
          await browser.get('/dashboard/login');
          const res = await browser.post('/dashboard/login', { email: dave.email, password: `wrong password number ${i}` });
          statuses.push(res.status);
          expect(textOf(res.text)).not.toContain('signs in with single sign-on');
        }
        expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429, 429, 429]);
        // An address nobody has answers the same way.
        const nobody = new DashboardClient(env, { remoteAddress: '127.0.0.42' });
        await nobody.get('/dashboard/login');
        expect((await nobody.post('/dashboard/login', { email: `nobody@${domain}`, password: 'wrong password' })).status).toBe(401);

        // The right password is told, and it counts like any other attempt.
        const erin = await person('member');
        const right = new DashboardClient(env, { remoteAddress: '127.0.0.43' });
        const answers: number[] = [];
        for (let i = 0; i < 6; i++) {
          await right.get('/dashboard/login');
          const res = await right.post('/dashboard/login', { email: erin.email, password: PASSWORD });
          answers.push(res.status);
          if (i === 0) expect(textOf(res.text)).toContain('Your organisation signs in with single sign-on.');
        }
        expect(answers).toEqual([403, 403, 403, 403, 403, 429]);
        expect(await sessionsOf(erin.id)).toHaveLength(0);
        expect((await auditRows('user.sign_in_failed')).filter((r) => r.target_id === erin.id)[0]!.changes).toContain('sso_required');
      } finally {
        await db().updateTable('sso_connections').set({ required_at: null }).where('org_id', '=', org.id).execute();
      }
    });
  });

  describe('F4: a passkey challenge is spent whatever the outcome', () => {
    let member: { id: string; email: string };
    let soft: SoftAuthenticator;

    beforeAll(async () => {
      member = await person('member', `passkeys-${dialect}@elsewhere.test`);
      soft = new SoftAuthenticator('ws.test', BASE);
      const browser = await DashboardClient.signedIn(env, org.id, member.id);
      await browser.get('/dashboard/account/security');
      const options = JSON.parse((await browser.post('/dashboard/account/security/passkeys/options')).text) as PublicKeyCredentialCreationOptionsJSON;
      const added = await browser.post('/dashboard/account/security/passkeys', { name: 'Soft key', response: JSON.stringify(soft.register(options)) });
      expect(added.status, textOf(added.text)).toBe(303);
    });

    const passkeySessions = async () => (await sessionsOf(member.id)).filter((s) => s.method === 'passkey');

    async function signInOptions(browser: DashboardClient): Promise<PublicKeyCredentialRequestOptionsJSON> {
      await browser.get('/dashboard/login');
      return JSON.parse((await browser.post('/dashboard/login/passkey/options')).text) as PublicKeyCredentialRequestOptionsJSON;
    }

    it('an unknown credential, then the real passkey, over one challenge: both refused', async () => {
      const browser = new DashboardClient(env, { remoteAddress: '127.0.0.51' });
      const challenge = await signInOptions(browser);
      const stranger = new SoftAuthenticator('ws.test', BASE);
      stranger.register({ challenge: 'x', user: { id: 'nobody', name: 'n', displayName: 'n' } } as PublicKeyCredentialCreationOptionsJSON);
      const unknown = await browser.post('/dashboard/login/passkey', { response: JSON.stringify(stranger.assert(challenge)) });
      expect(unknown.status).toBe(400);
      const real = await browser.post('/dashboard/login/passkey', { response: JSON.stringify(soft.assert(challenge)) });
      expect(real.status).toBe(400);
      expect(textOf(real.text)).toContain('That passkey was not accepted.');
      expect(await passkeySessions()).toHaveLength(0);
      // With a challenge of its own, the same passkey signs in: it was the challenge that was spent.
      const fresh = await browser.post('/dashboard/login/passkey', { response: JSON.stringify(soft.assert(await signInOptions(browser))) });
      expect(fresh.status).toBe(303);
      await db().deleteFrom('sessions').where('user_id', '=', member.id).where('method', '=', 'passkey').execute();
    });

    it('without user verification, then with it, over one challenge: both refused; at registration too', async () => {
      const browser = new DashboardClient(env, { remoteAddress: '127.0.0.52' });
      const challenge = await signInOptions(browser);
      expect((await browser.post('/dashboard/login/passkey', { response: JSON.stringify(soft.assert(challenge, { uv: false })) })).status).toBe(400);
      expect((await browser.post('/dashboard/login/passkey', { response: JSON.stringify(soft.assert(challenge, { uv: true })) })).status).toBe(400);
      expect(await passkeySessions()).toHaveLength(0);

      // Signed in with the passkey (the member has a factor now, so a password alone would owe one).
      const signedIn = new DashboardClient(env, { remoteAddress: '127.0.0.53' });
      expect((await signedIn.post('/dashboard/login/passkey', { response: JSON.stringify(soft.assert(await signInOptions(signedIn))) })).status).toBe(303);
      await signedIn.get('/dashboard/account/security');
      const optionsPage = await signedIn.post('/dashboard/account/security/passkeys/options');
      expect(optionsPage.status, optionsPage.text.slice(0, 300)).toBe(200);
      const options = JSON.parse(optionsPage.text) as PublicKeyCredentialCreationOptionsJSON;
      const second = new SoftAuthenticator('ws.test', BASE);
      expect((await signedIn.post('/dashboard/account/security/passkeys', { name: 'No UV', response: JSON.stringify(second.register(options, { uv: false })) })).status).toBe(400);
      expect((await signedIn.post('/dashboard/account/security/passkeys', { name: 'With UV', response: JSON.stringify(second.register(options, { uv: true })) })).status).toBe(400);
      expect(await repos().secondFactors.listPasskeys(org.id, member.id)).toHaveLength(1);
    });
  });

  describe('F6: "Require single sign-on" and API keys', () => {
    it('says keys keep working, and revokes those of the members it binds when asked (owners keep theirs)', async () => {
      await connectTo(idpA, SECRET_A);
      await db().updateTable('sso_connections').set({ tested_at: Date.now(), test_subject: 's' }).where('org_id', '=', org.id).execute();
      const member = await person('member');
      const memberKey = await env.container.services.admin.createKey({ userId: member.id, scope: 'full' });
      const contractor = await person('member', `contractor-${dialect}@elsewhere.test`);
      const contractorKey = await env.container.services.admin.createKey({ userId: contractor.id, scope: 'full' });
      const owner = await person('owner');
      const ownerKey = await env.container.services.admin.createKey({ userId: owner.id, scope: 'full' });
      const browser = await DashboardClient.signedIn(env, org.id, owner.id);
      const page = await browser.get('/dashboard/settings/sso');
      expect(textOf(page.text)).toContain('Their API keys are credentials of their own and keep working, unless you revoke them with it below.');
      expect(textOf(page.text)).toMatch(/Also revoke their API keys \(\d+ keys?\)/);

      // Required without the box: keys keep working.
      expect((await browser.post('/dashboard/settings/sso/require', { required: 'on' })).status).toBe(303);
      expect((await env.request('GET', '/v1/projects', { key: memberKey.key })).status).toBe(200);
      await browser.get('/dashboard/settings/sso');
      await browser.post('/dashboard/settings/sso/require', { required: 'off' });

      await browser.get('/dashboard/settings/sso');
      const required = await browser.post('/dashboard/settings/sso/require', { required: 'on', revoke_keys: 'on' });
      expect(noticeOf((await browser.follow(required)).text)).toMatch(/Single sign-on is now required\. \d+ API keys? of members who must use it (was|were) revoked\./);
      const refused = await env.request('GET', '/v1/projects', { key: memberKey.key });
      expect(refused.status).toBe(401);
      expect((await env.request('GET', '/v1/projects', { key: ownerKey.key })).status).toBe(200);
      expect((await env.request('GET', '/v1/projects', { key: contractorKey.key })).status).toBe(200);
      const revoked = (await auditRows('api_key.revoked')).filter((r) => r.target_id === memberKey.id);
      expect(revoked).toHaveLength(1);
      expect(revoked[0]!.changes).toContain('sso_required');
      await db().updateTable('sso_connections').set({ required_at: null }).where('org_id', '=', org.id).execute();
    });
  });

  describe('F7: a sign-in costs the same however many organisations share the address', () => {
    it('one key derivation for a wrong password, with accounts in one, two or three organisations, and for an unknown address', async () => {
      const costs: number[] = [];
      for (const count of [1, 2, 3]) {
        const email = `shared${count}-${dialect}@multi.test`;
        for (let i = 0; i < count; i++) {
          const other = await env.createOrg(`Multi ${count}.${i}`);
          const user = await env.container.services.admin.addUser({ orgId: other.id, email, role: 'member', name: 'Shared' });
          const link = await env.container.services.accounts.issuePasswordLink(cliActor(other.id), user.id, 'setup');
          await env.container.services.accounts.setPassword(link.url.split('/').at(-1)!, `${PASSWORD} ${i}`, { source: 'dashboard', ip: null, userAgent: null, requestId: null });
        }
        const before = derivations;
        await expect(env.container.services.accounts.signIn(email, 'not the password', { source: 'dashboard', ip: `10.7.0.${count}`, userAgent: null, requestId: null })).rejects.toMatchObject({ status: 401 });
        costs.push(derivations - before);
      }
      const before = derivations;
      await expect(env.container.services.accounts.signIn(`unknown-${dialect}@multi.test`, 'not the password', { source: 'dashboard', ip: '10.7.0.9', userAgent: null, requestId: null })).rejects.toMatchObject({ status: 401 });
      costs.push(derivations - before);
      expect(costs).toEqual([1, 1, 1, 1]);
    });

    it('hashes made before share a salt after each account signs in once; then one derivation', async () => {
      const email = `legacy-${dialect}@multi.test`;
      const ids: { orgId: string; userId: string }[] = [];
      for (let i = 0; i < 2; i++) {
        const other = await env.createOrg(`Legacy ${i}`);
        const user = await env.container.services.admin.addUser({ orgId: other.id, email, role: 'member', name: 'Legacy' });
        // As an earlier release stored them: a random salt each.
        await repos().users.update(other.id, user.id, { password_hash: await hashPassword(`legacy password ${i}`) });
        ids.push({ orgId: other.id, userId: user.id });
      }
      const context = { source: 'dashboard' as const, ip: '10.8.0.1', userAgent: null, requestId: null };
      let before = derivations;
      await expect(env.container.services.accounts.signIn(email, 'wrong', context)).rejects.toMatchObject({ status: 401 });
      expect(derivations - before).toBe(2);
      for (let i = 0; i < 2; i++) await env.container.services.accounts.signIn(email, `legacy password ${i}`, { ...context, ip: `10.8.0.${2 + i}` });
      const salts = new Set(await Promise.all(ids.map(async ({ orgId, userId }) => (await repos().users.findById(orgId, userId))!.password_hash!.split('$')[2])));
      expect(salts.size).toBe(1);
      before = derivations;
      await expect(env.container.services.accounts.signIn(email, 'wrong', { ...context, ip: '10.8.0.9' })).rejects.toMatchObject({ status: 401 });
      expect(derivations - before).toBe(1);
      // Both passwords still work.
      for (let i = 0; i < 2; i++) expect((await env.container.services.accounts.signIn(email, `legacy password ${i}`, { ...context, ip: `10.8.1.${i}` })).kind).toBe('session');
    });
  });

  describe('F9 and F10: "Confirm it\'s you" carries no typed secret, and guards the domains', () => {
    it('the confirmation page holds no typed client secret; after confirming, the secret is asked again and nothing changed meanwhile', async () => {
      await connectTo(idpA, SECRET_A);
      const owner = await person('owner');
      const browser = await DashboardClient.signedIn(env, org.id, owner.id);
      await db().updateTable('sessions').set({ confirmed_at: Date.now() - 20 * MINUTE }).where('user_id', '=', owner.id).execute();
      const before = await repos().sso.findConnection(org.id);
      await browser.get('/dashboard/settings/sso');
      const typed = 'a freshly typed secret, never to be echoed';
      const asked = await browser.post('/dashboard/settings/sso/connection', { issuer: idpA.issuer, client_id: 'client-a', client_secret: typed, default_role: 'viewer', ...FROM_SETTINGS });
      expect(asked.status).toBe(403);
      expect(asked.text).not.toContain(typed);
      expect(textOf(asked.text)).toContain('The client secret you typed is not carried through this page');
      const confirmed = await browser.post('/dashboard/settings/sso/connection', { ...hiddenFields(asked.text, '/dashboard/settings/sso/connection'), _confirm_password: PASSWORD });
      expect(confirmed.status).toBe(303);
      expect(confirmed.location).toBe('/dashboard/settings/sso');
      const back = await browser.follow(confirmed);
      expect(textOf(back.text)).toContain('Type the client secret again');
      expect(await repos().sso.findConnection(org.id)).toEqual(before);
      // Confirmed for 15 minutes: typed again, it is saved at once.
      const saved = await browser.post('/dashboard/settings/sso/connection', { issuer: idpA.issuer, client_id: 'client-a', client_secret: typed, default_role: 'viewer' });
      expect(saved.status).toBe(303);
      expect(env.container.secretBox.open((await repos().sso.findConnection(org.id))!.client_secret)).toBe(typed);
      await connectTo(idpA, SECRET_A);
    });

    it('adding, verifying and removing a domain ask "Confirm it\'s you"', async () => {
      const owner = await person('owner');
      const browser = await DashboardClient.signedIn(env, org.id, owner.id);
      await db().updateTable('sessions').set({ confirmed_at: Date.now() - 20 * MINUTE }).where('user_id', '=', owner.id).execute();
      const before = await repos().sso.listDomains(org.id);
      await browser.get('/dashboard/settings/sso');
      for (const [path, name] of [['domains', `new-${dialect}.test`], ['domains/verify', domain], ['domains/remove', domain]] as const) {
        const res = await browser.post(`/dashboard/settings/sso/${path}`, { domain: name });
        expect(res.status, path).toBe(403);
        expect(textOf(res.text)).toContain("Confirm it's you");
      }
      expect(await repos().sso.listDomains(org.id)).toEqual(before);
    });
  });

  describe('F8: the callback\'s code and state stay out of the request log', () => {
    it('logs the callback with both values redacted', async () => {
      const lines: string[] = [];
      const logged = await createTestEnv(dialect, {
        env: { WEBHOOK_SECRETS_KEY: KEY, PUBLIC_BASE_URL: BASE, DNS_SERVERS: dns.server, LOG_LEVEL: 'info' },
        outboundCa: cert.cert,
        logger: pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) })),
      });
      try {
        const other = await logged.createOrg('Logged');
        const otherDomain = `logged-${dialect}.test`;
        await logged.container.services.sso.saveConnection(cliActor(other.id), { issuer: idpA.issuer, clientId: 'client-a', clientSecret: SECRET_A, jit: true, defaultRole: 'member' });
        const added = await logged.container.services.sso.addDomain(cliActor(other.id), otherDomain);
        dns.txt.set(added.recordName, [added.recordValue]);
        await logged.container.services.sso.verifyDomain(cliActor(other.id), otherDomain);
        idpA.accounts.set('logged-sub', { email: `someone@${otherDomain}`, email_verified: true });
        const browser = new DashboardClient(logged);
        await browser.get('/dashboard/login/sso');
        const start = await browser.post('/dashboard/login/sso', { email: `someone@${otherDomain}` });
        const back = await idpA.signInAt(providerUrl(start), 'logged-sub');
        expect((await browser.get(back.pathname + back.search)).status).toBe(303);
        const line = lines.find((l) => l.includes('/dashboard/sso/callback'));
        expect(line).toBeDefined();
        expect(line).toContain('code=[redacted]');
        expect(line).toContain('state=[redacted]');
        const all = lines.join('\n');
        expect(all).not.toContain(back.searchParams.get('code')!);
        expect(all).not.toContain(back.searchParams.get('state')!);
      } finally {
        await logged.close();
      }
    });
  });

  describe('F12: invitations while single sign-on is required, and a progress fragment of another organisation', () => {
    it('a password acceptance is refused with nothing changed; "Accept with single sign-on" activates and links, whatever the role', async () => {
      await connectTo(idpA, SECRET_A);
      await db().updateTable('sso_connections').set({ tested_at: Date.now(), required_at: Date.now() }).where('org_id', '=', org.id).execute();
      try {
        const email = `invited-admin-${dialect}@${domain}`;
        await env.container.services.users.invite(cliActor(org.id), { email, role: 'admin' });
        const token = latestInvitationToken(env.dataDir, BASE, email);
        const invited = (await repos().users.findByEmail(org.id, email))!;

        // The API door: 403 sso_required, the user still invited and without a password.
        const api = await env.request('POST', `/invitations/${token}/accept`, { body: { name: 'Ivy', password: PASSWORD } });
        expect(api.status).toBe(403);
        expect(api.body.error.code).toBe('sso_required');
        // The dashboard door: no password form, the refusal in words if one is posted anyway.
        const browser = new DashboardClient(env);
        const page = await browser.get(`/dashboard/invitations/${token}`);
        expect(textOf(page.text)).toContain('signs in with single sign-on');
        expect(page.text).not.toContain('Activate account');
        const posted = await browser.post(`/dashboard/invitations/${token}`, { name: 'Ivy', password: PASSWORD });
        expect(posted.status).toBe(403);
        expect(textOf(posted.text)).toContain('accept this invitation with single sign-on');
        expect(await repos().users.findById(org.id, invited.id)).toMatchObject({ status: 'invited', password_hash: null });

        // The provider vouching for another address: refused, still invited.
        idpA.accounts.set('not-ivy', { email: `someone-else@${domain}`, email_verified: true });
        await browser.get(`/dashboard/invitations/${token}`);
        const wrong = await browser.post(`/dashboard/invitations/${token}`, { with: 'sso' });
        const wrongBack = await idpA.signInAt(providerUrl(wrong), 'not-ivy');
        const refused = await browser.get(wrongBack.pathname + wrongBack.search);
        expect(refused.status).toBe(400);
        expect(textOf(refused.text)).toContain(`but this invitation is for ${email}`);
        expect((await repos().users.findById(org.id, invited.id))!.status).toBe('invited');

        idpA.accounts.set('ivy', { email, email_verified: true, name: 'Ivy Invited' });
        await browser.get(`/dashboard/invitations/${token}`);
        const accept = await browser.post(`/dashboard/invitations/${token}`, { with: 'sso' });
        const back = await idpA.signInAt(providerUrl(accept), 'ivy');
        const done = await browser.get(back.pathname + back.search);
        expect(done.status, textOf(done.text)).toBe(303);
        expect((await browser.get('/dashboard')).status).toBe(200);
        expect(await repos().users.findById(org.id, invited.id)).toMatchObject({ status: 'active', role: 'admin', name: 'Ivy Invited', password_hash: null });
        expect(await identitiesOf(invited.id)).toHaveLength(1);
        expect((await auditRows('invitation.accepted')).some((r) => r.target_id === invited.id)).toBe(true);
        // Used: the link is dead, on both doors.
        expect((await browser.get(`/dashboard/invitations/${token}`)).status).toBe(404);
      } finally {
        await db().updateTable('sso_connections').set({ required_at: null }).where('org_id', '=', org.id).execute();
      }
    });

    it('/dashboard/webhooks/{id}/replays/progress answers 404 for another organisation\'s or an unknown id', async () => {
      const other = await env.createOrg('Other');
      const theirs = await env.request('POST', '/v1/webhooks', { key: other.ownerKey, body: { url: 'https://hooks.example.com/x', events: ['project.created'] } });
      const ours = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://hooks.example.com/y', events: ['project.created'] } });
      for (const role of ['owner', 'member'] as const) {
        const someone = await person(role, `progress-${role}-${dialect}@elsewhere.test`);
        const browser = await DashboardClient.signedIn(env, org.id, someone.id);
        expect((await browser.get(`/dashboard/webhooks/${theirs.body.id}/replays/progress`)).status, role).toBe(404);
        expect((await browser.get('/dashboard/webhooks/wh_0000000000000000000000000/replays/progress')).status, role).toBe(404);
        expect((await browser.get(`/dashboard/webhooks/${ours.body.id}/replays/progress`)).status, role).toBe(200);
      }
    });
  });

  describe('CONTRACT 13: the audit log\'s action filter is a prefix', () => {
    it('action=workflow finds workflow and workflow run rows, in the API and on the page; an underscore is no wildcard', async () => {
      const other = await env.createOrg('Audited');
      const project = await env.request('POST', '/v1/projects', { key: other.ownerKey, body: { name: 'Audited' } });
      const workflow = await env.request('POST', `/v1/projects/${project.body.id}/workflows`, { key: other.ownerKey, body: { name: 'Flow', steps: [{ type: 'wait', title: 'Pause', duration: '1h' }] } });
      expect(workflow.status).toBe(201);
      expect((await env.request('POST', `/v1/workflows/${workflow.body.id}/runs`, { key: other.ownerKey })).status).toBe(201);
      const actions = async (prefix: string) => {
        const res = await env.request('GET', `/v1/audit-log?limit=100&action=${encodeURIComponent(prefix)}`, { key: other.ownerKey });
        expect(res.status).toBe(200);
        return [...new Set((res.body.data as { action: string }[]).map((r) => r.action))].sort();
      };
      expect(await actions('workflow')).toEqual(['workflow.created', 'workflow_run.started']);
      expect(await actions('workflow_')).toEqual(['workflow_run.started']);
      expect(await actions('workflowXrun')).toEqual([]);
      expect(await actions('project')).toEqual(['project.created']);
      expect(await actions('project.')).toEqual(['project.created']);
      expect(await actions('project.created')).toEqual(['project.created']);
      expect(await actions('proj%')).toEqual([]);

      const browser = await DashboardClient.signedIn(env, other.id, other.ownerId);
      const page = await browser.get('/dashboard/audit-log?action=workflow');
      expect(page.status).toBe(200);
      const rows = tableRows(page.text, 'Audit log').join('\n');
      expect(rows).toContain('Workflow created');
      expect(rows).not.toContain('Project created');
    });
  });
});
