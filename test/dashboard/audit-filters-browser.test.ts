import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/lib/crypto.js';
import { DAY_MS, toIso } from '../../src/lib/time.js';
import { cliActor } from '../../src/services/access/actor.js';
import { assertAccessible } from '../helpers/axe.js';
import { CHROMIUM, followClick, screenshotIfAsked, signInThroughForm, suiteBrowser } from '../helpers/browser.js';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';

/*
 * Issue 46, DASHBOARD 8: the audit log's filters in words. Choosing "All project actions", a person by name and
 * a range of days in the form gives exactly the rows the codes give typed into the address, at 390 and 1280.
 */

const SKIP = !fs.existsSync(CHROMIUM) && !process.env.CI;
const PASSWORD = 'audit filter password';

describe.skipIf(SKIP)('the audit log filtered in words (sqlite)', () => {
  const chrome = suiteBrowser();
  let env: TestEnv;
  let baseUrl = '';
  let adminId = '';
  const owner = 'olga@filters.example';
  const admin = 'adam@filters.example';

  beforeAll(async () => {
    env = await createTestEnv('sqlite');
    baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
    const { services } = env.container;
    const created = await services.admin.createOrganization({ name: 'Filters Co', ownerEmail: owner, ownerName: 'Olga Owner' });
    const orgId = created.organization.id;
    adminId = (await services.admin.addUser({ orgId, email: admin, role: 'admin', name: 'Adam Admin' })).id;
    const hash = await hashPassword(PASSWORD);
    for (const id of [created.owner.id, adminId]) await env.container.store.repos.users.update(orgId, id, { password_hash: hash });
    // Project actions by the operator too, which the person filter must leave out.
    await services.projects.create(cliActor(orgId), { name: 'Made from the command line' });
  }, 60_000);

  afterAll(async () => {
    await env?.close();
  });

  /** The admin makes two projects and renames one, through the dashboard. */
  async function adminWorks(): Promise<void> {
    const page = await chrome.newPage();
    await signInThroughForm(page, baseUrl, admin, PASSWORD);
    for (const name of ['Apollo launch', 'Zephyr']) {
      await page.goto(`${baseUrl}/dashboard/projects`);
      const form = page.getByRole('region', { name: 'New project' });
      if (!(await form.getByLabel('Name').isVisible())) await form.getByText('New project').click();
      await form.getByLabel('Name').fill(name);
      await followClick(page, form.getByRole('button', { name: 'Create project' }));
    }
    await page.getByText('Edit project').click();
    await page.getByLabel('Name', { exact: true }).fill('Zephyr 2');
    await followClick(page, page.getByRole('button', { name: 'Save project' }));
  }

  const rowsOf = (page: Page) => page.getByRole('table', { name: 'Audit log' }).locator('tbody tr').allInnerTexts();

  it('choosing "All project actions", a person and days gives the rows of the same codes in the address', async () => {
    await adminWorks();
    const today = toIso(Date.now()).slice(0, 10);
    const codes = new URLSearchParams({ action: 'project.', actor: adminId, from: `${today} 00:00`, to: `${toIso(Date.now() + DAY_MS).slice(0, 10)} 00:00` });
    for (const viewport of [{ width: 390, height: 844 }, { width: 1280, height: 800 }]) {
      const page = await chrome.newPage({ viewport });
      await signInThroughForm(page, baseUrl, owner, PASSWORD);
      await page.goto(`${baseUrl}/dashboard/audit-log?${codes}`);
      const expected = await rowsOf(page);
      expect(expected).toHaveLength(3);
      for (const row of expected) expect(row).toContain('Adam Admin');

      await page.goto(`${baseUrl}/dashboard/audit-log`);
      const filters = page.getByRole('search', { name: 'Filter the audit log' });
      await filters.getByLabel('Action', { exact: true }).selectOption({ label: 'All project actions' });
      await filters.getByLabel('Actor', { exact: true }).selectOption({ label: 'Adam Admin' });
      await filters.getByLabel('From', { exact: true }).fill(today);
      await filters.getByLabel('To', { exact: true }).fill(today);
      await followClick(page, filters.getByRole('button', { name: 'Filter' }));
      expect(await rowsOf(page)).toEqual(expected);
      // What was chosen stays chosen, in words.
      expect(await filters.getByLabel('Action', { exact: true }).locator('option:checked').textContent()).toBe('All project actions');
      expect(await filters.getByLabel('Actor', { exact: true }).locator('option:checked').textContent()).toBe('Adam Admin');
      // A day before: nothing; the same person's sign-in is not a project action.
      const yesterday = toIso(Date.now() - DAY_MS).slice(0, 10);
      await filters.getByLabel('From', { exact: true }).fill(yesterday);
      await filters.getByLabel('To', { exact: true }).fill(yesterday);
      await followClick(page, filters.getByRole('button', { name: 'Filter' }));
      expect(await rowsOf(page)).toEqual(['No entries match these filters.']);
      await assertAccessible(page, `audit filters at ${viewport.width}`);
      await page.goto(`${baseUrl}/dashboard/audit-log?${new URLSearchParams({ action: 'project.', actor: adminId, from: today, to: today })}`);
      await screenshotIfAsked(page, `pages/${viewport.width}/audit-log-filtered.png`);
    }
  });
});
