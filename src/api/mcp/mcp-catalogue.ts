import { Type } from '@sinclair/typebox';
import { CreateProjectBody, ListProjectsQuery, ProjectRoleSchema, UpdateProjectBody } from '../../schemas/projects.js';
import { CreateTaskBody, ListTasksQuery, UpdateTaskBody } from '../../schemas/tasks.js';
import { InviteUserBody, ListUsersQuery, UpdateUserBody } from '../../schemas/users.js';
import { CreateWorkflowBody, ReplaceWorkflowBody } from '../../schemas/workflows.js';
import { CreateWebhookBody, UpdateWebhookBody } from '../../schemas/webhooks.js';
import { ListDeliveriesQuery } from '../../schemas/deliveries.js';
import { ListEventsQuery } from '../../schemas/organization.js';
import { AuditLogQuery } from '../../schemas/admin.js';
import { toListEnvelope } from '../../services/shared/pagination.js';
import { readDueDate } from '../../services/workflows/tasks-service.js';
import { toRunDetailResource } from '../../services/workflows/runs-view.js';
import { toWorkflowResource } from '../../services/workflows/workflows-service.js';
import { toExportResource } from '../../services/lifecycle/exports-service.js';
import { toAuditResource } from '../routes/admin.js';
import { Id, input, page, tool, type McpTool } from './mcp-tool.js';

const time = (iso: string | undefined) => (iso === undefined ? undefined : Date.parse(iso));
const dueAt = (value: string | null | undefined) => (value === undefined ? undefined : value === null ? null : readDueDate(value));
/** Events are stored as the JSON their deliveries sent; the tool answers that text as it is. */
const eventPage = (items: string[], next: string | null) => `{"data":[${items.join(',')}],"next_cursor":${next === null ? 'null' : JSON.stringify(next)}}`;
const done = { done: true } as const;

/**
 * Every tool the MCP server knows (CONTRACT 17), grouped as the API is. Each `run` is the body of the /v1
 * route it mirrors: the same service, the same actor, the same shape; a list takes `limit` and `cursor` and
 * answers `{ data, next_cursor }`.
 */
export const MCP_TOOLS: readonly McpTool[] = [
  // Projects and collaborators
  tool({
    name: 'list_projects',
    title: 'List projects',
    description: 'Projects of the organisation you can see, newest first, with their ids. Filter by status or visibility.',
    input: input({ status: Type.Optional(ListProjectsQuery.properties.status), visibility: Type.Optional(ListProjectsQuery.properties.visibility), ...page }),
    resource: 'projects',
    action: 'read',
    idempotent: true,
    run: async (actor, { limit = 20, cursor, status, visibility }, s) => toListEnvelope(await s.projects.list(actor, { limit, cursor, status, visibility })),
  }),
  tool({
    name: 'get_project',
    title: 'Read a project',
    description: 'One project by id.',
    input: input({ project_id: Id('project') }),
    resource: 'projects',
    action: 'read',
    idempotent: true,
    run: (actor, { project_id }, s) => s.projects.get(actor, project_id),
  }),
  tool({
    name: 'create_project',
    title: 'Create a project',
    description: 'Creates a project; you become its manager.',
    input: input(CreateProjectBody.properties),
    resource: 'projects',
    action: 'create',
    idempotent: false,
    run: (actor, body, s) => s.projects.create(actor, body),
  }),
  tool({
    name: 'update_project',
    title: 'Update a project',
    description: "Changes a project's name, description, status or visibility; fields left out stay as they are.",
    input: input({ project_id: Id('project'), ...UpdateProjectBody.properties }),
    resource: 'projects',
    action: 'update',
    project: true,
    idempotent: true,
    run: (actor, { project_id, ...body }, s) => s.projects.update(actor, project_id, body),
  }),
  tool({
    name: 'delete_project',
    title: 'Delete a project',
    description: 'Deletes a project and everything under it (workflows, runs, tasks). Cannot be undone.',
    input: input({ project_id: Id('project') }),
    resource: 'projects',
    action: 'delete',
    project: true,
    deletes: true,
    idempotent: true,
    run: async (actor, { project_id }, s) => (await s.projects.remove(actor, project_id), done),
  }),
  tool({
    name: 'list_collaborators',
    title: "List a project's collaborators",
    description: 'Who collaborates on a project and with which project role (viewer, editor, manager).',
    input: input({ project_id: Id('project'), ...page }),
    resource: 'projects',
    action: 'read',
    idempotent: true,
    run: async (actor, { project_id, limit = 20, cursor }, s) => toListEnvelope(await s.collaborators.list(actor, project_id, { limit, cursor })),
  }),
  tool({
    name: 'set_collaborator',
    title: 'Add a collaborator or change their role',
    description: "Adds a member of the organisation to a project, or changes their project role. The project's managers, admins and owners.",
    input: input({ project_id: Id('project'), user_id: Id('member'), role: ProjectRoleSchema }),
    resource: 'projects',
    action: 'delete',
    project: true,
    idempotent: true,
    run: async (actor, { project_id, user_id, role }, s) => (await s.collaborators.put(actor, project_id, user_id, role)).collaborator,
  }),
  tool({
    name: 'remove_collaborator',
    title: 'Remove a collaborator',
    description: 'Removes someone from a project; in a private project their open tasks there become unassigned.',
    input: input({ project_id: Id('project'), user_id: Id('member') }),
    resource: 'projects',
    action: 'delete',
    project: true,
    deletes: true,
    idempotent: true,
    run: async (actor, { project_id, user_id }, s) => (await s.collaborators.remove(actor, project_id, user_id), done),
  }),

  // Members
  tool({
    name: 'list_members',
    title: 'List members',
    description: 'Members of the organisation with their roles, newest first; invited ones included, suspended ones only when asked for.',
    input: input({ status: Type.Optional(ListUsersQuery.properties.status), ...page }),
    resource: 'users',
    action: 'read',
    idempotent: true,
    run: async (actor, { limit = 20, cursor, status }, s) => toListEnvelope(await s.users.list(actor.orgId, { limit, cursor }, status)),
  }),
  tool({
    name: 'get_member',
    title: 'Read a member',
    description: 'One member by id.',
    input: input({ user_id: Id('member') }),
    resource: 'users',
    action: 'read',
    idempotent: true,
    run: (actor, { user_id }, s) => s.users.get(actor.orgId, user_id),
  }),
  tool({
    name: 'invite_member',
    title: 'Invite a member',
    description: 'Invites someone by e-mail with a role; they get an invitation mail.',
    input: input(InviteUserBody.properties),
    resource: 'users',
    action: 'create',
    idempotent: false,
    run: (actor, body, s) => s.users.invite(actor, body),
  }),
  tool({
    name: 'change_member_role',
    title: "Change a member's role",
    description: 'Admins and owners; only an owner makes or unmakes an owner.',
    input: input({ user_id: Id('member'), ...UpdateUserBody.properties }),
    resource: 'users',
    action: 'update',
    idempotent: true,
    run: (actor, { user_id, role }, s) => s.users.changeRole(actor, user_id, role),
  }),
  tool({
    name: 'remove_member',
    title: 'Remove a member',
    description: 'Removes a member from the organisation; their keys and sessions end. The last owner cannot be removed.',
    input: input({ user_id: Id('member') }),
    resource: 'users',
    action: 'delete',
    deletes: true,
    idempotent: true,
    run: async (actor, { user_id }, s) => (await s.users.remove(actor, user_id), done),
  }),

  // Workflows and runs
  tool({
    name: 'list_workflows',
    title: "List a project's workflows",
    description: 'Workflows of a project, newest first.',
    input: input({ project_id: Id('project'), ...page }),
    resource: 'workflows',
    action: 'read',
    idempotent: true,
    run: async (actor, { project_id, limit = 20, cursor }, s) => {
      const result = await s.workflows.listPage(actor, project_id, { limit, cursor });
      return toListEnvelope({ items: result.items.map(toWorkflowResource), nextCursor: result.nextCursor });
    },
  }),
  tool({
    name: 'get_workflow',
    title: 'Read a workflow',
    description: 'A workflow with its steps.',
    input: input({ workflow_id: Id('workflow') }),
    resource: 'workflows',
    action: 'read',
    idempotent: true,
    run: async (actor, { workflow_id }, s) => toWorkflowResource(await s.workflows.get(actor, workflow_id)),
  }),
  tool({
    name: 'create_workflow',
    title: 'Create a workflow',
    description: 'Creates a workflow in a project: an ordered list of steps (to-dos, approvals, waits).',
    input: input({ project_id: Id('project'), ...CreateWorkflowBody.properties }),
    resource: 'workflows',
    action: 'create',
    project: true,
    idempotent: false,
    run: async (actor, { project_id, ...body }, s) => toWorkflowResource(await s.workflows.create(actor, project_id, body)),
  }),
  tool({
    name: 'replace_workflow',
    title: 'Replace a workflow',
    description: "Replaces a workflow's name and steps; runs already started keep theirs.",
    input: input({ workflow_id: Id('workflow'), ...ReplaceWorkflowBody.properties }),
    resource: 'workflows',
    action: 'update',
    project: true,
    idempotent: true,
    run: async (actor, { workflow_id, ...body }, s) => toWorkflowResource(await s.workflows.replace(actor, workflow_id, body)),
  }),
  tool({
    name: 'delete_workflow',
    title: 'Delete a workflow',
    description: 'Deletes a workflow and its runs. Cannot be undone.',
    input: input({ workflow_id: Id('workflow') }),
    resource: 'workflows',
    action: 'delete',
    project: true,
    deletes: true,
    idempotent: true,
    run: async (actor, { workflow_id }, s) => (await s.workflows.remove(actor, workflow_id), done),
  }),
  tool({
    name: 'start_run',
    title: 'Start a workflow run',
    description: 'Starts a run of a workflow; its first step begins now.',
    input: input({ workflow_id: Id('workflow') }),
    resource: 'workflows',
    action: 'create',
    project: true,
    idempotent: false,
    run: async (actor, { workflow_id }, s) => toRunDetailResource(await s.workflows.startRun(actor, workflow_id)),
  }),
  tool({
    name: 'list_runs',
    title: "List a workflow's runs",
    description: 'Runs of a workflow, newest first, with their status.',
    input: input({ workflow_id: Id('workflow'), ...page }),
    resource: 'workflows',
    action: 'read',
    idempotent: true,
    run: async (actor, { workflow_id, limit = 20, cursor }, s) => toListEnvelope(await s.workflows.listRuns(actor, workflow_id, { limit, cursor })),
  }),
  tool({
    name: 'get_run',
    title: 'Read a run',
    description: 'A run with its steps and their tasks.',
    input: input({ run_id: Id('run') }),
    resource: 'workflows',
    action: 'read',
    idempotent: true,
    run: async (actor, { run_id }, s) => toRunDetailResource(await s.runs.get(actor, run_id)),
  }),
  tool({
    name: 'cancel_run',
    title: 'Cancel a run',
    description: 'Cancels a run that has not finished; its open tasks are cancelled.',
    input: input({ run_id: Id('run') }),
    resource: 'workflows',
    action: 'update',
    project: true,
    idempotent: true,
    run: async (actor, { run_id }, s) => (await s.runs.cancel(actor, run_id), toRunDetailResource(await s.runs.get(actor, run_id))),
  }),

  // Tasks
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

  // Webhook subscriptions and deliveries
  tool({
    name: 'list_webhooks',
    title: 'List webhook subscriptions',
    description: 'Webhook subscriptions of the organisation, newest first, with their URL, events and state.',
    input: input({ ...page }),
    resource: 'webhooks',
    action: 'read',
    idempotent: true,
    run: async (actor, { limit = 20, cursor }, s) => toListEnvelope(await s.webhooks.list(actor.orgId, { limit, cursor })),
  }),
  tool({
    name: 'get_webhook',
    title: 'Read a webhook subscription',
    description: 'One subscription with its delivery health.',
    input: input({ webhook_id: Id('subscription') }),
    resource: 'webhooks',
    action: 'read',
    idempotent: true,
    run: (actor, { webhook_id }, s) => s.webhooks.get(actor, webhook_id),
  }),
  tool({
    name: 'create_webhook',
    title: 'Create a webhook subscription',
    description: 'Subscribes an https URL to events; the answer holds the signing secret, once.',
    input: input(CreateWebhookBody.properties),
    resource: 'webhooks',
    action: 'create',
    idempotent: false,
    run: (actor, body, s) => s.webhooks.create(actor, body),
  }),
  tool({
    name: 'update_webhook',
    title: 'Update a webhook subscription',
    description: "Changes a subscription's URL, events or description, or pauses it.",
    input: input({ webhook_id: Id('subscription'), ...UpdateWebhookBody.properties }),
    resource: 'webhooks',
    action: 'update',
    idempotent: true,
    run: (actor, { webhook_id, ...body }, s) => s.webhooks.update(actor, webhook_id, body),
  }),
  tool({
    name: 'delete_webhook',
    title: 'Delete a webhook subscription',
    description: 'Deletes a subscription and cancels its pending deliveries. Cannot be undone.',
    input: input({ webhook_id: Id('subscription') }),
    resource: 'webhooks',
    action: 'delete',
    deletes: true,
    idempotent: true,
    run: async (actor, { webhook_id }, s) => (await s.webhooks.remove(actor, webhook_id), done),
  }),
  tool({
    name: 'list_deliveries',
    title: "List a subscription's deliveries",
    description: 'Deliveries of a subscription, newest first: status, event, attempts. Filter by status, event type, time or id.',
    input: input({ webhook_id: Id('subscription'), ...ListDeliveriesQuery.properties }),
    resource: 'webhooks',
    action: 'read',
    idempotent: true,
    run: async (actor, { webhook_id, limit = 20, cursor, status, event, from, to, id }, s) => {
      const result = await s.deliveries.list(actor, webhook_id, { limit, cursor, filter: { status, event, from: time(from), to: time(to), id } });
      return { data: result.items, next_cursor: result.nextCursor };
    },
  }),
  tool({
    name: 'get_delivery',
    title: 'Read a delivery',
    description: 'One delivery with every attempt: status codes, timings and response excerpts.',
    input: input({ webhook_id: Id('subscription'), delivery_id: Id('delivery') }),
    resource: 'webhooks',
    action: 'read',
    idempotent: true,
    run: (actor, { webhook_id, delivery_id }, s) => s.deliveries.get(actor, webhook_id, delivery_id),
  }),
  tool({
    name: 'replay_delivery',
    title: 'Replay a delivery',
    description: 'Sends a delivery again, as a new delivery of the same event with the same body.',
    input: input({ webhook_id: Id('subscription'), delivery_id: Id('delivery') }),
    resource: 'webhooks',
    action: 'update',
    idempotent: false,
    run: (actor, { webhook_id, delivery_id }, s) => s.deliveries.replay(actor, webhook_id, delivery_id),
  }),

  // Events, the audit log and exports
  tool({
    name: 'list_events',
    title: 'List events',
    description: 'Events of the organisation, newest first, as webhooks received them. Filter by type: `task.assigned,workflow.completed`.',
    input: input({ ...ListEventsQuery.properties }),
    resource: 'events',
    action: 'read',
    idempotent: true,
    run: async (actor, { limit = 20, cursor, type }, s) => {
      const result = await s.events.list(actor, { type }, { limit, cursor });
      return eventPage(result.items, result.nextCursor);
    },
  }),
  tool({
    name: 'get_event',
    title: 'Read an event',
    description: 'One event by id, with its data.',
    input: input({ event_id: Id('event') }),
    resource: 'events',
    action: 'read',
    idempotent: true,
    run: (actor, { event_id }, s) => s.events.get(actor, event_id),
  }),
  tool({
    name: 'list_audit_log',
    title: 'Read the audit log',
    description: 'Every change in the organisation, newest first: who, from where, what changed. Admins and owners.',
    input: input({ ...AuditLogQuery.properties }),
    resource: 'audit_log',
    action: 'read',
    idempotent: true,
    run: async (actor, { limit = 20, cursor, action, actor_id, target_id, from, to }, s) => {
      const result = await s.audit.list(actor, { action, actor: actor_id, target: target_id, from: time(from), to: time(to) }, { limit, cursor });
      return toListEnvelope({ items: result.items.map(toAuditResource), nextCursor: result.nextCursor });
    },
  }),
  tool({
    name: 'request_export',
    title: 'Request an export',
    description: "Starts an export of the organisation's data; read it with get_export until it is ready. Admins and owners.",
    input: input({}),
    resource: 'exports',
    action: 'create',
    idempotent: false,
    run: async (actor, _input, s) => toExportResource(await s.exports.request(actor)),
  }),
  tool({
    name: 'list_exports',
    title: 'List exports',
    description: 'Exports of the organisation, newest first, with their state.',
    input: input({ ...page }),
    resource: 'exports',
    action: 'read',
    idempotent: true,
    run: async (actor, { limit = 20, cursor }, s) => {
      const result = await s.exports.listPage(actor, { limit, cursor });
      return toListEnvelope({ items: result.items.map(toExportResource), nextCursor: result.nextCursor });
    },
  }),
  tool({
    name: 'get_export',
    title: 'Read an export',
    description: "An export's state; when ready, its download address (fetch it with your credentials).",
    input: input({ export_id: Id('export') }),
    resource: 'exports',
    action: 'read',
    idempotent: true,
    run: async (actor, { export_id }, s) => toExportResource(await s.exports.get(actor, export_id)),
  }),
];
