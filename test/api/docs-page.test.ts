import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertAccessible } from '../helpers/axe.js';
import { launchChromium } from '../helpers/browser.js';
import { createTestEnv, type TestEnv } from '../helpers/test-env.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** [method, path] of every operation under `paths` of an OpenAPI document. */
function operationsOf(document: { paths: Record<string, Record<string, unknown>> }): [string, string][] {
  return Object.entries(document.paths).flatMap(([p, item]) => Object.keys(item).filter((k) => METHODS.includes(k)).map((m): [string, string] => [m, p]));
}

interface Violation {
  directive: string;
  blocked: string;
  source: string;
}

// The page is built from the route schemas alone, whatever the database: one dialect is enough.
describe('the API reference at /docs (sqlite)', () => {
  let env: TestEnv;
  let baseUrl: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let response: Response;
  const consoleErrors: string[] = [];
  const requests: string[] = [];

  beforeAll(async () => {
    env = await createTestEnv('sqlite');
    baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(20_000);
    page = await context.newPage();
    // Collected in the page from its first script on, so a refusal during the first render is seen too.
    await page.addInitScript(() => {
      const seen: Violation[] = [];
      (globalThis as unknown as { cspViolations: Violation[] }).cspViolations = seen;
      globalThis.addEventListener('securitypolicyviolation', (event) => {
        const e = event as unknown as { effectiveDirective: string; blockedURI: string; sourceFile: string };
        seen.push({ directive: e.effectiveDirective, blocked: e.blockedURI, source: e.sourceFile });
      });
    });
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(`uncaught ${error.name}: ${error.message}`));
    page.on('request', (request) => requests.push(request.url()));
    response = (await page.goto(`${baseUrl}/docs`))!;
    await page.waitForSelector('.opblock');
  });
  afterAll(async () => {
    await browser?.close();
    await env?.close();
  });

  const cspViolations = () => page.evaluate(() => (globalThis as unknown as { cspViolations: Violation[] }).cspViolations);

  it('is served under a strict Content-Security-Policy: nothing inline, nothing from elsewhere', () => {
    expect(response.status()).toBe(200);
    const headers = response.headers();
    const policy = Object.fromEntries(
      headers['content-security-policy']!.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]),
    );
    expect(policy['default-src']).toEqual(["'none'"]);
    expect(policy['script-src']).toEqual(["'self'"]);
    expect(policy['style-src']).toEqual(["'self'"]);
    expect(policy['img-src']).toEqual(["'self'", 'data:']);
    expect(policy['frame-ancestors']).toEqual(["'none'"]);
    expect(headers['content-security-policy']).not.toMatch(/unsafe-|https:|\*/);
    expect(headers['x-content-type-options']).toBe('nosniff');
  });

  it('renders every operation of docs/openapi.json', async () => {
    const committed = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs/openapi.json'), 'utf8'));
    expect(await page.locator('.opblock').count()).toBeGreaterThanOrEqual(operationsOf(committed).length);
    // Each operation of the document this server serves, by method and path.
    const served = await (await fetch(`${baseUrl}/openapi.json`)).json();
    for (const [method, p] of operationsOf(served)) {
      expect(await page.locator(`.opblock-${method} .opblock-summary-path[data-path="${p}"]`).count(), `${method} ${p}`).toBeGreaterThanOrEqual(1);
    }
  });

  it('is titled as the service, with our header and no Swagger top bar', async () => {
    expect(await page.title()).toBe('Workspace Service API reference');
    expect(await page.locator('header .ws-docs-brand').textContent()).toBe('Workspace Service API reference');
    // A way back to the dashboard, in the header.
    expect(await page.getByRole('banner').getByRole('link', { name: 'Back to the dashboard' }).getAttribute('href')).toBe('/dashboard');
    // One h1: the document's title.
    expect(await page.locator('h1').count()).toBe(1);
    expect(await page.locator('h1').textContent()).toContain('Workspace Service API');
    expect(await page.locator('.topbar').count()).toBe(0);
    // Swagger's own mark (an inline SVG of this size) and its favicons are not on the page.
    expect(await page.locator('svg[viewBox="0 0 407 116"]').count()).toBe(0);
    const icons = await page.locator('link[rel~="icon"]').evaluateAll((links) => links.map((l) => l.getAttribute('href')));
    expect(icons).toHaveLength(1);
    expect(icons[0]).toMatch(/\/theme\/logo\.svg$/);
  });

  it('shows our logo, served from this server, in the header and as the favicon', async () => {
    const ours = fs.readFileSync(path.join(ROOT, 'public/docs/logo.svg'));
    const logo = page.locator('.ws-docs-header img');
    expect(await logo.evaluate((img) => (img as unknown as { complete: boolean; naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
    const logoUrl = await logo.evaluate((img) => (img as unknown as { src: string }).src);
    const faviconUrl = await page.locator('link[rel~="icon"]').evaluate((l) => (l as unknown as { href: string }).href);
    for (const url of [logoUrl, faviconUrl]) {
      expect(url.startsWith(`${baseUrl}/docs/`), url).toBe(true);
      const res = await fetch(url);
      expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
      expect(Buffer.from(await res.arrayBuffer()).equals(ours)).toBe(true);
    }
  });

  it('requests nothing from any other host and links to no tool vendor', async () => {
    const elsewhere = requests.filter((url) => !url.startsWith(`${baseUrl}/`) && !url.startsWith('data:'));
    expect(elsewhere).toEqual([]);
    // Every link stays with the service: this page's origin, or the deployment's public address (the
    // document's server, which the licence link names).
    const doc = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as { servers: { url: string }[]; info: { license: { url: string } } };
    const publicBase = doc.servers[0]!.url;
    const links = await page.locator('a[href]').evaluateAll((anchors) => anchors.map((a) => (a as unknown as { href: string }).href));
    expect(links).toContain(doc.info.license.url);
    for (const href of links) {
      expect(href.startsWith(`${baseUrl}/`) || href.startsWith(`${publicBase}/`), href).toBe(true);
    }
    // The licence it links to is served here.
    const licence = await fetch(`${baseUrl}/docs/license`);
    expect(licence.status).toBe(200);
    expect(await licence.text()).toContain('MIT License');
  });

  it('logs no error and breaks its Content-Security-Policy nowhere, also once operations are opened and tried', async () => {
    expect(consoleErrors).toEqual([]);
    expect(await cspViolations()).toEqual([]);
    // Open an operation, switch it to "Try it out", open a schema fully: the parts that render code and forms.
    const first = page.locator('.opblock').first();
    await first.locator('.opblock-summary-control').click();
    await first.locator('.try-out__btn').click();
    await first.locator('.btn.execute').waitFor();
    await first.locator('.opblock-body pre').first().waitFor();
    const schema = page.locator('section.models.is-open .json-schema-2020-12').first();
    await schema.locator('.json-schema-2020-12-expand-deep-button').click();
    await schema.locator('.json-schema-2020-12-property').first().waitFor();
    expect(await cspViolations()).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it('has no serious or critical accessibility violation (axe), opened or not', async () => {
    // The state the previous test left: one operation open in "Try it out", the schemas open.
    await assertAccessible(page, '/docs with an operation open');
    await page.reload();
    await page.waitForSelector('.opblock');
    await assertAccessible(page, '/docs as it opens');
    expect(await cspViolations()).toEqual([]);
  });
});
