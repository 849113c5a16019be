import { Type } from '@sinclair/typebox';
import { ListEnvelope, PageQuery, Timestamp } from './common.js';

/** The contract's bound on a workflow's length (DASHBOARD 7); WORKFLOW_MAX_STEPS may lower it. */
export const MAX_STEPS = 20;

const NullableTime = (description: string) => Type.Union([Timestamp, Type.Null()], { description });
const NullableText = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

const StepType = Type.Union([Type.Literal('task'), Type.Literal('approval'), Type.Literal('wait')], {
  title: 'StepType',
  description: '`task` (a to-do for a person), `approval` (approve or reject) or `wait` (a timer).',
});

const Duration = (description: string) =>
  Type.Union([Type.String({ maxLength: 64 }), Type.Null()], {
    description: `${description} Written as \`90s\`, \`15m\`, \`2h\`, \`1d 12h\` or ISO 8601 (\`PT15M\`); always returned as ISO 8601.`,
    examples: ['P1DT12H'],
  });

const stepFields = {
  type: StepType,
  title: NullableText('Required for task and approval steps; optional for a wait.'),
  assignee_id: NullableText('Task and approval steps: the member the task goes to; null leaves it unassigned.'),
  due_in: Duration('Task steps: the task is due this long after the step starts.'),
  duration: Duration('Wait steps (required there): 1 second to 30 days.'),
};

export const WorkflowStep = Type.Object(
  { id: Type.String({ examples: ['step_0123456789abcdefghijklmn'] }), ...stepFields },
  { title: 'WorkflowStep' },
);

export const Workflow = Type.Object(
  {
    id: Type.String({ examples: ['wf_0123456789abcdefghijklmn'] }),
    project_id: Type.String(),
    name: Type.String(),
    description: NullableText('null when it has none.'),
    version: Type.Integer({ minimum: 1, description: 'Goes up by one with every change; a run records the version it copied.' }),
    steps: Type.Array(WorkflowStep),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Workflow', title: 'Workflow' },
);

export const WorkflowList = ListEnvelope(Workflow, 'WorkflowList');

const StepInput = Type.Object(
  {
    id: Type.Optional(Type.String({ maxLength: 128, description: 'PUT only: an existing step of this workflow keeps its id; leave it out for a new step.' })),
    type: StepType,
    title: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    assignee_id: Type.Optional(Type.Union([Type.String({ maxLength: 128 }), Type.Null()])),
    due_in: Type.Optional(Duration('Task steps only.')),
    duration: Type.Optional(Duration('Wait steps only, and required there.')),
  },
  { additionalProperties: false, title: 'WorkflowStepInput' },
);

const Name = Type.String({ maxLength: 1024, description: '1 to 255 characters (code points), not blank (at least one character that is neither white space nor invisible).' });
const Description = Type.Union([Type.String(), Type.Null()], { description: 'At most 10,000 characters; "" or null clears it.' });
const Steps = Type.Array(StepInput, { maxItems: MAX_STEPS, description: `In order; at most ${MAX_STEPS} (WORKFLOW_MAX_STEPS may lower it).` });

export const CreateWorkflowBody = Type.Object(
  { name: Name, description: Type.Optional(Description), steps: Type.Optional(Steps) },
  { additionalProperties: false, title: 'CreateWorkflowRequest' },
);

export const ReplaceWorkflowBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    steps: Steps,
    version: Type.Optional(Type.Integer({ description: 'The version read: when the workflow has changed since, the PUT is a 409 rather than a lost update.' })),
    // What GET returns can be PUT back unchanged: its read-only fields are accepted and ignored.
    id: Type.Optional(Type.String({ description: 'Read-only; ignored.' })),
    project_id: Type.Optional(Type.String({ description: 'Read-only; ignored.' })),
    created_at: Type.Optional(Type.String({ description: 'Read-only; ignored.' })),
    updated_at: Type.Optional(Type.String({ description: 'Read-only; ignored.' })),
  },
  { additionalProperties: false, title: 'ReplaceWorkflowRequest', description: 'The whole workflow: what GET returns, changed where it should change.' },
);

const RunStatus = Type.Union(
  ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled'].map((s) => Type.Literal(s)),
  { title: 'RunStatus' },
);
const RunErrorCode = Type.Union([Type.Literal('approval_rejected'), Type.Literal('task_cancelled'), Type.Literal('cancelled'), Type.Null()], {
  description: 'Why a failed or cancelled run ended; null otherwise.',
});

export const RunStep = Type.Object(
  {
    position: Type.Integer({ minimum: 0, description: 'The step\'s place in the run, from 0.' }),
    step_id: Type.String({ description: 'The workflow step it was copied from.' }),
    type: StepType,
    title: NullableText('The step\'s title.'),
    status: Type.Union([Type.Literal('pending'), Type.Literal('waiting'), Type.Literal('completed'), Type.Literal('failed')]),
    task_id: NullableText('The task a task or approval step created, once started.'),
    started_at: NullableTime('null until the step starts.'),
    finished_at: NullableTime('null until the step ends.'),
  },
  { title: 'RunStep' },
);

const runFields = {
  id: Type.String({ examples: ['run_0123456789abcdefghijklmn'] }),
  workflow_id: Type.String(),
  project_id: Type.String(),
  workflow_version: Type.Integer({ description: 'The workflow version the run copied its steps from.' }),
  number: Type.Integer({ minimum: 0, description: 'The run\'s number within its workflow: 1, 2, 3… in the order runs started ("Run #3"). 0 only for a run started by an older release during an upgrade.' }),
  status: RunStatus,
  created_at: Timestamp,
  started_at: NullableTime('null while queued.'),
  finished_at: NullableTime('null while the run is active.'),
  error: NullableText('Why the run failed, in words; null otherwise.'),
  error_code: RunErrorCode,
};

export const Run = Type.Object({ ...runFields, steps: Type.Array(RunStep) }, { $id: 'Run', title: 'Run' });

export const RunListItem = Type.Object(runFields, { title: 'RunListItem', description: 'A run without its steps: read one run for them.' });

export const RunList = ListEnvelope(RunListItem, 'RunList');

export const ListQuery = Type.Object(PageQuery);
