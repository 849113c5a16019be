import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import { cliActor } from '../../src/services/access/actor.js';
import { cliJson, createCliWorld, runCli } from '../helpers/cli.js';
import { DashboardClient, textOf } from '../helpers/dashboard.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

// The CLI cases spawn Node processes; on a busy two-core machine that is slow, not wrong.
vi.setConfig({ testTimeout: 120_000 });

/**
 * CONTRACT 4: a name (project, workflow, task, API key, organisation) needs one character that is neither
 * white space nor invisible; "   " or a lone zero-width space is 400 `validation_failed` ("must not be
 * blank") through the API, the dashboard and the CLI alike. Nothing is trimmed otherwise.
 */
const BLANKS = ['   ', '\u200b', '\t\n', '\u00a0\u3000', '\u200d\u2060\ufeff'];

describe.each(testDialects())('blank names are refused on every door (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let projectId = '';
  let workflowId = '';
  let taskId = '';

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Blank Co');
    const actor = cliActor(org.id);
    const project = await env.container.services.projects.create(actor, { name: 'Apollo' });
    projectId = project.id;
    workflowId = (await env.container.services.workflows.create(actor, projectId, { name: 'Ship' })).id;
    taskId = (await env.container.services.tasks.create(actor, projectId, { title: 'Pack' })).id;
  });
  afterAll(async () => {
    await env?.close();
  });

  const db = () => env.container.database.db;
  /** Every name the organisation holds, to show a refusal changed nothing. */
  async function names(): Promise<unknown> {
    const [projects, workflows, tasks, keys] = await Promise.all([
      db().selectFrom('projects').select(['id', 'name', 'updated_at']).where('org_id', '=', org.id).orderBy('id').execute(),
      db().selectFrom('workflows').select(['id', 'name', 'updated_at']).where('org_id', '=', org.id).orderBy('id').execute(),
      db().selectFrom('tasks').select(['id', 'title', 'updated_at']).where('org_id', '=', org.id).orderBy('id').execute(),
      db().selectFrom('api_keys').select(['id', 'name']).where('org_id', '=', org.id).orderBy('id').execute(),
    ]);
    return { projects, workflows, tasks, keys };
  }

  it('the API answers 400 validation_failed "must not be blank" for each, and changes nothing', async () => {
    const before = await names();
    const calls: [string, string, string, Record<string, unknown>][] = [
      ['POST', '/v1/projects', 'name', {}],
      ['PUT', `/v1/projects/${projectId}`, 'name', {}],
      ['POST', `/v1/projects/${projectId}/workflows`, 'name', { steps: [{ type: 'wait', duration: 'PT1H' }] }],
      ['PUT', `/v1/workflows/${workflowId}`, 'name', { steps: [{ type: 'wait', duration: 'PT1H' }] }],
      ['POST', `/v1/projects/${projectId}/tasks`, 'title', {}],
      ['PATCH', `/v1/tasks/${taskId}`, 'title', {}],
      ['POST', '/v1/api-keys', 'name', { scope: 'projects:read' }],
    ];
    for (const [method, url, field, rest] of calls) {
      for (const blank of BLANKS) {
        const res = await env.request(method, url, { key: org.ownerKey, body: { ...rest, [field]: blank } });
        expect(res.status, `${method} ${url} ${JSON.stringify(blank)}`).toBe(400);
        expect(res.body.error.code).toBe('validation_failed');
        expect(res.body.error.details).toEqual([{ field, message: 'must not be blank' }]);
      }
    }
    expect(await names()).toEqual(before);
  });

  it('the API stores a name with spaces around it as typed (nothing trimmed), and an API key may still have no name', async () => {
    const created = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: '  Apollo 2 \u200b' } });
    expect(created.status).toBe(201);
    expect(created.body.name).toBe('  Apollo 2 \u200b');
    const task = await env.request('POST', `/v1/projects/${projectId}/tasks`, { key: org.ownerKey, body: { title: '\tPack\t' } });
    expect(task.status).toBe(201);
    expect(task.body.title).toBe('\tPack\t');
    const unnamed = await env.request('POST', '/v1/api-keys', { key: org.ownerKey, body: { scope: 'projects:read', name: '' } });
    expect(unnamed.status).toBe(201);
    expect(unnamed.body.name).toBeNull();
  });

  it('the dashboard refuses the same on each form, says so on the field, and keeps what was typed', async () => {
    const page = await DashboardClient.signedIn(env, org.id, org.ownerId);
    await page.get(`/dashboard/projects/${projectId}`);
    const before = await names();
    const forms: [string, Record<string, string>, string, string][] = [
      ['/dashboard/projects', { name: '   ', description: 'kept text', status: 'active' }, 'Name', 'kept text'],
      [`/dashboard/projects/${projectId}`, { name: '\u200b', description: 'kept description', status: 'active' }, 'Name', 'kept description'],
      [`/dashboard/projects/${projectId}/workflows`, { name: '\u00a0', description: 'kept workflow text' }, 'Workflow name', 'kept workflow text'],
      [`/dashboard/projects/${projectId}/workflows/${workflowId}`, { name: '  ', description: 'kept edit text' }, 'Name', 'kept edit text'],
      [`/dashboard/projects/${projectId}/tasks`, { title: '\t', assignee_id: '', due_date: '2031-01-02' }, 'Task title', '2031-01-02'],
      ['/dashboard/api-keys', { name: '\u3000', access: 'read' }, 'Name', 'value="read" checked'],
    ];
    for (const [url, fields, label, kept] of forms) {
      await page.get(url === '/dashboard/api-keys' ? url : `/dashboard/projects/${projectId}`);
      const res = await page.post(url, fields);
      expect(res.status, url).toBe(400);
      expect(textOf(res.text), url).toContain(`${label} must not be blank`);
      expect(res.text, url).toContain(kept);
    }
    expect(await names()).toEqual(before);
  });

  it('the CLI exits 1 with "must not be blank" for an organisation, a workflow, a task and an API key, and creates nothing', async () => {
    const world = await createCliWorld(dialect);
    let container: Container | null = null;
    try {
      for (const blank of ['   ', '\u200b']) {
        const refused = await runCli(['org', 'create', '--name', blank, '--owner-email', 'o@blank.example'], world.env);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('must not be blank');
      }
      const created = await cliJson(['org', 'create', '--name', ' Blank Co ', '--owner-email', 'o@blank.example'], world.env);
      expect(created.organization.name).toBe(' Blank Co ');
      const orgId = created.organization.id as string;
      container = await createContainer(loadConfig({ ...world.env, LOG_LEVEL: 'silent' }), { migrate: false, logger: pino({ level: 'silent' }) });
      const project = await container.services.projects.create(cliActor(orgId), { name: 'Apollo' });
      for (const args of [
        ['workflow', 'create', '--org', orgId, '--project', project.id, '--name', '\u00a0'],
        ['task', 'create', '--org', orgId, '--project', project.id, '--title', '   '],
        ['key', 'create', '--user', created.owner.id, '--scope', 'projects:read', '--name', '\u200b'],
      ]) {
        const res = await runCli(args, world.env);
        expect(res.code, args.join(' ')).toBe(1);
        expect(res.stderr, args.join(' ')).toContain('must not be blank');
      }
      const db = container.database.db;
      expect(await db.selectFrom('organizations').select('id').execute()).toHaveLength(1);
      expect(await db.selectFrom('workflows').select('id').execute()).toEqual([]);
      expect(await db.selectFrom('tasks').select('id').execute()).toEqual([]);
      // The one key is the owner's first, made by `org create`.
      expect(await db.selectFrom('api_keys').select('id').execute()).toHaveLength(1);
    } finally {
      await container?.close();
      await world.cleanup();
    }
  });
});
