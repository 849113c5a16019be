import fs from 'node:fs';
import type { Locator, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { startDeliveryWorker, type RunningWorker } from '../../src/worker/index.js';
import { hashPassword } from '../../src/lib/crypto.js';
import { formatDay } from '../../src/lib/time.js';
import { GRACE_PERIOD_MS } from '../../src/services/lifecycle/lifecycle-service.js';
import { assertAccessible } from '../helpers/axe.js';
import { CHROMIUM, followClick, screenshotIfAsked, signInThroughForm, suiteBrowser } from '../helpers/browser.js';
import { waitFor } from '../helpers/https-receiver.js';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';

/*
 * The organisation's lifecycle in a real browser against a listening server with the worker running
 * (DASHBOARD 9 and 10): the owner opens "Billing", cancels by typing the organisation's name, sees the
 * read-only banner while the API refuses a write with `workspace_read_only`, requests an export and
 * downloads the ZIP, then resumes: the banner is gone and the API writes again. Controls are found by role
 * and accessible name only; Billing, its confirmation step and Export are checked with axe, and every page
 * is watched for CSP refusals. SQLite is enough: the pages are the same whatever the database.
 *
 * SCREENSHOTS=1 also writes docs/screenshots/billing.png and docs/screenshots/export.png.
 */

const SKIP = !fs.existsSync(CHROMIUM) && !process.env.CI;
const ORG_NAME = 'Leaving & Sons';
const OWNER_EMAIL = 'owner@leaving.example';
const OWNER_PASSWORD = 'lifecycle owner password';
const BANNER = /This workspace is read-only\. It will be deleted on (\d{1,2} [A-Z][a-z]{2} \d{4})\./;

/** The names of a ZIP's entries and the parsed `manifest.json`. */
async function readZip(file: string): Promise<{ entries: string[]; manifest: unknown }> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.open(file, { lazyEntries: true }, (err, z) => (err ? reject(err) : resolve(z))));
  const entries: string[] = [];
  let manifest: unknown = null;
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', resolve);
    zip.on('entry', (entry: yauzl.Entry) => {
      entries.push(entry.fileName);
      if (entry.fileName !== 'manifest.json') return zip.readEntry();
      zip.openReadStream(entry, (err, stream) => {
        if (err) return reject(err);
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', reject);
        stream.on('end', () => {
          manifest = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          zip.readEntry();
        });
      });
    });
    zip.readEntry();
  });
  zip.close();
  return { entries, manifest };
}

describe.skipIf(SKIP)('the subscription lifecycle in a browser (sqlite)', () => {
  const chrome = suiteBrowser();
  let env: TestEnv;
  let worker: RunningWorker;
  let page: Page;
  let baseUrl = '';
  let orgId = '';
  let ownerKey = '';

  beforeAll(async () => {
    env = await createTestEnv('sqlite');
    baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
    // The worker builds exports (and would run the deletion job): the same process as `serve` runs it.
    worker = await startDeliveryWorker(env.container, { pollIntervalMs: 100 });
    const created = await env.container.services.admin.createOrganization({ name: ORG_NAME, ownerEmail: OWNER_EMAIL, ownerName: 'Olive Owner' });
    orgId = created.organization.id;
    ownerKey = created.api_key.key;
    await env.container.store.repos.users.update(orgId, created.owner.id, { password_hash: await hashPassword(OWNER_PASSWORD) });
    expect((await api('POST', '/v1/projects', { name: 'Kept in the export' })).status).toBe(201);

    page = chrome.page;

    await signInThroughForm(page, baseUrl, OWNER_EMAIL, OWNER_PASSWORD);
  }, 60_000);

  afterAll(async () => {
    await worker?.stop();
    await env?.close();
  });

  const follow = (control: Locator): Promise<Response> => followClick(page, control);

  const screenshot = (file: string): Promise<void> => screenshotIfAsked(page, file);

  /** The API as a client with the owner's key. */
  async function api(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const res = await fetch(`${baseUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${ownerKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });
  const banner = () => page.getByRole('banner').getByText(BANNER);

  it('cancel from Billing, read-only with the banner, export and download, resume', async () => {
    // Billing, from the navigation: active, with the owner's control.
    const opened = await follow(nav('Billing'));
    expect(opened.status()).toBe(200);
    expect(await page.title()).toMatch(/^Billing · /);
    expect(await page.getByRole('main').textContent()).toContain('Workspace subscription');
    await assertAccessible(page, 'billing');
    expect(await banner().count()).toBe(0);

    // The confirmation step: a wrong name cancels nothing and says so, on the field and in the list.
    await follow(page.getByRole('link', { name: 'Cancel subscription' }));
    await assertAccessible(page, 'cancel subscription');
    await page.getByLabel('Organisation name').fill('Leaving and Sons');
    const wrong = await follow(page.getByRole('button', { name: 'Cancel subscription' }));
    expect(wrong.status()).toBe(400);
    expect(await page.getByRole('alert').textContent()).toContain("Organisation name does not match the organisation's name.");
    expect(await page.getByLabel('Organisation name').getAttribute('aria-invalid')).toBe('true');
    await assertAccessible(page, 'cancel subscription with an error');
    expect((await api('POST', '/v1/projects', { name: 'Still active' })).status).toBe(201);

    // The exact name: cancelled.
    await page.getByLabel('Organisation name').fill(ORG_NAME);
    const cancelledAt = Date.now();
    const done = await follow(page.getByRole('button', { name: 'Cancel subscription' }));
    expect(done.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/dashboard/billing');
    expect(await page.getByRole('status').filter({ hasText: 'The subscription was cancelled.' }).count()).toBe(1);
    const bannerText = (await banner().textContent()) ?? '';
    const deletionDay = BANNER.exec(bannerText)?.[1];
    const expected = [cancelledAt - 60_000, Date.now()].map((t) => formatDay(t + GRACE_PERIOD_MS));
    // The owner's banner offers the way back.
    expect(await page.getByRole('banner').getByRole('link', { name: 'Resume subscription' }).getAttribute('href')).toBe('/dashboard/billing');
    expect(expected).toContain(deletionDay);
    expect(await page.getByRole('main').textContent()).toContain('Deletion date');
    await assertAccessible(page, 'billing, read-only');
    await screenshot('billing.png');

    // The API refuses a write with the organisation's key; reads go on.
    const refused = await api('POST', '/v1/projects', { name: 'During the grace period' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('workspace_read_only');
    expect((await api('GET', '/v1/projects')).status).toBe(200);

    // Export is still allowed: request one, wait for the worker to make it ready, download it.
    await follow(nav('Export'));
    await expect(banner().count()).resolves.toBe(1);
    await follow(page.getByRole('button', { name: 'Request export' }));
    const exportsTable = page.getByRole('table', { name: 'Exports' });
    const download = exportsTable.getByRole('link', { name: 'Download' });
    await waitFor('a ready export', async () => {
      if ((await download.count()) === 1) return true;
      await page.reload();
      return false;
    }, 30_000);
    await assertAccessible(page, 'export');
    await screenshot('export.png');
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    expect(file.suggestedFilename()).toMatch(/\.zip$/);
    const saved = await file.path();
    expect(fs.readFileSync(saved).subarray(0, 4)).toEqual(Buffer.from([0x50, 0x4b, 0x03, 0x04]));
    const zip = await readZip(saved);
    expect(zip.entries).toContain('manifest.json');
    expect(JSON.stringify(zip.manifest)).toContain(orgId);

    // Resume from Billing: the banner is gone and the API writes again.
    await follow(nav('Billing'));
    await follow(page.getByRole('button', { name: 'Resume subscription' }));
    expect(new URL(page.url()).pathname).toBe('/dashboard/billing');
    expect(await page.getByRole('status').filter({ hasText: 'The subscription was resumed.' }).count()).toBe(1);
    expect(await banner().count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Cancel subscription' }).count()).toBe(1);
    await assertAccessible(page, 'billing, resumed');
    expect((await api('POST', '/v1/projects', { name: 'After resuming' })).status).toBe(201);
  });
});
