import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/lib/crypto.js';
import { assertAccessible } from '../helpers/axe.js';
import { CHROMIUM, followClick, screenshotIfAsked, signInThroughForm, suiteBrowser } from '../helpers/browser.js';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';

/*
 * DASHBOARD 14 and CONTRACT 17 in a real browser: an MCP client (a loopback callback server, as desktop agents
 * run) sends the person to /oauth/authorize; they sign in if they have not, see the consent page naming the app,
 * its redirect host, the organisation and the scopes in words, and "Allow" it; the code reaches the app through
 * the form's redirect (CSP form-action lets exactly that host through). Then "Connected apps" on the account,
 * the admins' page with the owners' switches, and "Revoke". Axe on every page, CSP refusals fail the test.
 *
 * SCREENSHOTS=1 also writes docs/screenshots/apps-*.png at 1280 and 390 px.
 */

const SKIP = !fs.existsSync(CHROMIUM) && !process.env.CI;
const PASSWORD = 'connected apps browser password';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.skipIf(SKIP)('connected apps in a browser (sqlite)', () => {
  const chrome = suiteBrowser();
  let env: TestEnv;
  let baseUrl = '';
  let page: Page;
  let callback: http.Server;
  let callbackUrl = '';
  const received: URL[] = [];
  let clientId = '';
  const owner = 'olga@acme.example';

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://localhost:${port}`;
    env = await createTestEnv('sqlite', { env: { PUBLIC_BASE_URL: baseUrl } });
    await env.app.listen({ port, host: '127.0.0.1' });
    const created = await env.container.services.admin.createOrganization({ name: 'Acme Holdings', ownerEmail: owner, ownerName: 'Olga Owner' });
    await env.container.store.repos.users.update(created.organization.id, created.owner.id, { password_hash: await hashPassword(PASSWORD) });
    callback = http.createServer((req, res) => {
      // Only the redirect counts: the browser also asks this origin for /favicon.ico.
      const url = new URL(req.url!, callbackUrl);
      if (url.pathname === '/callback') received.push(url);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><html lang="en"><title>Connected</title><main><h1>You can close this window</h1></main></html>');
    });
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
    callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
    const registered = await fetch(`${baseUrl}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Claude', redirect_uris: [callbackUrl], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] }),
    });
    expect(registered.status).toBe(201);
    clientId = ((await registered.json()) as { client_id: string }).client_id;
    page = chrome.page;
  }, 60_000);
  afterAll(async () => {
    await new Promise<void>((resolve) => callback?.close(() => resolve()));
    await env?.close();
  });

  function authorizationUrl(scope: string) {
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('base64url');
    const url = new URL(`${baseUrl}/oauth/authorize`);
    url.search = new URLSearchParams({
      client_id: clientId,
      redirect_uri: callbackUrl,
      response_type: 'code',
      scope,
      state,
      resource: `${baseUrl}/mcp`,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    return { url: url.href, verifier, state };
  }

  async function shots(name: string): Promise<void> {
    await screenshotIfAsked(page, `${name}-1280.png`);
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshotIfAsked(page, `${name}-390.png`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await assertAccessible(page, `${name} at 390 px`);
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  it('not signed in: the person signs in first, comes back to the consent, allows, and the app gets a code it exchanges', async () => {
    const request = authorizationUrl('projects:read tasks');
    await page.goto(request.url);
    // Sent to sign in, then back to the same request.
    expect(new URL(page.url()).pathname).toBe('/dashboard/login');
    await page.getByLabel('Email').fill(owner);
    await page.getByLabel('Password').fill(PASSWORD);
    await followClick(page, page.getByRole('button', { name: 'Sign in', exact: true }));
    expect(new URL(page.url()).pathname).toMatch(/^\/dashboard\/authorize\//);

    await expect(page.getByRole('heading', { name: 'Claude wants to use your account' }).count()).resolves.toBe(1);
    const text = (await page.getByRole('main').textContent()) ?? '';
    expect(text).toContain(new URL(callbackUrl).host);
    expect(text).toContain('Acme Holdings');
    expect(text).toContain('Read projects and their collaborators');
    expect(text).toContain('Read and change tasks');
    await assertAccessible(page, 'consent page');
    await shots('apps-consent');

    await followClick(page, page.getByRole('button', { name: 'Allow' }));
    const back = received.at(-1)!;
    expect(back.searchParams.get('state')).toBe(request.state);
    expect(back.searchParams.get('iss')).toBe(baseUrl);
    const code = back.searchParams.get('code')!;
    const token = await fetch(`${baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callbackUrl, client_id: clientId, code_verifier: request.verifier, resource: `${baseUrl}/mcp` }).toString(),
    });
    expect(token.status).toBe(200);
    const tokens = (await token.json()) as { access_token: string; refresh_token: string };
    expect(tokens.access_token).toMatch(/^wsa_/);

    // "Connected apps" on the account page, then "Revoke".
    await page.goto(`${baseUrl}/dashboard/account`);
    const table = page.getByRole('table', { name: 'Connected apps' });
    expect(await table.getByRole('row', { name: /Claude/ }).count()).toBe(1);
    await assertAccessible(page, 'account with a connected app');
    await shots('apps-account');

    // The admins' page: every app, and the owners' switches.
    await page.goto(`${baseUrl}/dashboard/settings/apps`);
    expect(await page.getByRole('table', { name: 'Connected apps' }).getByRole('row', { name: /Claude.*Olga Owner/ }).count()).toBe(1);
    expect(await page.getByRole('checkbox', { name: 'Members may connect apps' }).isChecked()).toBe(true);
    expect(await page.getByRole('checkbox', { name: 'Allow AI agents to delete' }).isChecked()).toBe(false);
    await page.getByRole('checkbox', { name: 'Allow AI agents to delete' }).check();
    await followClick(page, page.getByRole('button', { name: 'Save app settings' }));
    expect(await page.getByRole('status').textContent()).toContain('AI agents may now delete.');
    expect(await page.getByRole('checkbox', { name: 'Allow AI agents to delete' }).isChecked()).toBe(true);
    await assertAccessible(page, 'app settings');
    await shots('apps-settings');

    await page.goto(`${baseUrl}/dashboard/account`);
    await followClick(page, page.getByRole('link', { name: 'Revoke Claude' }));
    await followClick(page, page.getByRole('button', { name: 'Revoke app' }));
    expect(await page.getByRole('status').textContent()).toContain('Claude was revoked.');
    expect(await page.getByRole('table', { name: 'Connected apps' }).getByRole('row', { name: /Claude/ }).count()).toBe(0);
    const refused = await fetch(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(refused.status).toBe(401);
  });

  it('"Deny" sends access_denied back to the app', async () => {
    const context = await chrome.newContext();
    const other = await context.newPage();
    await signInThroughForm(other, baseUrl, owner, PASSWORD);
    const request = authorizationUrl('read');
    await other.goto(request.url);
    expect(await other.getByRole('list').filter({ hasText: 'Read everything you can read' }).count()).toBeGreaterThan(0);
    await followClick(other, other.getByRole('button', { name: 'Deny' }));
    const back = received.at(-1)!;
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe(request.state);
  });
});
