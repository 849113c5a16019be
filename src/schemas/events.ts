import { Type, type Static, type TObject } from '@sinclair/typebox';

/** Every event the service emits (CONTRACT 7): the outbox records them, subscriptions choose among them. */
export const EVENT_TYPES = [
  'project.created',
  'project.updated',
  'project.deleted',
  'workflow.completed',
  'workflow.failed',
  'task.assigned',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

// The bodies the delivery worker sends (CONTRACT 7, DASHBOARD 7). They document what the builders in
// src/services/projects/projects-service.ts and src/services/workflows/run-transitions.ts produce: every object is closed
// (additionalProperties: false) so test/worker/event-payloads.test.ts fails when a builder adds, drops or renames
// a field without this file (and so the OpenAPI document and the client's types) following.

const DateTime = (description: string) => Type.String({ format: 'date-time', description, examples: ['2026-11-22T09:30:00.000Z'] });
const NullableDateTime = (description: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description, examples: ['2026-11-22T09:30:00.000Z'] });
const Id = (prefix: string, description: string) =>
  Type.String({ pattern: `^${prefix}_[0-9a-z]+$`, description, examples: [`${prefix}_0123456789abcdefghijklmn`] });
const NullableId = (prefix: string, description: string) =>
  Type.Union([Type.String({ pattern: `^${prefix}_[0-9a-z]+$` }), Type.Null()], { description });

// Not titled: the API's own ProjectStatus schema (src/schemas/projects.ts) carries that title, and a
// second schema under the same title would clash when titled schemas are hoisted into components.
const ProjectStatus = () =>
  Type.Union([Type.Literal('active'), Type.Literal('archived'), Type.Literal('draft')], { description: 'The project status: active, archived or draft.' });

const ProjectVisibility = () =>
  Type.Union([Type.Literal('organization'), Type.Literal('private')], {
    description: 'Who sees the project: organization (every member) or private (its collaborators, admins and owners).',
  });

const projectFields = {
  project_id: Id('proj', 'The project.'),
  name: Type.String({ minLength: 1, description: 'The project name.' }),
  description: Type.Union([Type.String(), Type.Null()], { description: 'The project description; null when it has none.' }),
  status: ProjectStatus(),
  visibility: ProjectVisibility(),
  created_at: DateTime('When the project was created.'),
  updated_at: DateTime('When the project was last changed (for project.updated: this change).'),
};

export const ProjectEventData = Type.Object(projectFields, {
  additionalProperties: false,
  title: 'ProjectEventData',
  description: 'The project as it stands after the change.',
});

export const ProjectPreviousValues = Type.Object(
  {
    name: Type.Optional(Type.String({ description: 'The name before the change.' })),
    description: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The description before the change.' })),
    status: Type.Optional(ProjectStatus()),
    visibility: Type.Optional(ProjectVisibility()),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    title: 'ProjectPreviousValues',
    description: 'The old values of exactly the fields that changed; a field that did not change is absent.',
  },
);

export const ProjectUpdatedEventData = Type.Object(
  { ...projectFields, previous: ProjectPreviousValues },
  { additionalProperties: false, title: 'ProjectUpdatedEventData', description: 'The project after the change, and `previous`: what the changed fields held before.' },
);

export const ProjectDeletedEventData = Type.Object(
  {
    project_id: Id('proj', 'The deleted project.'),
    name: Type.String({ minLength: 1, description: 'Its name when it was deleted.' }),
    status: ProjectStatus(),
  },
  { additionalProperties: false, title: 'ProjectDeletedEventData', description: 'The project that was deleted, as it was.' },
);

const runFields = {
  workflow_id: Id('wf', 'The workflow the run belongs to.'),
  project_id: Id('proj', "The workflow's project."),
  run_id: Id('run', 'The run that ended.'),
};

export const WorkflowCompletedEventData = Type.Object(
  {
    ...runFields,
    status: Type.Literal('completed'),
    started_at: NullableDateTime('When the run started its first step.'),
    finished_at: DateTime('When the run completed.'),
  },
  { additionalProperties: false, title: 'WorkflowCompletedEventData', description: 'A run that completed its last step.' },
);

export const WorkflowErrorCode = Type.Union([Type.Literal('approval_rejected'), Type.Literal('task_cancelled'), Type.Literal('cancelled')], {
  title: 'WorkflowErrorCode',
  description: 'Why the run failed: an approval was rejected, a step\'s task was cancelled, or someone cancelled the run ("Cancel run").',
});

export const WorkflowFailedEventData = Type.Object(
  {
    ...runFields,
    status: Type.Literal('failed'),
    started_at: NullableDateTime('When the run started its first step; null for a run cancelled before it started.'),
    finished_at: DateTime('When the run failed.'),
    error: Type.String({ description: 'A sentence saying what happened, for people.' }),
    error_code: WorkflowErrorCode,
  },
  { additionalProperties: false, title: 'WorkflowFailedEventData', description: 'A run that ended early.' },
);

export const TaskAssignedEventData = Type.Object(
  {
    task_id: Id('task', 'The task.'),
    project_id: Id('proj', "The task's project."),
    title: Type.String({ description: 'The task title.' }),
    assignee_id: Id('user', 'The user the task is now assigned to.'),
    previous_assignee_id: NullableId('user', 'Who had it before; null for a first assignment.'),
    assigned_by: NullableId('user', 'The user who assigned it; null when the service did (a run starting a step) or the command line.'),
    workflow_id: NullableId('wf', 'The workflow whose run created the task; null for a task created on its own.'),
    run_id: NullableId('run', 'The run that created the task; null for a task created on its own.'),
    due_at: NullableDateTime('When the task is due; null when it has no due date.'),
  },
  { additionalProperties: false, title: 'TaskAssignedEventData', description: 'A task that was assigned or reassigned to a user.' },
);

const EXAMPLE_TIME = '2026-11-22T09:30:00.000Z';
const PROJECT_ID = 'proj_4k2m9x7q1c8v5b3n6z0w2e4r';
const WORKFLOW_ID = 'wf_7t3y8u1i5o9p2a6s4d0f3g7h';
const RUN_ID = 'run_2j6k0l4z8x1c5v9b3n7m2q6w';

const envelope = <E extends EventType, D extends TObject>(event: E, data: D, title: string, description: string, example: { event: E; timestamp: string; data: Static<D> }) =>
  Type.Object(
    {
      event: Type.Literal(event, { description: 'The event name; the same as the X-Service-Event header.' }),
      timestamp: DateTime('When the event occurred (UTC, millisecond precision); the same on every attempt.'),
      data,
    },
    { additionalProperties: false, title, description, examples: [example] },
  );

export const ProjectCreatedEvent = envelope(
  'project.created',
  ProjectEventData,
  'ProjectCreatedEvent',
  'Sent when a project is created (POST /v1/projects or the dashboard).',
  {
    event: 'project.created',
    timestamp: EXAMPLE_TIME,
    data: { project_id: PROJECT_ID, name: 'Website relaunch', description: 'New site for the spring campaign', status: 'active', visibility: 'organization', created_at: EXAMPLE_TIME, updated_at: EXAMPLE_TIME },
  },
);

export const ProjectUpdatedEvent = envelope(
  'project.updated',
  ProjectUpdatedEventData,
  'ProjectUpdatedEvent',
  "Sent when a project's name, description, status or visibility changes. An update that changes nothing sends no event.",
  {
    event: 'project.updated',
    timestamp: '2026-11-23T14:05:12.345Z',
    data: {
      project_id: PROJECT_ID,
      name: 'Website relaunch',
      description: 'New site for the spring campaign',
      status: 'archived',
      visibility: 'organization',
      created_at: EXAMPLE_TIME,
      updated_at: '2026-11-23T14:05:12.345Z',
      previous: { status: 'active' },
    },
  },
);

export const ProjectDeletedEvent = envelope(
  'project.deleted',
  ProjectDeletedEventData,
  'ProjectDeletedEvent',
  'Sent when a project is deleted, with its workflows, runs and tasks (no workflow.failed fires for those runs).',
  {
    event: 'project.deleted',
    timestamp: '2026-11-24T08:00:00.000Z',
    data: { project_id: PROJECT_ID, name: 'Website relaunch', status: 'archived' },
  },
);

export const WorkflowCompletedEvent = envelope(
  'workflow.completed',
  WorkflowCompletedEventData,
  'WorkflowCompletedEvent',
  'Sent when a workflow run completes its last step.',
  {
    event: 'workflow.completed',
    timestamp: '2026-11-22T11:42:07.120Z',
    data: {
      workflow_id: WORKFLOW_ID,
      project_id: PROJECT_ID,
      run_id: RUN_ID,
      status: 'completed',
      started_at: '2026-11-22T10:00:00.500Z',
      finished_at: '2026-11-22T11:42:07.120Z',
    },
  },
);

export const WorkflowFailedEvent = envelope(
  'workflow.failed',
  WorkflowFailedEventData,
  'WorkflowFailedEvent',
  'Sent when a workflow run ends early: an approval rejected, a step\'s task cancelled, or the run cancelled.',
  {
    event: 'workflow.failed',
    timestamp: '2026-11-22T10:15:30.000Z',
    data: {
      workflow_id: WORKFLOW_ID,
      project_id: PROJECT_ID,
      run_id: RUN_ID,
      status: 'failed',
      started_at: '2026-11-22T10:00:00.500Z',
      finished_at: '2026-11-22T10:15:30.000Z',
      error: 'Approval "Sign off" was rejected by Olive Owner: the copy is not final',
      error_code: 'approval_rejected',
    },
  },
);

export const TaskAssignedEvent = envelope(
  'task.assigned',
  TaskAssignedEventData,
  'TaskAssignedEvent',
  'Sent when a task is assigned to a user, or reassigned to another (not when the assignee is cleared or stays the same).',
  {
    event: 'task.assigned',
    timestamp: '2026-11-22T10:00:00.500Z',
    data: {
      task_id: 'task_9c1v5b7n3m0q8w2e6r4t1y5u',
      project_id: PROJECT_ID,
      title: 'Review the copy',
      assignee_id: 'user_3h8j2k6l0z4x9c1v7b5n3m8q',
      previous_assignee_id: null,
      assigned_by: null,
      workflow_id: WORKFLOW_ID,
      run_id: RUN_ID,
      due_at: '2026-11-25T10:00:00.500Z',
    },
  },
);

/** Every event body schema by event name: the `satisfies` keeps this in step with EVENT_TYPES. */
export const EVENT_SCHEMAS = {
  'project.created': ProjectCreatedEvent,
  'project.updated': ProjectUpdatedEvent,
  'project.deleted': ProjectDeletedEvent,
  'workflow.completed': WorkflowCompletedEvent,
  'workflow.failed': WorkflowFailedEvent,
  'task.assigned': TaskAssignedEvent,
} satisfies Record<EventType, TObject>;

/** Each event's example `data` (the one this document shows), for test events (POST /v1/webhooks/:id/test). */
export function eventExamples(): Record<EventType, Record<string, unknown>> {
  const out = {} as Record<EventType, Record<string, unknown>>;
  for (const [event, schema] of Object.entries(EVENT_SCHEMAS) as [EventType, TObject][]) {
    const example = (schema.examples as { data: Record<string, unknown> }[])[0]!;
    out[event] = structuredClone(example.data);
  }
  return out;
}
