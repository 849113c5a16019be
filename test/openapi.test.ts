import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './helpers/browser.js';
import { createTestEnv, type TestEnv } from './helpers/test-env.js';

// The document comes from the route schemas alone, whatever the database: one dialect is enough.
describe('OpenAPI document and reference page (sqlite)', () => {
  let env: TestEnv;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let doc: any;

  beforeAll(async () => {
    env = await createTestEnv('sqlite');
    const res = await env.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(async () => env?.close());

  const specRoutes: [string, string][] = [
    ['get', '/v1/projects'],
    ['post', '/v1/projects'],
    ['get', '/v1/projects/{id}'],
    ['put', '/v1/projects/{id}'],
    ['delete', '/v1/projects/{id}'],
    ['get', '/v1/users'],
    ['post', '/v1/users'],
    ['get', '/v1/users/{id}'],
    ['put', '/v1/users/{id}'],
    ['get', '/v1/webhooks'],
    ['post', '/v1/webhooks'],
    ['delete', '/v1/webhooks/{id}'],
  ];

  it('is OpenAPI 3.1 with bearer authentication', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it.each(specRoutes)('documents %s %s with a success schema and the error responses', (method, path) => {
    const op = doc.paths[path]?.[method];
    expect(op, `${method} ${path}`).toBeDefined();
    const success = Object.keys(op.responses).find((code) => code.startsWith('2'));
    expect(success).toBeDefined();
    if (success !== '204') expect(op.responses[success!].content['application/json'].schema).toBeDefined();
    for (const code of ['401', '403', '429']) expect(op.responses[code], `${method} ${path} ${code}`).toBeDefined();
    if (path.includes('{id}')) expect(op.parameters.map((p: { name: string }) => p.name)).toContain('id');
  });

  it('documents request bodies that refuse unknown fields', () => {
    for (const [method, path] of specRoutes.filter(([m]) => m === 'post' || m === 'put')) {
      const schema = doc.paths[path][method].requestBody.content['application/json'].schema;
      expect(schema.additionalProperties, `${method} ${path}`).toBe(false);
    }
  });

  it('documents the paging parameters of the lists', () => {
    for (const path of ['/v1/projects', '/v1/users', '/v1/webhooks']) {
      const names = doc.paths[path].get.parameters.map((p: { name: string }) => p.name);
      expect(names).toEqual(expect.arrayContaining(['limit', 'cursor']));
    }
  });

  it('documents every /v1 route the app serves, and only marks extensions as such', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops as object).map((method) => `${method} ${path}`),
    );
    for (const [method, path] of specRoutes) expect(documented).toContain(`${method} ${path}`);
    const extra = documented.filter((op) => op.includes('/v1/') && !specRoutes.some(([m, p]) => `${m} ${p}` === op));
    for (const op of extra) {
      const [method, path] = op.split(' ') as [string, string];
      expect(doc.paths[path][method]['x-extension'], `${op} goes beyond the spec`).toBe(true);
    }
  });

  it('hides the service routes (health, metrics, the document itself)', () => {
    for (const path of ['/healthz', '/readyz', '/openapi.json', '/metrics']) expect(doc.paths[path]).toBeUndefined();
  });

  describe('the reference page at /docs', () => {
    let browser: Browser;
    let baseUrl: string;

    beforeAll(async () => {
      baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
      browser = await launchChromium();
    });
    afterAll(async () => browser?.close());

    it('renders every operation from local assets only (works offline)', async () => {
      const page = await browser.newPage();
      const external: string[] = [];
      page.on('request', (req) => {
        if (!req.url().startsWith(baseUrl) && !req.url().startsWith('data:')) external.push(req.url());
      });
      await page.goto(`${baseUrl}/docs`);
      await page.waitForSelector('.opblock', { timeout: 20_000 });
      const operations = await page.locator('.opblock').count();
      expect(operations).toBeGreaterThanOrEqual(specRoutes.length);
      expect(await page.textContent('body')).toContain('Workspace Service API');
      expect(external).toEqual([]);
      await page.screenshot({ path: '/tmp/docs-page.png' });
      await page.close();
    });
  });
});
