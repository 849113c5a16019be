import type { Repositories } from '../../db/repositories/index.js';
import type { RunErrorCode, RunRow, RunStepRow, TaskRow } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { toIso } from '../../lib/time.js';
import { unseeingUsers } from '../access/project-assignees.js';
import { systemActor, type Actor } from '../access/actor.js';
import { createdChanges, recordAudit } from '../audit/audit-record.js';
import { recordEvent } from '../events/outbox.js';

/**
 * The run state machine, shared by the doors' services (a person finishes a task, cancels a run) and the
 * engine (a worker advances a due run). Every function runs inside the caller's transaction with the run
 * row locked, so each transition commits exactly once together with its task, event and audit rows.
 */

export const ACTIVE_RUN_STATUSES: readonly RunRow['status'][] = ['queued', 'running', 'waiting'];

export const isActiveRun = (run: Pick<RunRow, 'status'>) => ACTIVE_RUN_STATUSES.includes(run.status);

export const taskTarget = (task: Pick<TaskRow, 'id' | 'title'>) => ({ type: 'task', id: task.id, label: task.title });
export const runTarget = (run: Pick<RunRow, 'id' | 'workflow_name'>) => ({ type: 'workflow_run', id: run.id, label: run.workflow_name });

/** `task.assigned` data (DASHBOARD 7). `assigned_by` is the user who assigned it; null for the service or the CLI. */
export function taskAssignedData(task: TaskRow, previousAssigneeId: string | null, actor: Actor): Record<string, unknown> {
  return {
    task_id: task.id,
    project_id: task.project_id,
    title: task.title,
    assignee_id: task.assignee_id,
    previous_assignee_id: previousAssigneeId,
    assigned_by: actor.type === 'user' ? actor.userId : null,
    workflow_id: task.workflow_id,
    run_id: task.run_id,
    due_at: task.due_at === null ? null : toIso(task.due_at),
  };
}

/**
 * A task's assignee changed: its audit row, and `task.assigned` when it now has an assignee (clearing the
 * assignee fires no event).
 */
export async function recordAssignment(repos: Repositories, actor: Actor, task: TaskRow, previousAssigneeId: string | null, at: number): Promise<void> {
  if (task.assignee_id !== null) {
    await recordEvent(repos, { orgId: task.org_id, type: 'task.assigned', data: taskAssignedData(task, previousAssigneeId, actor), occurredAt: at });
  }
  await recordAudit(repos, actor, {
    action: 'task.assigned',
    target: taskTarget(task),
    changes: { assignee_id: { old: previousAssigneeId, new: task.assignee_id } },
    at,
  });
}

/** The data of `workflow.completed` / `workflow.failed` (DASHBOARD 7). */
function runEventData(run: RunRow): Record<string, unknown> {
  const data: Record<string, unknown> = {
    workflow_id: run.workflow_id,
    project_id: run.project_id,
    run_id: run.id,
    status: run.status === 'completed' ? 'completed' : 'failed',
    started_at: run.started_at === null ? null : toIso(run.started_at),
    finished_at: run.finished_at === null ? null : toIso(run.finished_at),
  };
  if (run.status !== 'completed') {
    data.error = run.error;
    data.error_code = run.error_code;
  }
  return data;
}

/**
 * Ends a run: completed after its last step, or failed (a rejected approval, a cancelled task) or
 * cancelled ("Cancel run"), each with its event and audit row. Open tasks of a run that ends early are
 * cancelled with it.
 */
export async function finishRun(
  repos: Repositories,
  actor: Actor,
  run: RunRow,
  outcome: { status: 'completed' } | { status: 'failed' | 'cancelled'; error: string; errorCode: RunErrorCode },
  at: number,
): Promise<RunRow> {
  const finished: RunRow = {
    ...run,
    status: outcome.status,
    error: outcome.status === 'completed' ? null : outcome.error,
    error_code: outcome.status === 'completed' ? null : outcome.errorCode,
    finished_at: at,
    wake_at: null,
    lease_owner: null,
    lease_expires_at: null,
    updated_at: at,
  };
  await repos.runs.update(run.org_id, run.id, {
    status: finished.status,
    error: finished.error,
    error_code: finished.error_code,
    finished_at: at,
    wake_at: null,
    lease_owner: null,
    lease_expires_at: null,
    updated_at: at,
  });
  if (outcome.status !== 'completed') await repos.tasks.cancelOpenForRun(run.org_id, run.id, at);
  await recordEvent(repos, {
    orgId: run.org_id,
    type: outcome.status === 'completed' ? 'workflow.completed' : 'workflow.failed',
    data: runEventData(finished),
    occurredAt: at,
  });
  await recordAudit(repos, actor, {
    action: outcome.status === 'completed' ? 'workflow_run.completed' : 'workflow_run.failed',
    target: runTarget(run),
    changes: { status: { old: run.status, new: finished.status }, ...(finished.error_code ? { error_code: { old: null, new: finished.error_code } } : {}) },
    at,
  });
  return finished;
}

async function assigneeStillSees(repos: Repositories, run: RunRow, userId: string): Promise<boolean> {
  if (!(await repos.users.findById(run.org_id, userId))) return false;
  const project = await repos.projects.findById(run.org_id, run.project_id);
  if (!project) return false;
  return project.visibility !== 'private' || (await unseeingUsers(repos, run.org_id, project.id, [userId])).length === 0;
}

/** Creates the task of a Task or Approval step, assigned as configured (firing `task.assigned`). */
async function startTaskStep(repos: Repositories, run: RunRow, step: RunStepRow, at: number): Promise<TaskRow> {
  const system = systemActor(run.org_id);
  // The configured assignee may have been removed since the step was written, or may no longer see the
  // project (it went private, or they left its collaborators): the task starts unassigned.
  const assignee = step.assignee_id && (await assigneeStillSees(repos, run, step.assignee_id)) ? step.assignee_id : null;
  const task = await repos.tasks.insert({
    id: newId('task'),
    org_id: run.org_id,
    project_id: run.project_id,
    workflow_id: run.workflow_id,
    run_id: run.id,
    run_step: step.position,
    title: step.title ?? '',
    description: null,
    kind: step.kind === 'approval' ? 'approval' : 'todo',
    status: 'open',
    decision: null,
    assignee_id: assignee,
    due_at: step.due_in_ms === null ? null : at + step.due_in_ms,
    completed_by: null,
    completed_at: null,
    created_at: at,
    updated_at: at,
  });
  await recordAudit(repos, system, {
    action: 'task.created',
    target: taskTarget(task),
    changes: createdChanges({ title: task.title, kind: task.kind, run_id: run.id }),
    at,
  });
  if (assignee !== null) await recordAssignment(repos, system, task, null, at);
  return task;
}

/**
 * Moves a due run forward as far as it can go now: starts its first step, finishes an elapsed Wait, moves
 * past a finished step, starts the next, and ends the run after the last step or a failed one. Stops
 * where the run must wait (a task for a person, a timer). Returns the run as it now stands.
 */
export async function advanceRun(repos: Repositories, leased: RunRow, at: number): Promise<RunRow> {
  const { org_id: orgId, id: runId } = leased;
  let run: RunRow = leased;
  const system = systemActor(orgId);
  if (run.status === 'queued') {
    run = { ...run, status: 'running', started_at: at, current_step: 0 };
    await repos.runs.update(orgId, runId, { status: 'running', started_at: at, current_step: 0, updated_at: at });
  }
  // One read of the steps (at most 20); each pass either returns or moves past one step.
  const steps = await repos.runs.steps(orgId, runId);
  for (let guard = 0; guard <= run.step_count + 1; guard++) {
    const step = steps[run.current_step];
    if (!step) throw new Error(`run ${runId} has no step ${run.current_step}`);
    if (step.status === 'pending') {
      if (step.kind === 'wait') {
        const due = at + (step.duration_ms ?? 0);
        await repos.runs.updateStep(orgId, runId, step.position, { status: 'waiting', started_at: at });
        return park(repos, run, { status: 'waiting', wake_at: due }, at);
      }
      const task = await startTaskStep(repos, run, step, at);
      await repos.runs.updateStep(orgId, runId, step.position, { status: 'waiting', started_at: at, task_id: task.id });
      return park(repos, run, { status: 'waiting', wake_at: null }, at);
    }
    if (step.status === 'waiting') {
      if (step.kind !== 'wait') return park(repos, run, { status: 'waiting', wake_at: null }, at);
      const due = (step.started_at ?? at) + (step.duration_ms ?? 0);
      if (due > at) return park(repos, run, { status: 'waiting', wake_at: due }, at);
      await repos.runs.updateStep(orgId, runId, step.position, { status: 'completed', outcome: 'elapsed', finished_at: at });
      step.status = 'completed';
    }
    if (step.status === 'failed') {
      return finishRun(repos, system, run, { status: 'failed', error: run.error ?? 'a step failed', errorCode: run.error_code ?? 'task_cancelled' }, at);
    }
    // completed
    if (run.current_step + 1 >= run.step_count) return finishRun(repos, system, run, { status: 'completed' }, at);
    run = { ...run, current_step: run.current_step + 1, status: 'running' };
    await repos.runs.update(orgId, runId, { current_step: run.current_step, status: 'running', updated_at: at });
  }
  throw new Error(`run ${runId} did not settle`);
}

/** Leaves the run waiting (for a person, or until `wake_at`) and gives up the worker's lease. */
async function park(repos: Repositories, run: RunRow, next: { status: RunRow['status']; wake_at: number | null }, at: number): Promise<RunRow> {
  const changes = { ...next, current_step: run.current_step, lease_owner: null, lease_expires_at: null, updated_at: at };
  await repos.runs.update(run.org_id, run.id, changes);
  return { ...run, ...changes };
}

/**
 * Who did something, as a run's error sentence names them (DASHBOARD 1: names, not e-mails): the person's
 * name when they have one, read when the row is written, so the sentence stays true after a rename.
 */
export async function personName(repos: Repositories, actor: Actor): Promise<string> {
  if (actor.type === 'cli') return 'an operator (command line)';
  if (actor.type !== 'user') return 'the service';
  const user = await repos.users.findById(actor.orgId, actor.userId);
  return user?.name ?? actor.label;
}

/**
 * A run step's task was finished by a person: the step records the outcome and the run is put in the
 * workers' queue, in the same transaction as the task's change (the caller holds the run's lock). A
 * rejected approval or a cancelled task also records why the run will fail.
 */
export async function wakeRunAfterTask(
  repos: Repositories,
  run: RunRow | undefined,
  task: TaskRow,
  finishedBy: string,
  reason: string | null,
  at: number,
): Promise<void> {
  if (!run || !isActiveRun(run) || task.run_step === null) return;
  const step = await repos.runs.step(run.org_id, run.id, task.run_step);
  if (!step || step.status !== 'waiting' || step.task_id !== task.id) return;
  const failed = task.status === 'cancelled' || task.decision === 'rejected';
  const outcome = task.status === 'cancelled' ? 'cancelled' : (task.decision ?? 'done');
  await repos.runs.updateStep(run.org_id, run.id, step.position, { status: failed ? 'failed' : 'completed', outcome, finished_at: at });
  const because = reason ? `: ${reason}` : '';
  const failure: Pick<RunRow, 'error' | 'error_code'> =
    task.decision === 'rejected'
      ? { error: `Approval "${task.title}" was rejected by ${finishedBy}${because}`, error_code: 'approval_rejected' }
      : task.status === 'cancelled'
        ? { error: `Task "${task.title}" was cancelled by ${finishedBy}${because}`, error_code: 'task_cancelled' }
        : { error: null, error_code: null };
  await repos.runs.update(run.org_id, run.id, { status: 'running', wake_at: at, ...failure, updated_at: at });
}
