import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventRow } from '../../src/db/schema.js';
import type { Clock } from '../../src/lib/time.js';
import { createStore, type Store } from '../../src/db/store.js';
import { createProjectsService } from '../../src/services/projects/projects-service.js';
import { createRunsService } from '../../src/services/workflows/runs-service.js';
import { createTasksService } from '../../src/services/workflows/tasks-service.js';
import type { StepInput } from '../../src/services/workflows/workflow-steps.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { cliActor } from '../../src/services/access/actor.js';

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

  /** A workflow of the project with the given steps, created as the operator. */
  function createWorkflow(org: TestOrg, projectId: string, name: string, steps: StepInput[] = [{ type: 'task', title: 'Do it' }]) {
    return services().workflows.create(cliActor(org.id), projectId, { name, steps });
  }

  /** What a worker does: advances every due run (the test environment runs no engine). */
  async function advanceRuns(runs = services().runs): Promise<void> {
    for (const key of await runs.claimDue('outbox-test', 30_000, 100)) await runs.advance('outbox-test', key);
  }

  /** Starts a run and advances it to its first step (a task is open, or a timer set). */
  async function startedRun(org: TestOrg, workflowId: string) {
    const run = await services().workflows.startRun(cliActor(org.id), workflowId);
    await advanceRuns();
    return services().runs.get(cliActor(org.id), run.id);
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
          visibility: 'organization',
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
            visibility: res.body.visibility,
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

    it('project.deleted carries project_id, name, status, and its workflows, runs and tasks go with it (no workflow.failed)', async () => {
      const project = await createProject(org, { name: 'Vostok' });
      const survivor = await createProject(org, { name: 'Soyuz' });
      const workflow = await createWorkflow(org, project.id, 'Launch', [{ type: 'task', title: 'Fuel' }]);
      // An active run, waiting on its task: deleting the project ends it without a workflow.failed event.
      const run = await startedRun(org, workflow.id);
      expect(run.status).toBe('waiting');
      const runTask = run.steps[0]!.task_id!;
      const task = await services().tasks.create(cliActor(org.id), project.id, { title: 'Ignite' });
      const keptWorkflow = await createWorkflow(org, survivor.id, 'Dock');
      const keptRun = await services().workflows.startRun(cliActor(org.id), keptWorkflow.id);
      const keptTask = await services().tasks.create(cliActor(org.id), survivor.id, { title: 'Undock' });
      const events = (await repos().events.listEvents(org.id)).length;

      const res = await env.request('DELETE', `/v1/projects/${project.id}`, { key: org.ownerKey });
      expect(res.status).toBe(204);

      const { body, webhookIds } = await onlyNewEvent(org.id, events);
      expect(body).toEqual({ event: 'project.deleted', timestamp: iso(), data: { project_id: project.id, name: 'Vostok', status: 'active' } });
      expect(webhookIds).toEqual([allListener]);
      expect(await repos().workflows.findById(org.id, workflow.id)).toBeUndefined();
      expect(await repos().runs.findById(org.id, run.id)).toBeUndefined();
      expect(await repos().tasks.findById(org.id, task.id)).toBeUndefined();
      expect(await repos().tasks.findById(org.id, runTask)).toBeUndefined();
      expect(await repos().workflows.listForProject(org.id, project.id)).toEqual([]);
      expect(await repos().tasks.listForProject(org.id, project.id, 100)).toEqual([]);
      expect((await repos().workflows.findById(org.id, keptWorkflow.id))?.project_id).toBe(survivor.id);
      expect((await repos().runs.findById(org.id, keptRun.id))?.status).toBe('queued');
      expect((await repos().tasks.findById(org.id, keptTask.id))?.project_id).toBe(survivor.id);
      // The deleted run is nothing a worker can pick up any more: advancing writes no event.
      await advanceRuns();
      expect((await eventsSince(org.id, events + 1)).map((e) => e.type)).not.toContain('workflow.failed');
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
      const workflow = await createWorkflow(org, project.id, 'Flow');
      const run = await startedRun(org, workflow.id);
      const task = await services().tasks.create(cliActor(org.id), project.id, { title: 'Step' });
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
      expect((await repos().runs.findById(org.id, run.id))?.status).toBe('waiting');
      expect(await repos().tasks.findById(org.id, task.id)).toBeDefined();
      expect(await eventsSince(org.id, events)).toEqual([]);
      expect(wakes).toEqual([]);
    });

    it('a failed event write rolls back run steps, run endings and task assignment', async () => {
      const org = await env.createOrg('Atomic work');
      const actor = cliActor(org.id);
      const project = await createProject(org);
      await subscribe(org, ['task.assigned', 'workflow.completed', 'workflow.failed']);
      const workflow = await createWorkflow(org, project.id, 'Flow', [{ type: 'task', title: 'Step', assignee_id: org.ownerId }]);
      const task = await services().tasks.create(actor, project.id, { title: 'Loose' });
      const queued = await services().workflows.startRun(actor, workflow.id);
      const events = (await repos().events.listEvents(org.id)).length;
      const wakes: number[] = [];
      const deps = { store: storeWithBrokenOutbox(spyStore(wakes)), clock };
      const brokenRuns = createRunsService(deps);

      // The first step's task would be assigned (task.assigned): the whole step rolls back.
      await expect(advanceRuns(brokenRuns)).rejects.toThrow('outbox unavailable');
      await services().runs.releaseAllLeases();
      expect((await repos().runs.findById(org.id, queued.id))?.status).toBe('queued');
      expect((await services().runs.get(actor, queued.id)).steps[0]).toMatchObject({ status: 'pending', task_id: null });
      await expect(createTasksService(deps).assign(actor, task.id, org.ownerId)).rejects.toThrow('outbox unavailable');
      await expect(createTasksService(deps).create(actor, project.id, { title: 'Assigned', assignee_id: org.ownerId })).rejects.toThrow('outbox unavailable');

      // With the step's task done, the run would complete (workflow.completed): it stays running.
      await advanceRuns();
      const waiting = await services().runs.get(actor, queued.id);
      await services().tasks.resolve(actor, waiting.steps[0]!.task_id!, { action: 'done' });
      const settled = (await repos().events.listEvents(org.id)).length;
      await expect(advanceRuns(brokenRuns)).rejects.toThrow('outbox unavailable');
      await services().runs.releaseAllLeases();
      expect((await repos().runs.findById(org.id, queued.id))?.status).toBe('running');
      // Cancelling it would fail it (workflow.failed): it stays running too.
      await expect(brokenRuns.cancel(actor, queued.id)).rejects.toThrow('outbox unavailable');
      expect((await repos().runs.findById(org.id, queued.id))).toMatchObject({ status: 'running', error_code: null, finished_at: null });

      expect((await repos().tasks.findById(org.id, task.id))?.assignee_id).toBeNull();
      expect((await repos().tasks.listForProject(org.id, project.id, 100)).map((t) => t.title)).not.toContain('Assigned');
      // Only the real services' own events were written (the step's task.assigned), none by the broken ones.
      expect((await eventsSince(org.id, events)).map((e) => e.type)).toEqual(['task.assigned']);
      expect(await eventsSince(org.id, settled)).toEqual([]);
      expect(wakes).toEqual([]);
      // The run is intact: a working worker completes it.
      await advanceRuns();
      expect((await repos().runs.findById(org.id, queued.id))?.status).toBe('completed');
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

    it('workflow.completed: the run\'s data, for its listeners only; wakes after commit', async () => {
      const workflow = await createWorkflow(org, project.id, 'Build', [{ type: 'task', title: 'Compile' }]);
      expect(workflow).toMatchObject({ project_id: project.id, name: 'Build', version: 1 });
      const run = await startedRun(org, workflow.id);
      const startedAt = iso();
      time += 5000;
      await services().tasks.resolve(cliActor(org.id), run.steps[0]!.task_id!, { action: 'done' });
      time += 1000;
      const events = (await repos().events.listEvents(org.id)).length;
      // The store wakes workers once the unit of work has committed: the event is visible by then.
      const visibleAtWake: Promise<number>[] = [];
      const store = createStore(env.container.database, {
        wake: () => visibleAtWake.push(repos().events.listEvents(org.id).then((rows) => rows.length - events)),
      });

      await advanceRuns(createRunsService({ store, clock }));
      expect(await Promise.all(visibleAtWake)).toEqual([1]);
      const { body, webhookIds } = await onlyNewEvent(org.id, events);
      expect(body).toEqual({
        event: 'workflow.completed',
        timestamp: iso(),
        data: { workflow_id: workflow.id, project_id: project.id, run_id: run.id, status: 'completed', started_at: startedAt, finished_at: iso() },
      });
      expect(webhookIds).toEqual([onCompleted]);
      expect((await repos().runs.findById(org.id, run.id))?.status).toBe('completed');
    });

    it('workflow.failed: a rejected approval adds the error and its code, for its listeners only', async () => {
      const workflow = await createWorkflow(org, project.id, 'Deploy', [{ type: 'approval', title: 'Ship it' }]);
      const run = await startedRun(org, workflow.id);
      const startedAt = iso();
      time += 1000;
      await services().tasks.resolve(cliActor(org.id), run.steps[0]!.task_id!, { action: 'reject', reason: 'not this week' });
      const events = (await repos().events.listEvents(org.id)).length;
      await advanceRuns();
      const { body, webhookIds } = await onlyNewEvent(org.id, events);
      expect(body).toEqual({
        event: 'workflow.failed',
        timestamp: iso(),
        data: {
          workflow_id: workflow.id,
          project_id: project.id,
          run_id: run.id,
          status: 'failed',
          started_at: startedAt,
          finished_at: iso(),
          error: 'Approval "Ship it" was rejected by an operator (command line): not this week',
          error_code: 'approval_rejected',
        },
      });
      expect(webhookIds).toEqual([onFailed]);
    });

    it('workflow.failed: a run cancelled before it started has started_at null and error_code cancelled', async () => {
      const workflow = await createWorkflow(org, project.id, 'Queue');
      const run = await services().workflows.startRun(cliActor(org.id), workflow.id);
      const events = (await repos().events.listEvents(org.id)).length;
      time += 1000;
      const cancelled = await services().runs.cancel(cliActor(org.id), run.id);
      expect(cancelled).toMatchObject({ status: 'cancelled', error_code: 'cancelled' });
      const { body, webhookIds } = await onlyNewEvent(org.id, events);
      expect(body.data).toEqual({
        workflow_id: workflow.id,
        project_id: project.id,
        run_id: run.id,
        status: 'failed',
        started_at: null,
        finished_at: iso(),
        error: 'Run cancelled by an operator (command line)',
        error_code: 'cancelled',
      });
      expect(webhookIds).toEqual([onFailed]);
    });

    it('unknown or foreign workflows and runs are 404, bad input 400, and write nothing', async () => {
      const stranger = await env.createOrg('Stranger');
      const theirs = await createWorkflow(stranger, (await createProject(stranger)).id, 'Theirs');
      const theirRun = await services().workflows.startRun(cliActor(stranger.id), theirs.id);
      const mine = await createWorkflow(org, project.id, 'Mine');
      const events = (await repos().events.listEvents(org.id)).length;
      const actor = cliActor(org.id);

      await expect(services().workflows.startRun(actor, theirs.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
      await expect(services().workflows.startRun(actor, 'wf_unknown')).rejects.toMatchObject({ status: 404, code: 'not_found' });
      await expect(services().runs.cancel(actor, theirRun.id)).rejects.toMatchObject({ status: 404, code: 'not_found' });
      await expect(services().workflows.create(actor, 'proj_unknown', { name: 'X' })).rejects.toMatchObject({ status: 404, code: 'not_found' });
      await expect(services().workflows.create(actor, project.id, { name: '' })).rejects.toMatchObject({
        status: 400,
        details: [{ field: 'name', message: 'must be 1 to 255 characters' }],
      });
      await expect(createWorkflow(org, project.id, 'Bad', [{ type: 'task', title: 'Fine' }, { type: 'wait', duration: 'soon' }])).rejects.toMatchObject({
        status: 400,
        code: 'validation_failed',
        details: [{ field: 'steps[1].duration', message: 'must be a duration such as 30m, 2h, 3d or 1d 12h' }],
      });
      expect((await repos().runs.findById(stranger.id, theirRun.id))?.status).toBe('queued');
      expect((await repos().workflows.findById(org.id, mine.id))?.version).toBe(1);
      expect((await services().workflows.listForProject(actor, project.id)).map((w) => w.name)).not.toContain('Bad');
      expect(await eventsSince(org.id, events)).toEqual([]);
      // The stranger's queued run is theirs to finish; leave nothing due for later cases.
      await services().runs.cancel(cliActor(stranger.id), theirRun.id);
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
      const actor = cliActor(org.id);
      const task = await services().tasks.create(actor, project.id, { title: 'Write docs', due_at: Date.UTC(2026, 11, 31) });
      expect(task).toMatchObject({ project_id: project.id, workflow_id: null, run_id: null, title: 'Write docs', assignee_id: null });
      const member = await org.member('member');
      let events = (await repos().events.listEvents(org.id)).length;
      const data = { task_id: task.id, project_id: project.id, title: 'Write docs', assigned_by: null, workflow_id: null, run_id: null, due_at: '2026-12-31T00:00:00.000Z' };

      const first = await services().tasks.assign(actor, task.id, org.ownerId);
      expect(first.assignee_id).toBe(org.ownerId);
      let created = await onlyNewEvent(org.id, events++);
      expect(created.body).toEqual({
        event: 'task.assigned',
        timestamp: iso(),
        data: { ...data, assignee_id: org.ownerId, previous_assignee_id: null },
      });
      expect(created.webhookIds).toEqual([onAssigned]);

      time += 1000;
      await services().tasks.assign(actor, task.id, member.userId);
      created = await onlyNewEvent(org.id, events++);
      expect(created.body).toEqual({
        event: 'task.assigned',
        timestamp: iso(),
        data: { ...data, assignee_id: member.userId, previous_assignee_id: org.ownerId },
      });

      // Clearing the assignee is no assignment: nothing is emitted.
      time += 1000;
      expect((await services().tasks.assign(actor, task.id, null)).assignee_id).toBeNull();
      expect(await eventsSince(org.id, events)).toEqual([]);
    });

    it('re-assigning to the same user changes nothing and emits nothing', async () => {
      const task = await services().tasks.create(cliActor(org.id), project.id, { title: 'Review' });
      const assigned = await services().tasks.assign(cliActor(org.id), task.id, org.ownerId);
      const events = (await repos().events.listEvents(org.id)).length;
      time += 1000;
      const again = await services().tasks.assign(cliActor(org.id), task.id, org.ownerId);
      expect(again).toEqual(assigned);
      expect(await eventsSince(org.id, events)).toEqual([]);
    });

    it('the assignee must be a member of the same organisation; unknown or foreign tasks are 404', async () => {
      const stranger = await env.createOrg('Strangers');
      const actor = cliActor(org.id);
      const task = await services().tasks.create(actor, project.id, { title: 'Guarded' });
      const theirTask = await services().tasks.create(cliActor(stranger.id), (await createProject(stranger)).id, { title: 'Theirs' });
      const events = (await repos().events.listEvents(org.id)).length;

      for (const userId of [stranger.ownerId, 'user_unknown']) {
        await expect(services().tasks.assign(actor, task.id, userId)).rejects.toMatchObject({
          status: 400,
          code: 'validation_failed',
          details: [{ field: 'assignee_id', message: 'must be a member of this organisation' }],
        });
      }
      await expect(services().tasks.assign(actor, theirTask.id, org.ownerId)).rejects.toMatchObject({ status: 404, code: 'not_found' });
      await expect(services().tasks.assign(actor, 'task_unknown', org.ownerId)).rejects.toMatchObject({ status: 404, code: 'not_found' });
      expect((await repos().tasks.findById(org.id, task.id))?.assignee_id).toBeNull();
      expect((await repos().tasks.findById(stranger.id, theirTask.id))?.assignee_id).toBeNull();
      expect(await eventsSince(org.id, events)).toEqual([]);
    });

    it('a task needs a title of 1 to 255 characters and an assignee of the organisation; a refused create writes nothing', async () => {
      const stranger = await env.createOrg('Outsiders');
      const events = (await repos().events.listEvents(org.id)).length;
      await expect(services().tasks.create(cliActor(org.id), project.id, { title: 'x'.repeat(256) })).rejects.toMatchObject({
        status: 400,
        details: [{ field: 'title', message: 'must be 1 to 255 characters' }],
      });
      await expect(services().tasks.create(cliActor(org.id), project.id, { title: 'Mixed', assignee_id: stranger.ownerId })).rejects.toMatchObject({
        status: 400,
        details: [{ field: 'assignee_id', message: 'must be a member of this organisation' }],
      });
      await expect(services().tasks.create(cliActor(org.id), 'proj_unknown', { title: 'Lost' })).rejects.toMatchObject({ status: 404, code: 'not_found' });
      expect(await repos().tasks.listForProject(org.id, project.id, 100)).not.toContainEqual(expect.objectContaining({ title: 'Mixed' }));
      expect(await eventsSince(org.id, events)).toEqual([]);
    });
  });
});
