import fs from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/lib/crypto.js';
import { recordAttempt } from '../helpers/attempts.js';
import { assertAccessible } from '../helpers/axe.js';
import { CHROMIUM, followClick, openWatchedPage, screenshotIfAsked, suiteBrowser } from '../helpers/browser.js';
import { cliJson } from '../helpers/cli.js';
import { latestInvitationToken } from '../helpers/mail-outbox.js';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';

/*
 * The dashboard in a real browser over real HTTP: the flows of DASHBOARD 2, 4 and 5 as a person clicks them,
 * every page checked with axe-core and watched for Content-Security-Policy refusals. Controls are found only
 * by role and accessible name, the names DASHBOARD.md fixes. The pages are the same whatever the database,
 * so SQLite is enough. The tests run in order and share one organisation (made by the CLI in the first).
 *
 * SCREENSHOTS=1 also writes docs/screenshots/*.png at the moments below (1280x800 viewport, full page).
 */

// Skipped only on a developer machine without Chromium; in CI a missing browser is a failure.
const SKIP = !fs.existsSync(CHROMIUM) && !process.env.CI;

const OWNER_EMAIL = 'olive@acme.example';
const OWNER_PASSWORD = 'owner chooses a long one';
const MEMBER_EMAIL = 'mia@acme.example';
const MEMBER_PASSWORD = 'member picks another';
const INCORRECT = 'Email or password is incorrect';

/** Every page the suite must have checked with axe by its end (DASHBOARD 1 holds for each). */
const PAGES = [
  'sign in',
  'sign in with an error',
  'forgot password',
  'password link',
  'overview',
  'projects',
  'account',
  'API keys',
  'new API key',
  'revoke API key',
  'members',
  'remove member',
  'audit log',
  'invitation',
  'invitation not found',
  'error 404',
  'error 403',
  'choose an organisation',
] as const;
type PageName = (typeof PAGES)[number];

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe.skipIf(SKIP)('dashboard in a browser (sqlite)', () => {
  const chrome = suiteBrowser();
  let env: TestEnv;
  let baseUrl: string;
  /** The full-access key `org create` printed: used to seed data over the API. */
  let cliKey = '';
  let orgId = '';
  /** CSP refusals and uncaught page errors of the current test. */
  const problems = chrome.problems;
  const audited = new Set<PageName>();

  beforeAll(async () => {
    env = await createTestEnv('sqlite');
    baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
  }, 60_000);

  afterAll(async () => {
    await env?.close();
  });

  /** A fresh browser profile (cookies of its own); closed after the test. */
  const newContext = chrome.newContext;

  const openPage = (context: BrowserContext): Promise<Page> => openWatchedPage(context, problems);

  /** Clicks a control that loads another page; the response of the page it ends on (after redirects). */
  const follow = followClick;

  /** axe on the page as it is now, once per kind of page. */
  async function audit(page: Page, name: PageName): Promise<void> {
    if (audited.has(name)) return;
    await assertAccessible(page, name);
    audited.add(name);
  }

  const screenshot = screenshotIfAsked;

  const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();
  const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
  const navigate = (page: Page, link: string) => follow(page, nav(page).getByRole('link', { name: link, exact: true }));

  /** Through the sign-in form, as a person does; ends on the overview. */
  async function signIn(context: BrowserContext, email: string, password: string): Promise<Page> {
    const page = await openPage(context);
    await page.goto(`${baseUrl}/dashboard/login`);
    await audit(page, 'sign in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    const response = await follow(page, page.getByRole('button', { name: 'Sign in', exact: true }));
    expect(response.status()).toBe(200);
    expect(page.url()).toBe(`${baseUrl}/dashboard`);
    return page;
  }

  /** The row of a table that mentions `text` (an e-mail, a key's name). */
  const rowOf = (page: Page, table: string, text: string) =>
    page.getByRole('table', { name: table }).getByRole('row', { name: new RegExp(escapeRegExp(text)) });

  /**
   * A day of webhook attempts (an outage of two hours among them) and four weeks of API requests, as the
   * worker and other API processes would have left them, so the overview's charts have something to show.
   */
  async function seedOverviewHistory(): Promise<void> {
    const res = await fetch(`${baseUrl}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cliKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'https://127.0.0.1:9/hooks', events: ['project.created'] }),
    });
    expect(res.status).toBe(201);
    const hookId = ((await res.json()) as { id: string }).id;
    const hour = 3_600_000;
    const thisHour = Math.floor(Date.now() / hour) * hour;
    for (let h = 0; h < 24; h++) {
      const start = thisHour - h * hour + 60_000;
      const delivered = 6 + ((h * 7) % 5);
      const failed = h === 9 || h === 10 ? 4 - (h % 2) : h === 17 ? 1 : 0;
      for (let i = 0; i < delivered + failed; i++) await recordAttempt(env, orgId, hookId, start + i, i < delivered ? 'success' : 'failure');
    }
    const day = 86_400_000;
    for (let d = 1; d < 30; d++) {
      const weekend = [0, 6].includes(new Date(Date.now() - d * day).getUTCDay());
      const count = weekend ? 40 + ((d * 13) % 30) : 220 + ((d * 37) % 90);
      await env.container.store.repos.requestCounts.add(orgId, new Date(Date.now() - d * day).toISOString().slice(0, 10), count);
    }
  }

  async function callApi(key: string, path: string): Promise<number> {
    const res = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    return res.status;
  }

  it('the owner opens setup_url from `org create`, chooses a password and lands signed in', async () => {
    // The CLI is another process on the same SQLite file, as an operator would run it beside the server.
    const created = await cliJson(['org', 'create', '--name', 'Acme', '--owner-email', OWNER_EMAIL, '--owner-name', 'Olive Owner'], {
      DATA_DIR: env.dataDir,
      PUBLIC_BASE_URL: baseUrl,
    });
    expect(created.setup_url).toMatch(new RegExp(`^${escapeRegExp(baseUrl)}/dashboard/password/[A-Za-z0-9_-]{20,}$`));
    cliKey = created.api_key.key;
    orgId = created.organization.id;

    const page = await openPage(await newContext());
    const shown = await page.goto(created.setup_url);
    expect(shown?.status()).toBe(200);
    expect(await heading(page)).toBe('Choose your password');
    await audit(page, 'password link');
    await page.getByLabel('New password').fill(OWNER_PASSWORD);
    const landed = await follow(page, page.getByRole('button', { name: 'Save password' }));

    expect(landed.status()).toBe(200);
    expect(page.url()).toBe(`${baseUrl}/dashboard`);
    expect(await heading(page)).toBe('Overview');
    expect(await nav(page).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
    expect(await page.getByRole('banner').textContent()).toContain('Olive Owner');

    // Single use: the same link in another browser is a 404 page.
    const other = await openPage(await newContext());
    const used = await other.goto(created.setup_url);
    expect(used?.status()).toBe(404);
    expect(await nav(other).count()).toBe(0);
  });

  it('the owner finds the overview, projects and account pages', async () => {
    for (const name of ['Mobile app', 'Data warehouse']) {
      const res = await fetch(`${baseUrl}/v1/projects`, {
        method: 'POST',
        headers: { authorization: `Bearer ${cliKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name, description: `${name} work`, status: 'active' }),
      });
      expect(res.status).toBe(201);
    }
    const page = await signIn(await newContext(), OWNER_EMAIL, OWNER_PASSWORD);

    expect((await navigate(page, 'Projects')).status()).toBe(200);
    expect(await heading(page)).toBe('Projects');
    await audit(page, 'projects');
    const form = page.getByRole('region', { name: 'New project' });
    // With projects to list, the form waits behind its "New project" summary.
    expect(await form.getByLabel('Name').isVisible()).toBe(false);
    await form.getByText('New project').click();
    await form.getByLabel('Name').fill('Website relaunch');
    await form.getByLabel('Description').fill('New design and content for Q3');
    await form.getByLabel('Status', { exact: true }).selectOption({ label: 'Draft' });
    await follow(page, form.getByRole('button', { name: 'Create project' }));
    expect(page.url()).toMatch(new RegExp(`^${baseUrl}/dashboard/projects/proj_[a-z0-9]+$`));
    expect(await page.getByRole('status').textContent()).toBe('Project "Website relaunch" created.');
    await navigate(page, 'Projects');
    expect(await rowOf(page, 'Projects', 'Website relaunch').textContent()).toContain('Draft');
    expect(await page.getByRole('table', { name: 'Projects' }).getByRole('row').count()).toBe(4); // header + 3
    await screenshot(page, 'projects.png');

    await seedOverviewHistory();
    await follow(page, page.getByRole('banner').getByRole('link', { name: 'Workspace' }));
    expect(await heading(page)).toBe('Overview');
    expect(await page.getByRole('img', { name: /^Delivery attempts per hour, last 24 hours \(UTC\), by outcome\. \d+(\.\d)?% delivered \([\d,]+ of [\d,]+ deliver(y|ies)\)/ }).count()).toBe(1);
    expect(await page.getByRole('img', { name: /^Requests per day, last 30 days \(UTC\): [\d,]+ requests$/ }).count()).toBe(1);
    await screenshot(page, 'overview.png');
    // The tables behind the charts, opened, so axe checks them too.
    for (const name of ['Deliveries per hour as a table', 'Requests per day as a table']) await page.getByText(name, { exact: true }).click();
    expect(await page.getByRole('table', { name: 'Deliveries per hour' }).getByRole('row').count()).toBe(25);
    expect(await page.getByRole('table', { name: 'Requests per day' }).getByRole('row').count()).toBe(31);
    await audit(page, 'overview');

    await navigate(page, 'Account');
    expect(await heading(page)).toBe('Account');
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Olive Owner');
    await audit(page, 'account');
    await screenshot(page, 'account.png');

    const missing = await page.goto(`${baseUrl}/dashboard/no-such-page`);
    expect(missing?.status()).toBe(404);
    expect(await heading(page)).toBe('Page not found');
    await audit(page, 'error 404');
  });

  /** DASHBOARD 4 end to end: create a restricted key, use it, see it listed, revoke it, see it refused. */
  async function keyFlow(javaScriptEnabled: boolean): Promise<void> {
    const page = await signIn(await newContext({ javaScriptEnabled }), OWNER_EMAIL, OWNER_PASSWORD);
    await navigate(page, 'API keys');
    expect(await heading(page)).toBe('API keys');
    await audit(page, 'API keys');

    const name = javaScriptEnabled ? 'Reporting' : 'Reporting (no script)';
    const form = page.getByRole('region', { name: 'Create API key' });
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByRole('group', { name: 'Access' }).getByRole('radio', { name: 'Restricted' }).check();
    await form.getByRole('group', { name: 'Projects' }).getByRole('radio', { name: 'Read' }).check();
    await form.getByRole('group', { name: 'Webhooks' }).getByRole('radio', { name: 'Write' }).check();
    const answer = await follow(page, form.getByRole('button', { name: 'Create key' }));

    // The page after the redirect shows the key, once: never cached, gone on reload.
    expect(answer.status()).toBe(200);
    expect(answer.request().method()).toBe('GET');
    expect(answer.headers()['cache-control']).toBe('no-store');
    const field = page.getByLabel('Your new API key');
    const key = await field.inputValue();
    expect(key).toMatch(/^wsk_/);
    expect(await field.isEditable()).toBe(false);
    const copy = page.getByRole('button', { name: 'Copy', includeHidden: true });
    expect(await copy.count()).toBe(1);
    expect(await copy.isVisible()).toBe(javaScriptEnabled);
    if (javaScriptEnabled) {
      await audit(page, 'new API key');
      await screenshot(page, 'api-key-created.png');
    }
    const row = rowOf(page, 'API keys', name);
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain('Restricted: Projects Read, Webhooks Write');

    // Scope `projects:read,webhooks`: projects may be read, users may not.
    expect(await callApi(key, '/v1/projects')).toBe(200);
    expect(await callApi(key, '/v1/users')).toBe(403);

    // Shown once: the list page never carries it.
    await navigate(page, 'API keys');
    expect(await page.content()).not.toContain(key);
    expect(await page.getByLabel('Your new API key').count()).toBe(0);
    if (javaScriptEnabled) await screenshot(page, 'api-keys.png');

    await follow(page, rowOf(page, 'API keys', name).getByRole('link', { name: 'Revoke' }));
    expect(await heading(page)).toBe('Revoke API key');
    await audit(page, 'revoke API key');
    await follow(page, page.getByRole('button', { name: 'Revoke key' }));
    expect(page.url()).toBe(`${baseUrl}/dashboard/api-keys`);
    expect(await page.getByRole('status').textContent()).toMatch(/^API key ".+" \(wsk_.{8}…\) revoked\.$/);
    expect(await rowOf(page, 'API keys', name).count()).toBe(0);
    expect(await callApi(key, '/v1/projects')).toBe(401);

    await page.reload();
    expect(await heading(page)).toBe('API keys');
    expect(await page.content()).not.toContain(key);
  }

  it('creates a restricted API key, which works as scoped, is shown once, and answers 401 once revoked', async () => {
    await keyFlow(true);
  });

  it('does the same without JavaScript (the Copy button stays hidden)', async () => {
    await keyFlow(false);
  });

  it('invites a member, who accepts, lands signed in, signs out and signs in again', async () => {
    const owner = await signIn(await newContext(), OWNER_EMAIL, OWNER_PASSWORD);
    await navigate(owner, 'Members');
    expect(await heading(owner)).toBe('Members');
    await audit(owner, 'members');
    const invite = owner.getByRole('region', { name: 'Invite member' });
    await invite.getByLabel('Email').fill(MEMBER_EMAIL);
    await invite.getByLabel('Role').selectOption({ label: 'Member' });
    await follow(owner, invite.getByRole('button', { name: 'Send invitation' }));
    expect(owner.url()).toBe(`${baseUrl}/dashboard/members`);
    expect(await owner.getByRole('status').textContent()).toBe(`Invitation sent to ${MEMBER_EMAIL}.`);
    expect(await rowOf(owner, 'Members', MEMBER_EMAIL).textContent()).toContain('Invited');
    await screenshot(owner, 'members.png');

    // The e-mail's link, opened in the invitee's own browser.
    const token = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, MEMBER_EMAIL);
    const page = await openPage(await newContext());
    const shown = await page.goto(`${baseUrl}/invitations/${token}`);
    expect(shown?.status()).toBe(200);
    expect(await heading(page)).toBe('Join Acme');
    expect(await page.getByLabel('Email').inputValue()).toBe(MEMBER_EMAIL);
    await audit(page, 'invitation');
    await screenshot(page, 'invitation.png');
    await page.getByLabel('Your name').fill('Mia Member');
    await page.getByLabel('Password', { exact: true }).fill(MEMBER_PASSWORD);
    const landed = await follow(page, page.getByRole('button', { name: 'Activate account' }));
    expect(landed.status()).toBe(200);
    expect(page.url()).toBe(`${baseUrl}/dashboard`);
    expect(await page.getByRole('banner').textContent()).toContain('Mia Member');
    expect(await nav(page).isVisible()).toBe(true);
    // A member has no audit log.
    expect(await nav(page).getByRole('link', { name: 'Audit log' }).count()).toBe(0);

    await follow(page, page.getByRole('button', { name: 'Sign out' }));
    expect(page.url()).toBe(`${baseUrl}/dashboard/login?signed_out=1`);
    expect(await page.getByRole('status').textContent()).toContain('You have signed out.');
    expect((await page.goto(`${baseUrl}/dashboard`))?.url()).toBe(`${baseUrl}/dashboard/login?next=%2Fdashboard`);

    const again = await signIn(await newContext(), MEMBER_EMAIL, MEMBER_PASSWORD);
    expect(await again.getByRole('banner').textContent()).toContain('Mia Member');

    const used = await again.goto(`${baseUrl}/invitations/${token}`);
    expect(used?.status()).toBe(404);
    expect(await heading(again)).toBe('Invitation not found');
    await audit(again, 'invitation not found');
  });

  it("changes the member's role; the member's next click shows it", async () => {
    const member = await signIn(await newContext(), MEMBER_EMAIL, MEMBER_PASSWORD);
    await navigate(member, 'Projects');
    expect(await member.getByRole('region', { name: 'New project' }).count()).toBe(1);

    const owner = await signIn(await newContext(), OWNER_EMAIL, OWNER_PASSWORD);
    await navigate(owner, 'Members');
    const row = rowOf(owner, 'Members', MEMBER_EMAIL);
    await row.getByLabel('Role').selectOption({ label: 'Viewer' });
    await follow(owner, row.getByRole('button', { name: 'Save role' }));
    expect(owner.url()).toBe(`${baseUrl}/dashboard/members`);
    expect(await owner.getByRole('status').textContent()).toMatch(/ is now a Viewer\.$/);
    expect(await rowOf(owner, 'Members', MEMBER_EMAIL).getByLabel('Role').inputValue()).toBe('viewer');

    // Same session, next click: a viewer may read projects but not create one.
    await navigate(member, 'Projects');
    expect(await heading(member)).toBe('Projects');
    expect(await member.getByRole('region', { name: 'New project' }).count()).toBe(0);
    expect(await member.getByRole('banner').textContent()).toContain('viewer');

    const refused = await member.goto(`${baseUrl}/dashboard/audit-log`);
    expect(refused?.status()).toBe(403);
    expect(await heading(member)).toBe('You cannot do that');
    await audit(member, 'error 403');
  });

  it("removes the member; the member's open session goes to sign-in on the next click", async () => {
    const member = await signIn(await newContext(), MEMBER_EMAIL, MEMBER_PASSWORD);

    const owner = await signIn(await newContext(), OWNER_EMAIL, OWNER_PASSWORD);
    await navigate(owner, 'Members');
    await follow(owner, rowOf(owner, 'Members', MEMBER_EMAIL).getByRole('link', { name: 'Remove' }));
    expect(await heading(owner)).toBe('Remove member');
    await audit(owner, 'remove member');
    await follow(owner, owner.getByRole('button', { name: 'Remove member' }));
    expect(owner.url()).toBe(`${baseUrl}/dashboard/members`);
    expect(await owner.getByRole('status').textContent()).toMatch(/ removed from .+\.$/);
    expect(await rowOf(owner, 'Members', MEMBER_EMAIL).count()).toBe(0);

    await follow(member, nav(member).getByRole('link', { name: 'Account' }));
    expect(member.url()).toBe(`${baseUrl}/dashboard/login?next=${encodeURIComponent('/dashboard/account')}`);
    expect(await heading(member)).toBe('Sign in');
    expect(await nav(member).count()).toBe(0);

    // Everything that happened is in the owner's audit log.
    await navigate(owner, 'Audit log');
    expect(await heading(owner)).toBe('Audit log');
    const log = owner.getByRole('table', { name: 'Audit log' });
    // Actions in words (the code opens under "More").
    for (const action of ['Member removed', 'Member role changed', 'Invitation accepted', 'API key revoked', 'User password changed']) {
      expect(await log.getByRole('row', { name: new RegExp(escapeRegExp(action)) }).count(), action).toBeGreaterThan(0);
    }
    await audit(owner, 'audit log');
    const filters = owner.getByRole('search', { name: 'Filter the audit log' });
    await filters.getByLabel('Action').selectOption({ label: 'All member actions' });
    await follow(owner, filters.getByRole('button', { name: 'Filter' }));
    expect(new URL(owner.url()).searchParams.get('action')).toBe('member.');
    // The third column is the action; newest first, the operator's `member.added` (org create) last.
    const rows = await log.getByRole('row').all();
    const actions = await Promise.all(rows.slice(1).map((row) => row.getByRole('cell').nth(2).locator('.cell-main').textContent()));
    expect(actions).toEqual(['Member removed', 'Member role changed', 'Member invited', 'Member added']);
    await screenshot(owner, 'audit-log.png');
  });

  it('says "Email or password is incorrect" in an alert for a wrong password; "Forgot password?" answers the same for anyone', async () => {
    const page = await openPage(await newContext());
    await page.goto(`${baseUrl}/dashboard/login`);
    expect(await heading(page)).toBe('Sign in');
    await screenshot(page, 'login.png');
    await page.getByLabel('Email').fill(OWNER_EMAIL);
    await page.getByLabel('Password').fill('not the password at all');
    const refused = await follow(page, page.getByRole('button', { name: 'Sign in', exact: true }));
    expect(refused.status()).toBe(401);
    expect(await page.getByRole('alert').textContent()).toContain(INCORRECT);
    expect(await nav(page).count()).toBe(0);
    await audit(page, 'sign in with an error');

    await follow(page, page.getByRole('link', { name: 'Forgot password?' }));
    expect(await heading(page)).toBe('Forgot password');
    await audit(page, 'forgot password');
    await page.getByLabel('Email').fill(OWNER_EMAIL);
    await follow(page, page.getByRole('button', { name: 'Send reset link' }));
    expect(await page.getByRole('status').textContent()).toContain('If that address belongs to an account, a link is on its way');
  });

  // Last of the flows: from here on the owner's e-mail and password open two organisations.
  it('offers "Choose an organisation" when the password matches in two organisations', async () => {
    const other = await env.container.services.admin.createOrganization({ name: 'Globex', ownerEmail: OWNER_EMAIL, ownerName: 'Olive at Globex' });
    await env.container.store.repos.users.update(other.organization.id, other.owner.id, { password_hash: await hashPassword(OWNER_PASSWORD) });

    const page = await openPage(await newContext());
    await page.goto(`${baseUrl}/dashboard/login`);
    await page.getByLabel('Email').fill(OWNER_EMAIL);
    await page.getByLabel('Password').fill(OWNER_PASSWORD);
    await follow(page, page.getByRole('button', { name: 'Sign in', exact: true }));
    expect(await heading(page)).toBe('Choose an organisation');
    expect(await nav(page).count()).toBe(0);
    await audit(page, 'choose an organisation');
    expect(await page.getByRole('button', { name: 'Acme' }).count()).toBe(1);
    await follow(page, page.getByRole('button', { name: 'Globex' }));
    expect(page.url()).toBe(`${baseUrl}/dashboard`);
    expect(await page.getByRole('banner').textContent()).toContain('Olive at Globex');
  });

  it('notices a Content-Security-Policy refusal (the watch the other tests rely on can fail)', async () => {
    const page = await openPage(await newContext());
    await page.goto(`${baseUrl}/dashboard/login`);
    // A <style> element added at run time is inline style: the policy refuses it and Chromium says so.
    await page.evaluate("document.head.append(Object.assign(document.createElement('style'), { textContent: 'body { color: red }' }))");
    await expect.poll(() => problems.length).toBe(1);
    expect(problems.splice(0)[0]).toMatch(/Content Security Policy/);
  });

  it('notices an accessibility violation (the axe check the other tests rely on can fail)', async () => {
    const page = await openPage(await newContext());
    await page.goto(`${baseUrl}/dashboard/login`);
    // An input with no label at all: axe rates that critical.
    await page.evaluate("document.querySelector('form').append(Object.assign(document.createElement('input'), { type: 'text' }))");
    await expect(assertAccessible(page, 'a broken sign-in page')).rejects.toThrow(/\[critical\] label: Form elements must have labels/);
  });

  it('checked every dashboard page with axe', () => {
    expect([...audited].sort()).toEqual([...PAGES].sort());
  });
});
