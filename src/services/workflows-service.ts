import { errors, fieldError } from '../errors.js';
import { newId } from '../lib/ids.js';
import { toIso, type Clock } from '../lib/time.js';
import type { WorkflowRow } from '../db/repositories/workflows-repo.js';
import type { Store } from '../db/store.js';
import { recordEvent } from './events.js';

export interface Workflow {
  id: string;
  project_id: string;
  name: string;
  status: string;
  created_at: string;
  updated_at: string;
}

export function toWorkflow(row: WorkflowRow): Workflow {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    status: row.status,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** 1 to 255 code points, like a project name; nothing is trimmed. */
export function checkText(value: string, field: string): string {
  const length = [...value].length;
  if (length < 1 || length > 255) throw fieldError(field, 'must be 1 to 255 characters');
  return value;
}

export interface WorkflowsServiceDeps {
  store: Store;
  clock: Clock;
}

/**
 * Workflows are built in the dashboard (no /v1 API); this service is what it and the CLI call. Each
 * finished run moves the workflow to `completed` or `failed` and emits the matching event.
 */
export function createWorkflowsService({ store, clock }: WorkflowsServiceDeps) {
  async function finishRun(orgId: string, workflowId: string, outcome: { status: 'completed' } | { status: 'failed'; error: string }) {
    const now = clock.now();
    const row = await store.transaction(async (repos) => {
      const updated = await repos.workflows.setStatus(orgId, workflowId, outcome.status, now);
      if (!updated) throw errors.notFound('workflow');
      await recordEvent(repos, {
        orgId,
        type: outcome.status === 'completed' ? 'workflow.completed' : 'workflow.failed',
        data: { workflow_id: updated.id, project_id: updated.project_id, ...outcome },
        occurredAt: now,
      });
      return updated;
    });
    return toWorkflow(row);
  }

  return {
    async get(orgId: string, workflowId: string): Promise<Workflow> {
      const row = await store.repos.workflows.findById(orgId, workflowId);
      if (!row) throw errors.notFound('workflow');
      return toWorkflow(row);
    },

    async create(orgId: string, projectId: string, name: string): Promise<Workflow> {
      checkText(name, 'name');
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        if (!(await repos.projects.findById(orgId, projectId))) throw errors.notFound('project');
        return repos.workflows.insert({
          id: newId('wf'),
          org_id: orgId,
          project_id: projectId,
          name,
          status: 'pending',
          created_at: now,
          updated_at: now,
        });
      });
      return toWorkflow(row);
    },

    /** A run finished successfully: event workflow.completed. */
    completeRun(orgId: string, workflowId: string): Promise<Workflow> {
      return finishRun(orgId, workflowId, { status: 'completed' });
    },

    /** A run ended with an error: event workflow.failed carrying the error. */
    async failRun(orgId: string, workflowId: string, error: string): Promise<Workflow> {
      if (error.length === 0) throw fieldError('error', 'must not be empty');
      return finishRun(orgId, workflowId, { status: 'failed', error });
    },
  };
}

export type WorkflowsService = ReturnType<typeof createWorkflowsService>;
