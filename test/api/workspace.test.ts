import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDialects, type ApiResponse, type RequestOptions, type TestEnv, type TestOrg, createTestEnv } from '../helpers/test-env.js';
import { cancelSubscription, orgSnapshot } from '../helpers/read-only.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { recordEvent } from '../../src/services/events/outbox.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/**
 * Every answer these tests receive is checked against the served OpenAPI document: the operation's
 * schema for its status, found by matching the path against the document's templates.
 */
function documentChecker(doc: Json) {
  const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));
  ajv.addSchema(doc, 'openapi.json');
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  return (method: string, url: string, res: ApiResponse) => {
    const path = url.split('?')[0]!;
    const found = templates.find((t) => t.pattern.test(path));
    expect(found, `${method} ${path} is in the document`).toBeDefined();
    const operation = doc.paths[found!.template][method.toLowerCase()];
    expect(operation, `${method} ${found!.template}`).toBeDefined();
    const response = operation.responses[String(res.status)];
    expect(response, `${method} ${found!.template} documents ${res.status}`).toBeDefined();
    if (res.status === 204) return;
    const pointer = ['paths', found!.template, method.toLowerCase(), 'responses', String(res.status), 'content', 'application/json', 'schema']
      .map((part) => encodeURIComponent(part.replace(/~/g, '~0').replace(/\//g, '~1')))
      .join('/');
    const ref = response.$ref ? `openapi.json#${response.$ref.slice(1)}/content/application~1json/schema` : `openapi.json#/${pointer}`;
    const validate = ajv.getSchema(ref);
    expect(validate, ref).toBeDefined();
    expect(validate!(res.body), `${method} ${url}: ${JSON.stringify(validate!.errors)}`).toBe(true);
  };
}

describe.each(testDialects())('the whole workspace through /v1 (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;
  let member: { userId: string; key: string };
  let viewer: { userId: string; key: string };
  let projectId: string;
  let check: ReturnType<typeof documentChecker>;

  async function call(method: string, url: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const res = await env.request(method, url, options);
    check(method, url, res);
    return res;
  }

  const waitTaskSteps = (assignee: string) => [
    { type: 'task', title: 'Write the notes', assignee_id: assignee, due_in: '1d 12h' },
    { type: 'approval', title: 'Approve', assignee_id: assignee },
    { type: 'wait', duration: '90s' },
  ];

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    check = documentChecker((await env.request('GET', '/openapi.json')).body);
    org = await env.createOrg('Acme');
    other = await env.createOrg('Other');
    member = await org.member('member');
    viewer = await org.member('viewer');
    projectId = (await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Apollo' } })).body.id;
  });
  afterAll(async () => env?.close());

  describe('workflows', () => {
    it('creates a workflow with its steps, durations returned as ISO 8601, and GET can be PUT back unchanged', async () => {
      const created = await call('POST', `/v1/projects/${projectId}/workflows`, { key: member.key, body: { name: 'Release', steps: waitTaskSteps(member.userId) } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ project_id: projectId, name: 'Release', description: null, version: 1 });
      expect(created.body.id).toMatch(/^wf_/);
      expect(created.body.steps.map((s: Json) => [s.type, s.due_in, s.duration])).toEqual([
        ['task', 'P1DT12H', null],
        ['approval', null, null],
        ['wait', null, 'PT1M30S'],
      ]);
      const read = await call('GET', `/v1/workflows/${created.body.id}`, { key: viewer.key });
      expect(read.body).toEqual(created.body);

      const back = await call('PUT', `/v1/workflows/${created.body.id}`, { key: member.key, body: read.body });
      expect(back.status).toBe(200);
      expect(back.body).toEqual(read.body); // nothing changed: same version, same updated_at

      const audit = await env.container.database.db.selectFrom('audit_log').selectAll().where('org_id', '=', org.id).where('target_id', '=', created.body.id).execute();
      expect(audit.map((a) => [a.action, a.source])).toEqual([['workflow.created', 'api']]);
    });

    it('PUT keeps the ids of the steps it names, gives new ones theirs, and bumps the version once', async () => {
      const wf = (await call('POST', `/v1/projects/${projectId}/workflows`, { key: member.key, body: { name: 'Edit me', steps: waitTaskSteps(member.userId) } })).body;
      const [first, , third] = wf.steps;
      const res = await call('PUT', `/v1/workflows/${wf.id}`, {
        key: member.key,
        body: { name: 'Edited', description: 'Now shorter', version: 1, steps: [third, { type: 'task', title: 'New step' }, first] },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: 'Edited', description: 'Now shorter', version: 2 });
      expect(res.body.steps.map((s: Json) => s.id)).toEqual([third.id, expect.stringMatching(/^step_/), first.id]);
      expect(res.body.steps[1].id).not.toBe(wf.steps[1].id);
    });

    it('refuses a bad step naming it, an unknown step id, and a stale version; nothing changes', async () => {
      const wf = (await call('POST', `/v1/projects/${projectId}/workflows`, { key: member.key, body: { name: 'Guarded', steps: waitTaskSteps(member.userId) } })).body;
      const before = await orgSnapshot(env.container, org.id);
      const bad = await call('PUT', `/v1/workflows/${wf.id}`, { key: member.key, body: { name: 'x', steps: [wf.steps[0], { type: 'wait', duration: 'soon' }] } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('validation_failed');
      expect(bad.body.error.details).toEqual([{ field: 'steps[1].duration', message: expect.any(String) }]);
      const unknown = await call('PUT', `/v1/workflows/${wf.id}`, { key: member.key, body: { name: 'x', steps: [{ ...wf.steps[0], id: 'step_nope' }] } });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.details[0].field).toBe('steps[0].id');
      const stale = await call('PUT', `/v1/workflows/${wf.id}`, { key: member.key, body: { name: 'x', version: 7, steps: [] } });
      expect(stale.status).toBe(409);
      expect(stale.body.error.code).toBe('conflict');
      const create = await call('POST', `/v1/projects/${projectId}/workflows`, { key: member.key, body: { name: 'Bad', steps: [{ type: 'task' }] } });
      expect(create.status).toBe(400);
      expect(create.body.error.details[0].field).toBe('steps[0].title');
      const extra = await call('POST', `/v1/projects/${projectId}/workflows`, { key: member.key, body: { name: 'Bad', colour: 'red' } });
      expect(extra.status).toBe(400);
      expect(await orgSnapshot(env.container, org.id)).toEqual(before);
    });

    it('lists a project\'s workflows newest first with cursor paging; another organisation\'s ids are 404', async () => {
      const project = (await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Paging' } })).body.id;
      const ids: string[] = [];
      for (const name of ['A', 'B', 'C']) ids.push((await call('POST', `/v1/projects/${project}/workflows`, { key: member.key, body: { name } })).body.id);
      const first = await call('GET', `/v1/projects/${project}/workflows?limit=2`, { key: viewer.key });
      expect(first.body.data.map((w: Json) => w.id)).toEqual([ids[2], ids[1]]);
      const second = await call('GET', `/v1/projects/${project}/workflows?limit=2&cursor=${first.body.next_cursor}`, { key: viewer.key });
      expect(second.body).toMatchObject({ data: [{ id: ids[0] }], next_cursor: null });
      for (const url of [`/v1/workflows/${ids[0]}`, `/v1/projects/${project}/workflows`, `/v1/workflows/${ids[0]}/runs`]) {
        const res = await call('GET', url, { key: other.ownerKey });
        expect(res.status, url).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
      expect((await call('DELETE', `/v1/workflows/${ids[0]}`, { key: other.ownerKey })).status).toBe(404);
    });

    it('follows the role and scope rules: viewers and workflows:read keys read only; a projects-only key reaches no workflow', async () => {
      const readKey = (await org.member('member', 'workflows:read')).key;
      const projectsKey = (await org.member('admin', 'projects')).key;
      const before = await orgSnapshot(env.container, org.id);
      for (const key of [viewer.key, readKey]) {
        const res = await call('POST', `/v1/projects/${projectId}/workflows`, { key, body: { name: 'No' } });
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('forbidden');
      }
      expect((await call('GET', `/v1/projects/${projectId}/workflows`, { key: readKey })).status).toBe(200);
      expect((await call('GET', `/v1/projects/${projectId}/workflows`, { key: projectsKey })).status).toBe(403);
      expect(await orgSnapshot(env.container, org.id)).toEqual(before);
    });

    it('replays an idempotent create instead of creating twice', async () => {
      const headers = { 'idempotency-key': `wf-${dialect}` };
      const a = await call('POST', `/v1/projects/${projectId}/workflows`, { key: member.key, headers, body: { name: 'Once' } });
      const b = await call('POST', `/v1/projects/${projectId}/workflows`, { key: member.key, headers, body: { name: 'Once' } });
      expect(a.status).toBe(201);
      expect(b.status).toBe(201);
      expect(b.headers['idempotent-replayed']).toBe('true');
      expect(b.body).toEqual(a.body);
      const rows = await env.container.database.db.selectFrom('workflows').select('id').where('org_id', '=', org.id).where('name', '=', 'Once').execute();
      expect(rows).toHaveLength(1);
    });
  });

  describe('runs', () => {
    it('starts, lists, reads and cancels a run; a finished run, an empty workflow and a busy workflow are 409', async () => {
      const wf = (await call('POST', `/v1/projects/${projectId}/workflows`, { key: member.key, body: { name: 'Runnable', steps: waitTaskSteps(member.userId) } })).body;
      const started = await call('POST', `/v1/workflows/${wf.id}/runs`, { key: member.key });
      expect(started.status).toBe(201);
      expect(started.body).toMatchObject({ workflow_id: wf.id, project_id: projectId, workflow_version: 1, status: 'queued', error: null });
      expect(started.body.steps.map((s: Json) => [s.position, s.step_id, s.status])).toEqual(wf.steps.map((s: Json, i: number) => [i, s.id, 'pending']));
      const list = await call('GET', `/v1/workflows/${wf.id}/runs`, { key: viewer.key });
      expect(list.body.data).toEqual([expect.objectContaining({ id: started.body.id, status: 'queued' })]);
      expect(list.body.data[0].steps).toBeUndefined();
      expect((await call('GET', `/v1/runs/${started.body.id}`, { key: viewer.key })).body).toEqual(started.body);

      const busy = await call('DELETE', `/v1/workflows/${wf.id}`, { key: member.key });
      expect(busy.status).toBe(409);
      expect((await call('POST', `/v1/runs/${started.body.id}/cancel`, { key: viewer.key })).status).toBe(403);
      const cancelled = await call('POST', `/v1/runs/${started.body.id}/cancel`, { key: member.key, body: {} });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ status: 'cancelled', error_code: 'cancelled' });
      const again = await call('POST', `/v1/runs/${started.body.id}/cancel`, { key: member.key });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('conflict');

      const empty = (await call('POST', `/v1/projects/${projectId}/workflows`, { key: member.key, body: { name: 'Empty' } })).body;
      expect((await call('POST', `/v1/workflows/${empty.id}/runs`, { key: member.key })).status).toBe(409);
      expect((await call('DELETE', `/v1/workflows/${wf.id}`, { key: member.key })).status).toBe(204);
      expect((await call('GET', `/v1/runs/${started.body.id}`, { key: member.key })).status).toBe(404);
    });
  });

  describe('tasks', () => {
    it('creates, filters, changes and finishes tasks; assigning fires task.assigned as the dashboard does', async () => {
      const created = await call('POST', `/v1/projects/${projectId}/tasks`, { key: member.key, body: { title: 'Renew the certificate', assignee_id: viewer.userId, due_at: '2026-12-31' } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ kind: 'todo', status: 'open', assignee_id: viewer.userId, due_at: '2026-12-31T23:59:59.999Z', workflow_id: null, run_id: null });
      const id = created.body.id;

      const mine = await call('GET', '/v1/tasks?assignee_id=me&status=open', { key: viewer.key });
      expect(mine.body.data.map((t: Json) => t.id)).toContain(id);
      expect((await call('GET', '/v1/tasks?assignee_id=me', { key: member.key })).body.data.map((t: Json) => t.id)).not.toContain(id);
      expect((await call('GET', `/v1/tasks?project_id=${projectId}&status=done`, { key: member.key })).body.data.map((t: Json) => t.id)).not.toContain(id);
      const bad = await call('GET', '/v1/tasks?status=finished', { key: member.key });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details[0].field).toBe('status');

      const patched = await call('PATCH', `/v1/tasks/${id}`, { key: member.key, body: { title: 'Renew both certificates', assignee_id: member.userId, due_at: null } });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ title: 'Renew both certificates', assignee_id: member.userId, due_at: null });
      const events = await call('GET', '/v1/events?type=task.assigned', { key: viewer.key });
      const assigned = events.body.data.filter((e: Json) => e.data.task_id === id);
      expect(assigned.map((e: Json) => [e.data.assignee_id, e.data.previous_assignee_id])).toEqual([
        [member.userId, viewer.userId],
        [viewer.userId, null],
      ]);
      const same = await call('PATCH', `/v1/tasks/${id}`, { key: member.key, body: { assignee_id: member.userId } });
      expect(same.body.updated_at).toBe(patched.body.updated_at);

      // Only the assignee or an admin finishes it; a viewer cannot change it.
      const before = await orgSnapshot(env.container, org.id);
      expect((await call('POST', `/v1/tasks/${id}/complete`, { key: viewer.key })).status).toBe(403);
      expect((await call('PATCH', `/v1/tasks/${id}`, { key: viewer.key, body: { title: 'No' } })).status).toBe(403);
      expect((await call('POST', `/v1/tasks/${id}/approve`, { key: member.key })).status).toBe(409);
      expect(await orgSnapshot(env.container, org.id)).toEqual(before);
      const done = await call('POST', `/v1/tasks/${id}/complete`, { key: member.key });
      expect(done.body).toMatchObject({ status: 'done', completed_by: member.userId });
      const twice = await call('POST', `/v1/tasks/${id}/complete`, { key: member.key });
      expect(twice.status).toBe(409);
      expect((await call('PATCH', `/v1/tasks/${id}`, { key: member.key, body: { title: 'Late' } })).status).toBe(409);
    });

    it('a viewer assigned a run\'s task completes it; a rejected approval fails the run; a tasks:read key finishes nothing', async () => {
      const wf = (await call('POST', `/v1/projects/${projectId}/workflows`, {
        key: member.key,
        body: { name: 'Review', steps: [{ type: 'task', title: 'Read it', assignee_id: viewer.userId }, { type: 'approval', title: 'Sign it', assignee_id: member.userId }] },
      })).body;
      const run = (await call('POST', `/v1/workflows/${wf.id}/runs`, { key: member.key })).body;
      // What a worker does, in process: lease the due runs and move each on.
      const tick = async () => {
        const { runs } = env.container.services;
        for (const key of await runs.claimDue('test-worker', 30_000, 1000)) await runs.advance('test-worker', key);
      };
      const stepTask = async (position: number) => {
        await tick();
        const r = (await call('GET', `/v1/runs/${run.id}`, { key: member.key })).body;
        expect(r.steps[position].task_id, `step ${position} started`).toEqual(expect.stringMatching(/^task_/));
        return r.steps[position].task_id as string;
      };
      const first = await stepTask(0);
      const readOnlyKey = (await org.member('admin', 'tasks:read')).key;
      expect((await call('POST', `/v1/tasks/${first}/complete`, { key: readOnlyKey })).status).toBe(403);
      expect((await call('POST', `/v1/tasks/${first}/complete`, { key: viewer.key })).body.status).toBe('done');
      const approval = await stepTask(1);
      const rejected = await call('POST', `/v1/tasks/${approval}/reject`, { key: member.key, body: { reason: 'Not yet' } });
      expect(rejected.body).toMatchObject({ kind: 'approval', status: 'done', decision: 'rejected' });
      await tick();
      const ended = (await call('GET', `/v1/runs/${run.id}`, { key: member.key })).body;
      expect(ended).toMatchObject({ status: 'failed', error_code: 'approval_rejected' });
    });
  });

  describe('events and the organisation', () => {
    it('lists every event newest first, its data byte for byte the stored webhook body\'s, filtered by type', async () => {
      const p = (await call('POST', '/v1/projects', { key: member.key, body: { name: 'Événement ✓', description: 'quote " and \\ backslash' } })).body;
      await call('PUT', `/v1/projects/${p.id}`, { key: member.key, body: { name: 'Renamed' } });
      const res = await call('GET', '/v1/events?type=project.created,project.updated&limit=2', { key: viewer.key });
      expect(res.body.data.map((e: Json) => e.type)).toEqual(['project.updated', 'project.created']);
      const rows = await env.container.database.db.selectFrom('events').selectAll().where('org_id', '=', org.id).where('id', 'in', res.body.data.map((e: Json) => e.id)).execute();
      for (const row of rows) {
        const data = row.body.slice(row.body.indexOf(',"data":') + 8, -1);
        expect(res.text).toContain(`"id":"${row.id}","type":"${row.type}","created_at":"${new Date(Number(row.occurred_at)).toISOString()}","data":${data}}`);
      }
      const one = await call('GET', `/v1/events/${res.body.data[0].id}`, { key: viewer.key });
      expect(one.body).toEqual(res.body.data[0]);
      expect((await call('GET', `/v1/events/${res.body.data[0].id}`, { key: other.ownerKey })).status).toBe(404);
      const bad = await call('GET', '/v1/events?type=project.created,project.nope', { key: viewer.key });
      expect(bad.status).toBe(400);
      expect(bad.body.error.details[0].field).toBe('type');
    });

    it('keeps test events out of the list', async () => {
      const hook = (await call('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://127.0.0.1:9/x', events: ['project.deleted'] } })).body;
      expect((await env.request('POST', `/v1/webhooks/${hook.id}/test`, { key: org.ownerKey })).status).toBe(202);
      const res = await call('GET', '/v1/events?type=project.deleted', { key: org.ownerKey });
      expect(res.body.data).toEqual([]);
    });

    it('reads the organisation with any key, and shows it read-only with its deletion date once cancelled', async () => {
      const scoped = (await org.member('member', 'projects:read')).key;
      const res = await call('GET', '/v1/organization', { key: scoped });
      expect(res.body).toEqual({ id: org.id, name: 'Acme', state: 'active', deletion_at: null, two_step_required_at: null, created_at: expect.any(String) });
      const later = await env.createOrg('Closing');
      await cancelSubscription(env.container, later.id);
      const closed = await call('GET', '/v1/organization', { key: later.ownerKey });
      expect(closed.body).toMatchObject({ state: 'read_only', deletion_at: expect.any(String) });
      const refused = await call('POST', `/v1/projects/${projectId}/tasks`, { key: later.ownerKey, body: { title: 'x' } });
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('workspace_read_only');
    });
  });
});

describe.each(testDialects())('GET /v1/events: retention and long walks (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  const clock = new ManualClock();
  const HOUR = 3_600_000;

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock, env: { EVENT_RETENTION: '1h' } });
    org = await env.createOrg();
  });
  afterAll(async () => env?.close());

  it('keeps an event for EVENT_RETENTION exactly, then prunes it', async () => {
    const created = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Short-lived' } });
    const [event] = (await env.request('GET', '/v1/events', { key: org.ownerKey })).body.data;
    expect(event.data.project_id).toBe(created.body.id);
    clock.advance(HOUR);
    expect((await env.request('GET', '/v1/events', { key: org.ownerKey })).body.data.map((e: Json) => e.id)).toEqual([event.id]);
    expect((await env.request('GET', `/v1/events/${event.id}`, { key: org.ownerKey })).status).toBe(200);
    clock.advance(1);
    expect((await env.request('GET', '/v1/events', { key: org.ownerKey })).body.data).toEqual([]);
    expect((await env.request('GET', `/v1/events/${event.id}`, { key: org.ownerKey })).status).toBe(404);
    // The worker's pruning deletes it (no delivery refers to it), one pass after the boundary.
    const pruned = await env.container.store.repos.deliveryRetention.pruneOrphanEventsBatchAcrossOrgs(clock.now() - HOUR, 500);
    expect(pruned).toBe(1);
    expect(await env.container.store.repos.events.findEvent(org.id, event.id)).toBeUndefined();
  });

  it('a walk of 10,000 events in pages of 100 visits each once, newest first', async () => {
    const { store } = env.container;
    const ids: string[] = [];
    await store.transaction(async (repos) => {
      for (let i = 0; i < 10_000; i++) {
        const recorded = await recordEvent(repos, { orgId: org.id, type: 'project.updated', data: { n: i }, occurredAt: clock.now() });
        ids.push(recorded.id);
      }
    });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: ApiResponse = await env.request('GET', `/v1/events?type=project.updated&limit=100${cursor ? `&cursor=${cursor}` : ''}`, { key: org.ownerKey });
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((e: Json) => e.id));
      cursor = res.body.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(100);
    expect(seen).toEqual([...ids].reverse());
  }, 120_000);
});

describe.each(testDialects())('the audit log, API keys and exports through /v1 (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;
  let check: ReturnType<typeof documentChecker>;

  async function call(method: string, url: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const res = await env.request(method, url, options);
    check(method, url, res);
    return res;
  }

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    check = documentChecker((await env.request('GET', '/openapi.json')).body);
    org = await env.createOrg('Acme');
    other = await env.createOrg('Other');
  });
  afterAll(async () => env?.close());

  it('the audit log: admins and owners read it with the dashboard\'s filters; members, viewers and other scopes do not', async () => {
    const admin = await org.member('admin');
    const project = (await call('POST', '/v1/projects', { key: admin.key, body: { name: 'Audited' }, headers: { 'user-agent': 'siem-test' } })).body;
    await call('PUT', `/v1/projects/${project.id}`, { key: admin.key, body: { name: 'Audited twice' } });
    const res = await call('GET', `/v1/audit-log?action=project.&target_id=${project.id}`, { key: org.ownerKey });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: Json) => r.action)).toEqual(['project.updated', 'project.created']);
    expect(res.body.data[1]).toMatchObject({
      actor: { type: 'user', id: admin.userId, label: expect.stringContaining('@') },
      target: { type: 'project', id: project.id },
      source: 'api',
      user_agent: 'siem-test',
      outcome: 'success',
      request_id: expect.stringMatching(/^req_/),
    });
    expect(res.body.data[0].changes).toEqual({ name: { old: 'Audited', new: 'Audited twice' } });
    const mine = await call('GET', `/v1/audit-log?actor_id=${admin.userId}&limit=1`, { key: admin.key });
    expect(mine.body.data).toHaveLength(1);
    expect(mine.body.next_cursor).toEqual(expect.any(String));
    const future = await call('GET', '/v1/audit-log?from=2999-01-01T00:00:00Z', { key: org.ownerKey });
    expect(future.body.data).toEqual([]);
    const bad = await call('GET', '/v1/audit-log?from=yesterday', { key: org.ownerKey });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].field).toBe('from');
    for (const key of [(await org.member('member')).key, (await org.member('viewer')).key, (await org.member('owner', 'projects,tasks')).key]) {
      const refused = await call('GET', '/v1/audit-log', { key });
      expect(refused.status).toBe(403);
      expect(refused.body.error.code).toBe('forbidden');
    }
    expect((await call('GET', '/v1/audit-log', { key: (await org.member('owner', 'audit_log:read')).key })).status).toBe(200);
    expect((await call('GET', '/v1/audit-log', { key: other.ownerKey })).body.data.some((r: Json) => r.target?.id === project.id)).toBe(false);
  });

  it('API keys: a key creates keys for its own user, never wider than itself; a revoked key is refused on its next request', async () => {
    const member = await org.member('member', 'projects,api_keys');
    const created = await call('POST', '/v1/api-keys', { key: member.key, body: { scope: 'projects:read', name: 'reader' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'reader', scope: 'projects:read', user_id: member.userId, last_used_at: null, expires_at: null });
    expect(created.body.key).toMatch(/^wsk_/);
    expect(created.body.prefix).toBe(created.body.key.slice(0, 12));
    expect((await call('GET', '/v1/projects', { key: created.body.key })).status).toBe(200);

    const readKeysOnly = (await org.member('admin', 'api_keys:read')).key;
    const before = await orgSnapshot(env.container, org.id);
    for (const scope of ['full', 'read', 'projects,webhooks', 'users:read']) {
      const wider = await call('POST', '/v1/api-keys', { key: member.key, body: { scope } });
      expect(wider.status, scope).toBe(403);
      expect(wider.body.error.code).toBe('forbidden');
    }
    const forOther = await call('POST', '/v1/api-keys', { key: org.ownerKey, body: { scope: 'read', user_id: member.userId } });
    expect(forOther.status).toBe(403);
    const badScope = await call('POST', '/v1/api-keys', { key: org.ownerKey, body: { scope: 'everything' } });
    expect(badScope.status).toBe(400);
    expect(badScope.body.error.details[0].field).toBe('scope');
    expect((await call('POST', '/v1/api-keys', { key: readKeysOnly, body: { scope: 'read' } })).status).toBe(403);
    expect(await orgSnapshot(env.container, org.id)).toEqual(before);

    // A member lists their own keys; an owner every key; nobody sees a secret.
    const own = await call('GET', '/v1/api-keys', { key: member.key });
    expect(own.body.data.map((k: Json) => k.user_id)).toEqual([member.userId, member.userId]);
    expect(JSON.stringify(own.body)).not.toContain(created.body.key);
    const all = await call('GET', '/v1/api-keys?limit=100', { key: org.ownerKey });
    expect(all.body.data.map((k: Json) => k.id)).toContain(created.body.id);
    expect((await call('DELETE', `/v1/api-keys/${all.body.data.find((k: Json) => k.user_id === org.ownerId).id}`, { key: member.key })).status).toBe(404);
    expect((await call('DELETE', `/v1/api-keys/${created.body.id}`, { key: other.ownerKey })).status).toBe(404);

    expect((await call('DELETE', `/v1/api-keys/${created.body.id}`, { key: member.key })).status).toBe(204);
    expect((await call('GET', '/v1/projects', { key: created.body.key })).status).toBe(401);
    const audit = await env.container.database.db.selectFrom('audit_log').select(['action', 'source']).where('org_id', '=', org.id).where('target_id', '=', created.body.id).orderBy('seq').execute();
    expect(audit).toEqual([{ action: 'api_key.created', source: 'api' }, { action: 'api_key.revoked', source: 'api' }]);
  });

  it('exports: requested, polled, 409 while not ready, downloaded as the dashboard\'s ZIP; admins and owners only', async () => {
    const memberKey = (await org.member('member')).key;
    expect((await call('POST', '/v1/exports', { key: memberKey })).status).toBe(403);
    const requested = await call('POST', '/v1/exports', { key: org.ownerKey });
    expect(requested.status).toBe(202);
    expect(requested.body).toMatchObject({ status: 'pending', ready_at: null, size_bytes: null });
    const again = await call('POST', '/v1/exports', { key: org.ownerKey, body: {} });
    expect(again.status).toBe(409);
    const early = await call('GET', `/v1/exports/${requested.body.id}/download`, { key: org.ownerKey });
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('conflict');

    expect(await env.container.services.exports.runNext('api-test')).toBe(true);
    const ready = await call('GET', `/v1/exports/${requested.body.id}`, { key: org.ownerKey });
    expect(ready.body).toMatchObject({ id: requested.body.id, status: 'ready', size_bytes: expect.any(Number) });
    expect((await call('GET', '/v1/exports', { key: org.ownerKey })).body.data.map((e: Json) => e.id)).toEqual([requested.body.id]);
    const file = await env.request('GET', `/v1/exports/${requested.body.id}/download`, { key: org.ownerKey });
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('application/zip');
    expect(Number(file.headers['content-length'])).toBe(ready.body.size_bytes);
    expect(file.text.startsWith('PK')).toBe(true);
    expect((await call('GET', `/v1/exports/${requested.body.id}`, { key: other.ownerKey })).status).toBe(404);
    expect((await call('GET', '/v1/exports', { key: memberKey })).status).toBe(403);
  });
});

describe.each(testDialects())('CONTRACT 13: every new call under the roles, the scopes and Idempotency-Key (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Matrix');
  });
  afterAll(async () => env?.close());

  /** A project with a workflow, an active run, its approval and a to-do assigned to the owner. */
  async function world() {
    const owner = org.ownerKey;
    const project = (await env.request('POST', '/v1/projects', { key: owner, body: { name: 'Matrix' } })).body.id as string;
    const workflow = (await env.request('POST', `/v1/projects/${project}/workflows`, { key: owner, body: { name: 'W', steps: [{ type: 'approval', title: 'Go', assignee_id: org.ownerId }] } })).body.id as string;
    const run = (await env.request('POST', `/v1/workflows/${workflow}/runs`, { key: owner })).body.id as string;
    const { runs } = env.container.services;
    for (const key of await runs.claimDue('matrix', 30_000, 100)) await runs.advance('matrix', key);
    const approval = (await env.request('GET', `/v1/runs/${run}`, { key: owner })).body.steps[0].task_id as string;
    const todo = (await env.request('POST', `/v1/projects/${project}/tasks`, { key: owner, body: { title: 'T', assignee_id: org.ownerId } })).body.id as string;
    const keyId = (await env.request('POST', '/v1/api-keys', { key: owner, body: { scope: 'read', name: 'spare' } })).body.id as string;
    return { project, workflow, run, approval, todo, keyId };
  }
  type World = Awaited<ReturnType<typeof world>>;

  const writes: { name: string; method: string; url: (w: World) => string; body?: unknown; resource: string }[] = [
    { name: 'create workflow', method: 'POST', url: (w) => `/v1/projects/${w.project}/workflows`, body: { name: 'x' }, resource: 'workflows' },
    { name: 'replace workflow', method: 'PUT', url: (w) => `/v1/workflows/${w.workflow}`, body: { name: 'x', steps: [] }, resource: 'workflows' },
    { name: 'delete workflow', method: 'DELETE', url: (w) => `/v1/workflows/${w.workflow}`, resource: 'workflows' },
    { name: 'start run', method: 'POST', url: (w) => `/v1/workflows/${w.workflow}/runs`, resource: 'workflows' },
    { name: 'cancel run', method: 'POST', url: (w) => `/v1/runs/${w.run}/cancel`, resource: 'workflows' },
    { name: 'create task', method: 'POST', url: (w) => `/v1/projects/${w.project}/tasks`, body: { title: 'x' }, resource: 'tasks' },
    { name: 'change task', method: 'PATCH', url: (w) => `/v1/tasks/${w.todo}`, body: { title: 'x' }, resource: 'tasks' },
    { name: 'complete task', method: 'POST', url: (w) => `/v1/tasks/${w.todo}/complete`, resource: 'tasks' },
    { name: 'approve', method: 'POST', url: (w) => `/v1/tasks/${w.approval}/approve`, resource: 'tasks' },
    { name: 'reject', method: 'POST', url: (w) => `/v1/tasks/${w.approval}/reject`, body: { reason: 'no' }, resource: 'tasks' },
    { name: 'cancel task', method: 'POST', url: (w) => `/v1/tasks/${w.todo}/cancel`, resource: 'tasks' },
    { name: 'request export', method: 'POST', url: () => '/v1/exports', resource: 'exports' },
  ];
  const reads: { url: (w: World) => string; resource: string; managersOnly?: true }[] = [
    { url: (w) => `/v1/projects/${w.project}/workflows`, resource: 'workflows' },
    { url: (w) => `/v1/workflows/${w.workflow}`, resource: 'workflows' },
    { url: (w) => `/v1/workflows/${w.workflow}/runs`, resource: 'workflows' },
    { url: (w) => `/v1/runs/${w.run}`, resource: 'workflows' },
    { url: (w) => `/v1/projects/${w.project}/tasks`, resource: 'tasks' },
    { url: () => '/v1/tasks', resource: 'tasks' },
    { url: (w) => `/v1/tasks/${w.todo}`, resource: 'tasks' },
    { url: () => '/v1/events', resource: 'events' },
    { url: () => '/v1/api-keys', resource: 'api_keys' },
    { url: () => '/v1/audit-log', resource: 'audit_log', managersOnly: true },
    { url: () => '/v1/exports', resource: 'exports', managersOnly: true },
  ];

  it('a viewer changes nothing (tasks not assigned to them included) and reads all but the managers\' pages', async () => {
    const w = await world();
    const viewer = await org.member('viewer');
    const before = await orgSnapshot(env.container, org.id);
    for (const write of writes) {
      const res = await env.request(write.method, write.url(w), { key: viewer.key, body: write.body });
      expect({ call: write.name, status: res.status, code: res.body?.error?.code }).toEqual({ call: write.name, status: 403, code: 'forbidden' });
    }
    expect(await orgSnapshot(env.container, org.id)).toEqual(before);
    for (const read of reads) expect((await env.request('GET', read.url(w), { key: viewer.key })).status, read.url(w)).toBe(read.managersOnly ? 403 : 200);
  });

  it('a key scoped to another kind reaches none of these calls, whatever its role; its own kind it reaches', async () => {
    const w = await world();
    for (const write of writes) {
      const other = write.resource === 'tasks' ? 'workflows' : 'tasks';
      const key = (await org.member('owner', other)).key;
      const res = await env.request(write.method, write.url(w), { key, body: write.body });
      expect({ call: write.name, status: res.status, code: res.body?.error?.code }).toEqual({ call: write.name, status: 403, code: 'forbidden' });
    }
    for (const read of reads) {
      const wrong = (await org.member('owner', 'projects')).key;
      const right = (await org.member('owner', `${read.resource}:read`)).key;
      expect((await env.request('GET', read.url(w), { key: wrong })).status, read.url(w)).toBe(403);
      expect((await env.request('GET', read.url(w), { key: right })).status, read.url(w)).toBe(200);
    }
    expect((await env.request('GET', '/v1/organization', { key: (await org.member('viewer', 'projects:read')).key })).status).toBe(200);
  });

  it('every new POST answers a replay of its Idempotency-Key with the first response, and does it once', async () => {
    const posts = writes.filter((c) => c.method === 'POST').concat([{ name: 'create key', method: 'POST', url: () => '/v1/api-keys', body: { scope: 'read' }, resource: 'api_keys' }]);
    for (const post of posts) {
      const w = await world(); // each call on a fresh world: cancelling the run would finish its approval
      const headers = { 'idempotency-key': `replay-${post.name.replace(/ /g, '-')}` };
      const first = await env.request('POST', post.url(w), { key: org.ownerKey, body: post.body, headers });
      expect(first.status, post.name).toBeLessThan(300);
      const auditRows = async () => (await env.container.database.db.selectFrom('audit_log').select('id').where('org_id', '=', org.id).execute()).length;
      const rowsAfterFirst = await auditRows();
      const again = await env.request('POST', post.url(w), { key: org.ownerKey, body: post.body, headers });
      expect({ call: post.name, status: again.status, replayed: again.headers['idempotent-replayed'] }).toEqual({ call: post.name, status: first.status, replayed: 'true' });
      expect(again.body).toEqual(first.body);
      expect(await auditRows(), post.name).toBe(rowsAfterFirst);
    }
  });
});
