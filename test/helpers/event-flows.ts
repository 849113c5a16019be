import { expect } from 'vitest';
import type { Container } from '../../src/container.js';
import { FULL_SCOPE, type UserActor } from '../../src/services/access/actor.js';
import { ACTIVE_WORKSPACE } from '../../src/services/access/workspace.js';
import { waitFor, type DeliveryHarness, type ReceivedRequest } from './https-receiver.js';
import type { TestOrg } from './test-env.js';

const DAY = 24 * 3600 * 1000;

/** A user acting through the dashboard, built like the dashboard's session actor. */
export async function dashboardActor(container: Container, orgId: string, userId: string): Promise<UserActor> {
  const user = await container.database.db.selectFrom('users').select(['email', 'role']).where('org_id', '=', orgId).where('id', '=', userId).executeTakeFirstOrThrow();
  return {
    type: 'user',
    orgId,
    userId,
    label: user.email,
    role: user.role,
    scope: FULL_SCOPE,
    keyId: null,
    workspace: ACTIVE_WORKSPACE,
    sessionId: 'sess_test',
    confirmedAt: container.clock.now(),
    context: { source: 'dashboard', ip: '192.0.2.7', userAgent: 'vitest', requestId: 'req_test' },
  };
}

/** The owner as the dashboard acts for them, so `task.assigned` names a user in `assigned_by`. */
const ownerActor = (container: Container, org: TestOrg): Promise<UserActor> => dashboardActor(container, org.id, org.ownerId);

export interface EveryEvent {
  org: TestOrg;
  /** The deliveries to the subscription, one per event, in the order the events occurred. */
  deliveries: ReceivedRequest[];
}

/**
 * Subscribes `receiver.url(path)` to all six events with `secret`, then makes every kind of event happen
 * the way people do: projects through the API, tasks and workflow runs through the services the dashboard
 * calls, the runs advanced by the harness's own worker. Covers each shape a body can take: a project with
 * and without a description, `previous` of each field, a first assignment and a reassignment, by a person
 * and by a run, and a run completing and failing each way (`approval_rejected`, `task_cancelled`,
 * `cancelled`). Returns once every event has been delivered.
 */
export async function deliverEveryEvent(harness: DeliveryHarness, secret: string, path = '/hook'): Promise<EveryEvent> {
  const { env, receiver } = harness;
  const { container } = env;
  const s = container.services;
  const db = container.database.db;
  const org = await env.createOrg();
  const api = async (method: string, url: string, body: unknown, status: number) => {
    const res = await env.request(method, url, { key: org.ownerKey, body });
    expect(res.status, `${method} ${url}: ${res.text}`).toBe(status);
    return res.body as { id: string };
  };
  await api(
    'POST',
    '/v1/webhooks',
    { url: receiver.url(path), events: ['project.created', 'project.updated', 'project.deleted', 'workflow.completed', 'workflow.failed', 'task.assigned'], secret },
    201,
  );
  let expected = 0;

  const doomed = await api('POST', '/v1/projects', { name: 'Launch', description: 'The first one' }, 201);
  const home = await api('POST', '/v1/projects', { name: 'Home ✓', status: 'draft' }, 201);
  await api('PUT', `/v1/projects/${doomed.id}`, { name: 'Launch 2' }, 200);
  await api('PUT', `/v1/projects/${doomed.id}`, { description: null }, 200);
  await api('PUT', `/v1/projects/${doomed.id}`, { status: 'archived', description: 'Back again' }, 200);
  expected += 5;

  const owner = await ownerActor(container, org);
  const member = await org.member('member');
  const other = await org.member('member');
  const task = await s.tasks.create(owner, home.id, { title: 'Free task', assignee_id: member.userId, due_at: container.clock.now() + DAY });
  await s.tasks.assign(owner, task.id, other.userId);
  expected += 2;

  const todo = await s.workflows.create(owner, home.id, { name: 'Check', steps: [{ type: 'task', title: 'Check it', assignee_id: member.userId, due_in: '1d' }] });
  const approval = await s.workflows.create(owner, home.id, { name: 'Sign off', steps: [{ type: 'approval', title: 'Approve it', assignee_id: org.ownerId }] });
  const openTask = (runId: string) =>
    waitFor(`the task of run ${runId}`, () => db.selectFrom('tasks').select('id').where('org_id', '=', org.id).where('run_id', '=', runId).where('status', '=', 'open').executeTakeFirst());
  const ended = (runId: string, status: string) => waitFor(`run ${runId} ${status}`, async () => (await s.runs.get(owner, runId)).status === status);

  const completes = await s.workflows.startRun(owner, todo.id);
  await s.tasks.resolve(owner, (await openTask(completes.id)).id, { action: 'done' });
  await ended(completes.id, 'completed');
  const rejected = await s.workflows.startRun(owner, approval.id);
  await s.tasks.resolve(owner, (await openTask(rejected.id)).id, { action: 'reject', reason: 'not yet' });
  await ended(rejected.id, 'failed');
  const taskCancelled = await s.workflows.startRun(owner, todo.id);
  await s.tasks.resolve(owner, (await openTask(taskCancelled.id)).id, { action: 'cancel', reason: null });
  await ended(taskCancelled.id, 'failed');
  const runCancelled = await s.workflows.startRun(owner, todo.id);
  await openTask(runCancelled.id);
  await s.runs.cancel(owner, runCancelled.id);
  await ended(runCancelled.id, 'cancelled');
  expected += 4 * 2;

  await api('DELETE', `/v1/projects/${doomed.id}`, undefined, 204);
  expected += 1;

  const order = (await db.selectFrom('events').select('id').where('org_id', '=', org.id).orderBy('seq').execute()).map((e) => e.id);
  expect(order).toHaveLength(expected);
  const deliveries = await waitFor('every event delivered', () => {
    const byEvent = new Map(receiver.at(path).map((r) => [r.headers['x-service-event-id'] as string, r]));
    return order.every((id) => byEvent.has(id)) ? order.map((id) => byEvent.get(id)!) : null;
  });
  return { org, deliveries };
}
