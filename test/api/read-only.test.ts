import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DomainError } from '../../src/errors.js';
import { toIso } from '../../src/lib/time.js';
import { cliActor, type UserActor } from '../../src/services/access/actor.js';
import { cliJson, runCli } from '../helpers/cli.js';
import { ManualClock } from '../helpers/manual-clock.js';
import {
  buildReadOnlyWorld,
  cancelSubscription,
  orgSnapshot,
  resumeSubscription,
  sessionActorOf,
  type ReadOnlyWorld,
} from '../helpers/read-only.js';
import { deleteRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix } from '../helpers/redis.js';
import { createTestEnv, testDialects, type ApiResponse, type TestEnv } from '../helpers/test-env.js';

// The CLI cases spawn Node processes; on a busy machine that is slow, not wrong.
vi.setConfig({ testTimeout: 120_000 });

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const LEASE_MS = 30_000;

/** One route of the API, addressed in the OpenAPI document's spelling, with what a request to it needs. */
interface RouteCase {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** As `/openapi.json` names it: `/v1/projects/{id}`. */
  path: string;
  url(w: ReadOnlyWorld): string;
  body?(w: ReadOnlyWorld): unknown;
  /** Public routes (the invitation) carry no key. */
  anonymous?: boolean;
  /** A browser page, hidden from `/openapi.json` (the invitation link's redirect). */
  undocumented?: boolean;
}

/** Every state-changing route of the API: each answers 403 `workspace_read_only` while read-only. */
const REFUSED_WRITES: RouteCase[] = [
  { method: 'POST', path: '/v1/projects', url: () => '/v1/projects', body: () => ({ name: 'During the grace period' }) },
  { method: 'PUT', path: '/v1/projects/{id}', url: (w) => `/v1/projects/${w.projectId}`, body: () => ({ name: 'Renamed', status: 'archived' }) },
  { method: 'DELETE', path: '/v1/projects/{id}', url: (w) => `/v1/projects/${w.spareProjectId}` },
  { method: 'PUT', path: '/v1/projects/{id}/collaborators/{user_id}', url: (w) => `/v1/projects/${w.projectId}/collaborators/${w.member.userId}`, body: () => ({ role: 'editor' }) },
  { method: 'DELETE', path: '/v1/projects/{id}/collaborators/{user_id}', url: (w) => `/v1/projects/${w.projectId}/collaborators/${w.org.ownerId}` },
  { method: 'POST', path: '/v1/users', url: () => '/v1/users', body: () => ({ email: 'late.joiner@example.com', role: 'member' }) },
  { method: 'PUT', path: '/v1/users/{id}', url: (w) => `/v1/users/${w.member.userId}`, body: () => ({ role: 'admin' }) },
  { method: 'DELETE', path: '/v1/users/{id}', url: (w) => `/v1/users/${w.member.userId}` },
  { method: 'POST', path: '/v1/webhooks', url: () => '/v1/webhooks', body: () => ({ url: 'https://127.0.0.1:9/new', events: ['project.created'] }) },
  { method: 'POST', path: '/v1/webhooks/{id}/deliveries/{delivery_id}/replay', url: (w) => `/v1/webhooks/${w.webhookId}/deliveries/${w.deliveryId}/replay` },
  { method: 'POST', path: '/v1/webhooks/{id}/replay-failed', url: (w) => `/v1/webhooks/${w.webhookId}/replay-failed`, body: () => ({ since: '2000-01-01T00:00:00.000Z' }) },
  { method: 'PATCH', path: '/v1/webhooks/{id}', url: (w) => `/v1/webhooks/${w.webhookId}`, body: () => ({ url: 'https://127.0.0.1:9/moved' }) },
  { method: 'POST', path: '/v1/webhooks/{id}/rotate-secret', url: (w) => `/v1/webhooks/${w.webhookId}/rotate-secret`, body: () => ({}) },
  { method: 'POST', path: '/v1/webhooks/{id}/test', url: (w) => `/v1/webhooks/${w.webhookId}/test`, body: () => ({}) },
  { method: 'POST', path: '/v1/webhooks/{id}/enable', url: (w) => `/v1/webhooks/${w.webhookId}/enable` },
  { method: 'POST', path: '/v1/projects/{id}/workflows', url: (w) => `/v1/projects/${w.projectId}/workflows`, body: () => ({ name: 'Late' }) },
  { method: 'PUT', path: '/v1/workflows/{id}', url: (w) => `/v1/workflows/${w.workflowId}`, body: () => ({ name: 'Renamed', steps: [] }) },
  { method: 'DELETE', path: '/v1/workflows/{id}', url: (w) => `/v1/workflows/${w.workflowId}` },
  { method: 'POST', path: '/v1/workflows/{id}/runs', url: (w) => `/v1/workflows/${w.workflowId}/runs`, body: () => ({}) },
  { method: 'POST', path: '/v1/runs/{id}/cancel', url: (w) => `/v1/runs/${w.runId}/cancel`, body: () => ({}) },
  { method: 'POST', path: '/v1/projects/{id}/tasks', url: (w) => `/v1/projects/${w.projectId}/tasks`, body: () => ({ title: 'Late' }) },
  { method: 'PATCH', path: '/v1/tasks/{id}', url: (w) => `/v1/tasks/${w.taskId}`, body: () => ({ title: 'Renamed' }) },
  { method: 'POST', path: '/v1/tasks/{id}/complete', url: (w) => `/v1/tasks/${w.taskId}/complete`, body: () => ({}) },
  { method: 'POST', path: '/v1/tasks/{id}/approve', url: (w) => `/v1/tasks/${w.approvalTaskId}/approve`, body: () => ({}) },
  { method: 'POST', path: '/v1/tasks/{id}/reject', url: (w) => `/v1/tasks/${w.approvalTaskId}/reject`, body: () => ({ reason: 'No' }) },
  { method: 'POST', path: '/v1/tasks/{id}/cancel', url: (w) => `/v1/tasks/${w.taskId}/cancel`, body: () => ({}) },
  { method: 'POST', path: '/v1/api-keys', url: () => '/v1/api-keys', body: () => ({ scope: 'read' }) },
  {
    method: 'POST',
    path: '/invitations/{token}/accept',
    url: (w) => `/invitations/${w.invitationToken}/accept`,
    body: () => ({ name: 'Ivy Invitee', password: 'correct horse battery' }),
    anonymous: true,
  },
];

/** Changes DASHBOARD 10 still allows through the API. */
const ALLOWED_WRITES: (RouteCase & { status: number })[] = [
  { method: 'DELETE', path: '/v1/webhooks/{id}', url: (w) => `/v1/webhooks/${w.spareWebhookId}`, status: 204 },
  { method: 'DELETE', path: '/v1/api-keys/{id}', url: (w) => `/v1/api-keys/${w.readKey.keyId}`, status: 204 },
  { method: 'POST', path: '/v1/exports', url: () => '/v1/exports', body: () => ({}), status: 202 },
];

/** Every read of the API, with the status it answers. */
const READS: (RouteCase & { status: number })[] = [
  { method: 'GET', path: '/v1/projects', url: () => '/v1/projects', status: 200 },
  { method: 'GET', path: '/v1/projects/{id}', url: (w) => `/v1/projects/${w.projectId}`, status: 200 },
  { method: 'GET', path: '/v1/projects/{id}/collaborators', url: (w) => `/v1/projects/${w.projectId}/collaborators`, status: 200 },
  { method: 'GET', path: '/v1/users', url: () => '/v1/users', status: 200 },
  { method: 'GET', path: '/v1/users/{id}', url: (w) => `/v1/users/${w.member.userId}`, status: 200 },
  { method: 'GET', path: '/v1/webhooks', url: () => '/v1/webhooks', status: 200 },
  { method: 'GET', path: '/v1/webhooks/{id}', url: (w) => `/v1/webhooks/${w.webhookId}`, status: 200 },
  { method: 'GET', path: '/v1/webhooks/{id}/deliveries', url: (w) => `/v1/webhooks/${w.webhookId}/deliveries`, status: 200 },
  { method: 'GET', path: '/v1/webhooks/{id}/deliveries/{delivery_id}', url: (w) => `/v1/webhooks/${w.webhookId}/deliveries/${w.deliveryId}`, status: 200 },
  { method: 'GET', path: '/v1/webhooks/{id}/replay-jobs/{job_id}', url: (w) => `/v1/webhooks/${w.webhookId}/replay-jobs/${w.replayJobId}`, status: 200 },
  { method: 'GET', path: '/v1/projects/{id}/workflows', url: (w) => `/v1/projects/${w.projectId}/workflows`, status: 200 },
  { method: 'GET', path: '/v1/workflows/{id}', url: (w) => `/v1/workflows/${w.workflowId}`, status: 200 },
  { method: 'GET', path: '/v1/workflows/{id}/runs', url: (w) => `/v1/workflows/${w.workflowId}/runs`, status: 200 },
  { method: 'GET', path: '/v1/runs/{id}', url: (w) => `/v1/runs/${w.runId}`, status: 200 },
  { method: 'GET', path: '/v1/projects/{id}/tasks', url: (w) => `/v1/projects/${w.projectId}/tasks`, status: 200 },
  { method: 'GET', path: '/v1/tasks', url: () => '/v1/tasks?assignee_id=me', status: 200 },
  { method: 'GET', path: '/v1/tasks/{id}', url: (w) => `/v1/tasks/${w.taskId}`, status: 200 },
  { method: 'GET', path: '/v1/events', url: () => '/v1/events', status: 200 },
  { method: 'GET', path: '/v1/events/{id}', url: () => '/v1/events/evt_unknown', status: 404 },
  { method: 'GET', path: '/v1/organization', url: () => '/v1/organization', status: 200 },
  { method: 'GET', path: '/v1/audit-log', url: () => '/v1/audit-log', status: 200 },
  { method: 'GET', path: '/v1/api-keys', url: () => '/v1/api-keys', status: 200 },
  { method: 'GET', path: '/v1/exports', url: () => '/v1/exports', status: 200 },
  { method: 'GET', path: '/v1/exports/{id}', url: () => '/v1/exports/exp_unknown', status: 404 },
  { method: 'GET', path: '/v1/exports/{id}/download', url: () => '/v1/exports/exp_unknown/download', status: 404 },
  // The invitation link leads to the dashboard's page, which shows it (accepting is what is refused).
  { method: 'GET', path: '/invitations/{token}', url: (w) => `/invitations/${w.invitationToken}`, status: 303, anonymous: true, undocumented: true },
];

function expectReadOnly(res: ApiResponse, deletionAt: number): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 403, code: 'workspace_read_only' });
  // The message names the deletion date (CONTRACT 1).
  expect(res.body.error.message).toContain(toIso(deletionAt));
}

async function refusedWith(promise: Promise<unknown>, status: number, code: string): Promise<DomainError> {
  const error = await promise.then(
    () => {
      throw new Error(`expected ${status} ${code}, but it succeeded`);
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  expect({ status: (error as DomainError).status, code: (error as DomainError).code }).toEqual({ status, code });
  return error as DomainError;
}

describe.each(testDialects())('read-only workspace: API, services and the run engine (%s)', (dialect) => {
  const clock = new ManualClock();
  let env: TestEnv;

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
  });
  afterAll(async () => env?.close());

  const s = () => env.container.services;
  const send = (w: ReadOnlyWorld, route: RouteCase, key = w.org.ownerKey) =>
    env.request(route.method, route.url(w), { key: route.anonymous ? null : key, body: route.body?.(w) });

  it('the tables cover every operation of the OpenAPI document', async () => {
    const doc = (await env.request('GET', '/openapi.json')).body;
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    );
    const covered = [...REFUSED_WRITES, ...ALLOWED_WRITES, ...READS].filter((r) => !r.undocumented).map((r) => `${r.method} ${r.path}`);
    expect(documented.filter((op) => !covered.includes(op))).toEqual([]);
    expect(covered.filter((op) => !documented.includes(op))).toEqual([]);
  });

  it('every write route answers 403 workspace_read_only and nothing of the organisation changes; another organisation is untouched', async () => {
    const w = await buildReadOnlyWorld(env, 'Writes');
    const other = await env.createOrg('Still active');
    // The same key writes while active: the refusals below are the state's.
    expect((await env.request('POST', '/v1/projects', { key: w.admin.key, body: { name: 'While active' } })).status).toBe(201);
    const deletionAt = await cancelSubscription(env.container, w.org.id);
    const before = await orgSnapshot(env.container, w.org.id);
    for (const route of REFUSED_WRITES) {
      for (const key of [w.org.ownerKey, w.admin.key]) {
        const res = await send(w, route, key);
        expect(res.status, `${route.method} ${route.path}`).toBe(403);
        expectReadOnly(res, deletionAt);
      }
    }
    // No row anywhere: no project, member, subscription, event, delivery, replay or audit row.
    expect(await orgSnapshot(env.container, w.org.id)).toEqual(before);
    // Other organisations go on as before.
    expect((await env.request('POST', '/v1/projects', { key: other.ownerKey, body: { name: 'Unaffected' } })).status).toBe(201);
  });

  it('every read still answers, and deleting a webhook subscription still works (its pending deliveries are cancelled)', async () => {
    const w = await buildReadOnlyWorld(env, 'Reads');
    // A pending delivery of the spare subscription, created while active.
    await env.request('POST', '/v1/projects', { key: w.org.ownerKey, body: { name: 'Announced' } });
    await cancelSubscription(env.container, w.org.id);
    for (const route of READS) {
      const res = await send(w, route);
      expect(res.status, `${route.method} ${route.path}`).toBe(route.status);
    }
    const viewerRead = await env.request('GET', '/v1/projects', { key: w.viewer.key });
    expect(viewerRead.status).toBe(200);
    expect(viewerRead.body.data.map((p: { name: string }) => p.name)).toContain('Announced');

    const db = env.container.database.db;
    const pending = () =>
      db.selectFrom('deliveries').select(['id', 'status']).where('org_id', '=', w.org.id).where('webhook_id', '=', w.spareWebhookId).where('status', '=', 'pending').execute();
    expect((await pending()).length).toBeGreaterThan(0);
    const [route, ...others] = ALLOWED_WRITES;
    const res = await send(w, route!);
    expect(res.status).toBe(204);
    // Revoking a key and exporting the data are allowed too (DASHBOARD 10).
    for (const allowed of others) expect((await send(w, allowed)).status, `${allowed.method} ${allowed.path}`).toBe(allowed.status);
    expect((await env.request('GET', '/v1/projects', { key: w.readKey.key })).status).toBe(401);
    expect(await pending()).toEqual([]);
    expect(await db.selectFrom('webhooks').select('id').where('org_id', '=', w.org.id).where('id', '=', w.spareWebhookId).execute()).toEqual([]);
    const audit = await db.selectFrom('audit_log').select(['action', 'target_id']).where('org_id', '=', w.org.id).where('action', '=', 'webhook.deleted').execute();
    expect(audit).toEqual([{ action: 'webhook.deleted', target_id: w.spareWebhookId }]);
    // An unknown subscription is still a plain 404 on that route.
    expect((await env.request('DELETE', '/v1/webhooks/wh_unknown', { key: w.org.ownerKey })).status).toBe(404);
  });

  it('checks in the contract order: 401, then forbidden, then workspace_read_only, before 400 and 404', async () => {
    const w = await buildReadOnlyWorld(env, 'Order');
    const deletionAt = await cancelSubscription(env.container, w.org.id);
    const before = await orgSnapshot(env.container, w.org.id);
    const post = (key: string | null, body?: unknown, extra: { payload?: string; headers?: Record<string, string> } = {}) =>
      env.request('POST', '/v1/projects', { key, body, ...extra });

    // 401 first: no key, an unknown key.
    for (const key of [null, 'wsk_unknown']) expect((await post(key, { name: 'x' })).body.error.code).toBe('unauthorized');
    // forbidden before the state: a viewer's key, a read-only key, a member deleting a subscription.
    expect((await post(w.viewer.key, { name: 'x' })).body.error.code).toBe('forbidden');
    expect((await post(w.viewer.key, { name: 42 })).body.error.code).toBe('forbidden');
    expect((await post(w.readKey.key, { name: 'x' })).body.error.code).toBe('forbidden');
    expect((await env.request('DELETE', `/v1/webhooks/${w.webhookId}`, { key: w.member.key })).body.error.code).toBe('forbidden');
    // The state before the body: a wrong type, a missing field, an unknown field, malformed JSON, another content type.
    for (const body of [{ name: 42 }, {}, { name: 'x', colour: 'red' }]) expectReadOnly(await post(w.org.ownerKey, body), deletionAt);
    expectReadOnly(await post(w.org.ownerKey, undefined, { payload: '{"name":', headers: { 'content-type': 'application/json' } }), deletionAt);
    expectReadOnly(await post(w.org.ownerKey, undefined, { payload: 'name=x', headers: { 'content-type': 'text/plain' } }), deletionAt);
    expectReadOnly(await env.request('POST', '/v1/webhooks', { key: w.org.ownerKey, body: { url: 'http://not-https', events: [] } }), deletionAt);
    // ...and before 404: ids that do not exist.
    expectReadOnly(await env.request('PUT', '/v1/projects/proj_unknown', { key: w.org.ownerKey, body: { name: 'x' } }), deletionAt);
    expectReadOnly(await env.request('DELETE', '/v1/users/user_unknown', { key: w.org.ownerKey }), deletionAt);
    expectReadOnly(await env.request('POST', '/v1/webhooks/wh_unknown/deliveries/dlv_unknown/replay', { key: w.org.ownerKey }), deletionAt);
    // The invitation refuses before its name and password are checked (and before hashing one).
    const invitation = await env.request('POST', `/invitations/${w.invitationToken}/accept`, { body: { name: 'Ivy', password: 'short' } });
    expect(invitation.status).toBe(400); // the public route's body schema runs before any handler
    expectReadOnly(await env.request('POST', `/invitations/${w.invitationToken}/accept`, { body: { name: 'Ivy', password: 'long enough password' } }), deletionAt);
    expect(await orgSnapshot(env.container, w.org.id)).toEqual(before);
  });

  it('an Idempotency-Key recorded before the cancellation is refused like any write, and replays its response after resuming', async () => {
    const w = await buildReadOnlyWorld(env, 'Idempotent');
    const headers = { 'idempotency-key': 'create-once' };
    const first = await env.request('POST', '/v1/projects', { key: w.org.ownerKey, body: { name: 'Exactly once' }, headers });
    expect(first.status).toBe(201);
    const deletionAt = await cancelSubscription(env.container, w.org.id);
    const again = await env.request('POST', '/v1/projects', { key: w.org.ownerKey, body: { name: 'Exactly once' }, headers });
    expectReadOnly(again, deletionAt);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    await resumeSubscription(env.container, w.org.id);
    const replayed = await env.request('POST', '/v1/projects', { key: w.org.ownerKey, body: { name: 'Exactly once' }, headers });
    expect(replayed.status).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body).toEqual(first.body);
    const names = (await env.request('GET', '/v1/projects?limit=100', { key: w.org.ownerKey })).body.data.map((p: { name: string }) => p.name);
    expect(names.filter((n: string) => n === 'Exactly once')).toHaveLength(1);
  });

  it('resuming restores writes on the very next request', async () => {
    const w = await buildReadOnlyWorld(env, 'Resume');
    await cancelSubscription(env.container, w.org.id);
    expect((await env.request('POST', '/v1/projects', { key: w.member.key, body: { name: 'Too early' } })).status).toBe(403);
    await resumeSubscription(env.container, w.org.id);
    expect((await env.request('POST', '/v1/projects', { key: w.member.key, body: { name: 'Back to work' } })).status).toBe(201);
    expect((await env.request('POST', `/v1/webhooks/${w.webhookId}/deliveries/${w.deliveryId}/replay`, { key: w.admin.key })).status).toBe(202);
    expect((await env.request('POST', `/invitations/${w.invitationToken}/accept`, { body: { name: 'Ivy', password: 'long enough password' } })).status).toBe(200);
  });

  describe('services, whichever door calls them', () => {
    it('refuse every change for a person and for the operator, and write nothing', async () => {
      const w = await buildReadOnlyWorld(env, 'Services');
      const deletionAt = await cancelSubscription(env.container, w.org.id);
      const before = await orgSnapshot(env.container, w.org.id);
      const owner = await sessionActorOf(env.container, w.org.id, w.org.ownerId);
      const member = await sessionActorOf(env.container, w.org.id, w.member.userId);
      const cli = cliActor(w.org.id);
      const since = Date.UTC(2000, 0, 1);
      const attempts: [string, (actor: UserActor | typeof cli) => Promise<unknown>][] = [
        ['projects.create', (a) => s().projects.create(a, { name: 'x' })],
        ['projects.update', (a) => s().projects.update(a, w.projectId, { name: 'y' })],
        ['projects.remove', (a) => s().projects.remove(a, w.spareProjectId)],
        ['webhooks.create', (a) => s().webhooks.create(a, { url: 'not a url', events: [] })],
        ['users.invite', (a) => s().users.invite(a, { email: 'not an address', role: 'member' })],
        ['users.changeRole', (a) => s().users.changeRole(a, w.member.userId, 'viewer')],
        ['users.remove', (a) => s().users.remove(a, w.viewer.userId)],
        ['apiKeys.create', (a) => s().apiKeys.create(a, { scope: 'bogus', userId: a.type === 'user' ? undefined : w.member.userId })],
        ['deliveries.replay', (a) => s().deliveries.replay(a, a.type === 'user' ? w.webhookId : null, w.deliveryId)],
        ['replayJobs.start', (a) => s().replayJobs.start(a, w.webhookId, since)],
        ['workflows.create', (a) => s().workflows.create(a, w.projectId, { name: '' })],
        ['workflows.update', (a) => s().workflows.update(a, w.workflowId, { name: 'Renamed' })],
        ['workflows.addStep', (a) => s().workflows.addStep(a, w.workflowId, { type: 'wait', duration: '1h' })],
        ['workflows.removeStep', (a) => s().workflows.removeStep(a, w.workflowId, w.stepId)],
        ['workflows.remove', (a) => s().workflows.remove(a, w.workflowId)],
        ['workflows.startRun', (a) => s().workflows.startRun(a, w.workflowId)],
        ['runs.cancel', (a) => s().runs.cancel(a, w.runId)],
        ['tasks.create', (a) => s().tasks.create(a, w.projectId, { title: '' })],
        ['tasks.assign', (a) => s().tasks.assign(a, w.taskId, null)],
        ['tasks.resolve cancel', (a) => s().tasks.resolve(a, w.taskId, { action: 'cancel', reason: 'x'.repeat(20_000) })],
        ['tasks.resolve approve', (a) => s().tasks.resolve(a, w.approvalTaskId, { action: 'approve' })],
      ];
      for (const [name, attempt] of attempts) {
        for (const actor of [owner, cli]) {
          const error = await refusedWith(attempt(actor), 403, 'workspace_read_only');
          expect(error.message, name).toContain(toIso(deletionAt));
        }
      }
      // The assignee finishing their own tasks: refused too.
      await refusedWith(s().tasks.resolve(member, w.taskId, { action: 'done' }), 403, 'workspace_read_only');
      await refusedWith(s().tasks.resolve(member, w.approvalTaskId, { action: 'reject', reason: 'no' }), 403, 'workspace_read_only');
      // Operator-only doors.
      await refusedWith(s().admin.addUser({ orgId: w.org.id, email: 'direct@example.com', role: 'member' }), 403, 'workspace_read_only');
      await refusedWith(s().admin.createKey({ userId: w.member.userId, scope: 'read' }), 403, 'workspace_read_only');
      await refusedWith(s().invitations.accept(w.invitationToken, { name: 'Ivy', password: 'long enough password' }, cli.context), 403, 'workspace_read_only');
      expect(await orgSnapshot(env.container, w.org.id)).toEqual(before);
    });

    it('keep forbidden first: a role that cannot act hears so, not the state', async () => {
      const w = await buildReadOnlyWorld(env, 'Forbidden first');
      await cancelSubscription(env.container, w.org.id);
      const viewer = await sessionActorOf(env.container, w.org.id, w.viewer.userId);
      const admin = await sessionActorOf(env.container, w.org.id, w.admin.userId);
      await refusedWith(s().projects.create(viewer, { name: 'x' }), 403, 'forbidden');
      await refusedWith(s().workflows.startRun(viewer, w.workflowId), 403, 'forbidden');
      await refusedWith(s().users.invite(admin, { email: 'boss@example.com', role: 'owner' }), 403, 'forbidden');
      // Finishing a task is the assignee's (or an admin's): anyone else is forbidden before the state is asked.
      await refusedWith(s().tasks.resolve(viewer, w.taskId, { action: 'done' }), 403, 'forbidden');
    });

    it('still allow revoking keys, deleting subscriptions, account changes and resuming', async () => {
      const w = await buildReadOnlyWorld(env, 'Allowed');
      await cancelSubscription(env.container, w.org.id);
      const owner = await sessionActorOf(env.container, w.org.id, w.org.ownerId);
      const member = await sessionActorOf(env.container, w.org.id, w.member.userId);
      // A person revokes a key, the operator another.
      expect((await s().apiKeys.revoke(owner, w.viewer.keyId)).revoked_at).not.toBeNull();
      expect((await s().admin.revokeKey(w.readKey.keyId)).revoked_at).not.toBeNull();
      for (const key of [w.viewer.key, w.readKey.key]) expect((await env.request('GET', '/v1/projects', { key })).status).toBe(401);
      await s().webhooks.remove(owner, w.spareWebhookId);
      await s().accounts.changeName(member, 'Renamed Member');
      expect((await s().users.get(w.org.id, w.member.userId)).name).toBe('Renamed Member');
      const resumed = await s().lifecycle.resume(owner);
      expect(resumed.organization.state).toBe('active');
    });
  });

  describe('the run engine', () => {
    const tick = async (owner = 'worker-1') => {
      const keys = await s().runs.claimDue(owner, LEASE_MS, 1000);
      for (const key of keys) await s().runs.advance(owner, key);
      return keys.map((k) => k.id);
    };
    const runRow = (orgId: string, runId: string) =>
      env.container.database.db.selectFrom('workflow_runs').selectAll().where('org_id', '=', orgId).where('id', '=', runId).executeTakeFirstOrThrow();
    const stepRows = (orgId: string, runId: string) =>
      env.container.database.db.selectFrom('workflow_run_steps').selectAll().where('org_id', '=', orgId).where('run_id', '=', runId).orderBy('position').execute();

    async function started(name: string, steps: { type: string; title?: string; duration?: string }[]) {
      const org = await env.createOrg(name);
      const owner = await sessionActorOf(env.container, org.id, org.ownerId);
      const project = await s().projects.create(owner, { name: 'Engine' });
      const workflow = await s().workflows.create(owner, project.id, { name, steps });
      const run = await s().workflows.startRun(owner, workflow.id);
      return { org, owner, run };
    }

    it('a Wait that falls due while read-only does not fire until the subscription is resumed', async () => {
      const { org, run } = await started('Paused wait', [{ type: 'wait', duration: '1h' }, { type: 'task', title: 'After the wait' }]);
      expect(await tick()).toContain(run.id);
      const parked = await runRow(org.id, run.id);
      expect(parked).toMatchObject({ status: 'waiting', wake_at: clock.now() + HOUR });
      await cancelSubscription(env.container, org.id);
      clock.advance(2 * HOUR);
      expect(await tick()).not.toContain(run.id);
      // Not even the engine's timer waits for it.
      expect(await s().runs.nextDueAt()).not.toBe(parked.wake_at);
      expect(await runRow(org.id, run.id)).toEqual(parked);
      expect((await stepRows(org.id, run.id)).map((st) => st.status)).toEqual(['waiting', 'pending']);

      await resumeSubscription(env.container, org.id);
      expect(await tick()).toContain(run.id);
      expect((await stepRows(org.id, run.id)).map((st) => st.status)).toEqual(['completed', 'waiting']);
      expect((await runRow(org.id, run.id)).status).toBe('waiting');
    });

    it('a run woken by a task finished just before the cancellation stays where it is until resumed', async () => {
      const { org, owner, run } = await started('Woken run', [
        { type: 'task', title: 'First' },
        { type: 'task', title: 'Second' },
      ]);
      expect(await tick()).toContain(run.id);
      const first = (await stepRows(org.id, run.id))[0]!.task_id!;
      await s().tasks.resolve(owner, first, { action: 'done' });
      // The run is due now; the cancellation comes before any worker picks it up.
      expect((await runRow(org.id, run.id)).wake_at).toBe(clock.now());
      await cancelSubscription(env.container, org.id);
      const paused = await runRow(org.id, run.id);
      clock.advance(MINUTE);
      expect(await tick()).not.toContain(run.id);
      expect(await runRow(org.id, run.id)).toEqual(paused);
      expect((await stepRows(org.id, run.id)).map((st) => st.status)).toEqual(['completed', 'pending']);
      const tasks = await env.container.database.db.selectFrom('tasks').select('title').where('org_id', '=', org.id).where('run_id', '=', run.id).execute();
      expect(tasks.map((t) => t.title)).toEqual(['First']);

      await resumeSubscription(env.container, org.id);
      expect(await tick()).toContain(run.id);
      expect((await stepRows(org.id, run.id)).map((st) => st.status)).toEqual(['completed', 'waiting']);
    });

    it('a run claimed just before the cancellation is handed back unadvanced, keeping its wake time', async () => {
      const { org, run } = await started('Claimed run', [{ type: 'task', title: 'Only' }]);
      const queued = await runRow(org.id, run.id);
      const keys = await s().runs.claimDue('worker-2', LEASE_MS, 1000);
      expect(keys.map((k) => k.id)).toContain(run.id);
      await cancelSubscription(env.container, org.id);
      const key = keys.find((k) => k.id === run.id)!;
      expect(await s().runs.advance('worker-2', key)).toBe(false);
      const row = await runRow(org.id, run.id);
      expect(row).toEqual(queued);
      expect(await tick()).not.toContain(run.id);
      await resumeSubscription(env.container, org.id);
      expect(await tick()).toContain(run.id);
      expect((await runRow(org.id, run.id)).status).toBe('waiting');
    });
  });

  it('the command line is refused the same way, and may still revoke a key', async () => {
    const w = await buildReadOnlyWorld(env, 'Command line');
    await cancelSubscription(env.container, w.org.id);
    const dbEnv: Record<string, string> = env.config.databaseUrl ? { DATABASE_URL: env.config.databaseUrl } : { DATA_DIR: env.dataDir };
    const refused = await runCli(['task', 'create', '--org', w.org.id, '--project', w.projectId, '--title', 'From the shell', '--json'], dbEnv);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error.code).toBe('workspace_read_only');
    const revoked = await cliJson(['key', 'revoke', w.member.keyId], dbEnv);
    expect(revoked.revoked_at).not.toBeNull();
    expect((await env.request('GET', '/v1/projects', { key: w.member.key })).status).toBe(401);
  });
});

describe.each(testDialects())('read-only workspace: rate limit before the state (%s)', (dialect) => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await createTestEnv(dialect, { env: { RATE_LIMIT_PER_MINUTE: '3' } });
  });
  afterAll(async () => env?.close());

  it('answers 429 once the key is over its limit, whatever the state', async () => {
    const org = await env.createOrg();
    const deletionAt = await cancelSubscription(env.container, org.id);
    expectReadOnly(await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 42 } }), deletionAt);
    expect((await env.request('GET', '/v1/projects', { key: org.ownerKey })).status).toBe(200);
    expect((await env.request('GET', '/v1/projects', { key: org.ownerKey })).status).toBe(200);
    const limited = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 42 } });
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
  });
});

/**
 * Two instances on one database and one Redis, each caching principals: the state travels with the
 * cached principal and is dropped on both at the cancellation and at the resumption, like a revocation.
 */
describe.each(testDialects())('read-only workspace across instances (%s)', (dialect) => {
  const prefix = uniqueRedisPrefix();
  let a: TestEnv;
  let b: TestEnv;

  beforeAll(async () => {
    const redisEnv = { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix };
    a = await createTestEnv(dialect, { env: redisEnv });
    const sameDb: Record<string, string> = a.config.databaseUrl ? { DATABASE_URL: a.config.databaseUrl } : { DATA_DIR: a.dataDir };
    b = await createTestEnv(dialect, { env: { ...redisEnv, ...sameDb } });
    for (const env of [a, b]) {
      for (let i = 0; i < 100 && (await env.request('GET', '/readyz')).body.checks.redis !== 'ok'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await deleteRedisPrefix(prefix);
  });

  it('a key cached before the cancellation is refused on the very next request on both, and writes again right after resuming', async () => {
    const org = await a.createOrg();
    for (const env of [a, b]) {
      // Twice, so the second is served from the cache.
      expect((await env.request('GET', '/v1/projects', { key: org.ownerKey })).status).toBe(200);
      expect((await env.request('GET', '/v1/projects', { key: org.ownerKey })).status).toBe(200);
    }
    const deletionAt = await cancelSubscription(a.container, org.id);
    for (const env of [b, a]) expectReadOnly(await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Refused' } }), deletionAt);
    // Reads still come from the (refreshed) cache.
    for (const env of [b, a]) expect((await env.request('GET', '/v1/projects', { key: org.ownerKey })).status).toBe(200);

    await resumeSubscription(b.container, org.id);
    for (const env of [a, b]) expect((await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: `Back on ${env === a ? 'a' : 'b'}` } })).status).toBe(201);
    const names = (await a.request('GET', '/v1/projects?limit=100', { key: org.ownerKey })).body.data.map((p: { name: string }) => p.name);
    expect(names).not.toContain('Refused');
  });
});
