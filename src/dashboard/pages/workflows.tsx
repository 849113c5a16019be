import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { errors } from '../../errors.js';
import type { PageResult } from '../../services/shared/pagination.js';
import type { Project } from '../../schemas/projects.js';
import { runName } from '../../services/shared/run-name.js';
import type { Run } from '../../services/workflows/runs-view.js';
import { formatStepDuration, type StepInput } from '../../services/workflows/workflow-steps.js';
import type { Workflow, WorkflowStep } from '../../services/workflows/workflows-service.js';
import { projectTakesNewWork, workflowCanRun } from '../../services/workflows/work-rules.js';
import { sentence } from '../../lib/text.js';
import type { AppDeps } from '../../http/app-deps.js';
import { memberLabel, memberMap, type MemberOption } from '../members-options.js';
import { assigneeOptions, authorizeProjectChange, offered } from '../project-rights.js';
import type { ProjectRights } from '../../services/projects/projects-service.js';
import { pageContext, pageRefusal, pathId, seeOther, sendPage, type PageContext } from '../context.js';
import { formErrors } from '../form-validation.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { ActionForm, NoValue, CsrfField, DangerItem, DangerLink, DangerZone, Disclosure, errorFor, Field, Select, Table, TextArea, Time, type FormError } from '../views/components.js';
import { Layout } from '../views/layout.js';
import { projectHref, RUN_STATUS_WORDS, runHref, startedBy, STEP_TYPE_WORDS, workflowHref } from '../views/workflow-views.js';

const PROJECTS = '/dashboard/projects';
/** Runs per page of the "Runs" table, newest first. */
const RUNS_PAGE_SIZE = 20;

const WorkflowParams = Type.Object({ id: Type.String({ maxLength: 128 }), wf: Type.String({ maxLength: 128 }) });
const StepParams = Type.Object({ id: Type.String({ maxLength: 128 }), wf: Type.String({ maxLength: 128 }), step: Type.String({ maxLength: 128 }) });
const WorkflowQuery = Type.Object({ cursor: Type.Optional(Type.String({ maxLength: 64 })) }, { additionalProperties: false });
const MoveForm = FormBody({ direction: Type.Union([Type.Literal('up'), Type.Literal('down')]) });

// Bounds only: the service judges every value (and names the field it refuses) whichever door it came through.
const AddStepForm = FormBody({ type: FormText(32), title: FormText(1024), assignee_id: FormText(128), due_in: FormText(64), duration: FormText(64) });
const SaveWorkflowForm = FormBody({ name: FormText(1024), description: FormText(20_000) });

/** The service's field names are the form's field ids; these are their labels in the error list. */
const STEP_LABELS = { type: 'Step type', title: 'Title', assignee_id: 'Assignee', due_in: 'Due in', duration: 'Duration' };
const WORKFLOW_LABELS = { name: 'Name', description: 'Description' };

const STEP_TYPE_OPTIONS = (['task', 'approval', 'wait'] as const).map((value) => ({ value, label: STEP_TYPE_WORDS[value] }));

interface StepFormValues {
  type: string;
  title: string;
  assignee_id: string;
  due_in: string;
  duration: string;
}

const EMPTY_STEP: StepFormValues = { type: 'task', title: '', assignee_id: '', due_in: '', duration: '' };

/** The step's timing in words: a Task's due time after it starts, a Wait's length. */
function timing(step: WorkflowStep): string {
  if (step.type === 'wait') return formatStepDuration(step.duration_ms ?? 0);
  if (step.type === 'task' && step.due_in_ms !== null) return `Due ${formatStepDuration(step.due_in_ms)} after it starts`;
  return '—';
}

/** A step as people name it: "Step 2, Approval: Sign-off". */
const stepName = (step: WorkflowStep, index: number) => `Step ${index + 1}, ${STEP_TYPE_WORDS[step.type]}${step.title ? `: ${step.title}` : ''}`;

function StepsTable({ workflow, members, csrf, canWrite }: { workflow: Workflow; members: ReadonlyMap<string, string>; csrf: string; canWrite: boolean }) {
  const headers = ['Step', 'Type', 'Title', 'Assignee', 'Due / wait', ...(canWrite ? ['Actions'] : [])];
  const stepHref = (step: WorkflowStep) => `${workflowHref(workflow.project_id, workflow.id)}/steps/${encodeURIComponent(step.id)}`;
  return (
    <Table caption="Steps" headers={headers} empty="No steps yet. A workflow needs at least one step to run.">
      {workflow.steps.map((step, i) => (
        <tr>
          <td>{i + 1}</td>
          <td>{STEP_TYPE_WORDS[step.type]}</td>
          <td>{step.title ?? <NoValue />}</td>
          <td>{step.type === 'wait' ? <NoValue /> : memberLabel(members, step.assignee_id)}</td>
          <td>{timing(step)}</td>
          {canWrite ? (
            <td>
              {/* One click each: they edit the definition only; runs already started keep their own copy of the steps. */}
              <div class="row-actions">
                <a href={`${stepHref(step)}/edit`} aria-label={`Edit step ${i + 1}`}>
                  Edit
                </a>
                {i > 0 ? <ActionForm action={`${stepHref(step)}/move`} csrf={csrf} label="Move up" hidden={{ direction: 'up' }} secondary ariaLabel={`Move up: ${stepName(step, i)}`} /> : null}
                {i < workflow.steps.length - 1 ? (
                  <ActionForm action={`${stepHref(step)}/move`} csrf={csrf} label="Move down" hidden={{ direction: 'down' }} secondary ariaLabel={`Move down: ${stepName(step, i)}`} />
                ) : null}
                <ActionForm action={`${stepHref(step)}/remove`} csrf={csrf} label="Remove step" secondary />
              </div>
            </td>
          ) : null}
        </tr>
      ))}
    </Table>
  );
}

function AddStepSection({ workflow, options, values, errors: problems, csrf, maxSteps }: { workflow: Workflow; options: readonly MemberOption[]; values: StepFormValues; errors: readonly FormError[]; csrf: string; maxSteps: number }) {
  return (
    <section aria-labelledby="add-step-title" class="panel">
      <h2 id="add-step-title">Add step</h2>
      <p class="hint">
        Steps run in order, up to {maxSteps}. A Task or Approval step creates a task for its assignee (the approver, for an Approval) and waits
        until it is finished; a Wait step waits for its duration.
      </p>
      {/* "Run workflow" is the page's primary button once there is a step to run; until then, this is. */}
      <StepFields action={`${workflowHref(workflow.project_id, workflow.id)}/steps`} options={options} values={values} errors={problems} csrf={csrf} button="Add step" secondary={workflow.steps.length > 0} />
    </section>
  );
}

/** The fields of a step, for adding one and for editing one. */
function StepFields({ action, options, values, errors: problems, csrf, button, secondary }: { action: string; options: readonly MemberOption[]; values: StepFormValues; errors: readonly FormError[]; csrf: string; button: string; secondary?: boolean }) {
  const assignees = [{ value: '', label: 'Unassigned' }, ...options.map((o) => ({ value: o.value, label: o.label }))];
  return (
      <form method="post" action={action}>
        <CsrfField token={csrf} />
        <Select id="type" label="Step type" options={STEP_TYPE_OPTIONS} value={values.type} error={errorFor(problems, 'type')} />
        <Field id="title" label="Title" value={values.title} error={errorFor(problems, 'title')} hint="Task and Approval steps: what the task is called. Wait steps: an optional label." maxLength={255} />
        <Select id="assignee_id" label="Assignee" options={assignees} value={values.assignee_id} error={errorFor(problems, 'assignee_id')} />
        <Field id="due_in" label="Due in" value={values.due_in} error={errorFor(problems, 'due_in')} hint="Optional, Task steps only: e.g. 2d. The task is due this long after the step starts." maxLength={64} autocomplete="off" />
        <Field id="duration" label="Duration" value={values.duration} error={errorFor(problems, 'duration')} hint="e.g. 30m, 2h, 3d; up to 30 days" maxLength={64} autocomplete="off" />
        <button type="submit" class={secondary ? 'secondary' : undefined}>
          {button}
        </button>
      </form>
  );
}

function RunsTable({ runs, members }: { runs: readonly Run[]; members: ReadonlyMap<string, string> }) {
  return (
    <Table caption="Runs" captionHidden headers={['Run', 'Started', 'Status', 'Started by', 'Finished', 'Progress', 'Error']} empty="This workflow has not run yet.">
      {runs.map((run) => (
        <tr>
          <td>
            <a href={runHref(run.id)}>{run.number > 0 ? `#${run.number}` : 'Run'}</a>
          </td>
          <td>
            <Time iso={run.created_at} seconds />
          </td>
          <td>{RUN_STATUS_WORDS[run.status]}</td>
          <td>{startedBy(run, members)}</td>
          <td>{run.finished_at ? <Time iso={run.finished_at} /> : <NoValue />}</td>
          <td>
            Step {run.current_step} of {run.step_count}
          </td>
          <td>{run.error ? sentence(run.error) : <NoValue />}</td>
        </tr>
      ))}
    </Table>
  );
}

interface WorkflowViewProps {
  page: PageContext;
  project: Project;
  rights: ProjectRights;
  workflow: Workflow;
  options: readonly MemberOption[];
  runs: PageResult<Run>;
  /** An active run: the workflow cannot be deleted while it lasts, so the page links to it instead. */
  activeRun: Run | null;
  cursor?: string | undefined;
  maxSteps: number;
  stepForm?: StepFormValues;
  workflowForm?: { name: string; description: string };
  errors?: readonly FormError[];
}

function WorkflowView({ page, project, rights, workflow, options, runs, activeRun, cursor, maxSteps, stepForm = EMPTY_STEP, workflowForm, errors: problems = [] }: WorkflowViewProps) {
  // Only what the role, the workspace's state and the project's rules allow is offered; the services refuse the rest anyway.
  const canWrite = offered(page.actor, rights).write;
  const takesWork = projectTakesNewWork(project);
  const runnable = workflowCanRun(workflow);
  const members = memberMap(options);
  const here = workflowHref(project.id, workflow.id);
  const saved = workflowForm ?? { name: workflow.name, description: workflow.description ?? '' };
  return (
    <Layout title={`Workflow ${workflow.name}`} viewer={page.viewer} csrf={page.csrf} current={PROJECTS} errors={problems}>
      <p>
        Project <a href={projectHref(project.id)}>{project.name}</a> · version {workflow.version} · updated <Time iso={workflow.updated_at} />
      </p>
      {workflow.description ? <p class="lead">{workflow.description}</p> : null}
      {canWrite ? (
        <div class="actions page-actions">
          {takesWork && runnable ? <ActionForm action={`${here}/run`} csrf={page.csrf} label="Run workflow" /> : null}
          {!takesWork ? (
            <span class="hint">The project is archived: unarchive it to run this workflow.</span>
          ) : !runnable ? (
            <span class="hint">Add a step to run this workflow.</span>
          ) : null}
        </div>
      ) : null}
      <StepsTable workflow={workflow} members={members} csrf={page.csrf} canWrite={canWrite} />
      <section aria-labelledby="runs-title">
        <h2 id="runs-title">Runs</h2>
        <p class="hint">Each run works on a copy of the steps as they were when it started; editing the workflow never changes a run.</p>
        <RunsTable runs={runs.items} members={members} />
        {cursor || runs.nextCursor ? (
          <nav class="pager" aria-label="Pages of runs">
            {cursor ? <a href={here}>Newest</a> : null}
            {runs.nextCursor ? <a href={`${here}?cursor=${encodeURIComponent(runs.nextCursor)}`}>Older</a> : null}
          </nav>
        ) : null}
      </section>
      {/* The runs first: what people come back for; the tall step form after them. */}
      {canWrite ? <AddStepSection workflow={workflow} options={options} values={stepForm} errors={problems} csrf={page.csrf} maxSteps={maxSteps} /> : null}
      {canWrite ? (
        <Disclosure summary="Edit workflow" open={Boolean(workflowForm)}>
          <form method="post" action={here}>
            <CsrfField token={page.csrf} />
            <Field id="name" label="Name" value={saved.name} error={errorFor(problems, 'name')} required maxLength={255} />
            <TextArea id="description" label="Description" value={saved.description} error={errorFor(problems, 'description')} hint="Optional." maxLength={10_000} />
            <button type="submit">Save workflow</button>
          </form>
        </Disclosure>
      ) : null}
      {canWrite ? (
        <DangerZone>
          {/* Where the button would be, the reason it is not (review 5, WF4): not beside "Run workflow". */}
          <DangerItem title="Delete this workflow" control={activeRun ? <ActiveRunNote run={activeRun} /> : <DangerLink href={`${here}/delete`} label="Delete workflow" />}>
            Its steps and finished runs are deleted with it. Tasks its runs created stay in the project.
          </DangerItem>
        </DangerZone>
      ) : null}
    </Layout>
  );
}

interface Loaded {
  project: Project;
  rights: ProjectRights;
  workflow: Workflow;
}

/** DASHBOARD 3 and 7: a workflow's steps and runs; members and above edit, run and delete it. */
export const workflowsPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const workflows = services.workflows;

  /** The workflow at this address: a 404 page for a bad id, another organisation's, or another project's. */
  async function load(page: PageContext, params: { id: string; wf: string }): Promise<Loaded> {
    const projectId = pathId(params.id, 'project');
    const workflow = await workflows.get(page.actor, pathId(params.wf, 'workflow'));
    if (workflow.project_id !== projectId) throw errors.notFound('workflow');
    const { project, rights } = await services.projects.withRights(page.actor, projectId);
    return { project, rights, workflow };
  }

  /** The page as it stands, with whatever the request adds (a refused form's values and problems, a notice). */
  async function view(page: PageContext, loaded: Loaded, extra: Omit<WorkflowViewProps, 'page' | 'project' | 'rights' | 'workflow' | 'options' | 'runs' | 'activeRun' | 'maxSteps'> = {}) {
    const [options, runs, activeRun] = await Promise.all([
      assigneeOptions(services, page.actor, loaded.project.id),
      workflows.listRuns(page.actor, loaded.workflow.id, { limit: RUNS_PAGE_SIZE, cursor: extra.cursor }),
      workflows.activeRun(page.actor, loaded.workflow.id),
    ]);
    return <WorkflowView page={page} {...loaded} options={options} runs={runs} activeRun={activeRun} maxSteps={workflows.limits.maxSteps} {...extra} />;
  }

  app.get('/projects/:id/workflows/:wf', { schema: { ...pageSchema(WorkflowQuery), params: WorkflowParams } }, async (request, reply) => {
    const page = pageContext(request);
    const loaded = await load(page, request.params);
    const { cursor } = request.query;
    try {
      return sendPage(reply, await view(page, loaded, { cursor }));
    } catch (error) {
      // A stale or hand-edited cursor: the newest runs, with a sentence a person can act on.
      pageRefusal(reply, error, [400]);
      const problems: FormError[] = [{ field: null, message: 'This page link is no longer valid. Start again from the newest runs.' }];
      return sendPage(reply, await view(page, loaded, { errors: problems }), 400);
    }
  });

  app.post('/projects/:id/workflows/:wf/steps', { schema: { hide: true, params: WorkflowParams, body: AddStepForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const loaded = await load(page, request.params);
    const { type = '', title = '', assignee_id = '', due_in = '', duration = '' } = request.body;
    const values: StepFormValues = { type, title, assignee_id, due_in, duration };
    let saved: Workflow;
    try {
      // Empty fields mean "not given", as the service reads them.
      const input: StepInput = { type, title, assignee_id, due_in, duration };
      saved = await workflows.addStep(page.actor, loaded.workflow.id, input);
    } catch (error) {
      // 400: a field's problem; 409: the workflow is full. A role that may not edit gets the 403 page.
      const refusal = pageRefusal(reply, error, [400, 409]);
      const problems = refusal.status === 409 ? [{ field: null, message: sentence(refusal.message) }] : formErrors(refusal, STEP_LABELS);
      return sendPage(reply, await view(page, loaded, { stepForm: values, errors: problems }), refusal.status);
    }
    const added = saved.steps.length - 1;
    return seeOther(reply, workflowHref(loaded.project.id, loaded.workflow.id), { notice: `${stepName(saved.steps[added]!, added)} added.` });
  });

  /** The step at this address, with its position: a 404 page when the workflow has no such step. */
  function stepOf(workflow: Workflow, stepId: string): { step: WorkflowStep; index: number } {
    const index = workflow.steps.findIndex((s) => s.id === pathId(stepId, 'step'));
    if (index < 0) throw errors.notFound('step');
    return { step: workflow.steps[index]!, index };
  }

  app.get('/projects/:id/workflows/:wf/steps/:step/edit', { schema: { ...pageSchema(), params: StepParams } }, async (request, reply) => {
    const page = pageContext(request);
    const loaded = await load(page, request.params);
    await authorizeProjectChange(services, page.actor, loaded.project.id, 'write');
    const { step, index } = stepOf(loaded.workflow, request.params.step);
    const values: StepFormValues = {
      type: step.type,
      title: step.title ?? '',
      assignee_id: step.assignee_id ?? '',
      due_in: step.type === 'task' && step.due_in_ms !== null ? formatStepDuration(step.due_in_ms) : '',
      duration: step.type === 'wait' && step.duration_ms !== null ? formatStepDuration(step.duration_ms) : '',
    };
    return sendPage(reply, <EditStepView page={page} {...loaded} step={step} index={index} options={await assigneeOptions(services, page.actor, loaded.project.id)} values={values} />);
  });

  app.post('/projects/:id/workflows/:wf/steps/:step/edit', { schema: { hide: true, params: StepParams, body: AddStepForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const loaded = await load(page, request.params);
    await authorizeProjectChange(services, page.actor, loaded.project.id, 'write');
    const { step, index } = stepOf(loaded.workflow, request.params.step);
    const { type = '', title = '', assignee_id = '', due_in = '', duration = '' } = request.body;
    const values: StepFormValues = { type, title, assignee_id, due_in, duration };
    let saved: Workflow;
    try {
      saved = await workflows.replaceStep(page.actor, loaded.workflow.id, step.id, values);
    } catch (error) {
      const refusal = pageRefusal(reply, error, [400]);
      const options = await assigneeOptions(services, page.actor, loaded.project.id);
      return sendPage(reply, <EditStepView page={page} {...loaded} step={step} index={index} options={options} values={values} errors={formErrors(refusal, STEP_LABELS)} />, 400);
    }
    return seeOther(reply, workflowHref(loaded.project.id, loaded.workflow.id), { notice: `${stepName(saved.steps[index]!, index)} saved.` });
  });

  app.post('/projects/:id/workflows/:wf/steps/:step/move', { schema: { hide: true, params: StepParams, body: MoveForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const loaded = await load(page, request.params);
    const { step } = stepOf(loaded.workflow, request.params.step);
    const saved = await workflows.moveStep(page.actor, loaded.workflow.id, step.id, request.body.direction);
    const now = saved.steps.findIndex((s) => s.id === step.id);
    return seeOther(reply, workflowHref(loaded.project.id, loaded.workflow.id), { notice: `${stepName(step, now)} moved ${request.body.direction}.` });
  });

  app.post('/projects/:id/workflows/:wf/steps/:step/remove', { schema: { hide: true, params: StepParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const loaded = await load(page, request.params);
    const { step, index } = stepOf(loaded.workflow, request.params.step);
    await workflows.removeStep(page.actor, loaded.workflow.id, step.id);
    return seeOther(reply, workflowHref(loaded.project.id, loaded.workflow.id), { notice: `${stepName(step, index)} removed.` });
  });

  app.post('/projects/:id/workflows/:wf/run', { schema: { hide: true, params: WorkflowParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const loaded = await load(page, request.params);
    let run: Run;
    try {
      run = await workflows.startRun(page.actor, loaded.workflow.id);
    } catch (error) {
      // 409: no steps yet, or the organisation's cap of active runs.
      const refusal = pageRefusal(reply, error, [409]);
      return sendPage(reply, await view(page, loaded, { errors: [{ field: null, message: sentence(refusal.message) }] }), refusal.status);
    }
    return seeOther(reply, runHref(run.id), { notice: `${runName(run.number, `"${loaded.workflow.name}"`)} started. This page follows it step by step.` });
  });

  app.post('/projects/:id/workflows/:wf', { schema: { hide: true, params: WorkflowParams, body: SaveWorkflowForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const loaded = await load(page, request.params);
    const { name = '', description = '' } = request.body;
    try {
      const saved = await workflows.update(page.actor, loaded.workflow.id, { name, description });
      return seeOther(reply, workflowHref(loaded.project.id, loaded.workflow.id), { notice: `Workflow "${saved.name}" saved.` });
    } catch (error) {
      const refusal = pageRefusal(reply, error, [400]);
      return sendPage(reply, await view(page, loaded, { workflowForm: { name, description }, errors: formErrors(refusal, WORKFLOW_LABELS) }), refusal.status);
    }
  });

  app.get('/projects/:id/workflows/:wf/delete', { schema: { ...pageSchema(), params: WorkflowParams } }, async (request, reply) => {
    const page = pageContext(request);
    // The page of an action the role (or a read-only workspace) cannot take answers 403, as the action itself would.
    const loaded = await load(page, request.params);
    await authorizeProjectChange(services, page.actor, loaded.project.id, 'write');
    const activeRun = await workflows.activeRun(page.actor, loaded.workflow.id);
    return sendPage(reply, <DeleteWorkflowView page={page} {...loaded} activeRun={activeRun} />);
  });

  app.post('/projects/:id/workflows/:wf/delete', { schema: { hide: true, params: WorkflowParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const loaded = await load(page, request.params);
    try {
      await workflows.remove(page.actor, loaded.workflow.id);
    } catch (error) {
      // 409 while a run is active: said on the confirmation page, nothing deleted.
      const refusal = pageRefusal(reply, error, [409]);
      const activeRun = await workflows.activeRun(page.actor, loaded.workflow.id);
      return sendPage(reply, <DeleteWorkflowView page={page} {...loaded} activeRun={activeRun} errors={[{ field: null, message: sentence(refusal.message) }]} />, refusal.status);
    }
    return seeOther(reply, projectHref(loaded.project.id), { notice: `Workflow "${loaded.workflow.name}" deleted.` });
  });
};

function EditStepView({ page, project, workflow, step, index, options, values, errors: problems = [] }: { page: PageContext; project: Project; workflow: Workflow; step: WorkflowStep; index: number; options: readonly MemberOption[]; values: StepFormValues; errors?: FormError[] }) {
  const here = workflowHref(project.id, workflow.id);
  return (
    <Layout title={`Edit step ${index + 1}`} viewer={page.viewer} csrf={page.csrf} current={PROJECTS} errors={problems}>
      <p class="lead">
        {stepName(step, index)}, of the workflow <a href={here}>{workflow.name}</a>
      </p>
      <p class="hint">Runs already started keep the step as it was when they started.</p>
      <StepFields action={`${here}/steps/${encodeURIComponent(step.id)}/edit`} options={options} values={values} errors={problems} csrf={page.csrf} button="Save step" />
      <p>
        <a href={here}>Back to the workflow</a>
      </p>
    </Layout>
  );
}

/** Why "Delete workflow" is not offered, with the way to the run that stands in the way. */
function ActiveRunNote({ run }: { run: Run }) {
  return (
    <span class="hint">
      <a href={runHref(run.id)}>{run.number > 0 ? `Run #${run.number}` : 'A run'}</a> is still active: the workflow can be deleted once it finishes or is cancelled.
    </span>
  );
}

function DeleteWorkflowView({ page, project, workflow, activeRun, errors: problems }: { page: PageContext; project: Project; workflow: Workflow; activeRun: Run | null; errors?: FormError[] }) {
  const here = workflowHref(project.id, workflow.id);
  return (
    <Layout title="Delete workflow" viewer={page.viewer} csrf={page.csrf} current={PROJECTS} errors={problems}>
      <p class="lead">
        Delete the workflow <strong>{workflow.name}</strong> of project {project.name}?
      </p>
      <p>
        Its finished runs are deleted with it; tasks its runs created stay in the project as plain tasks. A workflow with an active run cannot be
        deleted: cancel the run first. This cannot be undone.
      </p>
      <div class="actions">
        {activeRun ? (
          <ActiveRunNote run={activeRun} />
        ) : (
          <form method="post" action={`${here}/delete`} class="inline-form">
            <CsrfField token={page.csrf} />
            <button type="submit" class="button danger">
              Delete workflow
            </button>
          </form>
        )}
        <a href={here}>Back to the workflow</a>
      </div>
    </Layout>
  );
}
