import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { latestInvitationToken } from '../helpers/mail-outbox.js';
import { createTestEnv, type TestEnv, type TestOrg } from '../helpers/test-env.js';

// The page is the same whatever the database, so one dialect is enough here.
describe('invitation page in a browser (sqlite)', () => {
  let env: TestEnv;
  let org: TestOrg;
  let browser: Browser;
  let baseUrl: string;

  beforeAll(async () => {
    env = await createTestEnv('sqlite');
    org = await env.createOrg('Browser & Co');
    baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await env?.close();
  });

  async function invite(email: string): Promise<{ id: string; token: string }> {
    const res = await env.request('POST', '/v1/users', { key: org.ownerKey, body: { email, role: 'member' } });
    expect(res.status).toBe(201);
    return { id: res.body.id, token: latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email) };
  }

  it('shows the server error in the page and keeps the user invited', async () => {
    const { id, token } = await invite('too-short@example.com');
    const page = await browser.newPage();
    try {
      await page.goto(`${baseUrl}/invitations/${token}`);
      await page.fill('#name', 'Shorty');
      await page.fill('#password', 'short');
      const [response] = await Promise.all([page.waitForNavigation(), page.click('#submit')]);
      expect(response?.status()).toBe(400);
      expect(await page.textContent('[role="alert"]')).toContain('Password must be at least 8 characters');
      expect(await page.getAttribute('#password', 'aria-invalid')).toBe('true');
      expect(await page.inputValue('#name')).toBe('Shorty');
    } finally {
      await page.close();
    }
    const user = await env.request('GET', `/v1/users/${id}`, { key: org.ownerKey });
    expect(user.body).toMatchObject({ status: 'invited', name: null });
  });

  it('activates the user from the form and lands signed in on the dashboard', async () => {
    const { id, token } = await invite('grace@example.com');
    const page = await browser.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (msg) => msg.type() === 'error' && consoleErrors.push(msg.text()));
    try {
      const response = await page.goto(`${baseUrl}/invitations/${token}`);
      expect(response?.status()).toBe(200);
      expect(page.url()).toBe(`${baseUrl}/dashboard/invitations/${token}`);
      expect(await page.title()).toBe('Join Browser & Co · Workspace');
      expect(await page.inputValue('#email')).toBe('grace@example.com');
      await page.fill('#name', 'Grace Hopper');
      await page.fill('#password', 'compilers rule 1952');
      await page.screenshot({ path: '/tmp/invitation-page-filled.png', fullPage: true });
      await Promise.all([page.waitForURL(`${baseUrl}/dashboard`), page.click('#submit')]);
      expect(await page.textContent('h1')).toBe('Overview');
      expect(await page.textContent('header')).toContain('Grace Hopper');
      // The dashboard's CSP blocked nothing: its own stylesheet and script load from our origin.
      expect(consoleErrors).toEqual([]);
    } finally {
      await page.close();
    }

    const user = await env.request('GET', `/v1/users/${id}`, { key: org.ownerKey });
    expect(user.status).toBe(200);
    expect(user.body).toMatchObject({ id, status: 'active', name: 'Grace Hopper' });

    const used = await browser.newPage();
    try {
      const again = await used.goto(`${baseUrl}/invitations/${token}`);
      expect(again?.status()).toBe(404);
      expect(await used.textContent('h1')).toBe('Invitation not found');
    } finally {
      await used.close();
    }
  });
});
