import type { ProjectStatus } from '../../db/schema.js';
import { errors } from '../../errors.js';

/**
 * The rules of new work in a project, one function each: the services enforce them, the dashboard asks
 * them before it offers "Create workflow", "Create task" or "Run workflow".
 */

export const PROJECT_ARCHIVED = 'this project is archived; unarchive it before adding workflows, tasks or runs';
export const WORKFLOW_WITHOUT_STEPS = 'this workflow has no steps; add a step before running it';

/** An archived project keeps its data and takes no new workflows, tasks or runs (like an archived repository). */
export function projectTakesNewWork(project: { status: ProjectStatus }): boolean {
  return project.status !== 'archived';
}

export function requireProjectTakesNewWork(project: { status: ProjectStatus }): void {
  if (!projectTakesNewWork(project)) throw errors.conflict(PROJECT_ARCHIVED);
}

/** A run copies the steps; a workflow without any has nothing to run. */
export function workflowCanRun(workflow: { steps: readonly unknown[] }): boolean {
  return workflow.steps.length > 0;
}
