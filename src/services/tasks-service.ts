import { errors, fieldError } from '../errors.js';
import { newId } from '../lib/ids.js';
import { toIso, type Clock } from '../lib/time.js';
import type { TaskRow } from '../db/repositories/tasks-repo.js';
import type { Store } from '../db/store.js';
import { recordEvent } from './events.js';
import { checkText } from './workflows-service.js';

export interface Task {
  id: string;
  project_id: string;
  workflow_id: string | null;
  title: string;
  assignee_id: string | null;
  created_at: string;
  updated_at: string;
}

export function toTask(row: TaskRow): Task {
  return {
    id: row.id,
    project_id: row.project_id,
    workflow_id: row.workflow_id,
    title: row.title,
    assignee_id: row.assignee_id,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export interface TasksServiceDeps {
  store: Store;
  clock: Clock;
}

/** Tasks are built in the dashboard (no /v1 API); assignment emits task.assigned. */
export function createTasksService({ store, clock }: TasksServiceDeps) {
  return {
    async get(orgId: string, taskId: string): Promise<Task> {
      const row = await store.repos.tasks.findById(orgId, taskId);
      if (!row) throw errors.notFound('task');
      return toTask(row);
    },

    async create(orgId: string, projectId: string, title: string, workflowId?: string): Promise<Task> {
      checkText(title, 'title');
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        if (!(await repos.projects.findById(orgId, projectId))) throw errors.notFound('project');
        if (workflowId !== undefined) {
          const workflow = await repos.workflows.findById(orgId, workflowId);
          if (!workflow || workflow.project_id !== projectId) throw fieldError('workflow_id', 'must be a workflow of the same project');
        }
        return repos.tasks.insert({
          id: newId('task'),
          org_id: orgId,
          project_id: projectId,
          workflow_id: workflowId ?? null,
          title,
          assignee_id: null,
          created_at: now,
          updated_at: now,
        });
      });
      return toTask(row);
    },

    /** Assigns or re-assigns; the same assignee again changes nothing and emits nothing. */
    async assign(orgId: string, taskId: string, assigneeUserId: string): Promise<Task> {
      const now = clock.now();
      const result = await store.transaction(async (repos) => {
        const current = await repos.tasks.findByIdForUpdate(orgId, taskId);
        if (!current) throw errors.notFound('task');
        if (!(await repos.users.findById(orgId, assigneeUserId))) {
          throw fieldError('assignee_id', 'must be a user of this organisation');
        }
        if (current.assignee_id === assigneeUserId) return { row: current, changed: false };
        const updated = await repos.tasks.setAssignee(orgId, taskId, assigneeUserId, now);
        if (!updated) throw errors.notFound('task');
        await recordEvent(repos, {
          orgId,
          type: 'task.assigned',
          data: {
            task_id: updated.id,
            project_id: updated.project_id,
            assignee_id: assigneeUserId,
            previous_assignee_id: current.assignee_id,
          },
          occurredAt: now,
        });
        return { row: updated, changed: true };
      });
      return toTask(result.row);
    },
  };
}

export type TasksService = ReturnType<typeof createTasksService>;
