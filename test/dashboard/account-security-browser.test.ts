import fs from 'node:fs';
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/lib/crypto.js';
import { totpCodeAt } from '../../src/lib/totp.js';
import { assertAccessible } from '../helpers/axe.js';
import { CHROMIUM, followClick, screenshotBothWidths, screenshotIfAsked, signInThroughForm, suiteBrowser } from '../helpers/browser.js';
import { freePort } from '../helpers/redis.js';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';

/*
 * Account security (DASHBOARD 11) in Chromium, controls by role and accessible name, axe on every page:
 * the authenticator app set up without JavaScript and used to sign in (a code, then a recovery code);
 * passkeys through Chromium's virtual authenticator over the DevTools protocol (added, then signing in
 * alone, then as the second step); the sessions list and "Sign out of all other sessions"; "Confirm it's
 * you" before creating a key; the organisation's requirement (notice, then redirect). WebAuthn refuses IP
 * addresses as relying parties, so the service runs as http://localhost. SCREENSHOTS=1 writes
 * docs/screenshots/security-*.png.
 */

const SKIP = !fs.existsSync(CHROMIUM) && !process.env.CI;
const PASSWORD = 'security tester password';

/** A platform authenticator with user verification, as a laptop's fingerprint reader or a phone. */
async function virtualAuthenticator(page: Page): Promise<CDPSession> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return cdp;
}

describe.skipIf(SKIP)('account security in a browser (sqlite)', () => {
  const chrome = suiteBrowser();
  let env: TestEnv;
  let baseUrl = '';
  let orgId = '';
  let counter = 0;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://localhost:${port}`;
    env = await createTestEnv('sqlite', { env: { PUBLIC_BASE_URL: baseUrl } });
    await env.app.listen({ port, host: 'localhost' });
    const created = await env.container.services.admin.createOrganization({ name: 'Secure Co', ownerEmail: 'owner@secure.example', ownerName: 'Sam Owner' });
    orgId = created.organization.id;
    await env.container.store.repos.users.update(orgId, created.owner.id, { password_hash: await hashPassword(PASSWORD) });
  }, 60_000);

  afterAll(async () => {
    await env?.close();
  });

  async function newMember(role: 'member' | 'admin' = 'member') {
    const email = `person${++counter}@secure.example`;
    const user = await env.container.services.admin.addUser({ orgId, email, role, name: `Person ${counter}` });
    await env.container.store.repos.users.update(orgId, user.id, { password_hash: await hashPassword(PASSWORD) });
    return { id: user.id, email };
  }

  const db = () => env.container.database.db;
  const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();

  async function signOut(page: Page): Promise<void> {
    await followClick(page, page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Sign out' }));
  }

  it('sets up the authenticator app without JavaScript, then signs in with a code and with a recovery code', async () => {
    const member = await newMember();
    const page = await chrome.newPage({ javaScriptEnabled: false });
    await signInThroughForm(page, baseUrl, member.email, PASSWORD);
    await followClick(page, page.getByRole('link', { name: 'Security' }));
    expect(await heading(page)).toBe('Security');
    // The state in words first (DASHBOARD 11): no factor yet, and the app is the one primary button.
    await expect(page.locator('#two-step-state').textContent()).resolves.toBe('Two-step verification is off. Set up an authenticator app or add a passkey to turn it on.');
    await expect(page.getByRole('button', { name: 'Set up authenticator app' }).getAttribute('class')).resolves.toBe('button');
    // Without JavaScript the passkey button stays hidden and the page says why.
    await expect(page.getByRole('button', { name: 'Add a passkey' }).isVisible()).resolves.toBe(false);
    await expect(page.getByText('Adding a passkey needs JavaScript in this browser.').isVisible()).resolves.toBe(true);

    await followClick(page, page.getByRole('button', { name: 'Set up authenticator app' }));
    expect(await heading(page)).toBe('Set up authenticator app');
    await expect(page.getByRole('img', { name: 'QR code for your authenticator app' }).isVisible()).resolves.toBe(true);
    await screenshotBothWidths(page, 'security-totp-setup');
    const secret = (await page.locator('code.setup-key').textContent())!.replaceAll(' ', '');
    await page.getByLabel('Code', { exact: true }).fill('123456');
    await followClick(page, page.getByRole('button', { name: 'Turn on' }));
    await expect(page.getByRole('alert').textContent()).resolves.toContain('That code is not valid.');
    await page.getByLabel('Code', { exact: true }).fill(await totpCodeAt(secret, Date.now()));
    await followClick(page, page.getByRole('button', { name: 'Turn on' }));
    expect(await heading(page)).toBe('Recovery codes');
    const codes = (await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').allTextContents()).map((c) => c.trim());
    expect(codes).toHaveLength(10);
    await expect(page.getByRole('link', { name: 'Download recovery codes' }).getAttribute('download')).resolves.toBe('workspace-recovery-codes.txt');
    await screenshotBothWidths(page, 'security-recovery-codes');
    // An app only: on, named, with the codes left; what is not set up yet (a passkey) comes first.
    await page.goto(`${baseUrl}/dashboard/account/security`);
    await expect(page.locator('#two-step-state').textContent()).resolves.toBe('Two-step verification is on: authenticator app, 10 of 10 recovery codes left.');
    const sections = await page.locator('main h2').allTextContents();
    expect(sections.indexOf('Passkeys')).toBeLessThan(sections.indexOf('Authenticator app'));
    await signOut(page);

    // The code of the next step: the one that turned the app on was spent.
    await signInThroughForm(page, baseUrl, member.email, PASSWORD);
    expect(await heading(page)).toBe('Two-step verification');
    await screenshotBothWidths(page, 'security-two-step');
    await page.getByLabel('Code', { exact: true }).fill(await totpCodeAt(secret, Date.now() + 30_000));
    await followClick(page, page.getByRole('button', { name: 'Verify', exact: true }));
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    await signOut(page);

    await signInThroughForm(page, baseUrl, member.email, PASSWORD);
    await page.getByText('Use a recovery code').click();
    await page.getByLabel('Recovery code', { exact: true }).fill(codes[0]!);
    await followClick(page, page.getByRole('button', { name: 'Verify recovery code' }));
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    const methods = await db().selectFrom('sessions').select('method').where('user_id', '=', member.id).execute();
    expect(methods.map((m) => m.method).sort()).toEqual(['password_recovery']);
  });

  it('adds a passkey, signs in with it alone, and uses it as the second step (virtual authenticator)', async () => {
    const member = await newMember();
    const page = await chrome.newPage();
    await virtualAuthenticator(page);
    await signInThroughForm(page, baseUrl, member.email, PASSWORD);
    await page.goto(`${baseUrl}/dashboard/account/security`);
    await assertAccessible(page, 'the security page');
    await page.getByLabel('Passkey name').fill('Test laptop');
    await followClick(page, page.getByRole('button', { name: 'Add a passkey' }));
    // The first factor brings the recovery codes.
    expect(await heading(page)).toBe('Recovery codes');
    await assertAccessible(page, 'the recovery codes page');
    await followClick(page, page.getByRole('link', { name: 'I have saved them: back to Security' }));
    const rows = await page.getByRole('table', { name: 'Passkeys' }).getByRole('row').allTextContents();
    expect(rows.some((r) => r.includes('Test laptop'))).toBe(true);
    const stored = await db().selectFrom('passkeys').selectAll().where('user_id', '=', member.id).execute();
    expect(stored).toHaveLength(1);
    expect(stored[0]!.name).toBe('Test laptop');
    // Passkeys only: on, named; the app, not set up, is offered first but no longer as the primary button.
    await expect(page.locator('#two-step-state').textContent()).resolves.toBe('Two-step verification is on: 1 passkey, 10 of 10 recovery codes left.');
    await expect(page.getByRole('button', { name: 'Set up authenticator app' }).getAttribute('class')).resolves.toBe('button secondary');
    await screenshotIfAsked(page, 'security-page.png');
    await signOut(page);

    // Passwordless: no e-mail typed.
    await page.goto(`${baseUrl}/dashboard/login`);
    await assertAccessible(page, 'the sign-in page');
    await followClick(page, page.getByRole('button', { name: 'Sign in with a passkey' }));
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    const passkeySession = await db().selectFrom('sessions').select(['method', 'confirmed_at']).where('user_id', '=', member.id).execute();
    expect(passkeySession.map((s) => s.method)).toEqual(['passkey']);
    expect(passkeySession[0]!.confirmed_at).not.toBeNull();
    const used = await db().selectFrom('passkeys').select(['last_used_at', 'counter']).where('user_id', '=', member.id).executeTakeFirstOrThrow();
    expect(used.last_used_at).not.toBeNull();
    await signOut(page);

    // The password, then the passkey as the second step.
    await signInThroughForm(page, baseUrl, member.email, PASSWORD);
    expect(await heading(page)).toBe('Two-step verification');
    await assertAccessible(page, 'the two-step page');
    await followClick(page, page.getByRole('button', { name: 'Use a passkey' }));
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    const methods = await db().selectFrom('sessions').select('method').where('user_id', '=', member.id).execute();
    expect(methods.map((m) => m.method)).toEqual(['password_passkey']);

    // The authenticator app's set-up page, checked with the page's script running.
    await page.goto(`${baseUrl}/dashboard/account/security`);
    await followClick(page, page.getByRole('button', { name: 'Set up authenticator app' }));
    await assertAccessible(page, 'the authenticator set-up page');

    // Removing it (the session is fresh): the table is empty again, the other sessions end.
    await page.goto(`${baseUrl}/dashboard/account/security`);
    await followClick(page, page.getByRole('button', { name: 'Remove passkey Test laptop' }));
    expect(await db().selectFrom('passkeys').select('id').where('user_id', '=', member.id).execute()).toHaveLength(0);
  });

  it('lists the sessions and signs out all others', async () => {
    const member = await newMember();
    const first = await chrome.newPage();
    const second = await chrome.newPage();
    await signInThroughForm(first, baseUrl, member.email, PASSWORD);
    await signInThroughForm(second, baseUrl, member.email, PASSWORD);
    await first.goto(`${baseUrl}/dashboard/account/security`);
    const rows = first.getByRole('table', { name: 'Sessions' }).getByRole('row');
    await expect(rows.count()).resolves.toBe(3);
    await expect(first.getByText('This session').count()).resolves.toBe(1);
    await expect(rows.nth(1).textContent()).resolves.toMatch(/Headless Chrome on Linux/);
    await followClick(first, first.getByRole('button', { name: 'Sign out of all other sessions' }));
    await expect(first.locator('.notice').textContent()).resolves.toContain('One other session was signed out.');
    await second.reload();
    expect(new URL(second.url()).pathname).toBe('/dashboard/login');
    await first.reload();
    expect(new URL(first.url()).pathname).toBe('/dashboard/account/security');
  });

  it("asks \"Confirm it's you\" before creating a key, then creates the key that was asked for", async () => {
    const member = await newMember();
    const page = await chrome.newPage();
    await signInThroughForm(page, baseUrl, member.email, PASSWORD);
    // As if the sign-in were 20 minutes old.
    await db().updateTable('sessions').set({ confirmed_at: Date.now() - 20 * 60_000 }).where('user_id', '=', member.id).execute();
    await page.goto(`${baseUrl}/dashboard/api-keys`);
    await page.getByLabel('Name').fill('Deploy bot');
    await followClick(page, page.getByRole('button', { name: 'Create key' }));
    expect(await heading(page)).toBe("Confirm it's you");
    await assertAccessible(page, "the confirm-it's-you page");
    await screenshotBothWidths(page, 'security-confirm');
    await page.getByLabel('Password').fill('not the password');
    await followClick(page, page.getByRole('button', { name: 'Confirm' }));
    expect(await heading(page)).toBe("Confirm it's you");
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Password is incorrect');
    await page.getByLabel('Password').fill(PASSWORD);
    await followClick(page, page.getByRole('button', { name: 'Confirm' }));
    await expect(page.getByLabel('Your new API key').inputValue()).resolves.toMatch(/^wsk_/);
    const keys = await db().selectFrom('api_keys').select('name').where('user_id', '=', member.id).execute();
    expect(keys.map((k) => k.name)).toEqual(['Deploy bot']);
  });

  it("shows the organisation's requirement during the grace period, then sends the member to set it up", async () => {
    const member = await newMember();
    const page = await chrome.newPage();
    await env.container.store.repos.organizations.setTwoStepRequired(orgId, Date.now());
    try {
      await signInThroughForm(page, baseUrl, member.email, PASSWORD);
      await expect(page.getByRole('link', { name: /Set up two-step verification by/ }).isVisible()).resolves.toBe(true);
      await assertAccessible(page, 'a page with the requirement notice');
      await screenshotIfAsked(page, 'security-requirement-notice.png');
      // Past the 7 days (the member joined more than a week ago, and so did the requirement).
      const past = Date.now() - 8 * 24 * 3600_000;
      await env.container.store.repos.organizations.setTwoStepRequired(orgId, past);
      await db().updateTable('users').set({ created_at: past }).where('id', '=', member.id).execute();
      await page.goto(`${baseUrl}/dashboard/projects`);
      expect(new URL(page.url()).pathname).toBe('/dashboard/account/security');
      await expect(page.getByText('Your organisation requires two-step verification. Set up an authenticator app or a passkey to go on.').isVisible()).resolves.toBe(true);

      // The owner's settings page and the members' column.
      const owner = await chrome.newPage();
      await env.container.store.repos.organizations.setTwoStepRequired(orgId, Date.now());
      await signInThroughForm(owner, baseUrl, 'owner@secure.example', PASSWORD);
      await owner.goto(`${baseUrl}/dashboard/settings/security`);
      await expect(owner.getByRole('checkbox', { name: 'Require two-step verification for every member' }).isChecked()).resolves.toBe(true);
      await assertAccessible(owner, 'the organisation security settings');
      await owner.goto(`${baseUrl}/dashboard/members`);
      await expect(owner.getByRole('columnheader', { name: '2-step' }).isVisible()).resolves.toBe(true);
    } finally {
      await env.container.store.repos.organizations.setTwoStepRequired(orgId, null);
    }
  });
});
