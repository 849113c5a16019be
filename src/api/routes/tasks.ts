import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../http/app-deps.js';
import { emptyBodyIsObject, extension } from './route-parts.js';
import { actorOf } from '../hooks/auth.js';
import { authErrorResponses, ErrorResponse, IdParams } from '../../schemas/common.js';
import { CreateTaskBody, EmptyBody, ListTasksQuery, ReasonBody, Task, TaskList, UpdateTaskBody } from '../../schemas/tasks.js';
import { ListQuery } from '../../schemas/workflows.js';
import { toListEnvelope } from '../../services/shared/pagination.js';
import { readDueDate, type TaskResolution } from '../../services/workflows/tasks-service.js';

const tags = ['Tasks'];
const changeErrors = { ...authErrorResponses, 404: ErrorResponse, 409: ErrorResponse, 415: ErrorResponse, 422: ErrorResponse };


/** `due_at` as the API takes it: a time, a date, or null / "" to clear. */
const dueAt = (value: string | null | undefined) => (value === undefined ? undefined : value === null ? null : readDueDate(value));

/** Tasks (CONTRACT 13): the services the dashboard's project page and "My tasks" call. */
export const taskRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const { tasks } = services;

  app.get('/v1/projects/:id/tasks', {
    config: { auth: { resource: 'tasks', action: 'read' } },
    schema: { tags, operationId: 'listProjectTasks', summary: "List a project's tasks, newest first (extension)", ...extension, params: IdParams, querystring: ListQuery, response: { 200: TaskList, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request) => {
      const { limit = 20, cursor } = request.query;
      return toListEnvelope(await tasks.listForProjectPage(actorOf(request), request.params.id, { limit, cursor }));
    },
  });

  app.post('/v1/projects/:id/tasks', {
    config: { auth: { resource: 'tasks', action: 'create', project: 'project' } },
    schema: {
      tags,
      operationId: 'createTask',
      summary: 'Create a to-do task in a project (extension)',
      description: 'With `assignee_id`, `task.assigned` fires. An archived project takes no new task (409).',
      ...extension,
      params: IdParams,
      body: CreateTaskBody,
      response: { 201: Task, ...changeErrors },
    },
    handler: async (request, reply) => {
      const { due_at, ...rest } = request.body;
      return reply.code(201).send(await tasks.create(actorOf(request), request.params.id, { ...rest, due_at: dueAt(due_at) }));
    },
  });

  app.get('/v1/tasks', {
    config: { auth: { resource: 'tasks', action: 'read' } },
    schema: {
      tags,
      operationId: 'listTasks',
      summary: "List the organisation's tasks, newest first (extension)",
      description: '`assignee_id=me&status=open` is the key user\'s open tasks, as "My tasks" shows them.',
      ...extension,
      querystring: ListTasksQuery,
      response: { 200: TaskList, ...authErrorResponses },
    },
    handler: async (request) => {
      const { limit = 20, cursor, ...filter } = request.query;
      return toListEnvelope(await tasks.list(actorOf(request), filter, { limit, cursor }));
    },
  });

  app.get('/v1/tasks/:id', {
    config: { auth: { resource: 'tasks', action: 'read' } },
    schema: { tags, operationId: 'getTask', summary: 'Read a task (extension)', ...extension, params: IdParams, response: { 200: Task, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request) => tasks.get(actorOf(request), request.params.id),
  });

  app.patch('/v1/tasks/:id', {
    config: { auth: { resource: 'tasks', action: 'update', project: 'task' } },
    schema: {
      tags,
      operationId: 'updateTask',
      summary: 'Change an open task: title, assignee, due date (extension)',
      description: 'A new assignee fires `task.assigned` exactly as "Assign" in the dashboard does. A finished task is a 409.',
      ...extension,
      params: IdParams,
      body: UpdateTaskBody,
      response: { 200: Task, ...changeErrors },
    },
    handler: async (request) => {
      const { due_at, ...rest } = request.body;
      return tasks.update(actorOf(request), request.params.id, { ...rest, due_at: dueAt(due_at) });
    },
  });

  /**
   * complete, approve, reject, cancel: the dashboard's "Mark done", "Approve", "Reject", "Cancel task". Who may
   * finish a task depends on the task, so the service decides, and only then refuses a read-only workspace;
   * cancelling is a member's change like any other.
   */
  const finish = (path: string, operationId: string, summary: string, description: string, action: TaskResolution['action']) => {
    const cancel = action === 'cancel';
    const takesReason = action === 'reject' || cancel;
    app.post(path, {
      config: { auth: cancel ? { resource: 'tasks', action: 'update', project: 'task' } : { resource: 'tasks', action: 'finish', whileReadOnly: true }, bodyOptional: true },
      preValidation: emptyBodyIsObject,
      schema: { tags, operationId, summary, description, ...extension, params: IdParams, body: takesReason ? ReasonBody : EmptyBody, response: { 200: Task, ...changeErrors } },
      handler: async (request) => {
        const reason = (request.body as { reason?: string | null } | undefined)?.reason;
        return tasks.resolve(actorOf(request), (request.params as { id: string }).id, (takesReason ? { action, reason } : { action }) as TaskResolution);
      },
    });
  };
  const run = 'A run\'s task moves its run on';
  finish('/v1/tasks/:id/complete', 'completeTask', 'Mark a to-do done (extension)', `By its assignee (any role) or an admin or owner. ${run}. A finished task is a 409; an approval is approved or rejected instead (409).`, 'done');
  finish('/v1/tasks/:id/approve', 'approveTask', 'Approve an approval (extension)', `By its assignee (any role) or an admin or owner. ${run} to its next step. A decided task is a 409.`, 'approve');
  finish('/v1/tasks/:id/reject', 'rejectTask', 'Reject an approval (extension)', 'By its assignee (any role) or an admin or owner. A run\'s approval rejected fails its run (`approval_rejected`). A decided task is a 409.', 'reject');
  finish('/v1/tasks/:id/cancel', 'cancelTask', 'Cancel an open task (extension)', 'Member and above, or an editor or manager of the project. A run\'s task cancelled fails its run (`task_cancelled`). A finished task is a 409.', 'cancel');
};
