import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/lib/crypto.js';
import { assertAccessible } from '../helpers/axe.js';
import { CHROMIUM, followClick, screenshotIfAsked, signInThroughForm, suiteBrowser } from '../helpers/browser.js';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';

/*
 * DASHBOARD 13 in a real browser: the owner adds a contractor (a viewer of the organisation) as an editor of one
 * project, makes the project private, and the Projects table marks it "Private"; the contractor then edits that
 * project, while a member outside it gets the 404 page and no trace of it in the Projects table. Controls are
 * found by role and accessible name; every page is checked with axe and watched for CSP refusals.
 *
 * SCREENSHOTS=1 also writes docs/screenshots/collaborators-*.png at 1280 and 390 px.
 */

const SKIP = !fs.existsSync(CHROMIUM) && !process.env.CI;

/** Opens a folded form (a `<details>` named by its summary), leaving it open if it already is. */
async function openDisclosure(page: Page, summary: string): Promise<void> {
  const details = page.locator('details', { has: page.locator('summary', { hasText: summary }) });
  if ((await details.getAttribute('open')) === null) await details.locator('summary').click();
}
const PASSWORD = 'collaborators browser password';

describe.skipIf(SKIP)('collaborators and private projects in a browser (sqlite)', () => {
  const chrome = suiteBrowser();
  let env: TestEnv;
  let baseUrl = '';
  let page: Page;
  let projectId = '';
  const emails = { owner: 'olga@acme.example', contractor: 'casey@contractors.example', outsider: 'otto@acme.example' };

  beforeAll(async () => {
    env = await createTestEnv('sqlite');
    baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
    const s = env.container.services;
    const created = await s.admin.createOrganization({ name: 'Acme Holdings', ownerEmail: emails.owner, ownerName: 'Olga Owner' });
    const orgId = created.organization.id;
    const contractor = await s.admin.addUser({ orgId, email: emails.contractor, role: 'viewer', name: 'Casey Contractor' });
    const outsider = await s.admin.addUser({ orgId, email: emails.outsider, role: 'member', name: 'Otto Outsider' });
    const hash = await hashPassword(PASSWORD);
    for (const id of [created.owner.id, contractor.id, outsider.id]) await env.container.store.repos.users.update(orgId, id, { password_hash: hash });
    const project = await env.request('POST', '/v1/projects', { key: created.api_key.key, body: { name: 'Acquisition', description: 'Buying Zephyr Ltd' } });
    expect(project.status).toBe(201);
    projectId = project.body.id;
    page = chrome.page;
  }, 60_000);
  afterAll(async () => env?.close());

  const projectUrl = () => `${baseUrl}/dashboard/projects/${projectId}`;
  const collaboratorsTable = () => page.getByRole('table', { name: 'Collaborators' });

  async function shots(name: string): Promise<void> {
    await screenshotIfAsked(page, `collaborators-${name}-1280.png`);
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshotIfAsked(page, `collaborators-${name}-390.png`);
    // At 390 px nothing of the section is wider than the screen.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  it('the owner adds a collaborator, changes their role and makes the project private; the Projects table says "Private"', async () => {
    await signInThroughForm(page, baseUrl, emails.owner, PASSWORD);
    await page.goto(projectUrl());
    // The owner made the project through the API: they are its manager.
    expect(await collaboratorsTable().getByRole('row', { name: /Olga Owner/ }).textContent()).toContain(emails.owner);
    await assertAccessible(page, 'project page with collaborators');

    await openDisclosure(page, 'Add collaborator');
    const form = page.getByRole('form', { name: 'Add collaborator' });
    await form.getByLabel('Person').selectOption({ label: 'Casey Contractor' });
    await form.getByLabel('Project role').selectOption({ label: 'Viewer' });
    const added = await followClick(page, form.getByRole('button', { name: 'Add collaborator' }));
    expect(added.status()).toBe(200);
    expect(await page.getByRole('status').textContent()).toContain('Casey Contractor added as Viewer');
    const row = collaboratorsTable().getByRole('row', { name: /Casey Contractor/ });
    expect(await row.textContent()).toContain(emails.contractor);

    await row.getByLabel('Project role').selectOption({ label: 'Editor' });
    await followClick(page, row.getByRole('button', { name: 'Save role' }));
    expect(await page.getByRole('status').textContent()).toContain('Casey Contractor is Editor on this project');
    expect(await collaboratorsTable().getByRole('row', { name: /Casey Contractor/ }).getByLabel('Project role').inputValue()).toBe('editor');

    await page.getByRole('radio', { name: 'Only collaborators' }).check();
    await followClick(page, page.getByRole('button', { name: 'Save visibility' }));
    expect(await page.getByRole('status').textContent()).toContain('is private');
    expect(await page.getByRole('radio', { name: 'Only collaborators' }).isChecked()).toBe(true);
    expect(await page.getByRole('radio', { name: 'Everyone in Acme Holdings' }).isChecked()).toBe(false);
    await assertAccessible(page, 'private project page');
    await shots('project');

    await page.goto(`${baseUrl}/dashboard/projects`);
    const listed = page.getByRole('table', { name: 'Projects' }).getByRole('row', { name: /Acquisition/ });
    expect(await listed.textContent()).toContain('Private');
    await assertAccessible(page, 'projects with a private one');
    await shots('projects');
    expect((await env.request('GET', `/v1/projects/${projectId}`, { key: (await env.createOrg()).ownerKey })).status).toBe(404);
  });

  it('the contractor, a viewer of the organisation, edits the one project they are an editor of; the "Collaborators" controls are not theirs', async () => {
    const contractor = await chrome.newPage();
    await signInThroughForm(contractor, baseUrl, emails.contractor, PASSWORD);
    await contractor.goto(projectUrl());
    expect(await contractor.getByRole('heading', { level: 1 }).textContent()).toContain('Acquisition');
    expect(await contractor.getByRole('button', { name: 'Add collaborator' }).count()).toBe(0);
    expect(await contractor.getByRole('button', { name: 'Save visibility' }).count()).toBe(0);
    await openDisclosure(contractor, 'New task');
    await contractor.getByLabel('Task title').fill('Read the Zephyr books');
    await followClick(contractor, contractor.getByRole('button', { name: 'Create task' }));
    expect(await contractor.getByRole('status').textContent()).toContain('Task "Read the Zephyr books" created');
    // The assignee picker of a private project offers those who can see it: not the outsider.
    const options = await contractor.getByRole('combobox', { name: 'Assignee' }).first().locator('option').allTextContents();
    expect(options.join('|')).toContain('Casey Contractor');
    expect(options.join('|')).not.toContain('Otto Outsider');
    await assertAccessible(contractor, 'project page as its editor');
  });

  it('a member outside the project gets the 404 page, and the Projects table never names it', async () => {
    const outsider = await chrome.newPage();
    await signInThroughForm(outsider, baseUrl, emails.outsider, PASSWORD);
    const response = await outsider.goto(projectUrl());
    expect(response?.status()).toBe(404);
    expect(await outsider.content()).not.toContain('Acquisition');
    await assertAccessible(outsider, 'the 404 page of a private project');
    await outsider.goto(`${baseUrl}/dashboard/projects`);
    expect(await outsider.content()).not.toContain('Acquisition');
  });

  it('removing the collaborator takes the project away from them at once', async () => {
    await page.goto(projectUrl());
    await followClick(page, collaboratorsTable().getByRole('button', { name: 'Remove Casey Contractor' }));
    expect(await page.getByRole('status').textContent()).toContain('Casey Contractor removed');
    expect(await collaboratorsTable().textContent()).not.toContain('Casey Contractor');
    const contractor = await chrome.newPage();
    await signInThroughForm(contractor, baseUrl, emails.contractor, PASSWORD);
    expect((await contractor.goto(projectUrl()))?.status()).toBe(404);
  });
});
