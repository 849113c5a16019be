import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventRow } from '../src/db/schema.js';
import type { Clock } from '../src/lib/time.js';
import { createStore, type Store } from '../src/db/store.js';
import { createProjectsService } from '../src/services/projects-service.js';
import { createTasksService } from '../src/services/tasks-service.js';
import { createWorkflowsService } from '../src/services/workflows-service.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from './helpers/test-env.js';
import { cliActor } from '../src/services/actor.js';

const START = Date.UTC(2026, 10, 22, 9, 30, 0, 0);

describe.each(testDialects())('transactional outbox (%s)', (dialect) => {
  let env: TestEnv;
  let time = START;
  const clock: Clock = { now: () => time };
  const iso = () => new Date(time).toISOString();

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
  });
  afterAll(async () => env?.close());
  // Every step happens at a distinct, known instant.
  beforeEach(() => {
    time += 60_000;
  });

  const repos = () => env.container.store.repos;
  const services = () => env.container.services;

  async function subscribe(org: TestOrg, events: string[]): Promise<string> {
    const res = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://hooks.example.com/in', events } });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  async function createProject(org: TestOrg, body: Record<string, unknown> = { name: 'Apollo' }) {
    const res = await env.request('POST', '/v1/projects', { key: org.ownerKey, body });
    expect(res.status).toBe(201);
    return res.body as { id: string; name: string; description: string | null; status: string; created_at: string; updated_at: string };
  }

  /** Events of the organisation recorded since `after` (a count from a previous call). */
  async function eventsSince(orgId: string, after: number): Promise<EventRow[]> {
    return (await repos().events.listEvents(orgId)).slice(after);
  }

  async function deliveriesOf(orgId: string, eventId: string) {
    return repos().events.listDeliveriesForEvent(orgId, eventId);
  }

  /** The one event written since `after`, its parsed body, and the webhook ids it is queued for. */
  async function onlyNewEvent(orgId: string, after: number) {
    const events = await eventsSince(orgId, after);
    expect(events).toHaveLength(1);
    const event = events[0]!;
    const deliveries = await deliveriesOf(orgId, event.id);
    return { event, body: JSON.parse(event.body) as Record<string, unknown>, webhookIds: deliveries.map((d) => d.webhook_id), deliveries };
  }

  describe('project events', () => {
    let org: TestOrg;
    let other: TestOrg;
    let listener: string;
    let allListener: string;
    let deaf: string;
    let otherOrgListener: string;

    beforeAll(async () => {
      org = await env.createOrg('Outbox');
      other = await env.createOrg('Elsewhere');
      listener = await subscribe(org, ['project.created', 'project.updated']);
      deaf = await subscribe(org, ['task.assigned', 'workflow.completed']);
      allListener = await subscribe(org, ['project.deleted', 'project.updated', 'project.created']);
      otherOrgListener = await subscribe(other, ['project.created', 'project.updated', 'project.deleted']);
    });

    it('project.created: the final envelope, and one pending delivery per listening subscription', async () => {
      const before = (await repos().events.listEvents(org.id)).length;
      const otherBefore = (await repos().events.listEvents(other.id)).length;
      const project = await createProject(org, { name: 'Apollo', description: 'Moon', status: 'draft' });

      const { event, body, deliveries } = await onlyNewEvent(org.id, before);
      expect(event.type).toBe('project.created');
      expect(event.occurred_at).toBe(time);
      expect(event.body).toBe(JSON.stringify(body)); // the exact bytes every attempt sends
      expect(Object.keys(body)).toEqual(['event', 'timestamp', 'data']);
      expect(body).toEqual({
        event: 'project.created',
        timestamp: iso(),
        data: {
          project_id: project.id,
          name: 'Apollo',
          description: 'Moon',
          status: 'draft',
          created_at: project.created_at,
          updated_at: project.updated_at,
        },
      });
      expect(deliveries.map((d) => d.webhook_id).sort()).toEqual([listener, allListener].sort());
      expect(deliveries.map((d) => d.webhook_id)).not.toContain(deaf);
      for (const d of deliveries) {
        expect(d).toMatchObject({ org_id: org.id, event_type: 'project.created', status: 'pending', attempt_count: 0, failure_count: 0, next_attempt_at: time });
        expect(d.id).toMatch(/^dlv_/);
      }
      expect(event.id).toMatch(/^evt_/);
      // The other organisation saw nothing, though its subscription listens for the same event.
      expect(await eventsSince(other.id, otherBefore)).toEqual([]);
      expect(otherOrgListener).toBeTruthy();
    });

    it('a subscription created after the event gets no delivery for it, but does for later ones', async () => {
      const before = (await repos().events.listEvents(org.id)).length;
      const project = await createProject(org);
      const first = await onlyNewEvent(org.id, before);
      const late = await subscribe(org, ['project.updated']);

      expect((await deliveriesOf(org.id, first.event.id)).map((d) => d.webhook_id)).not.toContain(late);
      await env.request('PUT', `/v1/projects/${project.id}`, { key: org.ownerKey, body: { name: 'Renamed' } });
      const second = await onlyNewEvent(org.id, before + 1);
      expect(second.webhookIds.sort()).toEqual([listener, allListener, late].sort());
      await env.request('DELETE', `/v1/webhooks/${late}`, { key: org.ownerKey });
    });

    it('project.updated carries the new state and `previous` with the old values of changed fields only', async () => {
      const project = await createProject(org, { name: 'Gemini' });
      let count = (await repos().events.listEvents(org.id)).length;

      const expectUpdate = async (body: Record<string, unknown>, previous: Record<string, unknown>) => {
        time += 1000;
        const res = await env.request('PUT', `/v1/projects/${project.id}`, { key: org.ownerKey, body });
        expect(res.status).toBe(200);
        const created = await onlyNewEvent(org.id, count);
        count += 1;
        expect(created.event.type).toBe('project.updated');
        expect(created.body).toEqual({
          event: 'project.updated',
          timestamp: iso(),
          data: {
            project_id: project.id,
            name: res.body.name,
            description: res.body.description,
            status: res.body.status,
            created_at: project.created_at,
            updated_at: iso(),
            previous,
          },
        });
        expect(created.webhookIds.sort()).toEqual([listener, allListener].sort());
      };

      await expectUpdate({ name: 'Gemini II', status: 'archived', description: null }, { name: 'Gemini', status: 'active' });
      await expectUpdate({ description: 'Two seats' }, { description: null });
      await expectUpdate({ description: '', status: 'draft' }, { description: 'Two seats', status: 'archived' });
    });

    it('an update that changes nothing writes no event and no delivery', async () => {
      const project = await createProject(org, { name: 'Mercury', description: 'One seat' });
      const events = (await repos().events.listEvents(org.id)).length;
      time += 1000;
      const res = await env.request('PUT', `/v1/projects/${project.id}`, {
        key: org.ownerKey,
        body: { name: 'Mercury', description: 'One seat', status: 'active' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(project);
      expect(await eventsSince(org.id, events)).toEqual([]);
    });

    it('project.deleted carries project_id, name, status, and its workflows and tasks go with it', async () => {
      const project = await createProject(org, { name: 'Vostok' });
      const survivor = await createProject(org, { name: 'Soyuz' });
      const workflow = await services().workflows.create(org.id, project.id, 'Launch');
      const task = await services().tasks.create(org.id, project.id, 'Fuel', workflow.id);
      const keptWorkflow = await services().workflows.create(org.id, survivor.id, 'Dock');
      const keptTask = await services().tasks.create(org.id, survivor.id, 'Undock');
      const events = (await repos().events.listEvents(org.id)).length;

      const res = await env.request('DELETE', `/v1/projects/${project.id}`, { key: org.ownerKey });
      expect(res.status).toBe(204);

      const { body, webhookIds } = await onlyNewEvent(org.id, events);
      expect(body).toEqual({ event: 'project.deleted', timestamp: iso(), data: { project_id: project.id, name: 'Vostok', status: 'active' } });
      expect(webhookIds).toEqual([allListener]);
      expect(await repos().workflows.findById(org.id, workflow.id)).toBeUndefined();
      expect(await repos().tasks.findById(org.id, task.id)).toBeUndefined();
      expect(await repos().workflows.listForProject(org.id, project.id)).toEqual([]);
      expect(await repos().tasks.listForProject(org.id, project.id)).toEqual([]);
      expect((await repos().workflows.findById(org.id, keptWorkflow.id))?.project_id).toBe(survivor.id);
      expect((await repos().tasks.findById(org.id, keptTask.id))?.project_id).toBe(survivor.id);
    });
  });

  describe('atomicity: the change and its event commit together or not at all', () => {
    /** The real store, except that writing the event fails inside the transaction. */
    /** A store on the test database whose wakes are recorded (the container's waker also hears NOTIFY echoes). */
    function spyStore(wakes: number[]): Store {
      return createStore(env.container.database, { wake: () => wakes.push(1) });
    }

    function storeWithBrokenOutbox(store: Store): Store {
      return {
        ...store,
        transaction: (work) =>
          store.transaction((repos) =>
            work({
              ...repos,
              events: {
                ...repos.events,
                insertEvent: async () => {
                  throw new Error('outbox unavailable');
                },
              },
            }),
          ),
      };
    }

    it('a failed event write rolls back project create, update and delete (with its children)', async () => {
      const org = await env.createOrg('Atomic');
      await subscribe(org, ['project.created', 'project.updated', 'project.deleted']);
      const project = await createProject(org, { name: 'Kept' });
      const workflow = await services().workflows.create(org.id, project.id, 'Flow');
      const task = await services().tasks.create(org.id, project.id, 'Step', workflow.id);
      const events = (await repos().events.listEvents(org.id)).length;
      const wakes: number[] = [];
      const broken = createProjectsService({ store: storeWithBrokenOutbox(spyStore(wakes)), clock });

      await expect(broken.create(cliActor(org.id), { name: 'Ghost' })).rejects.toThrow('outbox unavailable');
      await expect(broken.update(cliActor(org.id), project.id, { name: 'Changed' })).rejects.toThrow('outbox unavailable');
      await expect(broken.remove(cliActor(org.id), project.id)).rejects.toThrow('outbox unavailable');

      const listed = await env.request('GET', '/v1/projects', { key: org.ownerKey });
      expect(listed.body.data.map((p: { name: string }) => p.name)).toEqual(['Kept']);
      expect((await repos().projects.findById(org.id, project.id))?.name).toBe('Kept');
      expect(await repos().workflows.findById(org.id, workflow.id)).toBeDefined();
      expect(await repos().tasks.findById(org.id, task.id)).toBeDefined();
      expect(await eventsSince(org.id, events)).toEqual([]);
      expect(wakes).toEqual([]);
    });

    it('a failed event write rolls back workflow runs and task assignment', async () => {
      const org = await env.createOrg('Atomic work');
      const project = await createProject(org);
      const workflow = await services().workflows.create(org.id, project.id, 'Flow');
      const task = await services().tasks.create(org.id, project.id, 'Step');
      const events = (await repos().events.listEvents(org.id)).length;
      const wakes: number[] = [];
      const deps = { store: storeWithBrokenOutbox(spyStore(wakes)), clock };

      await expect(createWorkflowsService(deps).completeRun(org.id, workflow.id)).rejects.toThrow('outbox unavailable');
      await expect(createWorkflowsService(deps).failRun(org.id, workflow.id, 'boom')).rejects.toThrow('outbox unavailable');
      await expect(createTasksService(deps).assign(org.id, task.id, org.ownerId)).rejects.toThrow('outbox unavailable');

      expect((await repos().workflows.findById(org.id, workflow.id))?.status).toBe('pending');
      expect((await repos().tasks.findById(org.id, task.id))?.assignee_id).toBeNull();
      expect(await eventsSince(org.id, events)).toEqual([]);
      expect(wakes).toEqual([]);
    });
  });

  describe('workflow events', () => {
    let org: TestOrg;
    let project: { id: string };
    let onCompleted: string;
    let onFailed: string;

    beforeAll(async () => {
      org = await env.createOrg('Workflows');
      project = await createProject(org, { name: 'Pipelines' });
      onCompleted = await subscribe(org, ['workflow.completed']);
      onFailed = await subscribe(org, ['workflow.failed', 'project.created']);
    });

    it('workflow.completed: { workflow_id, project_id, status }, for its listeners only; wakes after commit', async () => {
      const workflow = await services().workflows.create(org.id, project.id, 'Build');
      expect(workflow).toMatchObject({ project_id: project.id, name: 'Build', status: 'pending' });
      const events = (await repos().events.listEvents(org.id)).length;
      // The store wakes workers once the unit of work has committed: the event is visible by then.
      const visibleAtWake: Promise<number>[] = [];
      const store = createStore(env.container.database, {
        wake: () => visibleAtWake.push(repos().events.listEvents(org.id).then((rows) => rows.length - events)),
      });

      const done = await createWorkflowsService({ store, clock }).completeRun(org.id, workflow.id);
      expect(done.status).toBe('completed');
      expect(await Promise.all(visibleAtWake)).toEqual([1]);
      const { body, webhookIds } = await onlyNewEvent(org.id, events);
      expect(body).toEqual({ event: 'workflow.completed', timestamp: iso(), data: { workflow_id: workflow.id, project_id: project.id, status: 'completed' } });
      expect(webhookIds).toEqual([onCompleted]);
      expect((await repos().workflows.findById(org.id, workflow.id))?.status).toBe('completed');
    });

    it('workflow.failed: adds the error, for its listeners only', async () => {
      const workflow = await services().workflows.create(org.id, project.id, 'Deploy');
      const events = (await repos().events.listEvents(org.id)).length;
      const failed = await services().workflows.failRun(org.id, workflow.id, 'step 3 exited with code 1');
      expect(failed.status).toBe('failed');
      const { body, webhookIds } = await onlyNewEvent(org.id, events);
      expect(body).toEqual({
        event: 'workflow.failed',
        timestamp: iso(),
        data: { workflow_id: workflow.id, project_id: project.id, status: 'failed', error: 'step 3 exited with code 1' },
      });
      expect(webhookIds).toEqual([onFailed]);
    });

    it('unknown or foreign workflows are 404, bad input 400, and write nothing', async () => {
      const stranger = await env.createOrg('Stranger');
      const theirs = await services().workflows.create(stranger.id, (await createProject(stranger)).id, 'Theirs');
      const mine = await services().workflows.create(org.id, project.id, 'Mine');
      const events = (await repos().events.listEvents(org.id)).length;

      await expect(services().workflows.completeRun(org.id, theirs.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
      await expect(services().workflows.failRun(org.id, 'wf_unknown', 'x')).rejects.toMatchObject({ status: 404, code: 'not_found' });
      await expect(services().workflows.failRun(org.id, mine.id, '')).rejects.toMatchObject({
        status: 400,
        code: 'validation_failed',
        details: [{ field: 'error', message: 'must not be empty' }],
      });
      await expect(services().workflows.create(org.id, 'proj_unknown', 'X')).rejects.toMatchObject({ status: 404, code: 'not_found' });
      await expect(services().workflows.create(org.id, project.id, '')).rejects.toMatchObject({
        status: 400,
        details: [{ field: 'name', message: 'must be 1 to 255 characters' }],
      });
      expect((await repos().workflows.findById(stranger.id, theirs.id))?.status).toBe('pending');
      expect((await repos().workflows.findById(org.id, mine.id))?.status).toBe('pending');
      expect(await eventsSince(org.id, events)).toEqual([]);
    });
  });

  describe('task events', () => {
    let org: TestOrg;
    let project: { id: string };
    let onAssigned: string;

    beforeAll(async () => {
      org = await env.createOrg('Tasks');
      project = await createProject(org, { name: 'Board' });
      onAssigned = await subscribe(org, ['task.assigned']);
      await subscribe(org, ['workflow.completed']);
    });

    it('task.assigned on assignment and re-assignment, with the previous assignee', async () => {
      const task = await services().tasks.create(org.id, project.id, 'Write docs');
      expect(task).toMatchObject({ project_id: project.id, workflow_id: null, title: 'Write docs', assignee_id: null });
      const member = await org.member('member');
      let events = (await repos().events.listEvents(org.id)).length;

      const first = await services().tasks.assign(org.id, task.id, org.ownerId);
      expect(first.assignee_id).toBe(org.ownerId);
      let created = await onlyNewEvent(org.id, events++);
      expect(created.body).toEqual({
        event: 'task.assigned',
        timestamp: iso(),
        data: { task_id: task.id, project_id: project.id, assignee_id: org.ownerId, previous_assignee_id: null },
      });
      expect(created.webhookIds).toEqual([onAssigned]);

      time += 1000;
      await services().tasks.assign(org.id, task.id, member.userId);
      created = await onlyNewEvent(org.id, events++);
      expect(created.body).toEqual({
        event: 'task.assigned',
        timestamp: iso(),
        data: { task_id: task.id, project_id: project.id, assignee_id: member.userId, previous_assignee_id: org.ownerId },
      });
    });

    it('re-assigning to the same user changes nothing and emits nothing', async () => {
      const task = await services().tasks.create(org.id, project.id, 'Review');
      const assigned = await services().tasks.assign(org.id, task.id, org.ownerId);
      const events = (await repos().events.listEvents(org.id)).length;
      time += 1000;
      const again = await services().tasks.assign(org.id, task.id, org.ownerId);
      expect(again).toEqual(assigned);
      expect(await eventsSince(org.id, events)).toEqual([]);
    });

    it('the assignee must be a user of the same organisation; unknown or foreign tasks are 404', async () => {
      const stranger = await env.createOrg('Strangers');
      const task = await services().tasks.create(org.id, project.id, 'Guarded');
      const theirTask = await services().tasks.create(stranger.id, (await createProject(stranger)).id, 'Theirs');
      const events = (await repos().events.listEvents(org.id)).length;

      for (const userId of [stranger.ownerId, 'user_unknown']) {
        await expect(services().tasks.assign(org.id, task.id, userId)).rejects.toMatchObject({
          status: 400,
          code: 'validation_failed',
          details: [{ field: 'assignee_id', message: 'must be a user of this organisation' }],
        });
      }
      await expect(services().tasks.assign(org.id, theirTask.id, org.ownerId)).rejects.toMatchObject({ status: 404, code: 'not_found' });
      await expect(services().tasks.assign(org.id, 'task_unknown', org.ownerId)).rejects.toMatchObject({ status: 404, code: 'not_found' });
      expect((await repos().tasks.findById(org.id, task.id))?.assignee_id).toBeNull();
      expect((await repos().tasks.findById(stranger.id, theirTask.id))?.assignee_id).toBeNull();
      expect(await eventsSince(org.id, events)).toEqual([]);
    });

    it('a task\'s workflow must belong to the same project', async () => {
      const otherProject = await createProject(org, { name: 'Elsewhere' });
      const workflow = await services().workflows.create(org.id, otherProject.id, 'Foreign');
      await expect(services().tasks.create(org.id, project.id, 'Mixed', workflow.id)).rejects.toMatchObject({
        status: 400,
        details: [{ field: 'workflow_id', message: 'must be a workflow of the same project' }],
      });
      await expect(services().tasks.create(org.id, project.id, 'x'.repeat(256))).rejects.toMatchObject({
        status: 400,
        details: [{ field: 'title', message: 'must be 1 to 255 characters' }],
      });
      expect(await repos().tasks.listForProject(org.id, project.id)).not.toContainEqual(expect.objectContaining({ title: 'Mixed' }));
    });
  });
});
