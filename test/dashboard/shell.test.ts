import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DashboardClient, textOf } from '../helpers/dashboard.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

describe.each(testDialects())('dashboard shell (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Shell & Co');
  });
  afterAll(async () => env?.close());
  afterEach(() => vi.restoreAllMocks());

  it('sends a visitor without a session to the sign-in page and back afterwards', async () => {
    const browser = new DashboardClient(env);
    const res = await browser.get('/dashboard/members?x=1');
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/login?next=${encodeURIComponent('/dashboard/members?x=1')}`);
  });

  it('serves the overview with landmarks, a skip link, the navigation and strict headers', async () => {
    const browser = new DashboardClient(env);
    await browser.signInAs(org.id, org.ownerId);
    const res = await browser.get('/dashboard');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toMatch(/^<!doctype html>/);
    expect(res.text).toContain('<title>Overview · Shell &amp; Co · Workspace</title>');
    expect(res.text).toContain('<nav aria-label="Main"');
    expect(res.text).toContain('<main id="main"');
    expect(res.text).toContain('href="#main"');
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(res.text).not.toMatch(/\sstyle=/);
    expect(textOf(res.text)).toContain('Sign out');
    // DASHBOARD 1's order: "My tasks" right after "Projects" (the owner sees every link built so far).
    const nav = /<nav aria-label="Main"[^>]*>([\s\S]*?)<\/nav>/.exec(res.text)![1]!;
    expect([...nav.matchAll(/<a href="[^"]+"[^>]*>([^<]+)<\/a>/g)].map((m) => m[1])).toEqual(['Overview', 'Projects', 'My tasks', 'Members', 'API keys', 'Webhooks', 'Audit log', 'Export', 'Billing', 'Settings', 'Account', 'Security']);
  });

  it('sends a browser at / to the dashboard; a client that asks for JSON still gets the API\'s 404', async () => {
    const html = await env.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(html.statusCode).toBe(303);
    expect(html.headers.location).toBe('/dashboard');
    const json = await env.app.inject({ method: 'GET', url: '/', headers: { accept: 'application/json' } });
    expect(json.statusCode).toBe(404);
    expect(json.json().error.code).toBe('not_found');
    const other = await env.app.inject({ method: 'GET', url: '/elsewhere', headers: { accept: 'text/html' } });
    expect(other.statusCode).toBe(404);
    const posted = await env.app.inject({ method: 'POST', url: '/', headers: { accept: 'text/html' } });
    expect(posted.statusCode).not.toBe(303);
  });

  it('answers an unknown dashboard page with an HTML 404 while /v1 keeps JSON errors', async () => {
    const browser = new DashboardClient(env);
    await browser.signInAs(org.id, org.ownerId);
    const page = await browser.get('/dashboard/nowhere');
    expect(page.status).toBe(404);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(textOf(page.text)).toContain('Page not found');
    const api = await env.request('GET', '/v1/nowhere', { key: org.ownerKey });
    expect(api.status).toBe(404);
    expect(api.body.error.code).toBe('not_found');
  });

  it('answers a fault with an HTML 500 page that shows nothing internal', async () => {
    const browser = await DashboardClient.signedIn(env, org.id, org.ownerId);
    vi.spyOn(env.container.services.organizations, 'overview').mockRejectedValue(new Error('SELECT secret FROM internals at repo.ts:42'));
    const res = await browser.get('/dashboard');
    expect(res.status).toBe(500);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(textOf(res.text)).toContain('Something went wrong');
    expect(res.text).not.toMatch(/SELECT|internals|repo\.ts|at .*:\d+/);
    expect(res.text).toContain('<nav aria-label="Main"');
  });

  it('keeps answering 415 to form bodies on the API', async () => {
    const res = await env.request('POST', '/v1/projects', {
      key: org.ownerKey,
      payload: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
  });

  it('serves its own assets', async () => {
    const css = await env.app.inject({ method: 'GET', url: '/dashboard/assets/dashboard.css' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toMatch(/text\/css/);
  });

  it('signs out: the cookie stops working, and a POST without the token is refused with nothing changed', async () => {
    const browser = new DashboardClient(env);
    await browser.signInAs(org.id, org.ownerId);
    await browser.get('/dashboard');
    const forged = await browser.post('/dashboard/logout', {}, { csrf: null });
    expect(forged.status).toBe(403);
    expect((await browser.get('/dashboard')).status).toBe(200);

    const crossSite = await browser.post('/dashboard/logout', {}, { headers: { 'sec-fetch-site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    const otherOrigin = await browser.post('/dashboard/logout', {}, { headers: { origin: 'https://evil.example' } });
    expect(otherOrigin.status).toBe(403);
    expect((await browser.get('/dashboard')).status).toBe(200);

    const stolen = new Map(browser.cookies);
    const out = await browser.post('/dashboard/logout');
    expect(out.status).toBe(303);
    const replay = new DashboardClient(env);
    for (const [k, v] of stolen) replay.cookies.set(k, v);
    expect((await replay.get('/dashboard')).status).toBe(303);
  });
});
