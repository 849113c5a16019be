import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { ProjectRole, ProjectStatus } from '../../db/schema.js';
import { errors, type DomainError, type ErrorDetail } from '../../errors.js';
import { sentence } from '../../lib/text.js';
import { projectTakesNewWork } from '../../services/workflows/work-rules.js';
import { isWritable } from '../../services/access/workspace.js';
import type { ProjectRights, UpdateProjectInput } from '../../services/projects/projects-service.js';
import { type Collaborator, type Project, PROJECT_ROLES, UpdateProjectBody } from '../../schemas/projects.js';
import { mayFinishTask, readDueDate, type Task } from '../../services/workflows/tasks-service.js';
import { checkText } from '../../services/workflows/workflow-steps.js';
import type { Workflow } from '../../services/workflows/workflows-service.js';
import type { AppDeps } from '../../http/app-deps.js';
import { pageContext, pageRefusal, pathId, seeOther, sendPage, type PageContext } from '../context.js';
import { assigneeOptions, authorizeProjectChange, offered } from '../project-rights.js';
import { fieldMessage, validateAs } from '../form-validation.js';
import { memberLabel, memberMap, memberOptions, type MemberOption } from '../members-options.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { ActionForm, NoValue, CsrfField, DangerItem, DangerLink, DangerZone, Disclosure, Due, errorFor, Field, Select, Table, TextArea, Time, type FormError } from '../views/components.js';
import { Layout } from '../views/layout.js';
import { TaskActions } from '../views/task-actions.js';
import { collaboratorRoleId, CollaboratorsSection, PROJECT_ROLE_LABELS, type CollaboratorValues } from '../views/collaborators-section.js';

const PROJECTS = '/dashboard/projects';
const projectHref = (id: string) => `${PROJECTS}/${encodeURIComponent(id)}`;
const workflowHref = (projectId: string, workflowId: string) => `${projectHref(projectId)}/workflows/${encodeURIComponent(workflowId)}`;
const runHref = (runId: string) => `/dashboard/runs/${encodeURIComponent(runId)}`;

const STATUS_LABELS: Record<ProjectStatus, string> = { active: 'Active', draft: 'Draft', archived: 'Archived' };
const STATUS_OPTIONS = (['active', 'draft', 'archived'] as const).map((value) => ({ value, label: STATUS_LABELS[value] }));
const TASK_STATUS_LABELS: Record<Task['status'], string> = { open: 'Open', done: 'Done', cancelled: 'Cancelled' };
const TASK_KIND_LABELS: Record<Task['kind'], string> = { todo: 'To-do', approval: 'Approval' };
const DECISION_LABELS: Record<NonNullable<Task['decision']>, string> = { approved: 'approved', rejected: 'rejected' };

const ProjectParams = Type.Object({ id: Type.String({ maxLength: 128 }) });
const TaskParams = Type.Object({ id: Type.String({ maxLength: 128 }), task: Type.String({ maxLength: 128 }) });

// Bounds only, above the rules' own limits, so an over-long value gets the rule's sentence on the page.
const EditForm = FormBody({ name: FormText(1024), description: FormText(4096), status: FormText(16) });
const DeleteForm = FormBody({ confirm_name: FormText(1024) });
const WorkflowForm = FormBody({ name: FormText(1024), description: FormText(40_000) });
const TaskForm = FormBody({ title: FormText(1024), assignee_id: FormText(128), due_date: FormText(64) });
const AssignForm = FormBody({ assignee_id: FormText(128) });
const CollaboratorForm = FormBody({ user_id: FormText(128), role: FormText(16) });
const RoleForm = FormBody({ role: FormText(16) });
const VisibilityForm = FormBody({ visibility: FormText(16) });
const CollaboratorParams = Type.Object({ id: Type.String({ maxLength: 128 }), user: Type.String({ maxLength: 128 }) });

const COLLABORATOR_FIELDS = { user_id: { id: 'collaborator-person', label: 'Person' }, role: { id: 'collaborator-role', label: 'Project role' } };

/** Field ids of the page's forms; the service's field names map onto them (several forms share a name). */
const EDIT_FIELDS = { name: { id: 'name', label: 'Name' }, description: { id: 'description', label: 'Description' }, status: { id: 'status', label: 'Status' } };
const WORKFLOW_FIELDS = { name: { id: 'workflow-name', label: 'Workflow name' }, description: { id: 'workflow-description', label: 'Workflow description' } };
const TASK_FIELDS = {
  title: { id: 'task-title', label: 'Task title' },
  assignee_id: { id: 'task-assignee', label: 'Assignee' },
  due_at: { id: 'task-due', label: 'Due date' },
};
const assigneeFieldId = (taskId: string) => `assignee-${taskId}`;

type FieldMap = Record<string, { id: string; label: string }>;

/** A refusal as the form's errors: one per field, named by the field's label and attached to it. */
function errorsFor(error: DomainError, fields: FieldMap): FormError[] {
  if (!error.details?.length) return [{ field: null, message: sentence(error.message) }];
  return error.details.map((d) => {
    const field = fields[d.field];
    return { field: field?.id ?? null, message: sentence(fieldMessage(field?.label ?? d.field, d.message)) };
  });
}

interface EditValues {
  name: string;
  description: string;
  status: string;
}
interface WorkflowValues {
  name: string;
  description: string;
}
interface TaskValues {
  title: string;
  assignee_id: string;
  due_date: string;
}

interface ProjectData {
  project: Project;
  /** What the person may do here (project-access), before the workspace's state is counted. */
  rights: ProjectRights;
  workflows: Workflow[];
  tasks: Task[];
  /** Who may be assigned the project's tasks (in a private project, those who can see it). */
  members: MemberOption[];
  /** Everyone of the organisation, for "Add collaborator" (managers only; empty otherwise). */
  people: MemberOption[];
  collaborators: Collaborator[];
  /** "Run #3 of Customer shipment" for the tasks runs made. */
  runs: Map<string, string>;
}

interface ProjectViewProps extends ProjectData {
  page: PageContext;
  errors?: readonly FormError[];
  collaborator?: CollaboratorValues;
  edit?: EditValues;
  workflow?: WorkflowValues;
  task?: TaskValues;
}

function ProjectView(props: ProjectViewProps) {
  const { page, project, rights, workflows, tasks, members, runs, errors: problems = [], edit, workflow, task } = props;
  const { actor, csrf } = page;
  // Only what the person's rights on this project, the workspace's state and the project's rules allow is
  // offered; the services refuse the rest anyway.
  const allowed = offered(actor, rights);
  const canWrite = allowed.write;
  const canDelete = allowed.manage;
  const takesWork = projectTakesNewWork(project);
  const canAdd = canWrite && takesWork;
  const here = projectHref(project.id);
  const isOpen = (prefix: string) => problems.some((p) => p.field?.startsWith(prefix));
  return (
    <Layout title={project.name} viewer={page.viewer} csrf={csrf} current={PROJECTS} errors={problems}>
      <dl class="facts">
        <div>
          <dt>Status</dt>
          <dd>{STATUS_LABELS[project.status]}</dd>
        </div>
        <div>
          <dt>Visibility</dt>
          <dd>{project.visibility === 'private' ? <span class="badge private">Private</span> : `Everyone in ${page.viewer.organizationName}`}</dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <Time iso={project.created_at} />
          </dd>
        </div>
        <div>
          <dt>Updated</dt>
          <dd>
            <Time iso={project.updated_at} />
          </dd>
        </div>
        <div>
          <dt>Description</dt>
          <dd>{project.description ?? <span class="muted">No description.</span>}</dd>
        </div>
      </dl>
      <p class="muted">
        <a href={PROJECTS}>All projects</a>
      </p>
      {!takesWork ? <p class="notice-panel warning">This project is archived: it keeps its data and takes no new workflows, tasks or runs.</p> : null}
      {canWrite ? (
        <div class="actions page-actions">
          {canWrite ? (
            takesWork ? (
              <ActionForm action={`${here}/archive`} csrf={csrf} label="Archive project" secondary />
            ) : (
              <ActionForm action={`${here}/unarchive`} csrf={csrf} label="Unarchive project" />
            )
          ) : null}
        </div>
      ) : null}
      {canWrite ? <EditProjectForm project={project} csrf={csrf} values={edit} errors={problems} open={Boolean(edit)} /> : null}

      <section aria-labelledby="workflows-title">
        <h2 id="workflows-title">Workflows</h2>
        {canAdd ? <NewWorkflowForm projectId={project.id} csrf={csrf} values={workflow} errors={problems} open={isOpen('workflow-') || workflows.length === 0} /> : null}
        <WorkflowsTable projectId={project.id} workflows={workflows} />
      </section>

      <section aria-labelledby="tasks-title">
        <h2 id="tasks-title">Tasks</h2>
        {canAdd ? <NewTaskForm projectId={project.id} csrf={csrf} members={members} values={task} errors={problems} open={isOpen('task-') || tasks.length === 0} /> : null}
        {/* Open work first; what is finished sits apart, folded, so a long history does not bury it. */}
        <TasksTable page={page} projectId={project.id} canAssign={canWrite} tasks={tasks.filter((t) => t.status === 'open')} runs={runs} members={members} errors={problems} />
        {tasks.some((t) => t.status !== 'open') ? (
          <details class="finished-tasks">
            <summary>Done and cancelled tasks ({tasks.filter((t) => t.status !== 'open').length.toLocaleString('en-GB')})</summary>
            <TasksTable page={page} projectId={project.id} canAssign={canWrite} tasks={tasks.filter((t) => t.status !== 'open')} caption="Done and cancelled tasks" runs={runs} members={members} errors={problems} />
          </details>
        ) : null}
      </section>

      <CollaboratorsSection
        page={page}
        project={project}
        collaborators={props.collaborators}
        people={props.people}
        errors={problems}
        values={props.collaborator}
        canManage={allowed.manage}
      />
      {canDelete ? (
        <DangerZone>
          <DangerItem title="Delete this project" control={<DangerLink href={`${here}/delete`} label="Delete project" />}>
            Its workflows, runs and tasks are deleted with it, at once. To keep them, archive the project instead.
          </DangerItem>
        </DangerZone>
      ) : null}
    </Layout>
  );
}

function EditProjectForm({ project, csrf, values, errors: problems, open }: { project: Project; csrf: string; values?: EditValues | undefined; errors: readonly FormError[]; open: boolean }) {
  const shown = values ?? { name: project.name, description: project.description ?? '', status: project.status };
  return (
    <Disclosure summary="Edit project" open={open}>
      <form method="post" action={projectHref(project.id)}>
        <CsrfField token={csrf} />
        <Field id="name" label="Name" value={shown.name} error={errorFor(problems, 'name')} required maxLength={255} />
        <TextArea id="description" label="Description" value={shown.description} error={errorFor(problems, 'description')} maxLength={1000} hint="Optional, up to 1,000 characters." />
        <Select id="status" label="Status" options={STATUS_OPTIONS} value={shown.status} error={errorFor(problems, 'status')} />
        <button type="submit">Save project</button>
      </form>
    </Disclosure>
  );
}

function WorkflowsTable({ projectId, workflows }: { projectId: string; workflows: readonly Workflow[] }) {
  return (
    <Table caption="Workflows" captionHidden headers={['Name', 'Steps', 'Version', 'Updated']} empty="No workflows yet.">
      {workflows.map((wf) => (
        <tr>
          <td>
            <a href={workflowHref(projectId, wf.id)}>{wf.name}</a>
          </td>
          <td>{wf.steps.length}</td>
          <td>{wf.version}</td>
          <td>
            <Time iso={wf.updated_at} />
          </td>
        </tr>
      ))}
    </Table>
  );
}

function NewWorkflowForm({ projectId, csrf, values, errors: problems, open }: { projectId: string; csrf: string; values?: WorkflowValues | undefined; errors: readonly FormError[]; open: boolean }) {
  return (
    <Disclosure summary="New workflow" open={open}>
    <form method="post" action={`${projectHref(projectId)}/workflows`} aria-label="New workflow">
      <CsrfField token={csrf} />
      <Field id="workflow-name" name="name" label="Workflow name" value={values?.name} error={errorFor(problems, 'workflow-name')} required maxLength={255} />
      <TextArea
        id="workflow-description"
        name="description"
        label="Workflow description"
        value={values?.description}
        error={errorFor(problems, 'workflow-description')}
        hint="Optional. Steps are added on the workflow's page."
      />
      <button type="submit">Create workflow</button>
    </form>
    </Disclosure>
  );
}


interface TasksTableProps {
  page: PageContext;
  projectId: string;
  canAssign: boolean;
  tasks: readonly Task[];
  /** The table's name: "Tasks" (open ones), or the finished ones apart. */
  caption?: string;
  runs: ReadonlyMap<string, string>;
  members: readonly MemberOption[];
  errors: readonly FormError[];
}

function TasksTable({ page, projectId, canAssign, tasks, caption = 'Tasks', runs, members, errors: problems }: TasksTableProps) {
  const { actor, csrf } = page;
  const mayFinish = (t: Task) => mayFinishTask(actor, t) && isWritable(actor);
  const names = memberMap(members);
  const assigneeOptions = [{ value: '', label: 'Unassigned' }, ...members];
  const here = projectHref(projectId);
  const withActions = canAssign || tasks.some((t) => t.status === 'open' && mayFinish(t));
  const headers = ['Title', 'Status', 'Kind', 'Assignee', 'Due', 'From run', ...(withActions ? ['Actions'] : [])];
  return (
    <Table caption={caption} captionHidden headers={headers} empty={caption === 'Tasks' ? 'No open tasks.' : 'None yet.'}>
      {tasks.map((t) => {
        const open = t.status === 'open';
        return (
          <tr>
            <td>{t.title}</td>
            <td>
              {TASK_STATUS_LABELS[t.status]}
              {t.decision ? ` (${DECISION_LABELS[t.decision]})` : null}
            </td>
            <td>{TASK_KIND_LABELS[t.kind]}</td>
            <td>{t.assignee_id ? memberLabel(names, t.assignee_id) : <span class="muted">Unassigned</span>}</td>
            <td>
              <Due iso={t.due_at} open={open} />
            </td>
            <td>
              {t.run_id ? (
                <a href={runHref(t.run_id)}>{`${runs.get(t.run_id) ?? 'Run'}, step ${t.run_step ?? '?'}`}</a>
              ) : (
                <NoValue />
              )}
            </td>
            {withActions ? (
              <td>
                {open && canAssign ? (
                  <form method="post" action={`${here}/tasks/${encodeURIComponent(t.id)}/assign`} class="inline-form">
                    <CsrfField token={csrf} />
                    <Select
                      id={assigneeFieldId(t.id)}
                      name="assignee_id"
                      label="Assignee"
                      hiddenLabel
                      options={assigneeOptions}
                      value={t.assignee_id ?? ''}
                      error={errorFor(problems, assigneeFieldId(t.id))}
                    />
                    <button type="submit" class="button secondary">
                      Assign
                    </button>
                  </form>
                ) : null}
                <TaskActions task={t} csrf={csrf} back={here} canDecide={mayFinish(t)} />
              </td>
            ) : null}
          </tr>
        );
      })}
    </Table>
  );
}

function NewTaskForm({ projectId, csrf, members, values, errors: problems, open }: { projectId: string; csrf: string; members: readonly MemberOption[]; values?: TaskValues | undefined; errors: readonly FormError[]; open: boolean }) {
  return (
    <Disclosure summary="New task" open={open}>
    <form method="post" action={`${projectHref(projectId)}/tasks`} aria-label="New task">
      <CsrfField token={csrf} />
      <Field id="task-title" name="title" label="Task title" value={values?.title} error={errorFor(problems, 'task-title')} required maxLength={255} />
      <Select
        id="task-assignee"
        name="assignee_id"
        label="Assignee"
        options={[{ value: '', label: 'Unassigned' }, ...members]}
        value={values?.assignee_id ?? ''}
        error={errorFor(problems, 'task-assignee')}
      />
      <Field id="task-due" name="due_date" type="date" label="Due date" value={values?.due_date} error={errorFor(problems, 'task-due')} hint="Optional; due at the end of that day (UTC)." />
      <button type="submit">Create task</button>
    </form>
    </Disclosure>
  );
}

function DeleteProjectView({ page, project, typed, error }: { page: PageContext; project: Project; typed?: string; error?: string }) {
  const here = projectHref(project.id);
  const problems: FormError[] = error ? [{ field: 'confirm-name', message: error }] : [];
  return (
    <Layout title="Delete project" viewer={page.viewer} csrf={page.csrf} current={PROJECTS} errors={problems}>
      <p class="lead">
        Delete the project <strong>{project.name}</strong>?
      </p>
      <p>Its workflows, their runs and all its tasks are deleted with it, at once. This cannot be undone.</p>
      <form method="post" action={`${here}/delete`}>
        <CsrfField token={page.csrf} />
        <Field
          id="confirm-name"
          name="confirm_name"
          label="Project name"
          value={typed}
          error={errorFor(problems, 'confirm-name')}
          hint={`Type the project's name to confirm: ${project.name}`}
          autocomplete="off"
          required
        />
        <div class="actions">
          <button type="submit" class="button danger">
            Delete project
          </button>
          <a href={here}>Keep the project</a>
        </div>
      </form>
    </Layout>
  );
}

/**
 * DASHBOARD 3 and 7: the project page. Every member reads it; members and above edit, archive, create
 * workflows and tasks and assign; admins and owners delete. Every write calls the API's services, so the
 * events and audit rows are the API's.
 */
export const projectDetailPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  async function load(page: PageContext, projectId: string): Promise<ProjectData> {
    const { project, rights } = await services.projects.withRights(page.actor, projectId);
    const [workflows, tasks, members, collaborators, people] = await Promise.all([
      services.workflows.listForProject(page.actor, projectId),
      services.tasks.listForProject(page.actor, projectId),
      assigneeOptions(services, page.actor, projectId),
      services.collaborators.all(page.actor, projectId),
      rights.manage ? memberOptions(services, page.actor) : Promise.resolve([]),
    ]);
    const runs = await services.runs.names(page.actor, tasks.flatMap((t) => (t.run_id ? [t.run_id] : [])));
    return { project, rights, workflows, tasks, members, people, collaborators, runs };
  }

  /** The page again after a refused form: 400 / 409 here; 403, 404 and faults go to the error page. */
  async function refused(page: PageContext, projectId: string, reply: FastifyReply, error: unknown, fields: FieldMap, form: Partial<ProjectViewProps>) {
    const refusal = pageRefusal(reply, error, [400, 409]);
    const problems = errorsFor(refusal, fields);
    return sendPage(reply, <ProjectView page={page} {...await load(page, projectId)} errors={problems} {...form} />, refusal.status);
  }

  app.get('/projects/:id', { schema: { ...pageSchema(), params: ProjectParams } }, async (request, reply) => {
    const page = pageContext(request);
    const projectId = pathId(request.params.id, 'project');
    return sendPage(reply, <ProjectView page={page} {...await load(page, projectId)} />);
  });

  app.post('/projects/:id', { schema: { hide: true, params: ProjectParams, body: EditForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const projectId = pathId(request.params.id, 'project');
    // A role without the form gets the 403 page whatever the form holds, as the API answers 403 before 400.
    await authorizeProjectChange(services, page.actor, projectId, 'write');
    const edit: EditValues = { name: request.body.name ?? '', description: request.body.description ?? '', status: request.body.status ?? '' };
    try {
      // The API's body schema: "" clears the description, as it does through PUT /v1/projects/:id.
      const input = validateAs<UpdateProjectInput>(UpdateProjectBody, edit);
      const saved = await services.projects.update(page.actor, projectId, input);
      return seeOther(reply, projectHref(projectId), { notice: `Project "${saved.name}" saved.` });
    } catch (error) {
      return refused(page, projectId, reply, error, EDIT_FIELDS, { edit });
    }
  });

  /** "Archive project" / "Unarchive project": one status change, said in a sentence. */
  async function setStatus(page: PageContext, id: string, reply: FastifyReply, status: 'archived' | 'active', done: string) {
    const projectId = pathId(id, 'project');
    await authorizeProjectChange(services, page.actor, projectId, 'write');
    try {
      const saved = await services.projects.update(page.actor, projectId, { status });
      return seeOther(reply, projectHref(projectId), { notice: `Project "${saved.name}" ${done}.` });
    } catch (error) {
      return refused(page, projectId, reply, error, {}, {});
    }
  }

  app.post('/projects/:id/archive', { schema: { hide: true, params: ProjectParams, body: FormBody({}), response: htmlResponses } }, (request, reply) =>
    setStatus(pageContext(request), request.params.id, reply, 'archived', 'archived'),
  );

  app.post('/projects/:id/unarchive', { schema: { hide: true, params: ProjectParams, body: FormBody({}), response: htmlResponses } }, (request, reply) =>
    setStatus(pageContext(request), request.params.id, reply, 'active', 'unarchived: it takes new workflows, tasks and runs again'),
  );

  app.get('/projects/:id/delete', { schema: { ...pageSchema(), params: ProjectParams } }, async (request, reply) => {
    const page = pageContext(request);
    // The page of an action the role (or a read-only workspace) cannot take answers 403, as the action itself would.
    const projectId = pathId(request.params.id, 'project');
    await authorizeProjectChange(services, page.actor, projectId, 'manage');
    const project = await services.projects.get(page.actor, projectId);
    return sendPage(reply, <DeleteProjectView page={page} project={project} />);
  });

  app.post('/projects/:id/delete', { schema: { hide: true, params: ProjectParams, body: DeleteForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const projectId = pathId(request.params.id, 'project');
    await authorizeProjectChange(services, page.actor, projectId, 'manage');
    const project = await services.projects.get(page.actor, projectId);
    const typed = request.body.confirm_name ?? '';
    // Typing the name is the confirmation: anything else deletes nothing.
    if (typed !== project.name) {
      const error = typed === '' ? "Type the project's name to delete it" : "Project name does not match the project's name";
      return sendPage(reply, <DeleteProjectView page={page} project={project} typed={typed} error={error} />, 400);
    }
    await services.projects.remove(page.actor, project.id);
    return seeOther(reply, PROJECTS, { notice: `Project "${project.name}" deleted, with its workflows, runs and tasks.` });
  });

  app.post('/projects/:id/workflows', { schema: { hide: true, params: ProjectParams, body: WorkflowForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const projectId = pathId(request.params.id, 'project');
    await authorizeProjectChange(services, page.actor, projectId, 'write');
    const workflow: WorkflowValues = { name: request.body.name ?? '', description: request.body.description ?? '' };
    let created: Workflow;
    try {
      created = await services.workflows.create(page.actor, projectId, { name: workflow.name, description: workflow.description });
    } catch (error) {
      return refused(page, projectId, reply, error, WORKFLOW_FIELDS, { workflow });
    }
    return seeOther(reply, workflowHref(projectId, created.id), { notice: `Workflow "${created.name}" created. Add its steps below.` });
  });

  app.post('/projects/:id/tasks', { schema: { hide: true, params: ProjectParams, body: TaskForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const projectId = pathId(request.params.id, 'project');
    await authorizeProjectChange(services, page.actor, projectId, 'write');
    const task: TaskValues = { title: request.body.title ?? '', assignee_id: request.body.assignee_id ?? '', due_date: request.body.due_date ?? '' };
    try {
      const created = await services.tasks.create(page.actor, projectId, { title: task.title, assignee_id: task.assignee_id || null, due_at: readTaskForm(task) });
      return seeOther(reply, projectHref(projectId), { notice: `Task "${created.title}" created.` });
    } catch (error) {
      return refused(page, projectId, reply, error, TASK_FIELDS, { task });
    }
  });

  app.post('/projects/:id/tasks/:task/assign', { schema: { hide: true, params: TaskParams, body: AssignForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const projectId = pathId(request.params.id, 'project');
    const taskId = pathId(request.params.task, 'task');
    await authorizeProjectChange(services, page.actor, projectId, 'write');
    // The task must be this project's: another project's id in this path names nothing here.
    const current = await services.tasks.get(page.actor, taskId);
    if (current.project_id !== projectId) throw errors.notFound('task');
    let assigned: Task;
    try {
      assigned = await services.tasks.assign(page.actor, taskId, request.body.assignee_id || null);
    } catch (error) {
      return refused(page, projectId, reply, error, { assignee_id: { id: assigneeFieldId(taskId), label: 'Assignee' } }, {});
    }
    const who = assigned.assignee_id ? (await services.users.names(page.actor.orgId, [assigned.assignee_id])).get(assigned.assignee_id) : null;
    return seeOther(reply, projectHref(projectId), { notice: who ? `Task "${assigned.title}" assigned to ${who}.` : `Task "${assigned.title}" unassigned.` });
  });

  // DASHBOARD 13: collaborators and visibility, the project manager's (or an admin's or owner's).
  app.post('/projects/:id/collaborators', { schema: { hide: true, params: ProjectParams, body: CollaboratorForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const projectId = pathId(request.params.id, 'project');
    await authorizeProjectChange(services, page.actor, projectId, 'manage');
    const values: CollaboratorValues = { user_id: request.body.user_id ?? '', role: request.body.role ?? '' };
    try {
      if (values.user_id === '') throw errors.validation([{ field: 'user_id', message: 'choose a person' }]);
      const { collaborator, created } = await services.collaborators.put(page.actor, projectId, values.user_id, readProjectRole(values.role));
      const who = collaborator.user.name ?? collaborator.user.email;
      const role = PROJECT_ROLE_LABELS[collaborator.role];
      return seeOther(reply, projectHref(projectId), { notice: created ? `${who} added as ${role}.` : `${who} is ${role} on this project.` });
    } catch (error) {
      return refused(page, projectId, reply, error, COLLABORATOR_FIELDS, { collaborator: values });
    }
  });

  app.post('/projects/:id/collaborators/:user/role', { schema: { hide: true, params: CollaboratorParams, body: RoleForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const projectId = pathId(request.params.id, 'project');
    const userId = pathId(request.params.user, 'user');
    await authorizeProjectChange(services, page.actor, projectId, 'manage');
    try {
      const { collaborator } = await services.collaborators.put(page.actor, projectId, userId, readProjectRole(request.body.role ?? ''));
      return seeOther(reply, projectHref(projectId), { notice: `${collaborator.user.name ?? collaborator.user.email} is ${PROJECT_ROLE_LABELS[collaborator.role]} on this project.` });
    } catch (error) {
      return refused(page, projectId, reply, error, { role: { id: collaboratorRoleId(userId), label: 'Project role' } }, {});
    }
  });

  app.post('/projects/:id/collaborators/:user/remove', { schema: { hide: true, params: CollaboratorParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const projectId = pathId(request.params.id, 'project');
    const userId = pathId(request.params.user, 'user');
    await authorizeProjectChange(services, page.actor, projectId, 'manage');
    const who = (await services.users.names(page.actor.orgId, [userId])).get(userId) ?? 'The collaborator';
    try {
      await services.collaborators.remove(page.actor, projectId, userId);
    } catch (error) {
      return refused(page, projectId, reply, error, {}, {});
    }
    return seeOther(reply, projectHref(projectId), { notice: `${who} removed from this project's collaborators.` });
  });

  app.post('/projects/:id/visibility', { schema: { hide: true, params: ProjectParams, body: VisibilityForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const projectId = pathId(request.params.id, 'project');
    await authorizeProjectChange(services, page.actor, projectId, 'manage');
    const visibility = request.body.visibility === 'private' ? 'private' : request.body.visibility === 'organization' ? 'organization' : null;
    try {
      if (visibility === null) throw errors.validation([{ field: 'visibility', message: 'choose who sees the project' }]);
      const saved = await services.projects.update(page.actor, projectId, { visibility });
      const notice = saved.visibility === 'private' ? `Project "${saved.name}" is private: only its collaborators, admins and owners see it.` : `Project "${saved.name}" is visible to everyone in ${page.viewer.organizationName}.`;
      return seeOther(reply, projectHref(projectId), { notice });
    } catch (error) {
      return refused(page, projectId, reply, error, { visibility: { id: 'visibility', label: 'Visibility' } }, {});
    }
  });
};

function readProjectRole(text: string): ProjectRole {
  if ((PROJECT_ROLES as readonly string[]).includes(text)) return text as ProjectRole;
  throw errors.validation([{ field: 'role', message: 'must be Viewer, Editor or Manager' }]);
}


/**
 * The new task's due time from the form, with the title checked at the same time so that both problems
 * are listed at once (the service checks the title again, and everything else).
 */
function readTaskForm(task: TaskValues): number | null {
  const details: ErrorDetail[] = [];
  const attempt = <T,>(read: () => T): T | null => {
    try {
      return read();
    } catch (err) {
      const found = (err as { details?: ErrorDetail[] }).details;
      if (!found) throw err;
      details.push(...found);
      return null;
    }
  };
  attempt(() => checkText(task.title, 'title'));
  const due = attempt(() => readDueDate(task.due_date, 'due_at'));
  if (details.length > 0) throw errors.validation(details);
  return due;
}
