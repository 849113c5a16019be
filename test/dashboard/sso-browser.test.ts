import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/lib/crypto.js';
import { cliActor } from '../../src/services/access/actor.js';
import { assertAccessible } from '../helpers/axe.js';
import { CHROMIUM, followClick, screenshotIfAsked, signInThroughForm, suiteBrowser } from '../helpers/browser.js';
import { startDnsResponder, type DnsResponder } from '../helpers/dns-responder.js';
import { makeSelfSignedCertificate } from '../helpers/https-receiver.js';
import { latestInvitationToken } from '../helpers/mail-outbox.js';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.js';
import { freePort } from '../helpers/redis.js';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';

/*
 * Single sign-on (DASHBOARD 12) in Chromium without JavaScript, controls by role and accessible name, axe on
 * every page of ours: an owner saves the connection, adds and verifies a domain (an in-test DNS responder)
 * and tests the round trip at a real provider (oidc-provider over HTTPS, its own login form); an admin sees
 * the page without its controls and links their own account; the owner requires single sign-on; a member then
 * signs in with "Sign in with single sign-on" and no longer with a password. SCREENSHOTS=1 writes
 * docs/screenshots/sso-*.png at 1280 and 390 px.
 */

const SKIP = !fs.existsSync(CHROMIUM) && !process.env.CI;
const PASSWORD = 'single sign-on tester password';
const DOMAIN = 'browser-sso.test';

describe.skipIf(SKIP)('single sign-on in a browser (sqlite)', () => {
  const chrome = suiteBrowser();
  let env: TestEnv;
  let idp: TestOidcProvider;
  let dns: DnsResponder;
  let baseUrl = '';
  let orgId = '';
  let memberKey = '';
  const people: Record<'owner' | 'admin' | 'member', string> = { owner: `owner@${DOMAIN}`, admin: `admin@${DOMAIN}`, member: `member@${DOMAIN}` };

  beforeAll(async () => {
    const cert = makeSelfSignedCertificate();
    const port = await freePort();
    baseUrl = `http://localhost:${port}`;
    dns = await startDnsResponder();
    idp = await startOidcProvider(cert, { redirectUri: `${baseUrl}/dashboard/sso/callback` });
    env = await createTestEnv('sqlite', { env: { PUBLIC_BASE_URL: baseUrl, DNS_SERVERS: dns.server }, outboundCa: cert.cert });
    await env.app.listen({ port, host: 'localhost' });
    const created = await env.container.services.admin.createOrganization({ name: 'Federated Co', ownerEmail: people.owner, ownerName: 'Olive Owner' });
    orgId = created.organization.id;
    await env.container.services.admin.addUser({ orgId, email: people.admin, role: 'admin', name: 'Ada Admin' });
    await env.container.services.admin.addUser({ orgId, email: people.member, role: 'member', name: 'Max Member' });
    for (const email of Object.values(people)) {
      const user = (await env.container.store.repos.users.findByEmail(orgId, email))!;
      await env.container.store.repos.users.update(orgId, user.id, { password_hash: await hashPassword(PASSWORD) });
      idp.accounts.set(email.split('@')[0]!, { email, email_verified: true, name: email });
    }
    // A key of the member, for "Also revoke their API keys".
    const member = (await env.container.store.repos.users.findByEmail(orgId, people.member))!;
    memberKey = (await env.container.services.admin.createKey({ userId: member.id, scope: 'read', name: 'Reporting' })).key;
  }, 60_000);

  afterAll(async () => {
    await env?.close();
    await idp?.close();
    await dns?.close();
  });

  const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();

  /** At the provider's development login form: any password for `login`, then back to us. */
  async function providerSignIn(page: Page, login: string, back: RegExp): Promise<void> {
    await page.waitForURL((url) => url.origin === idp.issuer && url.pathname.startsWith('/interaction/'));
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('anything');
    await Promise.all([page.waitForURL(back), page.getByRole('button', { name: 'Sign-in' }).click()]);
  }

  async function shots(page: Page, name: string): Promise<void> {
    await screenshotIfAsked(page, `sso-${name}-1280.png`);
    await page.setViewportSize({ width: 390, height: 844 });
    const wide = await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { documentElement: { scrollWidth: number }; querySelectorAll(s: string): ArrayLike<{ tagName: string; className: string; getBoundingClientRect(): { right: number } }> } }).document;
      return { width: doc.documentElement.scrollWidth, over: Array.from(doc.querySelectorAll('body *')).filter((e) => e.getBoundingClientRect().right > 391).slice(0, 5).map((e) => `${e.tagName}.${e.className}`) };
    });
    expect(wide.width, `${name} fits 390 px: ${wide.over.join(', ')}`).toBeLessThanOrEqual(390);
    await screenshotIfAsked(page, `sso-${name}-390.png`);
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  it('is set up, tested and required by an owner, seen and linked by an admin, and then how members sign in', async () => {
    const owner = await chrome.newPage({ ignoreHTTPSErrors: true });
    await signInThroughForm(owner, baseUrl, people.owner, PASSWORD);
    await followClick(owner, owner.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }));
    await followClick(owner, owner.getByRole('link', { name: 'Single sign-on' }));
    expect(await heading(owner)).toBe('Single sign-on');
    await expect(owner.getByText(`Redirect URL: ${baseUrl}/dashboard/sso/callback`).isVisible()).resolves.toBe(true);
    await assertAccessible(owner, 'single sign-on settings (empty)');

    await owner.getByLabel('Issuer URL').fill(idp.issuer);
    await owner.getByLabel('Client ID').fill(idp.clientId);
    await owner.getByLabel('Client secret').fill(idp.clientSecret);
    await owner.getByLabel('Default role').selectOption('viewer');
    await followClick(owner, owner.getByRole('button', { name: 'Save connection' }));
    await expect(owner.getByRole('status').filter({ hasText: 'Connection saved' }).isVisible()).resolves.toBe(true);
    expect(await owner.getByLabel('Client secret').inputValue()).toBe('');

    await owner.getByLabel('Email domain').fill(DOMAIN);
    await followClick(owner, owner.getByRole('button', { name: 'Add domain' }));
    const row = await env.container.store.repos.sso.findDomain(orgId, DOMAIN);
    await expect(owner.getByRole('status').filter({ hasText: `workspace-verification=${row!.token}` }).isVisible()).resolves.toBe(true);
    dns.txt.set(`_workspace-verification.${DOMAIN}`, [`workspace-verification=${row!.token}`]);
    await followClick(owner, owner.getByRole('button', { name: `Verify domain ${DOMAIN}` }));
    await expect(owner.getByRole('status').filter({ hasText: `${DOMAIN} is verified.` }).isVisible()).resolves.toBe(true);

    await owner.getByRole('button', { name: 'Test single sign-on' }).click();
    await providerSignIn(owner, 'owner', /\/dashboard\/settings\/sso$/);
    await expect(owner.getByRole('status').filter({ hasText: `Single sign-on works. The provider returned ${people.owner} (subject owner; e-mail confirmed by the provider: yes).` }).isVisible()).resolves.toBe(true);
    await assertAccessible(owner, 'single sign-on settings (tested)');
    await shots(owner, 'settings');

    // An admin sees the settings, changes nothing, and links their own account (never linked by e-mail).
    const admin = await chrome.newPage({ ignoreHTTPSErrors: true });
    await signInThroughForm(admin, baseUrl, people.admin, PASSWORD);
    await admin.goto(`${baseUrl}/dashboard/settings/sso`);
    await expect(admin.getByText('Only owners change single sign-on').isVisible()).resolves.toBe(true);
    expect(await admin.getByRole('button', { name: 'Save connection' }).count()).toBe(0);
    expect(await admin.getByRole('button', { name: 'Add domain' }).count()).toBe(0);
    await assertAccessible(admin, 'single sign-on settings (admin)');
    await shots(admin, 'settings-admin');
    await admin.getByRole('button', { name: 'Link my single sign-on account' }).click();
    await providerSignIn(admin, 'admin', /\/dashboard\/settings\/sso$/);
    await expect(admin.getByRole('status').filter({ hasText: `Your account is now linked to ${people.admin} at your identity provider.` }).isVisible()).resolves.toBe(true);
    await expect(admin.getByText(`Your account is linked to ${people.admin}`).isVisible()).resolves.toBe(true);
    await assertAccessible(admin, 'single sign-on settings (admin, linked)');
    await admin.goto(`${baseUrl}/dashboard/account/security`);
    await expect(admin.getByRole('heading', { name: 'Your single sign-on' }).isVisible()).resolves.toBe(true);
    await expect(admin.getByText(`Your account is linked to ${people.admin}`).isVisible()).resolves.toBe(true);
    await shots(admin, 'security-linked');

    // "Confirm it's you" never carries a typed secret (F9): the owner types it again afterwards.
    await env.container.database.db.updateTable('sessions').set({ confirmed_at: Date.now() - 20 * 60_000 }).execute();
    await owner.goto(`${baseUrl}/dashboard/settings/sso`);
    await owner.getByLabel('Client secret').fill(idp.clientSecret);
    await followClick(owner, owner.getByRole('button', { name: 'Save connection' }));
    expect(await heading(owner)).toBe("Confirm it's you");
    await expect(owner.getByText('The client secret you typed is not carried through this page').isVisible()).resolves.toBe(true);
    expect(await owner.content()).not.toContain(idp.clientSecret);
    await assertAccessible(owner, 'confirm it is you (a secret left out)');
    await shots(owner, 'confirm-secret');
    await owner.getByLabel('Password').fill(PASSWORD);
    await followClick(owner, owner.getByRole('button', { name: 'Confirm', exact: true }));
    expect(await heading(owner)).toBe('Single sign-on');
    await expect(owner.getByRole('alert').filter({ hasText: 'Type the client secret again' }).isVisible()).resolves.toBe(true);

    await owner.goto(`${baseUrl}/dashboard/settings/sso`);
    await expect(owner.getByText('unless you revoke them with it below').isVisible()).resolves.toBe(true);
    await owner.getByLabel('Also revoke their API keys (1 key)').check();
    await shots(owner, 'require');
    await followClick(owner, owner.getByRole('button', { name: 'Require single sign-on' }));
    await expect(owner.getByRole('status').filter({ hasText: 'Single sign-on is now required. 1 API key of members who must use it was revoked.' }).isVisible()).resolves.toBe(true);
    await assertAccessible(owner, 'single sign-on settings (required)');
    expect((await fetch(`${baseUrl}/v1/projects`, { headers: { authorization: `Bearer ${memberKey}` } })).status).toBe(401);

    // The linked admin now signs in through the provider.
    const adminAgain = await chrome.newPage({ ignoreHTTPSErrors: true });
    await adminAgain.goto(`${baseUrl}/dashboard/login/sso`);
    await adminAgain.getByLabel('Work email').fill(people.admin);
    await adminAgain.getByRole('button', { name: 'Continue' }).click();
    await providerSignIn(adminAgain, 'admin', /\/dashboard$/);
    expect(await heading(adminAgain)).toBe('Overview');

    const member = await chrome.newPage({ ignoreHTTPSErrors: true });
    await signInThroughForm(member, baseUrl, people.member, PASSWORD);
    await expect(member.getByText('Your organisation signs in with single sign-on.').isVisible()).resolves.toBe(true);
    await followClick(member, member.getByRole('link', { name: 'Sign in with single sign-on' }));
    expect(await heading(member)).toBe('Sign in with single sign-on');
    await assertAccessible(member, 'sign in with single sign-on');
    await shots(member, 'sign-in');
    await member.getByLabel('Work email').fill('someone@nobody.test');
    await followClick(member, member.getByRole('button', { name: 'Continue' }));
    await expect(member.getByText('No organisation signs in with single sign-on for nobody.test.').first().isVisible()).resolves.toBe(true);
    await assertAccessible(member, 'sign in with single sign-on (refused)');

    // The round trip needs no JavaScript: the page that sends the browser on is a meta refresh.
    const noScript = await chrome.newPage({ javaScriptEnabled: false, ignoreHTTPSErrors: true });
    await noScript.goto(`${baseUrl}/dashboard/login`);
    await followClick(noScript, noScript.getByRole('link', { name: 'Sign in with single sign-on' }));
    await noScript.getByLabel('Work email').fill(people.member);
    await noScript.getByRole('button', { name: 'Continue' }).click();
    await providerSignIn(noScript, 'member', /\/dashboard$/);
    expect(await heading(noScript)).toBe('Overview');
    await expect(noScript.getByText('Max Member').first().isVisible()).resolves.toBe(true);

    // An invitation while single sign-on is required is accepted through the provider, whatever the role (F12).
    const invitee = `new.admin@${DOMAIN}`;
    await env.container.services.users.invite(cliActor(orgId), { email: invitee, role: 'admin' });
    idp.accounts.set('new.admin', { email: invitee, email_verified: true, name: 'Nia New' });
    const token = latestInvitationToken(env.dataDir, baseUrl, invitee);
    const invited = await chrome.newPage({ ignoreHTTPSErrors: true });
    await invited.goto(`${baseUrl}/invitations/${token}`);
    expect(await heading(invited)).toBe('Join Federated Co');
    expect(await invited.getByLabel('Password').count()).toBe(0);
    await assertAccessible(invited, 'invitation (single sign-on required)');
    await shots(invited, 'invitation');
    await invited.getByRole('button', { name: 'Accept with single sign-on' }).click();
    await providerSignIn(invited, 'new.admin', /\/dashboard$/);
    expect(await heading(invited)).toBe('Overview');
    await expect(invited.getByText('Nia New').first().isVisible()).resolves.toBe(true);
  }, 120_000);
});
