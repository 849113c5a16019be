import { cliActor } from '../../services/access/actor.js';
import type { Run, RunDetail } from '../../services/workflows/runs-view.js';
import { describeStep } from '../../services/workflows/workflow-steps.js';
import { ORG_OPTION, required, type CommandGroup } from '../command.js';
import { formatFields, formatTable } from '../output.js';
import { withContainer } from '../runtime.js';

const RUN_ID = [{ name: 'RUN_ID', description: 'the run id (run_...)' }] as const;

/** A run's fields as `formatFields` rows; shared with `workflow run`. */
export function runFields(run: Run): Array<readonly [string, unknown]> {
  return [
    ['Run', run.id],
    ['Number', `#${run.number}`],
    ['Workflow', `${run.workflow_id} (${run.workflow_name}, version ${run.workflow_version})`],
    ['Project', run.project_id],
    ['Status', run.status],
    ['Step', `${run.current_step} of ${run.step_count}`],
    ['Started by', run.started_by ?? run.started_by_label],
    ['Created', run.created_at],
    ['Started', run.started_at],
    ['Finished', run.finished_at],
    ['Wakes', run.wakes_at],
    ['Error', run.error_code ? `${run.error} (${run.error_code})` : run.error],
  ];
}

function detailText(run: RunDetail): string {
  const steps = formatTable(
    run.steps.map((s) => ({
      number: s.number,
      step: describeStep({ kind: s.type, title: s.title, duration_ms: s.duration_ms }),
      status: s.status,
      outcome: s.outcome,
      task: s.task_id,
      // The task's assignee now: it may have been reassigned since the step started.
      assignee: s.task ? s.task.assignee_id : s.assignee_id,
      due: s.task?.due_at,
    })),
    ['number', 'step', 'status', 'outcome', 'task', 'assignee', 'due'],
  );
  return `${formatFields(runFields(run))}\n\nSteps\n${steps}`;
}

export const runGroup: CommandGroup = {
  name: 'run',
  summary: 'workflow runs: show and cancel',
  commands: [
    {
      name: 'show',
      summary: 'show a run with each of its steps and their tasks',
      options: { org: ORG_OPTION },
      positionals: RUN_ID,
      async run(input) {
        const run = await withContainer(input, (c) => c.services.runs.get(cliActor(required(input, 'org')), input.args[0]!));
        return { data: run, text: detailText(run) };
      },
    },
    {
      name: 'cancel',
      summary: 'cancel an active run: it fails at once (error_code cancelled) and its open task is cancelled',
      options: { org: ORG_OPTION },
      positionals: RUN_ID,
      async run(input) {
        const run = await withContainer(input, (c) => c.services.runs.cancel(cliActor(required(input, 'org')), input.args[0]!));
        return { data: run, text: formatFields(runFields(run)) };
      },
    },
  ],
};
