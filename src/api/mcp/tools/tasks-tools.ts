import { readDueDate } from '../../../services/workflows/tasks-service.js';
import { CreateTaskBody, ListTasksQuery, UpdateTaskBody } from '../../../schemas/tasks.js';
import { toListEnvelope } from '../../../services/shared/pagination.js';
import { Id, input, tool, type McpTool } from '../mcp-tool.js';

const dueAt = (value: string | null | undefined) => (value === undefined ? undefined : value === null ? null : readDueDate(value));

/** Tasks. */
export const TASK_TOOLS: readonly McpTool[] = [
  tool({
    name: 'list_tasks',
    title: 'List tasks',
    description: 'Tasks you can see across projects, newest first. `assignee_id: "me"` lists yours; filter by status or project.',
    input: input({ ...ListTasksQuery.properties }),
    resource: 'tasks',
    action: 'read',
    idempotent: true,
    run: async (actor, { limit = 20, cursor, ...filter }, s) => toListEnvelope(await s.tasks.list(actor, filter, { limit, cursor })),
  }),
  tool({
    name: 'get_task',
    title: 'Read a task',
    description: 'One task by id.',
    input: input({ task_id: Id('task') }),
    resource: 'tasks',
    action: 'read',
    idempotent: true,
    run: (actor, { task_id }, s) => s.tasks.get(actor, task_id),
  }),
  tool({
    name: 'create_task',
    title: 'Create a task',
    description: 'Creates a to-do in a project, optionally assigned and with a due date.',
    input: input({ project_id: Id('project'), ...CreateTaskBody.properties }),
    resource: 'tasks',
    action: 'create',
    project: true,
    idempotent: false,
    run: (actor, { project_id, due_at, ...rest }, s) => s.tasks.create(actor, project_id, { ...rest, due_at: dueAt(due_at) }),
  }),
  tool({
    name: 'update_task',
    title: 'Update a task',
    description: "Changes a task's title, description, assignee or due date; fields left out stay as they are.",
    input: input({ task_id: Id('task'), ...UpdateTaskBody.properties }),
    resource: 'tasks',
    action: 'update',
    project: true,
    idempotent: true,
    run: (actor, { task_id, due_at, ...rest }, s) => s.tasks.update(actor, task_id, { ...rest, due_at: dueAt(due_at) }),
  }),
  tool({
    name: 'complete_task',
    title: 'Mark a task done',
    description: 'Marks a to-do done (its assignee, or an admin or owner); a run waiting on it moves on.',
    input: input({ task_id: Id('task') }),
    resource: 'tasks',
    action: 'finish',
    idempotent: false,
    run: (actor, { task_id }, s) => s.tasks.resolve(actor, task_id, { action: 'done' }),
  }),
];
