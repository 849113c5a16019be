import type { RunRow, RunStepRow, TaskRow } from '../../db/schema.js';
import { toIso } from '../../lib/time.js';

const iso = (ms: number | null) => (ms === null ? null : toIso(ms));

/** A run as the doors show it (DASHBOARD 7). */
export interface Run {
  id: string;
  workflow_id: string;
  project_id: string;
  workflow_name: string;
  workflow_version: number;
  /** 1, 2, 3… per workflow ("Run #3"). */
  number: number;
  status: RunRow['status'];
  /** 1-based number of the step the run is at. */
  current_step: number;
  step_count: number;
  started_by: string | null;
  started_by_label: string;
  error: string | null;
  error_code: RunRow['error_code'];
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** When the run's timer (a Wait step) fires, if it has one. */
  wakes_at: string | null;
}

export function toRun(row: RunRow): Run {
  return {
    id: row.id,
    workflow_id: row.workflow_id,
    project_id: row.project_id,
    workflow_name: row.workflow_name,
    workflow_version: row.workflow_version,
    number: row.number ?? 0,
    status: row.status,
    current_step: row.current_step + 1,
    step_count: row.step_count,
    started_by: row.started_by,
    started_by_label: row.started_by_label,
    error: row.error,
    error_code: row.error_code,
    created_at: toIso(row.created_at),
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
    wakes_at: row.status === 'waiting' ? iso(row.wake_at) : null,
  };
}

export interface RunStep {
  /** 1-based. */
  number: number;
  step_id: string;
  type: RunStepRow['kind'];
  title: string | null;
  assignee_id: string | null;
  due_in_ms: number | null;
  duration_ms: number | null;
  status: RunStepRow['status'];
  outcome: string | null;
  task_id: string | null;
  /** The task's state now (its assignee may have changed since the step started). */
  task: { status: TaskRow['status']; assignee_id: string | null; decision: TaskRow['decision']; due_at: string | null } | null;
  started_at: string | null;
  finished_at: string | null;
}

export function toRunStep(row: RunStepRow, task: TaskRow | undefined): RunStep {
  return {
    number: row.position + 1,
    step_id: row.step_id,
    type: row.kind,
    title: row.title,
    assignee_id: row.assignee_id,
    due_in_ms: row.due_in_ms,
    duration_ms: row.duration_ms,
    status: row.status,
    outcome: row.outcome,
    task_id: row.task_id,
    task: task ? { status: task.status, assignee_id: task.assignee_id, decision: task.decision, due_at: iso(task.due_at) } : null,
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
  };
}

export interface RunDetail extends Run {
  steps: RunStep[];
}

/** A run's step as the API shows it (CONTRACT 13): `position` counts from 0, as a workflow's steps do. */
export interface RunStepResource {
  position: number;
  step_id: string;
  type: RunStepRow['kind'];
  title: string | null;
  status: RunStepRow['status'];
  task_id: string | null;
  started_at: string | null;
  finished_at: string | null;
}

/** A run as the API lists it; one run is read with its steps (RunDetailResource). */
export interface RunResource {
  id: string;
  workflow_id: string;
  project_id: string;
  workflow_version: number;
  number: number;
  status: RunRow['status'];
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  error: string | null;
  error_code: RunRow['error_code'];
}

export interface RunDetailResource extends RunResource {
  steps: RunStepResource[];
}

export function toRunResource(run: Run): RunResource {
  return {
    id: run.id,
    workflow_id: run.workflow_id,
    project_id: run.project_id,
    workflow_version: run.workflow_version,
    number: run.number,
    status: run.status,
    created_at: run.created_at,
    started_at: run.started_at,
    finished_at: run.finished_at,
    error: run.error,
    error_code: run.error_code,
  };
}

export function toRunDetailResource(run: RunDetail): RunDetailResource {
  return {
    ...toRunResource(run),
    steps: run.steps.map((s) => ({
      position: s.number - 1,
      step_id: s.step_id,
      type: s.type,
      title: s.title,
      status: s.status,
      task_id: s.task_id,
      started_at: s.started_at,
      finished_at: s.finished_at,
    })),
  };
}
