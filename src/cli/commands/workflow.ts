import { cliActor } from '../../services/access/actor.js';
import type { Run } from '../../services/workflows/runs-view.js';
import { describeStep, formatStepDuration, type StepInput } from '../../services/workflows/workflow-steps.js';
import type { Workflow } from '../../services/workflows/workflows-service.js';
import { ORG_OPTION, required, UsageError, type CommandGroup, type CommandResult } from '../command.js';
import { formatFields, formatTable } from '../output.js';
import { withContainer } from '../runtime.js';
import { runFields } from './run.js';

const WORKFLOW_ID = [{ name: 'WORKFLOW_ID', description: 'the workflow id (wf_...)' }] as const;

/** How many runs `workflow show` lists, newest first. */
export const SHOWN_RUNS = 20;

const STEP_FIELDS = new Set(['type', 'title', 'assignee_id', 'due_in', 'duration']);

const STEPS_HELP =
  'STEPS is a JSON array of steps, in order, each {"type": "task" | "approval" | "wait", "title", "assignee_id",\n' +
  '"due_in", "duration"}: a task or approval needs a title and may name an assignee (user_...); a task may\n' +
  'have "due_in" (its due date is that long after the step starts); a wait needs "duration". Durations as\n' +
  'typed: 30m, 2h, 3d, 1d 12h, or ISO 8601 (PT15M). For example:\n' +
  '  --steps \'[{"type":"task","title":"Draft","due_in":"1d"},{"type":"wait","duration":"2h"},\n' +
  '            {"type":"approval","title":"Sign off","assignee_id":"user_..."}]\'';

/**
 * `--steps` is read here, before the database is touched: text that is not a JSON array of step objects
 * is a usage error (exit 2). Whether the steps make sense (a title where one is needed, a real member,
 * a duration in range) is the service's call, and its errors name the step (`steps[1].duration`).
 */
export function parseStepsOption(text: string): StepInput[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--steps is not valid JSON (${err instanceof Error ? err.message : String(err)})`, 'workflow create');
  }
  if (!Array.isArray(parsed)) throw new UsageError('--steps must be a JSON array of steps', 'workflow create');
  return parsed.map((item: unknown, i) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      throw new UsageError(`--steps: steps[${i}] must be an object`, 'workflow create');
    }
    const step: Record<string, string | null> = {};
    for (const [key, value] of Object.entries(item)) {
      // A misspelt field ("assignee") would otherwise be dropped without a word.
      if (!STEP_FIELDS.has(key)) throw new UsageError(`--steps: steps[${i}] has an unknown field "${key}"; fields are ${[...STEP_FIELDS].join(', ')}`, 'workflow create');
      if (typeof value !== 'string' && value !== null) throw new UsageError(`--steps: steps[${i}].${key} must be a string`, 'workflow create');
      step[key] = value;
    }
    return { type: step.type ?? '', title: step.title, assignee_id: step.assignee_id, due_in: step.due_in, duration: step.duration };
  });
}

function stepsTable(workflow: Workflow): string {
  return formatTable(
    workflow.steps.map((s, i) => ({
      number: i + 1,
      step: describeStep({ kind: s.type, title: s.title, duration_ms: s.duration_ms }),
      assignee: s.assignee_id,
      due_in: s.due_in_ms === null ? null : formatStepDuration(s.due_in_ms),
    })),
    ['number', 'step', 'assignee', 'due_in'],
  );
}

function workflowText(workflow: Workflow): string {
  const head = formatFields([
    ['Workflow', workflow.id],
    ['Project', workflow.project_id],
    ['Name', workflow.name],
    ['Description', workflow.description],
    ['Version', workflow.version],
    ['Updated', workflow.updated_at],
  ]);
  return `${head}\n\nSteps\n${stepsTable(workflow)}`;
}

function shownRun(run: Run): CommandResult {
  return { data: run, text: formatFields(runFields(run)) };
}

export const workflowGroup: CommandGroup = {
  name: 'workflow',
  summary: 'workflows: create, show and run',
  commands: [
    {
      name: 'create',
      summary: 'create a workflow in a project, with its steps',
      details: STEPS_HELP,
      options: {
        org: ORG_OPTION,
        project: { type: 'string', value: 'PROJECT', description: 'project id (proj_...)', required: true },
        name: { type: 'string', value: 'NAME', description: 'workflow name (1 to 255 characters, not blank)', required: true },
        description: { type: 'string', value: 'TEXT', description: 'what the workflow is for (up to 10,000 characters)' },
        steps: { type: 'string', value: 'STEPS', description: `the steps as a JSON array (at most 20; see above)` },
      },
      async run(input) {
        const steps = input.options.steps === undefined ? undefined : parseStepsOption(input.options.steps);
        const workflow = await withContainer(input, (c) =>
          c.services.workflows.create(cliActor(required(input, 'org')), required(input, 'project'), {
            name: required(input, 'name'),
            description: input.options.description,
            steps,
          }),
        );
        return { data: workflow, text: workflowText(workflow) };
      },
    },
    {
      name: 'show',
      summary: `show a workflow with its steps and its latest ${SHOWN_RUNS} runs`,
      options: { org: ORG_OPTION },
      positionals: WORKFLOW_ID,
      async run(input) {
        const actor = cliActor(required(input, 'org'));
        const id = input.args[0]!;
        const { workflow, runs } = await withContainer(input, async (c) => ({
          workflow: await c.services.workflows.get(actor, id),
          runs: await c.services.workflows.listRuns(actor, id, { limit: SHOWN_RUNS, cursor: undefined }),
        }));
        const table = formatTable(runs.items, ['id', 'status', 'current_step', 'step_count', 'started_by_label', 'created_at', 'finished_at', 'error_code']);
        const more = runs.nextCursor ? `\n(the latest ${SHOWN_RUNS} runs; older ones are not shown)` : '';
        return { data: { ...workflow, runs: runs.items }, text: `${workflowText(workflow)}\n\nRuns\n${table}${more}` };
      },
    },
    {
      name: 'run',
      summary: 'start a run of a workflow (queued; a running serve or worker carries it out)',
      details:
        'The run copies the steps as they are now. A serve or worker process starts it within its poll interval;\n' +
        'follow it with "run show RUN_ID".',
      options: { org: ORG_OPTION },
      positionals: WORKFLOW_ID,
      async run(input) {
        return shownRun(await withContainer(input, (c) => c.services.workflows.startRun(cliActor(required(input, 'org')), input.args[0]!)));
      },
    },
  ],
};
