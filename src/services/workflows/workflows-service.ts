import type { ProjectRow, RunRow, RunStepRow, WorkflowRow, WorkflowStepDefinition } from '../../db/schema.js';
import type { Repositories } from '../../db/repositories/index.js';
import type { Store } from '../../db/store.js';
import { toPage } from '../../db/repositories/executor.js';
import { errors, fieldError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { toIso, type Clock } from '../../lib/time.js';
import { type Actor } from '../access/actor.js';
import { requireProject, requireScope, requireUnderProject, requireWritableUpFront } from '../access/project-access.js';
import { requireAssigneeSees } from '../access/project-assignees.js';
import { createdChanges, recordAudit } from '../audit/audit-record.js';
import { decodeCursor, pageResult, type PageRequest, type PageResult } from '../shared/pagination.js';
import { runTarget } from './run-transitions.js';
import { toRun, toRunStep, type Run, type RunDetail } from './runs-view.js';
import { checkText, describeStep, formatIsoDuration, optionalLongText, parseSteps, readStep, type StepInput } from './workflow-steps.js';
import { MAX_STEPS } from '../../schemas/workflows.js';
import { requireProjectTakesNewWork, workflowCanRun, WORKFLOW_WITHOUT_STEPS } from './work-rules.js';

export { checkText };

export interface WorkflowStep {
  id: string;
  type: WorkflowStepDefinition['kind'];
  title: string | null;
  assignee_id: string | null;
  due_in_ms: number | null;
  duration_ms: number | null;
}

export interface Workflow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  version: number;
  steps: WorkflowStep[];
  created_at: string;
  updated_at: string;
}

export function toWorkflow(row: WorkflowRow): Workflow {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    description: row.description,
    version: row.version,
    steps: parseSteps(row.steps).map((s) => ({
      id: s.id,
      type: s.kind,
      title: s.title,
      assignee_id: s.assignee_id,
      due_in_ms: s.due_in_ms,
      duration_ms: s.duration_ms,
    })),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** A step as the API reads and writes it (CONTRACT 13): durations as ISO 8601. */
export interface WorkflowStepResource {
  id: string;
  type: WorkflowStepDefinition['kind'];
  title: string | null;
  assignee_id: string | null;
  due_in: string | null;
  duration: string | null;
}

export type WorkflowResource = Omit<Workflow, 'steps'> & { steps: WorkflowStepResource[] };

/** The API's shape of a workflow: what GET returns can be PUT back unchanged. */
export function toWorkflowResource(workflow: Workflow): WorkflowResource {
  return {
    ...workflow,
    steps: workflow.steps.map((s) => ({
      id: s.id,
      type: s.type,
      title: s.title,
      assignee_id: s.assignee_id,
      due_in: s.due_in_ms === null ? null : formatIsoDuration(s.due_in_ms),
      duration: s.duration_ms === null ? null : formatIsoDuration(s.duration_ms),
    })),
  };
}

/** A whole workflow as PUT gives it: a step with an `id` keeps that step's identity, one without is new. */
export interface ReplaceWorkflowInput {
  name: string;
  description?: string | null | undefined;
  steps: readonly (StepInput & { id?: string | undefined })[];
  /** When given, the version the caller read: a workflow changed since is a 409, not a lost update. */
  version?: number | undefined;
}

export interface CreateWorkflowInput {
  name: string;
  description?: string | null | undefined;
  steps?: readonly StepInput[] | undefined;
}

export interface WorkflowLimits {
  /** WORKFLOW_MAX_STEPS: at most 20 (the contract's bound). */
  maxSteps: number;
  /** WORKFLOW_MAX_ACTIVE_RUNS: queued, running and waiting runs per organisation. */
  maxActiveRuns: number;
}

export interface WorkflowsServiceDeps {
  store: Store;
  clock: Clock;
  limits?: Partial<WorkflowLimits>;
}

/** A step as readStep reads it, whose assignee (in a private project) must also be able to see the project. */
async function readProjectStep(repos: Repositories, orgId: string, project: ProjectRow, input: StepInput): Promise<WorkflowStepDefinition> {
  const step = await readStep(repos, orgId, input);
  if (step.assignee_id) await requireAssigneeSees(repos, orgId, project, step.assignee_id, 'assignee_id');
  return step;
}

const workflowTarget = (row: Pick<WorkflowRow, 'id' | 'name'>) => ({ type: 'workflow', id: row.id, label: row.name });

/** The steps as the audit log shows them: one line each, in order. */
const stepSummary = (steps: readonly WorkflowStepDefinition[]) => steps.map(describeStep);

/**
 * Workflows of a project (DASHBOARD 7): built in the dashboard or the CLI (no /v1 API), edited step by
 * step (each edit bumps the version), and run: a run copies the steps, so editing never changes a run
 * already started. Writes need member and above (the projects permission).
 */
export function createWorkflowsService({ store, clock, limits }: WorkflowsServiceDeps) {
  const maxSteps = Math.min(MAX_STEPS, limits?.maxSteps ?? MAX_STEPS);
  const maxActiveRuns = limits?.maxActiveRuns ?? 1000;

  function checkStepCount(count: number): void {
    if (count > maxSteps) throw errors.conflict(`a workflow has at most ${maxSteps} steps`);
  }

  /**
   * Reads the steps in order, a refusal naming its step: "steps[2].duration must be ...". In a private project
   * each assignee must be able to see it (CONTRACT 15).
   */
  async function readSteps(repos: Repositories, orgId: string, project: ProjectRow, inputs: readonly StepInput[]): Promise<WorkflowStepDefinition[]> {
    const steps: WorkflowStepDefinition[] = [];
    for (const [i, step] of inputs.entries()) {
      try {
        steps.push(await readProjectStep(repos, orgId, project, step));
      } catch (err) {
        const details = (err as { details?: { field: string; message: string }[] }).details;
        if (!details) throw err;
        throw errors.validation(details.map((d) => ({ field: `steps[${i}].${d.field}`, message: d.message })));
      }
    }
    return steps;
  }

  /** A workflow the actor may read: 404 when it is unknown or its project is hidden from them. */
  async function requireWorkflow(actor: Actor, workflowId: string): Promise<WorkflowRow> {
    requireScope(actor, 'workflows', 'read');
    const row = await store.repos.workflows.findById(actor.orgId, workflowId);
    if (!row) throw errors.notFound('workflow');
    await requireUnderProject(store.repos, actor, row.project_id, 'workflow', 'workflows', 'read');
    return row;
  }

  /**
   * Read-modify-write of one workflow's steps under its lock; `change` returns the new steps, or the very
   * array it was given to change nothing (no write, no new version, no audit row).
   */
  async function editSteps(
    actor: Actor,
    workflowId: string,
    change: (steps: WorkflowStepDefinition[], repos: Repositories, project: ProjectRow) => Promise<WorkflowStepDefinition[]>,
  ): Promise<Workflow> {
    requireScope(actor, 'workflows', 'update');
    await requireWritableUpFront(store.repos, actor);
    const now = clock.now();
    const row = await store.transaction(async (repos) => {
      const current = await repos.workflows.findByIdForUpdate(actor.orgId, workflowId);
      if (!current) throw errors.notFound('workflow');
      const { project } = await requireProject(repos, actor, current.project_id, 'workflows', 'update', 'workflow');
      const before = parseSteps(current.steps);
      const after = await change(before, repos, project);
      if (after === before) return current;
      const updated = await repos.workflows.update(actor.orgId, workflowId, { steps: JSON.stringify(after), version: current.version + 1, updated_at: now });
      await recordAudit(repos, actor, {
        action: 'workflow.updated',
        target: workflowTarget(current),
        changes: { steps: { old: stepSummary(before), new: stepSummary(after) }, version: { old: current.version, new: current.version + 1 } },
        at: now,
      });
      return updated!;
    });
    return toWorkflow(row);
  }

  return {
    limits: { maxSteps, maxActiveRuns } as const,

    async get(actor: Actor, workflowId: string): Promise<Workflow> {
      return toWorkflow(await requireWorkflow(actor, workflowId));
    },

    async listForProject(actor: Actor, projectId: string): Promise<Workflow[]> {
      await requireProject(store.repos, actor, projectId, 'workflows', 'read');
      const rows = await store.repos.workflows.listForProject(actor.orgId, projectId);
      return rows.map(toWorkflow);
    },

    async create(actor: Actor, projectId: string, input: CreateWorkflowInput): Promise<Workflow> {
      requireScope(actor, 'workflows', 'update');
      await requireWritableUpFront(store.repos, actor);
      const { orgId } = actor;
      checkText(input.name, 'name');
      const description = optionalLongText(input.description, 'description');
      checkStepCount(input.steps?.length ?? 0);
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        const { project } = await requireProject(repos, actor, projectId, 'workflows', 'update');
        requireProjectTakesNewWork(project);
        const steps = await readSteps(repos, orgId, project, input.steps ?? []);
        const inserted = await repos.workflows.insert({
          id: newId('wf'),
          org_id: orgId,
          project_id: projectId,
          name: input.name,
          description,
          steps: JSON.stringify(steps),
          version: 1,
          created_at: now,
          updated_at: now,
        });
        await recordAudit(repos, actor, {
          action: 'workflow.created',
          target: workflowTarget(inserted),
          changes: createdChanges({ name: inserted.name, description, steps: stepSummary(steps) }),
          at: now,
        });
        return inserted;
      });
      return toWorkflow(row);
    },

    /** Renames or re-describes; nothing changes, nothing is written. Steps change through addStep/removeStep. */
    async update(actor: Actor, workflowId: string, input: { name?: string | undefined; description?: string | null | undefined }): Promise<Workflow> {
      requireScope(actor, 'workflows', 'update');
      await requireWritableUpFront(store.repos, actor);
      if (input.name !== undefined) checkText(input.name, 'name');
      const description = input.description === undefined ? undefined : optionalLongText(input.description, 'description');
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        const current = await repos.workflows.findByIdForUpdate(actor.orgId, workflowId);
        if (!current) throw errors.notFound('workflow');
        await requireProject(repos, actor, current.project_id, 'workflows', 'update', 'workflow');
        const next = { name: input.name ?? current.name, description: description === undefined ? current.description : description };
        if (next.name === current.name && next.description === current.description) return current;
        const updated = await repos.workflows.update(actor.orgId, workflowId, { ...next, version: current.version + 1, updated_at: now });
        const changes: Record<string, { old: unknown; new: unknown }> = {};
        if (next.name !== current.name) changes.name = { old: current.name, new: next.name };
        if (next.description !== current.description) changes.description = { old: current.description, new: next.description };
        await recordAudit(repos, actor, { action: 'workflow.updated', target: workflowTarget(updated!), changes, at: now });
        return updated!;
      });
      return toWorkflow(row);
    },

    /** A page of a project's workflows, newest first (404 for a project that is not the organisation's). */
    async listPage(actor: Actor, projectId: string, page: PageRequest): Promise<PageResult<Workflow>> {
      await requireProject(store.repos, actor, projectId, 'workflows', 'read');
      const before = decodeCursor(page.cursor);
      const rows = await store.repos.workflows.pageForProject(actor.orgId, projectId, page.limit + 1, before);
      return pageResult(toPage(rows, page.limit), toWorkflow);
    },

    /**
     * PUT: the whole workflow at once. Steps keep their ids where given (an id must be one of this
     * workflow's steps), new ones get theirs; a PUT that changes nothing writes nothing and keeps the version.
     */
    async replace(actor: Actor, workflowId: string, input: ReplaceWorkflowInput): Promise<Workflow> {
      requireScope(actor, 'workflows', 'update');
      await requireWritableUpFront(store.repos, actor);
      checkText(input.name, 'name');
      const description = optionalLongText(input.description, 'description');
      checkStepCount(input.steps.length);
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        const current = await repos.workflows.findByIdForUpdate(actor.orgId, workflowId);
        if (!current) throw errors.notFound('workflow');
        const { project } = await requireProject(repos, actor, current.project_id, 'workflows', 'update', 'workflow');
        const before = parseSteps(current.steps);
        const known = new Set(before.map((s) => s.id));
        const seen = new Set<string>();
        const idProblems: { field: string; message: string }[] = [];
        input.steps.forEach((step, i) => {
          if (step.id === undefined) return;
          if (!known.has(step.id)) idProblems.push({ field: `steps[${i}].id`, message: 'is not a step of this workflow; leave id out for a new step' });
          else if (seen.has(step.id)) idProblems.push({ field: `steps[${i}].id`, message: 'names a step already given' });
          seen.add(step.id);
        });
        if (idProblems.length > 0) throw errors.validation(idProblems);
        if (input.version !== undefined && input.version !== current.version) {
          throw errors.conflict(`this workflow is at version ${current.version}, not ${input.version}: it changed since it was read; read it again`);
        }
        const read = await readSteps(repos, actor.orgId, project, input.steps);
        const after = read.map((step, i) => (input.steps[i]!.id === undefined ? step : { ...step, id: input.steps[i]!.id! }));
        const changes: Record<string, { old: unknown; new: unknown }> = {};
        if (input.name !== current.name) changes.name = { old: current.name, new: input.name };
        if (description !== current.description) changes.description = { old: current.description, new: description };
        if (JSON.stringify(after) !== JSON.stringify(before)) changes.steps = { old: stepSummary(before), new: stepSummary(after) };
        if (Object.keys(changes).length === 0) return current;
        changes.version = { old: current.version, new: current.version + 1 };
        const updated = await repos.workflows.update(actor.orgId, workflowId, {
          name: input.name,
          description,
          steps: JSON.stringify(after),
          version: current.version + 1,
          updated_at: now,
        });
        await recordAudit(repos, actor, { action: 'workflow.updated', target: workflowTarget(updated!), changes, at: now });
        return updated!;
      });
      return toWorkflow(row);
    },

    /** Appends a step (or inserts it at `position`, 0-based). */
    addStep(actor: Actor, workflowId: string, input: StepInput, position?: number): Promise<Workflow> {
      return editSteps(actor, workflowId, async (steps, repos, project) => {
        checkStepCount(steps.length + 1);
        const step = await readProjectStep(repos, actor.orgId, project, input);
        const at = position === undefined ? steps.length : position;
        if (!Number.isInteger(at) || at < 0 || at > steps.length) throw fieldError('position', `must be between 0 and ${steps.length}`);
        return [...steps.slice(0, at), step, ...steps.slice(at)];
      });
    },

    /** Changes one step in place: same id, same position, the new values judged as a new step's are. */
    replaceStep(actor: Actor, workflowId: string, stepId: string, input: StepInput): Promise<Workflow> {
      return editSteps(actor, workflowId, async (steps, repos, project) => {
        const at = steps.findIndex((s) => s.id === stepId);
        if (at < 0) throw errors.notFound('step');
        const step = { ...(await readProjectStep(repos, actor.orgId, project, input)), id: stepId };
        return steps.map((s, i) => (i === at ? step : s));
      });
    },

    /** Swaps a step with its neighbour; a move past either end changes nothing (and writes nothing). */
    moveStep(actor: Actor, workflowId: string, stepId: string, direction: 'up' | 'down'): Promise<Workflow> {
      return editSteps(actor, workflowId, async (steps) => {
        const from = steps.findIndex((s) => s.id === stepId);
        const target = direction === 'up' ? from - 1 : from + 1;
        if (from < 0) throw errors.notFound('step');
        if (target < 0 || target >= steps.length) return steps;
        const moved = [...steps];
        [moved[from], moved[target]] = [moved[target]!, moved[from]!];
        return moved;
      });
    },

    removeStep(actor: Actor, workflowId: string, stepId: string): Promise<Workflow> {
      return editSteps(actor, workflowId, async (steps) => {
        if (!steps.some((s) => s.id === stepId)) throw errors.notFound('step');
        return steps.filter((s) => s.id !== stepId);
      });
    },

    /**
     * Deletes a workflow and its finished runs; refused (409) while a run is active. Tasks its runs
     * created stay in the project as plain tasks.
     */
    async remove(actor: Actor, workflowId: string): Promise<void> {
      requireScope(actor, 'workflows', 'update');
      await requireWritableUpFront(store.repos, actor);
      const now = clock.now();
      await store.transaction(async (repos) => {
        const current = await repos.workflows.findByIdForUpdate(actor.orgId, workflowId);
        if (!current) throw errors.notFound('workflow');
        await requireProject(repos, actor, current.project_id, 'workflows', 'update', 'workflow');
        const active = await repos.runs.countActiveForWorkflow(actor.orgId, workflowId);
        if (active > 0) throw errors.conflict(`this workflow has ${active} active run${active === 1 ? '' : 's'}; cancel ${active === 1 ? 'it' : 'them'} first`);
        await repos.tasks.detachWorkflow(actor.orgId, workflowId, now);
        await repos.runs.deleteWhere(actor.orgId, { workflowId });
        await repos.workflows.delete(actor.orgId, workflowId);
        await recordAudit(repos, actor, { action: 'workflow.deleted', target: workflowTarget(current), at: now });
      });
    },

    /**
     * "Run workflow": a queued run holding a copy of the steps, for the workers to start. Refused (409)
     * for a workflow without steps and over the organisation's cap of active runs.
     */
    async startRun(actor: Actor, workflowId: string): Promise<RunDetail> {
      requireScope(actor, 'workflows', 'update');
      await requireWritableUpFront(store.repos, actor);
      const { orgId } = actor;
      const now = clock.now();
      const run = await store.transaction(async (repos) => {
        // One organisation's run starts queue behind each other, so the cap holds under concurrency.
        await repos.organizations.lock(orgId);
        const workflow = await repos.workflows.findById(orgId, workflowId);
        if (!workflow) throw errors.notFound('workflow');
        const { project } = await requireProject(repos, actor, workflow.project_id, 'workflows', 'update', 'workflow');
        const steps = parseSteps(workflow.steps);
        if (!workflowCanRun({ steps })) throw errors.conflict(WORKFLOW_WITHOUT_STEPS);
        requireProjectTakesNewWork(project);
        const active = await repos.runs.countActive(orgId);
        if (active >= maxActiveRuns) {
          throw errors.conflict(`this organisation already has ${active} active runs, the most allowed (WORKFLOW_MAX_ACTIVE_RUNS); wait for some to finish or cancel them`);
        }
        const id = newId('run');
        const row: Omit<RunRow, 'seq'> = {
          id,
          org_id: orgId,
          project_id: workflow.project_id,
          workflow_id: workflow.id,
          workflow_name: workflow.name,
          workflow_version: workflow.version,
          number: await repos.runs.nextNumber(orgId, workflow.id),
          status: 'queued',
          current_step: 0,
          step_count: steps.length,
          started_by: actor.type === 'user' ? actor.userId : null,
          started_by_label: actor.type === 'user' ? actor.label : actor.type,
          error: null,
          error_code: null,
          created_at: now,
          started_at: null,
          finished_at: null,
          wake_at: now,
          lease_owner: null,
          lease_expires_at: null,
          updated_at: now,
        };
        const stepRows: RunStepRow[] = steps.map((s, position) => ({
          org_id: orgId,
          run_id: id,
          position,
          step_id: s.id,
          kind: s.kind,
          title: s.title,
          assignee_id: s.assignee_id,
          due_in_ms: s.due_in_ms,
          duration_ms: s.duration_ms,
          status: 'pending',
          outcome: null,
          task_id: null,
          started_at: null,
          finished_at: null,
        }));
        const inserted = await repos.runs.insert(row, stepRows);
        await recordAudit(repos, actor, {
          action: 'workflow_run.started',
          target: runTarget(inserted),
          changes: createdChanges({ workflow_id: workflow.id, workflow_version: workflow.version }),
          at: now,
        });
        return { inserted, stepRows };
      });
      // Every step is pending and has no task yet: the run as `runs.get` would read it, without reading it.
      return { ...toRun(run.inserted), steps: run.stepRows.map((step) => toRunStep(step, undefined)) };
    },

    /** The newest active run, if any: while one is active the workflow cannot be deleted (so doors say so first). */
    async activeRun(actor: Actor, workflowId: string): Promise<Run | null> {
      await requireWorkflow(actor, workflowId);
      const row = await store.repos.runs.newestActiveForWorkflow(actor.orgId, workflowId);
      return row ? toRun(row) : null;
    },

    async listRuns(actor: Actor, workflowId: string, page: PageRequest): Promise<PageResult<Run>> {
      await requireWorkflow(actor, workflowId);
      const before = decodeCursor(page.cursor);
      const rows = await store.repos.runs.listForWorkflow(actor.orgId, workflowId, page.limit + 1, before);
      return pageResult(toPage(rows, page.limit), toRun);
    },
  };
}

export type WorkflowsService = ReturnType<typeof createWorkflowsService>;
