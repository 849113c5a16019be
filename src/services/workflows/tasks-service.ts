import type { Repositories } from '../../db/repositories/index.js';
import type { ProjectRow, RunRow, TaskRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { errors, fieldError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { toIso, type Clock } from '../../lib/time.js';
import { type Actor } from '../access/actor.js';
import { projectViewer, requireProject, requireScope, requireUnderProject, requireWritableUpFront } from '../access/project-access.js';
import { requireAssigneeSees } from '../access/project-assignees.js';
import { createdChanges, recordAudit } from '../audit/audit-record.js';
import { personName, recordAssignment, taskTarget, wakeRunAfterTask } from './run-transitions.js';
import { checkText, optionalLongText, requireMember } from './workflow-steps.js';
import { requireWritable } from '../access/workspace.js';
import { requireProjectTakesNewWork } from './work-rules.js';
import { toPage } from '../../db/repositories/executor.js';
import { decodeCursor, pageResult, type PageRequest, type PageResult } from '../shared/pagination.js';
import type { Static } from '@sinclair/typebox';
import type { Task as TaskShape } from '../../schemas/tasks.js';

/**
 * A task as the doors show it: the API's shape (schemas/tasks.ts) and the step of its run, which the
 * dashboard and the CLI name ("step 2 of Run #3") and the API leaves out.
 */
export type Task = Static<typeof TaskShape> & {
  /** 1-based step of the run this task belongs to. */
  run_step: number | null;
}

export function toTask(row: TaskRow): Task {
  return {
    id: row.id,
    project_id: row.project_id,
    workflow_id: row.workflow_id,
    run_id: row.run_id,
    run_step: row.run_step === null ? null : row.run_step + 1,
    title: row.title,
    description: row.description,
    kind: row.kind,
    status: row.status,
    decision: row.decision,
    assignee_id: row.assignee_id,
    due_at: row.due_at === null ? null : toIso(row.due_at),
    completed_by: row.completed_by,
    completed_at: row.completed_at === null ? null : toIso(row.completed_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export interface TaskListFilter {
  /** A member's id, or `me` for the caller. */
  assignee_id?: string | undefined;
  status?: TaskRow['status'] | undefined;
  project_id?: string | undefined;
}

export interface UpdateTaskInput {
  title?: string | undefined;
  /** Empty or null clears it. */
  assignee_id?: string | null | undefined;
  /** Milliseconds; null clears it. */
  due_at?: number | null | undefined;
}

export interface CreateTaskInput {
  title: string;
  description?: string | null | undefined;
  assignee_id?: string | null | undefined;
  due_at?: number | null | undefined;
}

/** How a task is finished: "Mark done" (a to-do), "Approve" / "Reject" (an approval), or cancelled. */
export type TaskResolution = { action: 'done' } | { action: 'approve' } | { action: 'reject'; reason?: string | null } | { action: 'cancel'; reason?: string | null };

export interface TasksServiceDeps {
  store: Store;
  clock: Clock;
}

/** The most tasks a project page lists (open ones first). */
export const PROJECT_TASKS_LIMIT = 200;
export const MY_TASKS_LIMIT = 200;

/**
 * Who may mark a task done, approve or reject it: its assignee (whatever their role) or an admin/owner;
 * the operator always. The doors call it only to hide buttons; `resolve` enforces it.
 */
export function mayFinishTask(actor: Actor, task: { assignee_id: string | null }): boolean {
  return actor.type !== 'user' || actor.role === 'owner' || actor.role === 'admin' || actor.userId === task.assignee_id;
}


/**
 * Tasks (DASHBOARD 7): created alone or by a run's Task and Approval steps. Assigning fires
 * `task.assigned` (not when unchanged or cleared). Only the assignee or an admin finishes or decides a
 * task; finishing a run's task wakes the run in the same transaction.
 */
export function createTasksService({ store, clock }: TasksServiceDeps) {
  /**
   * Runs `work` on a task with its run (if any) locked first, then the task: the same order as the
   * engine and "Cancel run", so a person and a worker never deadlock on one run.
   */
  async function withTaskLocked<T>(actor: Actor, taskId: string, work: (repos: Repositories, task: TaskRow, run: RunRow | undefined) => Promise<T>): Promise<T> {
    return store.transaction(async (repos) => {
      const peek = await repos.tasks.findById(actor.orgId, taskId);
      if (!peek) throw errors.notFound('task');
      const run = peek.run_id ? await repos.runs.findByIdForUpdate(actor.orgId, peek.run_id) : undefined;
      const task = await repos.tasks.findByIdForUpdate(actor.orgId, taskId);
      if (!task) throw errors.notFound('task');
      return work(repos, task, run);
    });
  }

  return {
    async get(actor: Actor, taskId: string): Promise<Task> {
      requireScope(actor, 'tasks', 'read');
      const row = await store.repos.tasks.findById(actor.orgId, taskId);
      if (!row) throw errors.notFound('task');
      await requireUnderProject(store.repos, actor, row.project_id, 'task', 'tasks', 'read');
      return toTask(row);
    },

    async listForProject(actor: Actor, projectId: string): Promise<Task[]> {
      await requireProject(store.repos, actor, projectId, 'tasks', 'read');
      return (await store.repos.tasks.listForProject(actor.orgId, projectId, PROJECT_TASKS_LIMIT)).map(toTask);
    },

    /** The overview's "Your tasks": counts only, without reading the tasks. */
    async countMine(actor: Actor): Promise<{ open: number; overdue: number }> {
      if (actor.type !== 'user') return { open: 0, overdue: 0 };
      return store.repos.tasks.countOpenForAssignee(actor.orgId, actor.userId, clock.now(), projectViewer(actor));
    },

    /** "My tasks": the signed-in user's open tasks, oldest first. */
    async listMine(actor: Actor): Promise<Task[]> {
      if (actor.type !== 'user') return [];
      return (await store.repos.tasks.listOpenForAssignee(actor.orgId, actor.userId, MY_TASKS_LIMIT, projectViewer(actor))).map(toTask);
    },

    /** "New task": an open to-do in the project, assigned at once when an assignee is given. */
    async create(actor: Actor, projectId: string, input: CreateTaskInput): Promise<Task> {
      requireScope(actor, 'tasks', 'update');
      await requireWritableUpFront(store.repos, actor);
      const { orgId } = actor;
      checkText(input.title, 'title');
      const description = optionalLongText(input.description, 'description');
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        const { project } = await requireProject(repos, actor, projectId, 'tasks', 'update');
        requireProjectTakesNewWork(project);
        const assignee = input.assignee_id || null;
        if (assignee !== null) await requireAssignee(repos, orgId, project, assignee, 'assignee_id');
        const task = await repos.tasks.insert({
          id: newId('task'),
          org_id: orgId,
          project_id: projectId,
          workflow_id: null,
          run_id: null,
          run_step: null,
          title: input.title,
          description,
          kind: 'todo',
          status: 'open',
          decision: null,
          assignee_id: assignee,
          due_at: input.due_at ?? null,
          completed_by: null,
          completed_at: null,
          created_at: now,
          updated_at: now,
        });
        await recordAudit(repos, actor, {
          action: 'task.created',
          target: taskTarget(task),
          changes: createdChanges({ title: task.title, description, due_at: input.due_at ? toIso(input.due_at) : null }),
          at: now,
        });
        if (assignee !== null) await recordAssignment(repos, actor, task, null, now);
        return task;
      });
      return toTask(row);
    },

    /**
     * A page of the organisation's tasks, newest first: `assignee_id` (`me` is the caller), `status` and
     * `project_id` narrow it.
     */
    async list(actor: Actor, filter: TaskListFilter, page: PageRequest): Promise<PageResult<Task>> {
      requireScope(actor, 'tasks', 'read');
      let assigneeId = filter.assignee_id;
      if (assigneeId === 'me') {
        if (actor.type !== 'user') throw fieldError('assignee_id', '"me" names the caller, and an operator is no member');
        assigneeId = actor.userId;
      }
      const before = decodeCursor(page.cursor);
      const rows = await store.repos.tasks.page(
        actor.orgId,
        { assigneeId, status: filter.status, projectId: filter.project_id, viewer: projectViewer(actor) },
        page.limit + 1,
        before,
      );
      return pageResult(toPage(rows, page.limit), toTask);
    },

    /** A page of one project's tasks, newest first (404 for a project that is not the organisation's). */
    async listForProjectPage(actor: Actor, projectId: string, page: PageRequest): Promise<PageResult<Task>> {
      await requireProject(store.repos, actor, projectId, 'tasks', 'read');
      const before = decodeCursor(page.cursor);
      const rows = await store.repos.tasks.page(actor.orgId, { projectId }, page.limit + 1, before);
      return pageResult(toPage(rows, page.limit), toTask);
    },

    /**
     * PATCH: changes the title, the due date and the assignee of an open task in one transaction (a finished
     * task is 409). A new assignee fires `task.assigned` exactly as "Assign" does; a call that changes
     * nothing writes nothing.
     */
    async update(actor: Actor, taskId: string, input: UpdateTaskInput): Promise<Task> {
      requireScope(actor, 'tasks', 'update');
      await requireWritableUpFront(store.repos, actor);
      if (input.title !== undefined) checkText(input.title, 'title');
      const now = clock.now();
      const row = await withTaskLocked(actor, taskId, async (repos, current) => {
        const { project } = await requireProject(repos, actor, current.project_id, 'tasks', 'update', 'task');
        const assignee = input.assignee_id === undefined ? undefined : input.assignee_id || null;
        if (assignee) await requireAssignee(repos, actor.orgId, project, assignee, 'assignee_id');
        if (current.status !== 'open') throw errors.conflict(`this task is ${current.status}; only open tasks can be changed`);
        const changes: Record<string, { old: unknown; new: unknown }> = {};
        if (input.title !== undefined && input.title !== current.title) changes.title = { old: current.title, new: input.title };
        if (input.due_at !== undefined && input.due_at !== current.due_at) {
          changes.due_at = { old: current.due_at === null ? null : toIso(current.due_at), new: input.due_at === null ? null : toIso(input.due_at) };
        }
        const reassigned = assignee !== undefined && assignee !== current.assignee_id;
        if (Object.keys(changes).length === 0 && !reassigned) return current;
        const updated = (await repos.tasks.update(actor.orgId, taskId, {
          ...(changes.title ? { title: input.title } : {}),
          ...(changes.due_at ? { due_at: input.due_at } : {}),
          ...(reassigned ? { assignee_id: assignee } : {}),
          updated_at: now,
        }))!;
        if (Object.keys(changes).length > 0) await recordAudit(repos, actor, { action: 'task.updated', target: taskTarget(updated), changes, at: now });
        if (reassigned) await recordAssignment(repos, actor, updated, current.assignee_id, now);
        return updated;
      });
      return toTask(row);
    },

    /**
     * Assigns, reassigns or (null) clears the assignee of an open task. `task.assigned` fires for a new
     * assignee only: the same assignee again changes nothing, clearing writes an audit row but no event.
     */
    async assign(actor: Actor, taskId: string, assigneeId: string | null): Promise<Task> {
      requireScope(actor, 'tasks', 'update');
      await requireWritableUpFront(store.repos, actor);
      const now = clock.now();
      const row = await withTaskLocked(actor, taskId, async (repos, current) => {
        const { project } = await requireProject(repos, actor, current.project_id, 'tasks', 'update', 'task');
        if (assigneeId !== null) await requireAssignee(repos, actor.orgId, project, assigneeId, 'assignee_id');
        if (current.status !== 'open') throw errors.conflict(`this task is ${current.status}; only open tasks can be assigned`);
        if (current.assignee_id === assigneeId) return current;
        const updated = (await repos.tasks.update(actor.orgId, taskId, { assignee_id: assigneeId, updated_at: now }))!;
        await recordAssignment(repos, actor, updated, current.assignee_id, now);
        return updated;
      });
      return toTask(row);
    },

    /**
     * Finishes an open task: done (a to-do), approved or rejected (an approval) by its assignee or an
     * admin; cancelled by a member or above. A run's task wakes its run: the next step starts, or the run
     * fails (`approval_rejected`, `task_cancelled`).
     */
    async resolve(actor: Actor, taskId: string, resolution: TaskResolution): Promise<Task> {
      const action = resolution.action === 'cancel' ? 'update' : 'finish';
      requireScope(actor, 'tasks', action);
      const now = clock.now();
      const row = await withTaskLocked(actor, taskId, async (repos, current, run) => {
        // Cancelling is a change to the project's work; finishing is the assignee's (or an admin's) whatever their rights.
        await requireUnderProject(repos, actor, current.project_id, 'task', 'tasks', action === 'update' ? 'update' : 'read');
        if (resolution.action !== 'cancel') {
          if (!mayFinishTask(actor, current)) throw errors.forbidden('only the assignee or an admin can finish this task');
        }
        // Who may finish it depends on the task, so the read-only refusal follows that 403 (CONTRACT 1's
        // order) and precedes the reason's 400.
        await requireWritable(repos, actor);
        const reason = 'reason' in resolution ? optionalLongText(resolution.reason, 'reason') : null;
        if (current.status !== 'open') throw errors.conflict(`this task is already ${current.status === 'done' ? 'done' : 'cancelled'}`);
        const approval = current.kind === 'approval';
        if (resolution.action === 'done' && approval) throw errors.conflict('this task is an approval: approve or reject it');
        if ((resolution.action === 'approve' || resolution.action === 'reject') && !approval) throw errors.conflict('this task is not an approval: mark it done');
        const status = resolution.action === 'cancel' ? 'cancelled' : 'done';
        const decision = resolution.action === 'approve' ? 'approved' : resolution.action === 'reject' ? 'rejected' : null;
        const updated = (await repos.tasks.update(actor.orgId, taskId, {
          status,
          decision,
          completed_by: actor.type === 'user' ? actor.userId : null,
          completed_at: now,
          updated_at: now,
        }))!;
        const changes: Record<string, { old: unknown; new: unknown }> = { status: { old: 'open', new: status } };
        if (decision) changes.decision = { old: null, new: decision };
        if (reason) changes.reason = { old: null, new: reason };
        await recordAudit(repos, actor, { action: status === 'cancelled' ? 'task.cancelled' : 'task.completed', target: taskTarget(updated), changes, at: now });
        await wakeRunAfterTask(repos, run, updated, await personName(repos, actor), reason, now);
        return updated;
      });
      return toTask(row);
    },
  };
}

export type TasksService = ReturnType<typeof createTasksService>;

/** An assignee must be a member and, in a private project, able to see it (CONTRACT 15). */
async function requireAssignee(repos: Repositories, orgId: string, project: ProjectRow, userId: string, field: string): Promise<void> {
  await requireMember(repos, orgId, userId, field);
  await requireAssigneeSees(repos, orgId, project, userId, field);
}

/** Due dates are given as a date ("YYYY-MM-DD", due at the end of that UTC day) or a full time. */
export function readDueDate(text: string, field = 'due_at'): number | null {
  if (text === '') return null;
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const ms = day ? Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3]), 23, 59, 59, 999) : Date.parse(text);
  const valid = Number.isFinite(ms) && (!day || new Date(ms).getUTCDate() === Number(day[3]));
  if (!valid) throw fieldError(field, 'must be a date such as 2026-12-31');
  return ms;
}
