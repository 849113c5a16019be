import type { RunStatus, StepKind, TaskKind, TaskStatus } from '../../db/schema.js';
import type { Run } from '../../services/workflows/runs-view.js';

/** Words shared by the workflow, run and task pages (DASHBOARD 7): states are never shown as codes alone. */

export const STEP_TYPE_WORDS: Record<StepKind, string> = { task: 'Task', approval: 'Approval', wait: 'Wait' };

export const RUN_STATUS_WORDS: Record<RunStatus, string> = {
  queued: 'Queued',
  running: 'Running',
  waiting: 'Waiting',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

export const TASK_STATUS_WORDS: Record<TaskStatus, string> = { open: 'Open', done: 'Done', cancelled: 'Cancelled' };

export const TASK_KIND_WORDS: Record<TaskKind, string> = { todo: 'To-do', approval: 'Approval' };

export const projectHref = (projectId: string) => `/dashboard/projects/${encodeURIComponent(projectId)}`;
export const workflowHref = (projectId: string, workflowId: string) => `${projectHref(projectId)}/workflows/${encodeURIComponent(workflowId)}`;
export const runHref = (runId: string) => `/dashboard/runs/${encodeURIComponent(runId)}`;

/** Who started a run, by today's name; the label recorded at the start (an e-mail) once they are gone. */
export function startedBy(run: Pick<Run, 'started_by' | 'started_by_label'>, members: ReadonlyMap<string, string>): string {
  if (run.started_by === null) return run.started_by_label === 'cli' ? 'Command line' : run.started_by_label;
  return members.get(run.started_by) ?? run.started_by_label;
}
