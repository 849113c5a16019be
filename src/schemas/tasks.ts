import { Type } from '@sinclair/typebox';
import { ListEnvelope, Nullable, PageQuery, Timestamp } from './common.js';

const NullableText = (description: string) => Nullable(Type.String(), { description });
const NullableTime = (description: string) => Nullable(Timestamp, { description });
const TaskStatus = Type.Union([Type.Literal('open'), Type.Literal('done'), Type.Literal('cancelled')], { title: 'TaskStatus' });

export const Task = Type.Object(
  {
    id: Type.String({ examples: ['task_0123456789abcdefghijklmn'] }),
    project_id: Type.String(),
    kind: Type.Union([Type.Literal('todo'), Type.Literal('approval')], { description: '`todo` is marked done; `approval` is approved or rejected.' }),
    title: Type.String(),
    description: NullableText('null when it has none.'),
    status: TaskStatus,
    decision: Type.Unsafe<'approved' | 'rejected' | null>({
      type: ['string', 'null'],
      enum: ['approved', 'rejected', null],
      description: 'An approval\'s decision once made; null otherwise.',
    }),
    assignee_id: NullableText('The member it is assigned to; null when unassigned.'),
    due_at: NullableTime('When it is due; null when it has no due date.'),
    workflow_id: NullableText('The workflow whose run created it; null for a task created on its own.'),
    run_id: NullableText('The run that created it; null for a task created on its own.'),
    completed_by: NullableText('Who finished it (a user id); null while open, or when the operator did.'),
    completed_at: NullableTime('When it was finished; null while open.'),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Task', title: 'Task' },
);

// List items carry the contract's fields (CONTRACT 13), as the project and user lists do (CONTRACT 3); a
// task's description and who finished it are read one task at a time.
const { description: _description, completed_by: _completedBy, completed_at: _completedAt, ...listFields } = Task.properties;
export const TaskListItem = Type.Object(listFields, { title: 'TaskListItem' });

export const TaskList = ListEnvelope(TaskListItem, 'TaskList');

export const ListTasksQuery = Type.Object({
  ...PageQuery,
  assignee_id: Type.Optional(Type.String({ maxLength: 128, description: 'A member\'s id, or `me` for the key\'s user.' })),
  status: Type.Optional(TaskStatus),
  project_id: Type.Optional(Type.String({ maxLength: 128 })),
});

const Title = Type.String({ maxLength: 1024, description: '1 to 255 characters (code points), not blank (at least one character that is neither white space nor invisible).' });
const DueAt = Type.Union([Type.String({ maxLength: 64 }), Type.Null()], {
  description: 'A time (`2026-12-31T17:00:00Z`) or a date (`2026-12-31`: the end of that day, UTC); null or "" clears it.',
});
const Assignee = Type.Union([Type.String({ maxLength: 128 }), Type.Null()], { description: 'A member of the organisation; null or "" leaves it unassigned.' });

export const CreateTaskBody = Type.Object(
  {
    title: Title,
    description: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'At most 10,000 characters.' })),
    assignee_id: Type.Optional(Assignee),
    due_at: Type.Optional(DueAt),
  },
  { additionalProperties: false, title: 'CreateTaskRequest' },
);

export const UpdateTaskBody = Type.Object(
  { title: Type.Optional(Title), assignee_id: Type.Optional(Assignee), due_at: Type.Optional(DueAt) },
  { additionalProperties: false, title: 'UpdateTaskRequest', description: 'Only the fields given change. A new assignee fires `task.assigned`.' },
);

export const ReasonBody = Type.Object(
  { reason: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'At most 10,000 characters; kept in the audit log (and, for a run\'s task, in the run\'s error).' })) },
  { additionalProperties: false, title: 'TaskReasonRequest' },
);

export const EmptyBody = Type.Object({}, { additionalProperties: false, title: 'EmptyRequest' });
