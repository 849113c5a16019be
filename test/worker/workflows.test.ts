import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/https-receiver.js';
import type { Role } from '../../src/db/schema.js';
import type { Container } from '../../src/container.js';
import { DomainError, type ErrorDetail } from '../../src/errors.js';
import { toIso } from '../../src/lib/time.js';
import { cliActor, type UserActor } from '../../src/services/access/actor.js';
import { dashboardActor } from '../helpers/event-flows.js';
import type { StepInput } from '../../src/services/workflows/workflow-steps.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { ManualClock } from '../helpers/manual-clock.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const LEASE_MS = 30 * SECOND;

interface EventBody {
  event: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** An organisation with its owner acting from the dashboard and one project to work in. */
interface World {
  org: TestOrg;
  owner: UserActor;
  projectId: string;
  /** A new active member of the organisation with this role, as a dashboard actor. */
  person(role: Role): Promise<UserActor>;
}

/**
 * The service suite for workflows, runs and tasks (DASHBOARD 7). Runs are driven by hand the way the
 * engine drives them (claim due runs, advance each) with a clock the test moves, so every transition
 * happens at a known time and nothing runs in the background.
 */
describe.each(testDialects())('workflows, runs and tasks (%s)', (dialect) => {
  let env: TestEnv;
  const clock = new ManualClock();

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
  });
  afterAll(async () => env?.close());

  const s = () => env.container.services;
  const db = () => env.container.database.db;

  const actorFor = dashboardActor;

  async function worldIn(target: TestEnv): Promise<World> {
    const org = await target.createOrg();
    const owner = await actorFor(target.container, org.id, org.ownerId);
    const project = await target.container.services.projects.create(owner, { name: 'Launch' });
    return { org, owner, projectId: project.id, person: async (role) => actorFor(target.container, org.id, (await org.member(role)).userId) };
  }
  const world = () => worldIn(env);

  /** One pass of a worker: lease every due run, advance each; the ids of the runs it claimed. */
  async function tickOn(container: Container, owner = 'worker-1'): Promise<string[]> {
    const keys = await container.services.runs.claimDue(owner, LEASE_MS, 1000);
    for (const key of keys) await container.services.runs.advance(owner, key);
    return keys.map((k) => k.id);
  }
  const tick = (owner?: string) => tickOn(env.container, owner);

  async function events(orgId: string, type?: string): Promise<EventBody[]> {
    let query = db().selectFrom('events').select('body').where('org_id', '=', orgId);
    if (type) query = query.where('type', '=', type);
    return (await query.orderBy('seq').execute()).map((r) => JSON.parse(r.body) as EventBody);
  }

  /** The audit rows of workflows, runs and tasks, in order, as who did what to which target. */
  async function audit(orgId: string) {
    const rows = await db()
      .selectFrom('audit_log')
      .select(['action', 'actor_type', 'actor_id', 'source', 'target_type', 'target_id', 'changes'])
      .where('org_id', '=', orgId)
      .where((eb) => eb.or([eb('action', 'like', 'workflow%'), eb('action', 'like', 'task.%')]))
      .orderBy('seq')
      .execute();
    return rows.map((r) => ({ ...r, changes: r.changes === null ? null : (JSON.parse(r.changes) as unknown) }));
  }

  /** Every row this suite's services may write for an organisation, to prove a refusal wrote nothing. */
  async function snapshot(orgId: string) {
    const d = db();
    return {
      workflows: await d.selectFrom('workflows').selectAll().where('org_id', '=', orgId).orderBy('seq').execute(),
      runs: await d.selectFrom('workflow_runs').selectAll().where('org_id', '=', orgId).orderBy('seq').execute(),
      runSteps: await d.selectFrom('workflow_run_steps').selectAll().where('org_id', '=', orgId).orderBy('run_id').orderBy('position').execute(),
      tasks: await d.selectFrom('tasks').selectAll().where('org_id', '=', orgId).orderBy('seq').execute(),
      events: await d.selectFrom('events').selectAll().where('org_id', '=', orgId).orderBy('seq').execute(),
      audit: await d.selectFrom('audit_log').selectAll().where('org_id', '=', orgId).orderBy('seq').execute(),
    };
  }

  async function refused(promise: Promise<unknown>, status: number, code: string, details?: ErrorDetail[]): Promise<DomainError> {
    const err = await promise.then(
      () => {
        throw new Error(`expected ${status} ${code}, but it succeeded`);
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    const domain = err as DomainError;
    expect({ status: domain.status, code: domain.code }).toEqual({ status, code });
    if (details) expect(domain.details).toEqual(details);
    return domain;
  }

  /** Starts a run of the steps and lets a worker take its first step. */
  async function started(w: World, steps: StepInput[], by: UserActor = w.owner) {
    const workflow = await s().workflows.create(by, w.projectId, { name: 'Review', steps });
    const run = await s().workflows.startRun(by, workflow.id);
    expect(await tick()).toContain(run.id);
    return { workflow, run };
  }

  const detail = (w: World, runId: string) => s().runs.get(w.owner, runId);
  /** How a run's error sentence names a person: their name, else their e-mail. */
  const nameIn = async (actor: UserActor) => (await env.container.store.repos.users.findById(actor.orgId, actor.userId))?.name ?? actor.label;
  const taskOf = async (w: World, runId: string, stepNumber: number) => (await detail(w, runId)).steps[stepNumber - 1]!.task_id!;

  describe('step kinds', () => {
    it('a Task step creates the task assigned as configured, due after "Due in", and the run waits until it is done', async () => {
      const w = await world();
      const assignee = await w.person('member');
      const workflow = await s().workflows.create(w.owner, w.projectId, {
        name: 'Onboarding',
        steps: [{ type: 'task', title: 'Write the brief', assignee_id: assignee.userId, due_in: '1d 12h' }],
      });
      const run = await s().workflows.startRun(w.owner, workflow.id);
      expect(run).toMatchObject({ status: 'queued', current_step: 1, step_count: 1, started_at: null, wakes_at: null, started_by: w.owner.userId, started_by_label: w.owner.label });

      clock.advance(SECOND);
      const start = clock.now();
      expect(await tick()).toContain(run.id);
      const waiting = await detail(w, run.id);
      const taskId = waiting.steps[0]!.task_id!;
      const due = toIso(start + 36 * HOUR);
      expect(waiting).toMatchObject({ status: 'waiting', current_step: 1, started_at: toIso(start), finished_at: null, wakes_at: null });
      expect(waiting.steps).toEqual([
        {
          number: 1,
          step_id: workflow.steps[0]!.id,
          type: 'task',
          title: 'Write the brief',
          assignee_id: assignee.userId,
          due_in_ms: 36 * HOUR,
          duration_ms: null,
          status: 'waiting',
          outcome: null,
          task_id: taskId,
          task: { status: 'open', assignee_id: assignee.userId, decision: null, due_at: due },
          started_at: toIso(start),
          finished_at: null,
        },
      ]);
      expect(await s().tasks.get(w.owner, taskId)).toEqual({
        id: taskId,
        project_id: w.projectId,
        workflow_id: workflow.id,
        run_id: run.id,
        run_step: 1,
        title: 'Write the brief',
        description: null,
        kind: 'todo',
        status: 'open',
        decision: null,
        assignee_id: assignee.userId,
        due_at: due,
        completed_by: null,
        completed_at: null,
        created_at: toIso(start),
        updated_at: toIso(start),
      });
      expect(await events(w.org.id, 'task.assigned')).toEqual([
        {
          event: 'task.assigned',
          timestamp: toIso(start),
          data: {
            task_id: taskId,
            project_id: w.projectId,
            title: 'Write the brief',
            assignee_id: assignee.userId,
            previous_assignee_id: null,
            assigned_by: null,
            workflow_id: workflow.id,
            run_id: run.id,
            due_at: due,
          },
        },
      ]);
      expect((await s().tasks.listMine(assignee)).map((t) => t.id)).toEqual([taskId]);

      // However long it takes, the run waits for the person, not for a worker.
      clock.advance(10 * DAY);
      expect(await tick()).not.toContain(run.id);
      expect((await detail(w, run.id)).status).toBe('waiting');

      clock.advance(MINUTE);
      const doneAt = clock.now();
      expect(await s().tasks.resolve(assignee, taskId, { action: 'done' })).toMatchObject({ status: 'done', decision: null, completed_by: assignee.userId, completed_at: toIso(doneAt) });
      expect(await tick()).toContain(run.id);
      const completed = await detail(w, run.id);
      expect(completed).toMatchObject({ status: 'completed', finished_at: toIso(doneAt), error: null, error_code: null, wakes_at: null });
      expect(completed.steps[0]).toMatchObject({ status: 'completed', outcome: 'done', finished_at: toIso(doneAt), task: { status: 'done' } });
      expect(await s().tasks.listMine(assignee)).toEqual([]);
    });

    it('an Approval step moves on to the next step when approved', async () => {
      const w = await world();
      const approver = await w.person('member');
      const { run } = await started(w, [
        { type: 'approval', title: 'Sign off the budget', assignee_id: approver.userId },
        { type: 'task', title: 'Order the parts', assignee_id: approver.userId },
      ]);
      const approvalId = await taskOf(w, run.id, 1);
      expect(await s().tasks.get(w.owner, approvalId)).toMatchObject({ kind: 'approval', status: 'open', due_at: null, run_step: 1 });

      clock.advance(MINUTE);
      const at = clock.now();
      expect(await s().tasks.resolve(approver, approvalId, { action: 'approve' })).toMatchObject({ status: 'done', decision: 'approved', completed_by: approver.userId });
      expect(await tick()).toContain(run.id);
      const next = await detail(w, run.id);
      expect(next).toMatchObject({ status: 'waiting', current_step: 2 });
      expect(next.steps.map((st) => [st.status, st.outcome])).toEqual([
        ['completed', 'approved'],
        ['waiting', null],
      ]);
      expect(next.steps[0]!.finished_at).toBe(toIso(at));
      expect(await s().tasks.get(w.owner, next.steps[1]!.task_id!)).toMatchObject({ kind: 'todo', status: 'open', title: 'Order the parts', run_step: 2, created_at: toIso(at) });
    });

    it('a Wait step does nothing before its time and fires at exactly started + duration', async () => {
      const w = await world();
      clock.advance(SECOND);
      const start = clock.now();
      const { run } = await started(w, [
        { type: 'wait', duration: '2h 30m', title: 'Let the paint dry' },
        { type: 'task', title: 'Hang the pictures' },
      ]);
      const waiting = await detail(w, run.id);
      expect(waiting).toMatchObject({ status: 'waiting', current_step: 1, wakes_at: toIso(start + 150 * MINUTE) });
      expect(waiting.steps[0]).toMatchObject({ type: 'wait', title: 'Let the paint dry', duration_ms: 150 * MINUTE, status: 'waiting', task_id: null, task: null, started_at: toIso(start) });

      clock.advance(150 * MINUTE - 1);
      expect(await tick()).not.toContain(run.id);
      expect(await detail(w, run.id)).toEqual(waiting);
      expect(await s().tasks.listForProject(w.owner, w.projectId)).toEqual([]);

      clock.advance(1);
      expect(clock.now()).toBe(start + 150 * MINUTE);
      expect(await tick()).toContain(run.id);
      const next = await detail(w, run.id);
      expect(next).toMatchObject({ status: 'waiting', current_step: 2, wakes_at: null });
      expect(next.steps[0]).toMatchObject({ status: 'completed', outcome: 'elapsed', finished_at: toIso(start + 150 * MINUTE) });
      expect(next.steps[1]).toMatchObject({ status: 'waiting', started_at: toIso(start + 150 * MINUTE), task: { status: 'open', assignee_id: null } });
      // An unassigned task fires no task.assigned.
      expect(await events(w.org.id, 'task.assigned')).toEqual([]);
    });

    it('a Task, a Wait and an Approval run to completion: workflow.completed and the audit trail', async () => {
      const w = await world();
      const starter = await w.person('member');
      const doer = await w.person('member');
      const approver = await w.person('admin');
      const workflow = await s().workflows.create(starter, w.projectId, {
        name: 'Release',
        steps: [
          { type: 'task', title: 'Build', assignee_id: doer.userId, due_in: '2h' },
          { type: 'wait', duration: '30m' },
          { type: 'approval', title: 'Ship it?', assignee_id: approver.userId },
        ],
      });
      const run = await s().workflows.startRun(starter, workflow.id);
      clock.advance(SECOND);
      const start = clock.now();
      expect(await tick()).toContain(run.id);
      const buildId = await taskOf(w, run.id, 1);
      clock.advance(10 * MINUTE);
      await s().tasks.resolve(doer, buildId, { action: 'done' });
      const waitFrom = clock.now();
      expect(await tick()).toContain(run.id);
      clock.advance(30 * MINUTE);
      expect(await tick()).toContain(run.id);
      const shipId = await taskOf(w, run.id, 3);
      clock.advance(5 * MINUTE);
      await s().tasks.resolve(approver, shipId, { action: 'approve' });
      clock.advance(SECOND);
      const end = clock.now();
      expect(await tick()).toContain(run.id);

      const done = await detail(w, run.id);
      expect(done).toMatchObject({ status: 'completed', current_step: 3, started_at: toIso(start), finished_at: toIso(end), error: null, error_code: null });
      expect(done.steps.map((st) => [st.status, st.outcome])).toEqual([
        ['completed', 'done'],
        ['completed', 'elapsed'],
        ['completed', 'approved'],
      ]);
      expect(done.steps[1]).toMatchObject({ started_at: toIso(waitFrom), finished_at: toIso(waitFrom + 30 * MINUTE) });

      const all = await events(w.org.id);
      expect(all.map((e) => e.event)).toEqual(['project.created', 'task.assigned', 'task.assigned', 'workflow.completed']);
      expect(all[3]).toEqual({
        event: 'workflow.completed',
        timestamp: toIso(end),
        data: { workflow_id: workflow.id, project_id: w.projectId, run_id: run.id, status: 'completed', started_at: toIso(start), finished_at: toIso(end) },
      });

      const user = (a: UserActor) => ({ actor_type: 'user', actor_id: a.userId, source: 'dashboard' });
      const system = { actor_type: 'system', actor_id: null, source: 'system' };
      const rows = await audit(w.org.id);
      expect(rows.map(({ action, actor_type, actor_id, source, target_type, target_id }) => ({ action, actor_type, actor_id, source, target_type, target_id }))).toEqual([
        { action: 'workflow.created', ...user(starter), target_type: 'workflow', target_id: workflow.id },
        { action: 'workflow_run.started', ...user(starter), target_type: 'workflow_run', target_id: run.id },
        { action: 'task.created', ...system, target_type: 'task', target_id: buildId },
        { action: 'task.assigned', ...system, target_type: 'task', target_id: buildId },
        { action: 'task.completed', ...user(doer), target_type: 'task', target_id: buildId },
        { action: 'task.created', ...system, target_type: 'task', target_id: shipId },
        { action: 'task.assigned', ...system, target_type: 'task', target_id: shipId },
        { action: 'task.completed', ...user(approver), target_type: 'task', target_id: shipId },
        { action: 'workflow_run.completed', ...system, target_type: 'workflow_run', target_id: run.id },
      ]);
      expect(rows[1]!.changes).toEqual({ workflow_id: { old: null, new: workflow.id, new_label: workflow.name }, workflow_version: { old: null, new: 1 } });
      expect(rows[3]!.changes).toEqual({ assignee_id: { old: null, new: doer.userId, new_label: await nameIn(doer) } });
      expect(rows[8]!.changes).toEqual({ status: { old: 'running', new: 'completed' } });
    });
  });

  describe('failures', () => {
    it('a rejected approval fails the run with approval_rejected, naming the approval, who rejected it and why', async () => {
      const w = await world();
      const approver = await w.person('member');
      const { workflow, run } = await started(w, [
        { type: 'approval', title: 'Sign off the budget', assignee_id: approver.userId },
        { type: 'task', title: 'Spend it' },
      ]);
      const approvalId = await taskOf(w, run.id, 1);
      clock.advance(MINUTE);
      await s().tasks.resolve(approver, approvalId, { action: 'reject', reason: 'Too expensive' });
      clock.advance(SECOND);
      const end = clock.now();
      expect(await tick()).toContain(run.id);

      const error = `Approval "Sign off the budget" was rejected by ${await nameIn(approver)}: Too expensive`;
      const failed = await detail(w, run.id);
      expect(failed).toMatchObject({ status: 'failed', error_code: 'approval_rejected', error, finished_at: toIso(end) });
      expect(failed.steps.map((st) => [st.status, st.outcome, st.task_id === null])).toEqual([
        ['failed', 'rejected', false],
        ['pending', null, true],
      ]);
      expect(await s().tasks.get(w.owner, approvalId)).toMatchObject({ status: 'done', decision: 'rejected', completed_by: approver.userId });
      expect(await events(w.org.id, 'workflow.failed')).toEqual([
        {
          event: 'workflow.failed',
          timestamp: toIso(end),
          data: {
            workflow_id: workflow.id,
            project_id: w.projectId,
            run_id: run.id,
            status: 'failed',
            started_at: failed.started_at,
            finished_at: toIso(end),
            error,
            error_code: 'approval_rejected',
          },
        },
      ]);
      const rows = await audit(w.org.id);
      expect(rows.find((r) => r.action === 'task.completed')!.changes).toEqual({
        status: { old: 'open', new: 'done' },
        decision: { old: null, new: 'rejected' },
        reason: { old: null, new: 'Too expensive' },
      });
      expect(rows.at(-1)).toMatchObject({ action: 'workflow_run.failed', actor_type: 'system', target_id: run.id, changes: { status: { old: 'running', new: 'failed' }, error_code: { old: null, new: 'approval_rejected' } } });
      // The second step never started.
      expect((await s().tasks.listForProject(w.owner, w.projectId)).map((t) => t.id)).toEqual([approvalId]);
    });

    it("cancelling the step's task fails the run with task_cancelled", async () => {
      const w = await world();
      const member = await w.person('member');
      const { run } = await started(w, [{ type: 'task', title: 'Book the venue' }]);
      const taskId = await taskOf(w, run.id, 1);
      await s().tasks.resolve(member, taskId, { action: 'cancel', reason: 'Event postponed' });
      expect(await tick()).toContain(run.id);
      const error = `Task "Book the venue" was cancelled by ${await nameIn(member)}: Event postponed`;
      expect(await detail(w, run.id)).toMatchObject({ status: 'failed', error_code: 'task_cancelled', error });
      expect((await detail(w, run.id)).steps[0]).toMatchObject({ status: 'failed', outcome: 'cancelled', task: { status: 'cancelled' } });
      const [failed] = await events(w.org.id, 'workflow.failed');
      expect(failed!.data).toMatchObject({ status: 'failed', error, error_code: 'task_cancelled' });
      expect((await audit(w.org.id)).map((r) => r.action)).toContain('task.cancelled');
    });

    it('"Cancel run" cancels the run and its open task at once; the event says failed with error_code cancelled', async () => {
      const w = await world();
      const member = await w.person('member');
      const { workflow, run } = await started(w, [{ type: 'task', title: 'Draft', assignee_id: member.userId }, { type: 'wait', duration: '1h' }]);
      const taskId = await taskOf(w, run.id, 1);
      clock.advance(MINUTE);
      const at = clock.now();
      const cancelled = await s().runs.cancel(member, run.id);
      expect(cancelled).toMatchObject({ status: 'cancelled', error_code: 'cancelled', error: `Run cancelled by ${await nameIn(member)}`, finished_at: toIso(at), wakes_at: null });
      expect(await s().tasks.get(w.owner, taskId)).toMatchObject({ status: 'cancelled', decision: null, completed_at: toIso(at), updated_at: toIso(at) });
      expect(await events(w.org.id, 'workflow.failed')).toEqual([
        {
          event: 'workflow.failed',
          timestamp: toIso(at),
          data: {
            workflow_id: workflow.id,
            project_id: w.projectId,
            run_id: run.id,
            status: 'failed',
            started_at: cancelled.started_at,
            finished_at: toIso(at),
            error: `Run cancelled by ${await nameIn(member)}`,
            error_code: 'cancelled',
          },
        },
      ]);
      expect((await audit(w.org.id)).at(-1)).toMatchObject({
        action: 'workflow_run.failed',
        actor_type: 'user',
        actor_id: member.userId,
        changes: { status: { old: 'waiting', new: 'cancelled' }, error_code: { old: null, new: 'cancelled' } },
      });
      // Nothing is left for a worker, and the finished run cannot be cancelled again.
      clock.advance(2 * HOUR);
      expect(await tick()).not.toContain(run.id);
      const before = await snapshot(w.org.id);
      await refused(s().runs.cancel(member, run.id), 409, 'conflict');
      await refused(s().tasks.resolve(member, taskId, { action: 'done' }), 409, 'conflict');
      expect(await snapshot(w.org.id)).toEqual(before);
    });

    it('a queued run can be cancelled before a worker starts it; a completed run cannot be cancelled', async () => {
      const w = await world();
      const workflow = await s().workflows.create(w.owner, w.projectId, { name: 'Quick', steps: [{ type: 'wait', duration: '1s' }] });
      const queued = await s().workflows.startRun(w.owner, workflow.id);
      expect(await s().runs.cancel(w.owner, queued.id)).toMatchObject({ status: 'cancelled', started_at: null });
      expect(await tick()).not.toContain(queued.id);
      expect((await detail(w, queued.id)).steps[0]!.status).toBe('pending');

      const run = await s().workflows.startRun(w.owner, workflow.id);
      await tick();
      clock.advance(SECOND);
      await tick();
      expect((await detail(w, run.id)).status).toBe('completed');
      const before = await snapshot(w.org.id);
      const err = await refused(s().runs.cancel(w.owner, run.id), 409, 'conflict');
      expect(err.message).toBe('this run has already completed');
      expect(await snapshot(w.org.id)).toEqual(before);
    });

    it('finishing a task twice is 409; done on an approval and approve on a to-do are 409', async () => {
      const w = await world();
      const { run } = await started(w, [
        { type: 'task', title: 'Write', assignee_id: w.owner.userId },
        { type: 'approval', title: 'Accept', assignee_id: w.owner.userId },
      ]);
      const todoId = await taskOf(w, run.id, 1);
      await refused(s().tasks.resolve(w.owner, todoId, { action: 'approve' }), 409, 'conflict');
      await refused(s().tasks.resolve(w.owner, todoId, { action: 'reject' }), 409, 'conflict');
      await s().tasks.resolve(w.owner, todoId, { action: 'done' });
      let before = await snapshot(w.org.id);
      await refused(s().tasks.resolve(w.owner, todoId, { action: 'done' }), 409, 'conflict');
      await refused(s().tasks.resolve(w.owner, todoId, { action: 'cancel' }), 409, 'conflict');
      expect(await snapshot(w.org.id)).toEqual(before);

      await tick();
      const approvalId = await taskOf(w, run.id, 2);
      before = await snapshot(w.org.id);
      const err = await refused(s().tasks.resolve(w.owner, approvalId, { action: 'done' }), 409, 'conflict');
      expect(err.message).toBe('this task is an approval: approve or reject it');
      expect(await snapshot(w.org.id)).toEqual(before);
      await s().tasks.resolve(w.owner, approvalId, { action: 'approve' });
      before = await snapshot(w.org.id);
      await refused(s().tasks.resolve(w.owner, approvalId, { action: 'reject' }), 409, 'conflict');
      expect(await snapshot(w.org.id)).toEqual(before);
    });
  });

  it('editing a workflow after a run started does not change the run: its steps and version were copied', async () => {
    const w = await world();
    const workflow = await s().workflows.create(w.owner, w.projectId, {
      name: 'Hiring',
      steps: [
        { type: 'task', title: 'Screen' },
        { type: 'task', title: 'Interview' },
      ],
    });
    expect(workflow.version).toBe(1);
    const run = await s().workflows.startRun(w.owner, workflow.id);
    expect(run).toMatchObject({ workflow_version: 1, workflow_name: 'Hiring', step_count: 2 });

    await s().workflows.removeStep(w.owner, workflow.id, workflow.steps[1]!.id);
    await s().workflows.addStep(w.owner, workflow.id, { type: 'approval', title: 'Offer' }, 0);
    const edited = await s().workflows.update(w.owner, workflow.id, { name: 'Hiring v2' });
    expect(edited.version).toBe(4);
    expect(edited.steps.map((st) => st.title)).toEqual(['Offer', 'Screen']);

    await tick();
    let current = await detail(w, run.id);
    expect(current).toMatchObject({ workflow_version: 1, workflow_name: 'Hiring', step_count: 2 });
    expect(current.steps.map((st) => [st.type, st.title, st.step_id])).toEqual([
      ['task', 'Screen', workflow.steps[0]!.id],
      ['task', 'Interview', workflow.steps[1]!.id],
    ]);
    await s().tasks.resolve(w.owner, current.steps[0]!.task_id!, { action: 'done' });
    await tick();
    current = await detail(w, run.id);
    expect(await s().tasks.get(w.owner, current.steps[1]!.task_id!)).toMatchObject({ title: 'Interview', kind: 'todo' });
    await s().tasks.resolve(w.owner, current.steps[1]!.task_id!, { action: 'done' });
    await tick();
    expect((await detail(w, run.id)).status).toBe('completed');

    const second = await s().workflows.startRun(w.owner, workflow.id);
    expect(second).toMatchObject({ workflow_version: 4, workflow_name: 'Hiring v2', step_count: 2 });
    expect((await detail(w, second.id)).steps.map((st) => [st.type, st.title])).toEqual([
      ['approval', 'Offer'],
      ['task', 'Screen'],
    ]);
  });

  describe('step validation', () => {
    const cases: [string, StepInput, ErrorDetail][] = [
      ['an unknown type', { type: 'script' }, { field: 'type', message: 'must be one of task, approval, wait' }],
      ['an empty title', { type: 'task', title: '' }, { field: 'title', message: 'is required for a Task or Approval step' }],
      ['a 256-character title', { type: 'approval', title: 'x'.repeat(256) }, { field: 'title', message: 'must be 1 to 255 characters' }],
      ['a Wait without a duration', { type: 'wait' }, { field: 'duration', message: 'is required for a Wait step' }],
      ['an unreadable duration', { type: 'wait', duration: 'a while' }, { field: 'duration', message: 'must be a duration such as 30m, 2h, 3d or 1d 12h' }],
      ['a zero duration', { type: 'wait', duration: '0m' }, { field: 'duration', message: 'must be between 1 second and 30 days' }],
      ['a 31-day duration', { type: 'wait', duration: '31d' }, { field: 'duration', message: 'must be between 1 second and 30 days' }],
      ['"Due in" on an approval', { type: 'approval', title: 'OK?', due_in: '1d' }, { field: 'due_in', message: 'is only for Task steps' }],
      ['an assignee who is not a member', { type: 'task', title: 'Do', assignee_id: 'user_000000000000000000000000' }, { field: 'assignee_id', message: 'must be a member of this organisation' }],
    ];

    it.each(cases)('refuses %s with validation_failed naming the field, writing nothing', async (_name, step, detailExpected) => {
      const w = await world();
      const workflow = await s().workflows.create(w.owner, w.projectId, { name: 'Checks', steps: [{ type: 'task', title: 'First' }] });
      const before = await snapshot(w.org.id);
      clock.advance(SECOND);
      await refused(s().workflows.addStep(w.owner, workflow.id, step), 400, 'validation_failed', [detailExpected]);
      expect(await snapshot(w.org.id)).toEqual(before);

      // Given when the workflow is created, the field is named with the step's index; no workflow is created.
      await refused(s().workflows.create(w.owner, w.projectId, { name: 'Checks 2', steps: [{ type: 'task', title: 'First' }, step] }), 400, 'validation_failed', [
        { field: `steps[1].${detailExpected.field}`, message: detailExpected.message },
      ]);
      expect(await snapshot(w.org.id)).toEqual(before);
    });

    it('refuses a member of another organisation as assignee', async () => {
      const w = await world();
      const other = await world();
      const workflow = await s().workflows.create(w.owner, w.projectId, { name: 'Checks' });
      const before = await snapshot(w.org.id);
      await refused(s().workflows.addStep(w.owner, workflow.id, { type: 'approval', title: 'OK?', assignee_id: other.owner.userId }), 400, 'validation_failed', [
        { field: 'assignee_id', message: 'must be a member of this organisation' },
      ]);
      expect(await snapshot(w.org.id)).toEqual(before);
    });

    it('accepts the bounds: a 255-character title, a 1-second and a 30-day Wait', async () => {
      const w = await world();
      const workflow = await s().workflows.create(w.owner, w.projectId, {
        name: 'Bounds',
        steps: [
          { type: 'task', title: 'x'.repeat(255), due_in: 'PT15M' },
          { type: 'wait', duration: '1s' },
          { type: 'wait', duration: '30d' },
        ],
      });
      expect(workflow.steps.map((st) => [st.type, st.title?.length ?? null, st.due_in_ms, st.duration_ms])).toEqual([
        ['task', 255, 15 * MINUTE, null],
        ['wait', null, null, SECOND],
        ['wait', null, null, 30 * DAY],
      ]);
    });

    it('a 21st step is 409 on add and on create, writing nothing', async () => {
      const w = await world();
      const twenty = Array.from({ length: 20 }, (_, i) => ({ type: 'task', title: `Step ${i + 1}` }));
      const workflow = await s().workflows.create(w.owner, w.projectId, { name: 'Long', steps: twenty });
      expect(workflow.steps).toHaveLength(20);
      const before = await snapshot(w.org.id);
      const err = await refused(s().workflows.addStep(w.owner, workflow.id, { type: 'wait', duration: '1m' }), 409, 'conflict');
      expect(err.message).toBe('a workflow has at most 20 steps');
      await refused(s().workflows.create(w.owner, w.projectId, { name: 'Too long', steps: [...twenty, { type: 'wait', duration: '1m' }] }), 409, 'conflict');
      expect(await snapshot(w.org.id)).toEqual(before);
    });

    it('a workflow without steps cannot run (409), and nothing is written', async () => {
      const w = await world();
      const workflow = await s().workflows.create(w.owner, w.projectId, { name: 'Empty' });
      const before = await snapshot(w.org.id);
      const err = await refused(s().workflows.startRun(w.owner, workflow.id), 409, 'conflict');
      expect(err.message).toBe('this workflow has no steps; add a step before running it');
      expect(await snapshot(w.org.id)).toEqual(before);
    });

    it('removes a step (a new version with its audit row); an unknown step is 404', async () => {
      const w = await world();
      const workflow = await s().workflows.create(w.owner, w.projectId, {
        name: 'Trim',
        steps: [
          { type: 'task', title: 'Keep' },
          { type: 'wait', duration: '2h' },
          { type: 'approval', title: 'Also keep' },
        ],
      });
      clock.advance(SECOND);
      const trimmed = await s().workflows.removeStep(w.owner, workflow.id, workflow.steps[1]!.id);
      expect(trimmed).toMatchObject({ version: 2, updated_at: toIso(clock.now()) });
      expect(trimmed.steps).toEqual([workflow.steps[0], workflow.steps[2]]);
      expect((await audit(w.org.id)).at(-1)).toMatchObject({
        action: 'workflow.updated',
        actor_id: w.owner.userId,
        target_id: workflow.id,
        changes: { steps: { old: ['Task: Keep', 'Wait 2 hours', 'Approval: Also keep'], new: ['Task: Keep', 'Approval: Also keep'] }, version: { old: 1, new: 2 } },
      });

      const before = await snapshot(w.org.id);
      await refused(s().workflows.removeStep(w.owner, workflow.id, workflow.steps[1]!.id), 404, 'not_found');
      await refused(s().workflows.removeStep(w.owner, workflow.id, 'step_unknown'), 404, 'not_found');
      expect(await snapshot(w.org.id)).toEqual(before);
    });
  });

  describe('editing and moving steps; archived projects', () => {
    it('replaces a step in place (same id and position, judged like a new one) and moves steps up and down; each is a new version', async () => {
      const w = await world();
      const workflow = await s().workflows.create(w.owner, w.projectId, {
        name: 'Order',
        steps: [
          { type: 'task', title: 'First' },
          { type: 'wait', duration: '1h' },
          { type: 'approval', title: 'Last' },
        ],
      });
      const [first, wait, last] = workflow.steps;
      const edited = await s().workflows.replaceStep(w.owner, workflow.id, wait!.id, { type: 'wait', duration: '3h', title: 'Cool off' });
      expect(edited.version).toBe(2);
      expect(edited.steps.map((st) => st.id)).toEqual([first!.id, wait!.id, last!.id]);
      expect(edited.steps[1]).toMatchObject({ type: 'wait', title: 'Cool off', duration_ms: 3 * HOUR });
      // A refused edit changes nothing.
      const before = await snapshot(w.org.id);
      await refused(s().workflows.replaceStep(w.owner, workflow.id, wait!.id, { type: 'wait', duration: '31d' }), 400, 'validation_failed');
      await refused(s().workflows.replaceStep(w.owner, workflow.id, 'step_unknown', { type: 'wait', duration: '1h' }), 404, 'not_found');
      expect(await snapshot(w.org.id)).toEqual(before);

      const up = await s().workflows.moveStep(w.owner, workflow.id, last!.id, 'up');
      expect(up.steps.map((st) => st.id)).toEqual([first!.id, last!.id, wait!.id]);
      expect(up.version).toBe(3);
      // Past either end: nothing written, the same version.
      const still = await s().workflows.moveStep(w.owner, workflow.id, first!.id, 'up');
      expect(still.version).toBe(3);
      expect(still.steps.map((st) => st.id)).toEqual([first!.id, last!.id, wait!.id]);
      const viewer = await w.person('viewer');
      await refused(s().workflows.moveStep(viewer, workflow.id, first!.id, 'down'), 403, 'forbidden');
    });

    it('an archived project takes no new workflow, task or run (409, nothing written); unarchived, it does again', async () => {
      const w = await world();
      const workflow = await s().workflows.create(w.owner, w.projectId, { name: 'Ready', steps: [{ type: 'wait', duration: '1h' }] });
      await s().projects.update(w.owner, w.projectId, { status: 'archived' });
      const before = await snapshot(w.org.id);
      // Started one at a time: a refusal that settles while an earlier one is awaited would be unhandled.
      for (const attempt of [
        () => s().workflows.create(w.owner, w.projectId, { name: 'Late' }),
        () => s().tasks.create(w.owner, w.projectId, { title: 'Late task', assignee_id: null, due_at: null }),
        () => s().workflows.startRun(w.owner, workflow.id),
      ]) {
        const err = await refused(attempt(), 409, 'conflict');
        expect(err.message).toBe('this project is archived; unarchive it before adding workflows, tasks or runs');
      }
      expect(await snapshot(w.org.id)).toEqual(before);
      await s().projects.update(w.owner, w.projectId, { status: 'active' });
      expect((await s().workflows.startRun(w.owner, workflow.id)).status).toBe('queued');
    });
  });

  describe('permissions', () => {
    it('a viewer cannot create, edit, run, cancel or assign (403 forbidden, nothing changed) but can read', async () => {
      const w = await world();
      const viewer = await w.person('viewer');
      const workflow = await s().workflows.create(w.owner, w.projectId, { name: 'Guarded', steps: [{ type: 'task', title: 'Work' }] });
      const run = await s().workflows.startRun(w.owner, workflow.id);
      await tick();
      const taskId = await taskOf(w, run.id, 1);
      const before = await snapshot(w.org.id);

      const attempts: [string, () => Promise<unknown>][] = [
        ['create workflow', () => s().workflows.create(viewer, w.projectId, { name: 'Mine' })],
        ['rename', () => s().workflows.update(viewer, workflow.id, { name: 'Renamed' })],
        ['add step', () => s().workflows.addStep(viewer, workflow.id, { type: 'wait', duration: '1h' })],
        ['remove step', () => s().workflows.removeStep(viewer, workflow.id, workflow.steps[0]!.id)],
        ['delete workflow', () => s().workflows.remove(viewer, workflow.id)],
        ['run', () => s().workflows.startRun(viewer, workflow.id)],
        ['cancel run', () => s().runs.cancel(viewer, run.id)],
        ['assign', () => s().tasks.assign(viewer, taskId, viewer.userId)],
        ['create task', () => s().tasks.create(viewer, w.projectId, { title: 'Mine' })],
        ['cancel task', () => s().tasks.resolve(viewer, taskId, { action: 'cancel' })],
      ];
      for (const [name, attempt] of attempts) {
        const err = await refused(attempt(), 403, 'forbidden');
        // The refusal names the role and what the project would need (CONTRACT 15: a project role may allow it).
        expect(err.message, name).toMatch(/^your role \(viewer\) does not allow this action(; it needs the editor role on this project, an admin or an owner)?$/);
      }
      expect(await snapshot(w.org.id)).toEqual(before);
      expect(await s().workflows.get(viewer, workflow.id)).toMatchObject({ name: 'Guarded' });
      expect(await s().runs.get(viewer, run.id)).toMatchObject({ status: 'waiting' });
    });

    it('only the assignee (even a viewer) or an admin marks done, approves or rejects', async () => {
      const w = await world();
      const member = await w.person('member');
      const viewer = await w.person('viewer');
      const admin = await w.person('admin');
      const { run } = await started(w, [
        { type: 'task', title: 'Proofread', assignee_id: viewer.userId },
        { type: 'approval', title: 'Publish?', assignee_id: viewer.userId },
        { type: 'approval', title: 'Print?', assignee_id: member.userId },
      ]);

      const proofId = await taskOf(w, run.id, 1);
      let before = await snapshot(w.org.id);
      const err = await refused(s().tasks.resolve(member, proofId, { action: 'done' }), 403, 'forbidden');
      expect(err.message).toBe('only the assignee or an admin can finish this task');
      expect(await snapshot(w.org.id)).toEqual(before);
      expect(await s().tasks.resolve(viewer, proofId, { action: 'done' })).toMatchObject({ status: 'done', completed_by: viewer.userId });
      await tick();

      const publishId = await taskOf(w, run.id, 2);
      before = await snapshot(w.org.id);
      await refused(s().tasks.resolve(member, publishId, { action: 'approve' }), 403, 'forbidden');
      await refused(s().tasks.resolve(member, publishId, { action: 'reject', reason: 'no' }), 403, 'forbidden');
      expect(await snapshot(w.org.id)).toEqual(before);
      expect(await s().tasks.resolve(viewer, publishId, { action: 'approve' })).toMatchObject({ decision: 'approved', completed_by: viewer.userId });
      await tick();

      // An admin who is not the approver decides too.
      const printId = await taskOf(w, run.id, 3);
      await refused(s().tasks.resolve(viewer, printId, { action: 'approve' }), 403, 'forbidden');
      expect(await s().tasks.resolve(admin, printId, { action: 'reject' })).toMatchObject({ decision: 'rejected', completed_by: admin.userId });
      await tick();
      expect(await detail(w, run.id)).toMatchObject({ status: 'failed', error_code: 'approval_rejected', error: `Approval "Print?" was rejected by ${await nameIn(admin)}` });

      // An unassigned task: an admin (and the owner) can finish it, a member cannot.
      const loose = await s().tasks.create(w.owner, w.projectId, { title: 'Tidy up' });
      await refused(s().tasks.resolve(member, loose.id, { action: 'done' }), 403, 'forbidden');
      expect(await s().tasks.resolve(admin, loose.id, { action: 'done' })).toMatchObject({ status: 'done', completed_by: admin.userId });
    });
  });

  describe('assignment', () => {
    it('create with an assignee, reassign, the same again, clear: task.assigned only for a new assignee', async () => {
      const w = await world();
      const alice = await w.person('member');
      const bob = await w.person('member');
      const assigner = await w.person('member');
      const created = await s().tasks.create(assigner, w.projectId, { title: 'Call the printer', description: 'Ask about paper', assignee_id: alice.userId, due_at: Date.UTC(2026, 11, 31, 23, 59, 59, 999) });
      expect(created).toMatchObject({ workflow_id: null, run_id: null, run_step: null, kind: 'todo', status: 'open', assignee_id: alice.userId, due_at: '2026-12-31T23:59:59.999Z' });
      const base = {
        task_id: created.id,
        project_id: w.projectId,
        title: 'Call the printer',
        workflow_id: null,
        run_id: null,
        due_at: '2026-12-31T23:59:59.999Z',
      };
      expect(await events(w.org.id, 'task.assigned')).toEqual([
        { event: 'task.assigned', timestamp: created.created_at, data: { ...base, assignee_id: alice.userId, previous_assignee_id: null, assigned_by: assigner.userId } },
      ]);

      clock.advance(MINUTE);
      const reassigned = await s().tasks.assign(assigner, created.id, bob.userId);
      expect(reassigned).toMatchObject({ assignee_id: bob.userId, updated_at: toIso(clock.now()) });
      const fired = await events(w.org.id, 'task.assigned');
      expect(fired).toHaveLength(2);
      expect(fired[1]).toEqual({
        event: 'task.assigned',
        timestamp: toIso(clock.now()),
        data: { ...base, assignee_id: bob.userId, previous_assignee_id: alice.userId, assigned_by: assigner.userId },
      });
      expect((await audit(w.org.id)).at(-1)).toMatchObject({
        action: 'task.assigned',
        actor_id: assigner.userId,
        target_id: created.id,
        changes: { assignee_id: { old: alice.userId, new: bob.userId } },
      });

      // The same assignee again: nothing at all changes.
      clock.advance(MINUTE);
      let before = await snapshot(w.org.id);
      expect(await s().tasks.assign(assigner, created.id, bob.userId)).toEqual(reassigned);
      expect(await snapshot(w.org.id)).toEqual(before);

      // Clearing: recorded in the audit log, but no event.
      before = await snapshot(w.org.id);
      expect(await s().tasks.assign(assigner, created.id, null)).toMatchObject({ assignee_id: null, updated_at: toIso(clock.now()) });
      const after = await snapshot(w.org.id);
      expect(after.events).toEqual(before.events);
      expect((await audit(w.org.id)).at(-1)).toMatchObject({ action: 'task.assigned', changes: { assignee_id: { old: bob.userId, new: null } } });
    });

    it("reassigning a run's task names the workflow, the run and the due date in task.assigned", async () => {
      const w = await world();
      const first = await w.person('member');
      const second = await w.person('member');
      clock.advance(SECOND);
      const start = clock.now();
      const { workflow, run } = await started(w, [{ type: 'task', title: 'Pack', assignee_id: first.userId, due_in: '3d' }]);
      const taskId = await taskOf(w, run.id, 1);
      clock.advance(HOUR);
      await s().tasks.assign(w.owner, taskId, second.userId);
      expect((await events(w.org.id, 'task.assigned')).at(-1)).toEqual({
        event: 'task.assigned',
        timestamp: toIso(clock.now()),
        data: {
          task_id: taskId,
          project_id: w.projectId,
          title: 'Pack',
          assignee_id: second.userId,
          previous_assignee_id: first.userId,
          assigned_by: w.owner.userId,
          workflow_id: workflow.id,
          run_id: run.id,
          due_at: toIso(start + 3 * DAY),
        },
      });
      // The step keeps what was configured; its task shows who has it now.
      expect((await detail(w, run.id)).steps[0]).toMatchObject({ assignee_id: first.userId, task: { assignee_id: second.userId } });
      await refused(s().tasks.resolve(first, taskId, { action: 'done' }), 403, 'forbidden');
      await s().tasks.resolve(second, taskId, { action: 'done' });
      await tick();
      expect((await detail(w, run.id)).status).toBe('completed');
    });

    it('an assignee who is not a member is 400 on create and assign; an invited member may be assigned', async () => {
      const w = await world();
      const other = await world();
      const task = await s().tasks.create(w.owner, w.projectId, { title: 'Open' });
      const before = await snapshot(w.org.id);
      const notMember = [{ field: 'assignee_id', message: 'must be a member of this organisation' }];
      await refused(s().tasks.assign(w.owner, task.id, other.owner.userId), 400, 'validation_failed', notMember);
      await refused(s().tasks.assign(w.owner, task.id, 'user_000000000000000000000000'), 400, 'validation_failed', notMember);
      await refused(s().tasks.create(w.owner, w.projectId, { title: 'New', assignee_id: other.owner.userId }), 400, 'validation_failed', notMember);
      expect(await snapshot(w.org.id)).toEqual(before);

      const invited = await s().users.invite(cliActor(w.org.id), { email: 'invitee@example.com', role: 'member' });
      expect(invited.status).toBe('invited');
      expect(await s().tasks.assign(w.owner, task.id, invited.id)).toMatchObject({ assignee_id: invited.id });
      expect((await events(w.org.id, 'task.assigned')).map((e) => e.data.assignee_id)).toEqual([invited.id]);
      const workflow = await s().workflows.create(w.owner, w.projectId, { name: 'Invited', steps: [{ type: 'approval', title: 'OK?', assignee_id: invited.id }] });
      expect(workflow.steps[0]!.assignee_id).toBe(invited.id);
    });

    it("a removed member's open tasks become unassigned; a step configured with them creates an unassigned task and no event", async () => {
      const w = await world();
      const leaver = await w.person('member');
      const workflow = await s().workflows.create(w.owner, w.projectId, {
        name: 'Handover',
        steps: [
          { type: 'task', title: 'Write notes', assignee_id: leaver.userId },
          { type: 'approval', title: 'Notes fine?', assignee_id: leaver.userId },
        ],
      });
      const run = await s().workflows.startRun(w.owner, workflow.id);
      await tick();
      const notesId = await taskOf(w, run.id, 1);
      const loose = await s().tasks.create(w.owner, w.projectId, { title: 'Return laptop', assignee_id: leaver.userId });
      const finished = await s().tasks.create(w.owner, w.projectId, { title: 'Exit interview', assignee_id: leaver.userId });
      await s().tasks.resolve(leaver, finished.id, { action: 'done' });
      const assignedEvents = (await events(w.org.id, 'task.assigned')).length;

      clock.advance(MINUTE);
      await s().users.remove(w.owner, leaver.userId);
      expect(await s().tasks.get(w.owner, notesId)).toMatchObject({ status: 'open', assignee_id: null, updated_at: toIso(clock.now()) });
      expect(await s().tasks.get(w.owner, loose.id)).toMatchObject({ status: 'open', assignee_id: null });
      // A finished task keeps who did it.
      expect(await s().tasks.get(w.owner, finished.id)).toMatchObject({ status: 'done', assignee_id: leaver.userId, completed_by: leaver.userId });

      // The owner finishes the orphaned step; the next step was configured with the removed member.
      await s().tasks.resolve(w.owner, notesId, { action: 'done' });
      await tick();
      const now = await detail(w, run.id);
      expect(now.steps[1]).toMatchObject({ status: 'waiting', assignee_id: leaver.userId, task: { status: 'open', assignee_id: null } });
      expect(await events(w.org.id, 'task.assigned')).toHaveLength(assignedEvents);
      expect(await s().workflows.get(w.owner, workflow.id)).toMatchObject({ steps: [{ assignee_id: leaver.userId }, { assignee_id: leaver.userId }] });
    });
  });

  describe('deletion', () => {
    /** A project with a workflow, a waiting run, a finished run and a plain task. */
    async function populated(w: World, projectId: string) {
      const workflow = await s().workflows.create(w.owner, projectId, {
        name: 'Busy',
        steps: [
          { type: 'task', title: 'First', assignee_id: w.owner.userId },
          { type: 'approval', title: 'Second' },
        ],
      });
      const finished = await s().workflows.startRun(w.owner, workflow.id);
      await tick();
      await s().tasks.resolve(w.owner, await taskOf(w, finished.id, 1), { action: 'cancel' });
      await tick();
      const active = await s().workflows.startRun(w.owner, workflow.id);
      await tick();
      const task = await s().tasks.create(w.owner, projectId, { title: 'Plain' });
      return { workflow, finished, active, task };
    }

    async function rowsOfProject(orgId: string, projectId: string) {
      const d = db();
      const runs = await d.selectFrom('workflow_runs').select('id').where('org_id', '=', orgId).where('project_id', '=', projectId).execute();
      const runIds = runs.map((r) => r.id);
      return {
        projects: (await d.selectFrom('projects').select('id').where('org_id', '=', orgId).where('id', '=', projectId).execute()).length,
        workflows: (await d.selectFrom('workflows').select('id').where('org_id', '=', orgId).where('project_id', '=', projectId).execute()).length,
        runs: runIds.length,
        runSteps: runIds.length === 0 ? 0 : (await d.selectFrom('workflow_run_steps').select('run_id').where('run_id', 'in', runIds).execute()).length,
        tasks: (await d.selectFrom('tasks').select('id').where('org_id', '=', orgId).where('project_id', '=', projectId).execute()).length,
      };
    }

    it('deleting a project destroys its workflows, runs, run steps and tasks together, with no workflow.failed; other projects stay', async () => {
      const w = await world();
      const doomed = await populated(w, w.projectId);
      const other = await s().projects.create(w.owner, { name: 'Survivor' });
      await populated(w, other.id);
      const full = { projects: 1, workflows: 1, runs: 2, runSteps: 4, tasks: 3 };
      expect(await rowsOfProject(w.org.id, w.projectId)).toEqual(full);
      const otherBefore = await rowsOfProject(w.org.id, other.id);
      expect(otherBefore).toEqual(full);
      const failedBefore = await events(w.org.id, 'workflow.failed');

      // The children go in the caller's transaction: rolled back, nothing is gone.
      await expect(
        env.container.store.transaction(async (repos) => {
          await repos.projects.deleteWithChildren(w.org.id, w.projectId);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await rowsOfProject(w.org.id, w.projectId)).toEqual(full);

      await s().projects.remove(w.owner, w.projectId);
      expect(await rowsOfProject(w.org.id, w.projectId)).toEqual({ projects: 0, workflows: 0, runs: 0, runSteps: 0, tasks: 0 });
      const gone = await db().selectFrom('workflow_run_steps').select('run_id').where('run_id', 'in', [doomed.active.id, doomed.finished.id]).execute();
      expect(gone).toEqual([]);
      expect(await events(w.org.id, 'workflow.failed')).toEqual(failedBefore);
      expect((await events(w.org.id)).at(-1)!.event).toBe('project.deleted');
      expect(await rowsOfProject(w.org.id, other.id)).toEqual(otherBefore);
      await refused(s().runs.get(w.owner, doomed.active.id), 404, 'not_found');
      await refused(s().tasks.get(w.owner, doomed.task.id), 404, 'not_found');
      clock.advance(HOUR);
      expect(await tick()).not.toContain(doomed.active.id);
    });

    it('deleting a workflow is 409 while a run is active; afterwards its runs go and their tasks stay as plain tasks', async () => {
      const w = await world();
      const { workflow, finished, active } = await populated(w, w.projectId);
      const before = await snapshot(w.org.id);
      const err = await refused(s().workflows.remove(w.owner, workflow.id), 409, 'conflict');
      expect(err.message).toBe('this workflow has 1 active run; cancel it first');
      expect(await snapshot(w.org.id)).toEqual(before);

      const finishedTask = await taskOf(w, finished.id, 1);
      const activeTask = await taskOf(w, active.id, 1);
      await s().runs.cancel(w.owner, active.id);
      clock.advance(MINUTE);
      await s().workflows.remove(w.owner, workflow.id);
      await refused(s().workflows.get(w.owner, workflow.id), 404, 'not_found');
      await refused(s().runs.get(w.owner, active.id), 404, 'not_found');
      expect(await rowsOfProject(w.org.id, w.projectId)).toEqual({ projects: 1, workflows: 0, runs: 0, runSteps: 0, tasks: 3 });
      for (const id of [finishedTask, activeTask]) {
        expect(await s().tasks.get(w.owner, id)).toMatchObject({ workflow_id: null, run_id: null, run_step: null, status: 'cancelled', updated_at: toIso(clock.now()) });
      }
      expect((await audit(w.org.id)).at(-1)).toMatchObject({ action: 'workflow.deleted', actor_id: w.owner.userId, target_id: workflow.id });
    });
  });

  describe('engine rules', () => {
    async function queuedRun() {
      const w = await world();
      const workflow = await s().workflows.create(w.owner, w.projectId, { name: 'Leased', steps: [{ type: 'task', title: 'Once' }] });
      return { w, run: await s().workflows.startRun(w.owner, workflow.id) };
    }
    const runRow = (orgId: string, runId: string) => db().selectFrom('workflow_runs').selectAll().where('org_id', '=', orgId).where('id', '=', runId).executeTakeFirstOrThrow();
    const taskCount = async (orgId: string) => (await db().selectFrom('tasks').select('id').where('org_id', '=', orgId).execute()).length;

    it('wakes the workers when a run becomes due now (started, task finished), not for a Wait timer in the future', async () => {
      const w = await world();
      const workflow = await s().workflows.create(w.owner, w.projectId, { name: 'Wakes', steps: [{ type: 'wait', duration: '1h' }, { type: 'task', title: 'After' }] });
      let wakes = 0;
      const unsubscribe = env.container.waker.subscribe(() => (wakes += 1));
      // On PostgreSQL the first subscriber opens the LISTEN connection, which wakes once when it is up.
      const relay = env.container.waker as { listening?: () => boolean };
      if (relay.listening) {
        await waitFor('the LISTEN connection', () => relay.listening!());
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      wakes = 0;
      try {
        const run = await s().workflows.startRun(w.owner, workflow.id);
        expect(wakes).toBe(1);
        await tick();
        expect((await runRow(w.org.id, run.id)).wake_at).toBe(clock.now() + HOUR);
        expect(wakes).toBe(1); // parked on a timer: found by the workers' timers, no wake
        clock.advance(HOUR);
        await tick();
        const task = await db().selectFrom('tasks').select('id').where('run_id', '=', run.id).executeTakeFirstOrThrow();
        const before = wakes;
        await s().tasks.resolve(w.owner, task.id, { action: 'done' });
        expect(wakes).toBe(before + 1);
      } finally {
        unsubscribe();
      }
    });

    it('a lease held by another owner prevents advance: advance returns false and nothing changes', async () => {
      const { w, run } = await queuedRun();
      const claimed = await s().runs.claimDue('worker-a', LEASE_MS, 1000);
      const key = claimed.find((k) => k.id === run.id)!;
      expect(key).toEqual({ org_id: w.org.id, id: run.id });
      const leased = await runRow(w.org.id, run.id);
      expect(leased).toMatchObject({ status: 'queued', lease_owner: 'worker-a', lease_expires_at: clock.now() + LEASE_MS });
      const before = await snapshot(w.org.id);

      expect(await s().runs.advance('worker-b', key)).toBe(false);
      expect((await s().runs.claimDue('worker-b', LEASE_MS, 1000)).map((k) => k.id)).not.toContain(run.id);
      expect(await snapshot(w.org.id)).toEqual(before);

      for (const k of claimed) expect(await s().runs.advance('worker-a', k)).toBe(true);
      expect(await runRow(w.org.id, run.id)).toMatchObject({ status: 'waiting', lease_owner: null, lease_expires_at: null, wake_at: null });
      expect(await taskCount(w.org.id)).toBe(1);
    });

    it('an expired lease can be claimed by another owner; the first owner then advances nothing', async () => {
      const { w, run } = await queuedRun();
      const first = await s().runs.claimDue('worker-a', LEASE_MS, 1000);
      expect(first.map((k) => k.id)).toContain(run.id);
      clock.advance(LEASE_MS - 1);
      expect((await s().runs.claimDue('worker-b', LEASE_MS, 1000)).map((k) => k.id)).not.toContain(run.id);
      clock.advance(1);
      const second = await s().runs.claimDue('worker-b', LEASE_MS, 1000);
      const key = second.find((k) => k.id === run.id)!;
      expect(key).toBeDefined();
      expect(await runRow(w.org.id, run.id)).toMatchObject({ lease_owner: 'worker-b', lease_expires_at: clock.now() + LEASE_MS });

      expect(await s().runs.advance('worker-a', key)).toBe(false);
      expect(await taskCount(w.org.id)).toBe(0);
      for (const k of second) expect(await s().runs.advance('worker-b', k)).toBe(true);
      expect(await s().runs.advance('worker-a', key)).toBe(false);
      expect(await taskCount(w.org.id)).toBe(1);
      expect((await detail(w, run.id)).status).toBe('waiting');
    });

    it('claimDue never returns a run waiting for a person', async () => {
      const { w, run } = await queuedRun();
      expect(await tick()).toContain(run.id);
      expect(await runRow(w.org.id, run.id)).toMatchObject({ status: 'waiting', wake_at: null, lease_owner: null });
      for (const later of [0, LEASE_MS, DAY, 60 * DAY]) {
        clock.advance(later);
        const keys = await s().runs.claimDue('worker-a', LEASE_MS, 1000);
        expect(keys.map((k) => k.id)).not.toContain(run.id);
        for (const key of keys) await s().runs.advance('worker-a', key);
      }
      // Done, it is due at once.
      await s().tasks.resolve(w.owner, await taskOf(w, run.id, 1), { action: 'done' });
      expect(await runRow(w.org.id, run.id)).toMatchObject({ wake_at: clock.now() });
      expect(await tick()).toContain(run.id);
      expect((await detail(w, run.id)).status).toBe('completed');
    });
  });

  describe('limits from the configuration', () => {
    let limited: TestEnv;
    beforeAll(async () => {
      limited = await createTestEnv(dialect, { clock, env: { WORKFLOW_MAX_STEPS: '3', WORKFLOW_MAX_ACTIVE_RUNS: '2' } });
    });
    afterAll(async () => limited?.close());

    it('WORKFLOW_MAX_STEPS lowers the number of steps', async () => {
      const w = await worldIn(limited);
      const svc = limited.container.services;
      const three = [1, 2, 3].map((i) => ({ type: 'wait', duration: `${i}m` }));
      const workflow = await svc.workflows.create(w.owner, w.projectId, { name: 'Short', steps: three });
      const err = await refused(svc.workflows.addStep(w.owner, workflow.id, { type: 'wait', duration: '4m' }), 409, 'conflict');
      expect(err.message).toBe('a workflow has at most 3 steps');
      await refused(svc.workflows.create(w.owner, w.projectId, { name: 'Long', steps: [...three, { type: 'wait', duration: '4m' }] }), 409, 'conflict');
      expect((await svc.workflows.get(w.owner, workflow.id)).steps).toHaveLength(3);
      expect(await svc.workflows.listForProject(w.owner, w.projectId)).toHaveLength(1);
    });

    it('WORKFLOW_MAX_ACTIVE_RUNS reached is 409; once a run finishes a new one may start', async () => {
      const w = await worldIn(limited);
      const elsewhere = await worldIn(limited);
      const svc = limited.container.services;
      const workflow = await svc.workflows.create(w.owner, w.projectId, { name: 'Capped', steps: [{ type: 'task', title: 'Do', assignee_id: w.owner.userId }] });
      const first = await svc.workflows.startRun(w.owner, workflow.id);
      await svc.workflows.startRun(w.owner, workflow.id);
      // Queued runs count.
      await refused(svc.workflows.startRun(w.owner, workflow.id), 409, 'conflict');
      await tickOn(limited.container);
      const err = await refused(svc.workflows.startRun(w.owner, workflow.id), 409, 'conflict');
      expect(err.message).toContain('already has 2 active runs');
      expect((await svc.workflows.listRuns(w.owner, workflow.id, { limit: 10 })).items).toHaveLength(2);
      // The cap is per organisation.
      const theirs = await svc.workflows.create(elsewhere.owner, elsewhere.projectId, { name: 'Theirs', steps: [{ type: 'wait', duration: '1m' }] });
      await svc.workflows.startRun(elsewhere.owner, theirs.id);

      const task = (await svc.runs.get(w.owner, first.id)).steps[0]!.task_id!;
      await svc.tasks.resolve(w.owner, task, { action: 'done' });
      // Done but not yet moved on by a worker: the run is still active.
      await refused(svc.workflows.startRun(w.owner, workflow.id), 409, 'conflict');
      await tickOn(limited.container);
      expect((await svc.runs.get(w.owner, first.id)).status).toBe('completed');
      expect(await svc.workflows.startRun(w.owner, workflow.id)).toMatchObject({ status: 'queued' });
    });
  });
});
