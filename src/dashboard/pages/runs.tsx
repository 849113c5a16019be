import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { projectTakesNewWork, workflowCanRun } from '../../services/workflows/work-rules.js';
import { isWritable } from '../../services/access/workspace.js';
import { authorizeProjectChange, offered } from '../project-rights.js';
import { isActiveRun } from '../../services/workflows/run-transitions.js';
import { mayFinishTask } from '../../services/workflows/tasks-service.js';
import { runName } from '../../services/shared/run-name.js';
import type { RunDetail, RunStep } from '../../services/workflows/runs-view.js';
import { sentence } from '../../lib/text.js';
import type { AppDeps } from '../../http/app-deps.js';
import { memberLabel } from '../members-options.js';
import { pageContext, pageRefusal, pathId, seeOther, sendPage, type PageContext } from '../context.js';
import { FormBody, htmlResponses, pageSchema } from '../schemas.js';
import { progressFragment, progressVersion } from '../progress.js';
import { ActionForm, NoValue, CsrfField, DangerItem, DangerLink, DangerZone, Table, Time, type FormError } from '../views/components.js';
import { Layout } from '../views/layout.js';
import { TaskActions } from '../views/task-actions.js';
import { RUN_STATUS_WORDS, runHref, startedBy, STEP_TYPE_WORDS, TASK_STATUS_WORDS, workflowHref } from '../views/workflow-views.js';

const PROJECTS = '/dashboard/projects';

const RunParams = Type.Object({ run: Type.String({ maxLength: 128 }) });

/** What the run page shows that moves: when it changes, the page is shown again. */
function runState(run: RunDetail): unknown {
  return [run.status, run.current_step, run.steps.map((s) => [s.status, s.outcome, s.task?.status ?? null, s.task?.assignee_id ?? null])];
}

/** What a step is doing or how it ended, in words (DASHBOARD 3). */
function StepState({ step, run, members, paused }: { step: RunStep; run: RunDetail; members: ReadonlyMap<string, string>; paused: boolean }) {
  const active = isActiveRun(run);
  switch (step.status) {
    case 'pending':
      return <>Not started</>;
    case 'waiting': {
      // A run that ended early (cancelled) leaves its current step as it was: it stopped with the run.
      if (!active || step.task?.status === 'cancelled') return <>Cancelled</>;
      if (step.type === 'wait') {
        if (paused) return <>Paused while the workspace is read-only</>;
        return (
          <>
            Waiting until <Time iso={run.wakes_at} absolute />
          </>
        );
      }
      // The task's assignee now: it may have been reassigned since the step started.
      const assignee = step.task ? step.task.assignee_id : step.assignee_id;
      return <>{assignee ? `Waiting for ${memberLabel(members, assignee)}` : 'Waiting for someone to be assigned'}</>;
    }
    case 'completed':
      return <>{step.outcome === 'approved' ? 'Approved' : step.outcome === 'elapsed' ? 'Elapsed' : 'Done'}</>;
    case 'failed':
      return <>{step.outcome === 'rejected' ? 'Rejected' : 'Cancelled'}</>;
  }
}

function RunStepsTable({ page, run, members, paused }: { page: PageContext; run: RunDetail; members: ReadonlyMap<string, string>; paused: boolean }) {
  const { actor } = page;
  const writable = isWritable(actor);
  return (
    <Table caption="Steps" headers={['Step', 'Type', 'Title', 'State', 'Task']}>
      {run.steps.map((step) => (
        <tr>
          <td>{step.number}</td>
          <td>{STEP_TYPE_WORDS[step.type]}</td>
          <td>{step.title ?? <NoValue />}</td>
          <td>
            <StepState step={step} run={run} members={members} paused={paused} />
          </td>
          <td>
            {step.task && step.task_id ? (
              <div class="task-cell">
                <span>{step.task.decision === 'rejected' ? 'Rejected' : TASK_STATUS_WORDS[step.task.status]}</span>
                <TaskActions
                  task={{ id: step.task_id, kind: step.type === 'approval' ? 'approval' : 'todo', status: step.task.status, title: step.title ?? '' }}
                  csrf={page.csrf}
                  back={runHref(run.id)}
                  canDecide={writable && mayFinishTask(actor, step.task)}
                />
              </div>
            ) : (
              <NoValue />
            )}
          </td>
        </tr>
      ))}
    </Table>
  );
}

interface RunViewProps {
  page: PageContext;
  run: RunDetail;
  members: ReadonlyMap<string, string>;
  /** Whether the viewer may change the run's project's work now (their rights there, the workspace's state). */
  canChange: boolean;
  /** "Run again" posts here: the workflow's run form, when the rules let this viewer start one. */
  runAgain: string | null;
  errors?: FormError[];
}

function RunView({ page, run, members, canChange, runAgain, errors: problems }: RunViewProps) {
  const active = isActiveRun(run);
  // DASHBOARD 10: a read-only workspace's runs do not advance; the page says so instead of promising progress.
  const paused = active && !isWritable(page.actor);
  const canCancel = active && canChange;
  const progress = active && !paused ? { url: `${runHref(run.id)}/progress`, version: progressVersion(runState(run)) } : null;
  return (
    <Layout title={runName(run.number, run.workflow_name)} viewer={page.viewer} csrf={page.csrf} current={PROJECTS} errors={problems} progress={progress}>
      <dl class="facts">
        <div>
          <dt>Workflow</dt>
          <dd>
            <a href={workflowHref(run.project_id, run.workflow_id)}>{run.workflow_name}</a> (version {run.workflow_version})
          </dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>
            <span class="state">{paused ? 'Paused while the workspace is read-only' : RUN_STATUS_WORDS[run.status]}</span>
            {isActiveRun(run) ? ` · step ${run.current_step} of ${run.step_count}` : null}
          </dd>
        </div>
        <div>
          <dt>Started by</dt>
          <dd>{startedBy(run, members)}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <Time iso={run.created_at} />
          </dd>
        </div>
        <div>
          <dt>Finished</dt>
          <dd>{run.finished_at ? <Time iso={run.finished_at} /> : <span class="muted">not yet</span>}</dd>
        </div>
        {run.error ? (
          <div>
            <dt>Error</dt>
            <dd>
              {sentence(run.error)}
            </dd>
          </div>
        ) : null}
      </dl>
      {runAgain ? (
        <div class="actions page-actions">
          <ActionForm action={runAgain} csrf={page.csrf} label="Run again" />
        </div>
      ) : null}
      <RunStepsTable page={page} run={run} members={members} paused={paused} />
      {canCancel ? (
        <DangerZone>
          <DangerItem title="Cancel this run" control={<DangerLink href={`${runHref(run.id)}/cancel`} label="Cancel run" />}>
            The run stops and fails as cancelled, with its open task.
          </DangerItem>
        </DangerZone>
      ) : null}
    </Layout>
  );
}

/** DASHBOARD 3 and 7: a run's steps and their states; members and above cancel an active run. */
export const runsPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const runs = services.runs;

  /** The people the page names: who started the run and whom its steps wait for, one query. */
  function members(page: PageContext, run: RunDetail): Promise<ReadonlyMap<string, string>> {
    const ids = [run.started_by, ...run.steps.map((s) => s.task?.assignee_id ?? s.assignee_id)].filter((id): id is string => id !== null);
    return services.users.names(page.actor.orgId, ids);
  }

  /**
   * The workflow's run form when the run has finished and the viewer may start another now (role, workspace,
   * project, steps). An active run's page (reloaded as it progresses) reads nothing more.
   */
  async function runAgain(page: PageContext, run: RunDetail, canChange: boolean): Promise<string | null> {
    if (isActiveRun(run) || !canChange) return null;
    try {
      const [workflow, project] = await Promise.all([services.workflows.get(page.actor, run.workflow_id), services.projects.get(page.actor, run.project_id)]);
      return projectTakesNewWork(project) && workflowCanRun(workflow) ? `${workflowHref(run.project_id, run.workflow_id)}/run` : null;
    } catch {
      // The workflow (or its project) is gone: there is nothing to run again.
      return null;
    }
  }

  async function runPage(page: PageContext, run: RunDetail, problems?: FormError[]) {
    const { rights } = await services.projects.withRights(page.actor, run.project_id);
    const canChange = offered(page.actor, rights).write;
    return <RunView page={page} run={run} members={await members(page, run)} canChange={canChange} runAgain={await runAgain(page, run, canChange)} errors={problems} />;
  }

  app.get('/runs/:run', { schema: { ...pageSchema(), params: RunParams } }, async (request, reply) => {
    const page = pageContext(request);
    const run = await runs.get(page.actor, pathId(request.params.run, 'run'));
    return sendPage(reply, await runPage(page, run));
  });

  progressFragment<{ run: string }>(app, '/runs/:run/progress', RunParams, async (request) => {
    const run = await runs.get(pageContext(request).actor, pathId(request.params.run, 'run'));
    return { state: runState(run), active: isActiveRun(run) };
  });

  app.get('/runs/:run/cancel', { schema: { ...pageSchema(), params: RunParams } }, async (request, reply) => {
    const page = pageContext(request);
    // The page of an action the role (or a read-only workspace) cannot take answers 403, as the action itself would.
    const run = await runs.get(page.actor, pathId(request.params.run, 'run'));
    await authorizeProjectChange(services, page.actor, run.project_id, 'write');
    if (!isActiveRun(run)) {
      const problems = [{ field: null, message: `This run has already finished (${RUN_STATUS_WORDS[run.status].toLowerCase()}); there is nothing to cancel.` }];
      return sendPage(reply, await runPage(page, run, problems), 409);
    }
    return sendPage(
      reply,
      <Layout title="Cancel run" viewer={page.viewer} csrf={page.csrf} current={PROJECTS}>
        <p class="lead">
          Cancel <strong>{runName(run.number, run.workflow_name)}</strong> (step {run.current_step} of {run.step_count})?
        </p>
        <p>
          The run stops at once and fails as cancelled, and its open task is cancelled with it. Subscriptions to failed runs are told. The run cannot
          be resumed afterwards; you can start a new run of the workflow at any time.
        </p>
        <div class="actions">
          <form method="post" action={`${runHref(run.id)}/cancel`} class="inline-form">
            <CsrfField token={page.csrf} />
            <button type="submit" class="button danger">
              Cancel run
            </button>
          </form>
          <a href={runHref(run.id)}>Back to the run</a>
        </div>
      </Layout>,
    );
  });

  app.post('/runs/:run/cancel', { schema: { hide: true, params: RunParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const runId = pathId(request.params.run, 'run');
    try {
      await runs.cancel(page.actor, runId);
    } catch (error) {
      // 409: it finished meanwhile; the run page says so. 403 and 404 get their error pages.
      const refusal = pageRefusal(reply, error, [409]);
      const run = await runs.get(page.actor, runId);
      return sendPage(reply, await runPage(page, run, [{ field: null, message: sentence(refusal.message) }]), 409);
    }
    return seeOther(reply, runHref(runId), { notice: 'Run cancelled.' });
  });
};
