import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { DomainError, errors } from '../../errors.js';
import { isWritable } from '../../services/access/workspace.js';
import { mayFinishTask, type Task, type TaskResolution } from '../../services/workflows/tasks-service.js';
import { sentence } from '../../lib/text.js';
import type { AppDeps } from '../../http/app-deps.js';
import { authorizeChange, pageContext, pageRefusal, pathId, safeDashboardPath, seeOther, sendPage, type PageContext } from '../context.js';
import { formErrors } from '../form-validation.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { Clipped, NoValue, CsrfField, Due, errorFor, Table, TextArea, type FormError } from '../views/components.js';
import { Layout } from '../views/layout.js';
import { TaskActions } from '../views/task-actions.js';
import { projectHref, runHref, TASK_KIND_WORDS } from '../views/workflow-views.js';

const HERE = '/dashboard/tasks';

const TaskParams = Type.Object({ id: Type.String({ maxLength: 128 }) });
const RejectQuery = Type.Object({ back: FormText(2048) }, { additionalProperties: false });
/** `back`: the dashboard page the button sat on, to return to; anything else returns to My tasks. */
const ActionBody = FormBody({ back: FormText(2048) });
const RejectBody = FormBody({ back: FormText(2048), reason: FormText(20_000) });

/** What each action did, for the notice on the page it returns to. */
const DONE_WORDS = { done: 'marked done', approve: 'approved', reject: 'rejected', cancel: 'cancelled' } as const;

const returnTo = (back: string | undefined) => safeDashboardPath(back) ?? HERE;


function MyTasksTable({ tasks, projects, runs, csrf, canDecide }: { tasks: readonly Task[]; projects: ReadonlyMap<string, string>; runs: ReadonlyMap<string, string>; csrf: string; canDecide: boolean }) {
  return (
    <Table caption="My tasks" captionHidden headers={['Title', 'Project', 'Kind', 'Due', 'From run', 'Actions']} empty="Nothing to do: no open tasks are assigned to you.">
      {tasks.map((task) => (
        <tr>
          <td>
            <Clipped text={task.title} />
          </td>
          <td>
            <a href={projectHref(task.project_id)}>
              <Clipped text={projects.get(task.project_id) ?? task.project_id} />
            </a>
          </td>
          <td>{TASK_KIND_WORDS[task.kind]}</td>
          <td>
            <Due iso={task.due_at} open />
          </td>
          <td>
            {task.run_id ? (
              <a href={runHref(task.run_id)}>
                {runs.get(task.run_id) ?? 'Run'}, step {task.run_step}
              </a>
            ) : (
              <NoValue />
            )}
          </td>
          <td>
            {/* Every row is the viewer's own task: they may decide it, unless the workspace is read-only. */}
            <TaskActions task={task} csrf={csrf} back={HERE} canDecide={canDecide} />
          </td>
        </tr>
      ))}
    </Table>
  );
}

/** DASHBOARD 3 and 7: the signed-in person's open tasks, and the actions that finish a task (from any page). */
export const myTasksPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const tasks = services.tasks;

  async function myTasksPage(page: PageContext, extra: { errors?: FormError[] } = {}) {
    const mine = await tasks.listMine(page.actor);
    const projectIds = [...new Set(mine.map((t) => t.project_id))];
    // At most one lookup per project of the (bounded) list, and one for every run; one deleted meanwhile is left out.
    const [projectNames, runs] = await Promise.all([
      Promise.all(projectIds.map((id) => services.projects.get(page.actor, id).then((p) => [id, p.name] as const, () => null))),
      services.runs.names(page.actor, mine.flatMap((t) => (t.run_id ? [t.run_id] : []))),
    ]);
    const projects = new Map(projectNames.filter((n) => n !== null));
    return (
      <Layout title="My tasks" viewer={page.viewer} csrf={page.csrf} current={HERE} errors={extra.errors}>
        <p>Open tasks assigned to you, overdue first, then by due date: to-dos to mark done, approvals to approve or reject.</p>
        <MyTasksTable tasks={mine} projects={projects} runs={runs} csrf={page.csrf} canDecide={isWritable(page.actor)} />
      </Layout>
    );
  }

  /** A refused action: 409 (already finished, or the wrong action for the task) on My tasks; the rest to the error page. */
  async function refused(reply: FastifyReply, page: PageContext, error: unknown) {
    const refusal = pageRefusal(reply, error, [409]);
    return sendPage(reply, await myTasksPage(page, { errors: [{ field: null, message: sentence(refusal.message) }] }), refusal.status);
  }

  async function resolve(reply: FastifyReply, page: PageContext, taskId: string, resolution: TaskResolution, back: string | undefined) {
    let task: Task;
    try {
      task = await tasks.resolve(page.actor, taskId, resolution);
    } catch (error) {
      return refused(reply, page, error);
    }
    return seeOther(reply, returnTo(back), { notice: `Task "${task.title}" ${DONE_WORDS[resolution.action]}.` });
  }

  app.get('/tasks', { schema: pageSchema() }, async (request, reply) => {
    const page = pageContext(request);
    return sendPage(reply, await myTasksPage(page));
  });

  app.post('/tasks/:id/done', { schema: { hide: true, params: TaskParams, body: ActionBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    return resolve(reply, page, pathId(request.params.id, 'task'), { action: 'done' }, request.body.back);
  });

  app.post('/tasks/:id/approve', { schema: { hide: true, params: TaskParams, body: ActionBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    return resolve(reply, page, pathId(request.params.id, 'task'), { action: 'approve' }, request.body.back);
  });

  app.get('/tasks/:id/reject', { schema: { ...pageSchema(RejectQuery), params: TaskParams } }, async (request, reply) => {
    const page = pageContext(request);
    const task = await tasks.get(page.actor, pathId(request.params.id, 'task'));
    // The page of an action the person (or a read-only workspace) cannot take answers 403, as the action itself would.
    if (!mayFinishTask(page.actor, task)) throw errors.forbidden('only the assignee or an admin can finish this task');
    authorizeChange(page.actor, 'tasks', 'read');
    if (task.status !== 'open' || task.kind !== 'approval') {
      const message = task.status !== 'open' ? `this task is already ${task.status === 'done' ? 'done' : 'cancelled'}` : 'this task is not an approval: mark it done';
      return refused(reply, page, errors.conflict(message));
    }
    const project = await services.projects.get(page.actor, task.project_id);
    return sendPage(reply, <RejectView page={page} task={task} projectName={project.name} back={returnTo(request.query.back)} />);
  });

  app.post('/tasks/:id/reject', { schema: { hide: true, params: TaskParams, body: RejectBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const taskId = pathId(request.params.id, 'task');
    const { back, reason = '' } = request.body;
    let task: Task;
    try {
      task = await tasks.resolve(page.actor, taskId, { action: 'reject', reason });
    } catch (error) {
      if (!(error instanceof DomainError) || error.status !== 400) return refused(reply, page, error);
      // A reason the service refuses (too long): the confirmation again, with what was typed.
      const task = await tasks.get(page.actor, taskId);
      const project = await services.projects.get(page.actor, task.project_id);
      const problems = formErrors(error, { reason: 'Reason' });
      return sendPage(reply, <RejectView page={page} task={task} projectName={project.name} back={returnTo(back)} reason={reason} errors={problems} />, 400);
    }
    return seeOther(reply, returnTo(back), { notice: `Task "${task.title}" ${DONE_WORDS.reject}.` });
  });
};

interface RejectViewProps {
  page: PageContext;
  task: Task;
  projectName: string;
  back: string;
  reason?: string;
  errors?: FormError[];
}

function RejectView({ page, task, projectName, back, reason = '', errors: problems }: RejectViewProps) {
  return (
    <Layout title="Reject approval" viewer={page.viewer} csrf={page.csrf} current={HERE} errors={problems}>
      <p class="lead">
        Reject <strong>{task.title}</strong> in project <a href={projectHref(task.project_id)}>{projectName}</a>?
      </p>
      <p>
        {task.run_id ? (
          <>
            Its <a href={runHref(task.run_id)}>run</a> fails at once, with the reason below if you give one.
          </>
        ) : (
          'The approval is finished as rejected.'
        )}{' '}
        This cannot be undone.
      </p>
      <form method="post" action={`/dashboard/tasks/${encodeURIComponent(task.id)}/reject`}>
        <CsrfField token={page.csrf} />
        <input type="hidden" name="back" value={back} />
        <TextArea id="reason" label="Reason" value={reason} error={errorFor(problems, 'reason')} hint="Optional: why, for the run's error and the audit log." maxLength={10_000} />
        <div class="actions">
          <button type="submit" class="button danger">
            Reject
          </button>
          <a href={back}>Keep the task open</a>
        </div>
      </form>
    </Layout>
  );
}
