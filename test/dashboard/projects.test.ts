import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, noticeOf, textOf } from '../helpers/dashboard.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

describe.each(testDialects())('dashboard projects (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg();
  });
  afterAll(async () => env?.close());

  const projectNames = async () => (await env.request('GET', '/v1/projects?limit=100', { key: org.ownerKey })).body.data.map((p: { name: string }) => p.name);
  const eventTypes = async () =>
    (await env.container.database.db.selectFrom('events').select('type').where('org_id', '=', org.id).orderBy('seq').execute()).map((e) => e.type);

  async function signedIn(role: 'owner' | 'admin' | 'member' | 'viewer') {
    const browser = new DashboardClient(env);
    const userId = role === 'owner' ? org.ownerId : (await org.member(role)).userId;
    await browser.signInAs(org.id, userId);
    return { browser, userId };
  }

  it('creates a project from the form: the same event as the API, and an audit row from the dashboard', async () => {
    const hook = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://127.0.0.1:9/h', events: ['project.created'] } });
    expect(hook.status).toBe(201);
    const { browser, userId } = await signedIn('member');
    const page = await browser.get('/dashboard/projects');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<caption[^>]*>Projects<\/caption>/);
    const before = await eventTypes();

    const res = await browser.post('/dashboard/projects', { name: 'From the web <b>', description: 'Q4', status: 'draft' }, { headers: { 'user-agent': 'UA/1' } });
    expect(res.status).toBe(303);
    expect(res.location).toMatch(/^\/dashboard\/projects\/proj_[a-z0-9]+$/);
    expect(await eventTypes()).toEqual([...before, 'project.created']);

    // The new project's page, with the notice once: a reload shows the page only, and creates nothing.
    const created = await browser.follow(res);
    expect(noticeOf(created.text)).toBe('Project "From the web <b>" created.');
    expect(created.text).toContain('Project &quot;From the web &lt;b>&quot; created.');
    const reloaded = await browser.get(res.location!);
    expect(noticeOf(reloaded.text)).toBe('');
    expect(await eventTypes()).toEqual([...before, 'project.created']);
    expect((await browser.get('/dashboard/projects')).text).toContain('From the web &lt;b>');
    const [row] = await env.container.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('org_id', '=', org.id)
      .where('action', '=', 'project.created')
      .orderBy('seq', 'desc')
      .limit(1)
      .execute();
    expect(row).toMatchObject({ actor_type: 'user', actor_id: userId, source: 'dashboard', user_agent: 'UA/1', outcome: 'success', target_label: 'From the web <b>' });
    expect(row!.session_id).toMatch(/^sess_/);
    expect(JSON.parse(row!.changes!)).toEqual({ name: { old: null, new: 'From the web <b>' }, description: { old: null, new: 'Q4' }, status: { old: null, new: 'draft' }, visibility: { old: null, new: 'organization' } });
  });

  it('shows the API rule for a bad name on the page and creates nothing', async () => {
    const { browser } = await signedIn('owner');
    await browser.get('/dashboard/projects');
    const before = await projectNames();
    const res = await browser.post('/dashboard/projects', { name: 'x'.repeat(256), description: '', status: 'active' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('role="alert"');
    expect(textOf(res.text)).toContain('Name must be at most 255 characters');
    expect(res.text).toMatch(/id="name"[^>]*aria-invalid="true"/);
    const archived = await browser.post('/dashboard/projects', { name: 'ok', status: 'archived' });
    expect(archived.status).toBe(400);
    expect(await projectNames()).toEqual(before);
  });

  it('filters by status', async () => {
    await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Only draft', status: 'draft' } });
    await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Only active' } });
    const { browser } = await signedIn('viewer');
    const drafts = textOf((await browser.get('/dashboard/projects?status=draft')).text);
    expect(drafts).toContain('Only draft');
    expect(drafts).not.toContain('Only active');
    const bogus = await browser.get('/dashboard/projects?status=bogus');
    expect(bogus.status).toBe(400);
    // The list names the statuses, not the empty value the form sends for "all".
    expect(textOf(bogus.text)).toContain('status must be one of: active, archived, draft.');
  });

  it('hides the form from a viewer and refuses a forged post with nothing created', async () => {
    const { browser } = await signedIn('viewer');
    const page = await browser.get('/dashboard/projects');
    expect(page.text).not.toContain('New project');
    const before = await projectNames();
    const res = await browser.post('/dashboard/projects', { name: 'Sneaky', status: 'active' });
    expect(res.status).toBe(403);
    expect(await projectNames()).toEqual(before);
  });

  it('refuses a post without the CSRF token with nothing created', async () => {
    const { browser } = await signedIn('owner');
    await browser.get('/dashboard/projects');
    const before = await projectNames();
    const res = await browser.post('/dashboard/projects', { name: 'Forged', status: 'active' }, { csrf: null });
    expect(res.status).toBe(403);
    expect(await projectNames()).toEqual(before);
  });
});
