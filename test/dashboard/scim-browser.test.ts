import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/lib/crypto.js';
import { assertAccessible } from '../helpers/axe.js';
import { CHROMIUM, followClick, screenshotIfAsked, signInThroughForm, suiteBrowser } from '../helpers/browser.js';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';

/*
 * DASHBOARD 14 in a real browser: the owner creates a SCIM token (shown once, in "Your new SCIM token"), maps the
 * group the provider pushed to a role and a project role, sees the member marked "Provisioned", then creates an
 * API key that expires and sets the "Maximum API key lifetime". Controls are found by role and accessible name;
 * every page is checked with axe and watched for CSP refusals.
 *
 * SCREENSHOTS=1 also writes docs/screenshots/scim-*.png and keys-expires-*.png at 1280 and 390 px.
 */

const SKIP = !fs.existsSync(CHROMIUM) && !process.env.CI;
const PASSWORD = 'provisioning browser password';

describe.skipIf(SKIP)('provisioning and key lifetimes in a browser (sqlite)', () => {
  const chrome = suiteBrowser();
  let env: TestEnv;
  let baseUrl = '';
  let page: Page;
  const owner = 'olga@acme.example';

  beforeAll(async () => {
    env = await createTestEnv('sqlite');
    baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
    const s = env.container.services;
    const created = await s.admin.createOrganization({ name: 'Acme Holdings', ownerEmail: owner, ownerName: 'Olga Owner' });
    await env.container.store.repos.users.update(created.organization.id, created.owner.id, { password_hash: await hashPassword(PASSWORD) });
    expect((await env.request('POST', '/v1/projects', { key: created.api_key.key, body: { name: 'Apollo' } })).status).toBe(201);
    page = chrome.page;
  }, 60_000);
  afterAll(async () => env?.close());

  async function shots(name: string): Promise<void> {
    await screenshotIfAsked(page, `${name}-1280.png`);
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshotIfAsked(page, `${name}-390.png`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await assertAccessible(page, `${name} at 390 px`);
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  it('the owner creates a SCIM token, shown once, and maps the pushed group to roles; Members marks the member "Provisioned"', async () => {
    await signInThroughForm(page, baseUrl, owner, PASSWORD);
    await page.goto(`${baseUrl}/dashboard/settings/scim`);
    expect(await page.getByRole('textbox', { name: 'SCIM base URL' }).inputValue()).toBe(`${env.config.publicBaseUrl}/scim/v2`);
    await assertAccessible(page, 'SCIM settings, empty');

    await page.getByLabel('Token name').fill('Okta');
    await followClick(page, page.getByRole('button', { name: 'Create SCIM token' }));
    expect(await page.getByRole('status').textContent()).toContain('SCIM token "Okta" created.');
    const token = await page.getByRole('textbox', { name: 'Your new SCIM token' }).inputValue();
    expect(token).toMatch(/^wss_/);
    expect(await page.getByRole('table', { name: 'SCIM tokens' }).getByRole('row', { name: /Okta/ }).count()).toBe(1);
    await assertAccessible(page, 'SCIM settings with a new token');
    await shots('scim-token');

    // The provider pushes a member and a group.
    const scim = async (path: string, body: unknown) => {
      const res = await fetch(`${baseUrl}/scim/v2${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, body: JSON.stringify(body) });
      expect(res.status).toBe(201);
      return (await res.json()) as { id: string };
    };
    const user = await scim('/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'pat@acme.example', displayName: 'Pat Provisioned' });
    await scim('/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Engineering', members: [{ value: user.id }] });

    await page.reload();
    expect(await page.getByRole('textbox', { name: 'Your new SCIM token' }).count()).toBe(0);
    await page.getByLabel('Group', { exact: true }).selectOption({ label: 'Engineering' });
    await page.getByLabel('Organisation role').selectOption({ label: 'Admin' });
    await page.getByLabel('Project', { exact: true }).selectOption({ label: 'Apollo' });
    await page.getByLabel('Project role').selectOption({ label: 'Editor' });
    await followClick(page, page.getByRole('button', { name: 'Save mapping' }));
    expect(await page.getByRole('status').textContent()).toContain("1 member's role changed");
    expect(await page.getByRole('table', { name: 'Groups' }).getByRole('row', { name: /Engineering/ }).textContent()).toContain('Admin; Editor on Apollo');
    await page.getByRole('combobox', { name: 'Default role' }).selectOption({ label: 'Viewer' });
    await followClick(page, page.getByRole('button', { name: 'Save default role' }));
    expect(await page.getByRole('status').textContent()).toContain('Default role saved: Viewer.');
    await assertAccessible(page, 'SCIM settings with a mapping');
    await shots('scim-mappings');

    await page.goto(`${baseUrl}/dashboard/members`);
    const row = page.getByRole('table', { name: 'Members' }).getByRole('row', { name: /Pat Provisioned/ });
    expect(await row.textContent()).toContain('Provisioned');
    expect(await row.textContent()).toContain('Managed by your identity provider');
    expect(await row.getByRole('combobox').count()).toBe(0);
    await assertAccessible(page, 'members with a provisioned one');
    await shots('scim-members');
  });

  it('"Expires" on "Create API key", and the organisation\'s "Maximum API key lifetime"', async () => {
    await page.goto(`${baseUrl}/dashboard/api-keys`);
    await page.getByLabel('Name').fill('Deploy bot');
    await page.getByLabel('Expires').selectOption({ label: '30 days' });
    await followClick(page, page.getByRole('button', { name: 'Create key' }));
    expect(await page.getByRole('status').textContent()).toContain('API key "Deploy bot" created.');
    const row = page.getByRole('table', { name: 'API keys' }).getByRole('row', { name: /Deploy bot/ });
    const expires = new Date(Date.now() + 30 * 86_400_000);
    expect(await row.textContent()).toContain(String(expires.getUTCFullYear()));
    await assertAccessible(page, 'API keys with an expiring key');
    await shots('keys-expires');

    await page.goto(`${baseUrl}/dashboard/settings/security`);
    await page.getByLabel('Maximum API key lifetime').selectOption({ label: '90 days' });
    await followClick(page, page.getByRole('button', { name: 'Save security settings' }));
    expect(await page.getByRole('status').textContent()).toContain('New API keys now expire within 90 days.');
    await assertAccessible(page, 'security settings with a key lifetime');
    await shots('keys-lifetime');

    await page.goto(`${baseUrl}/dashboard/api-keys`);
    const choices = await page.getByLabel('Expires').locator('option').allTextContents();
    expect(choices).toEqual(['7 days', '30 days', '90 days']);
  });
});
