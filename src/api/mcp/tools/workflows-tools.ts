import { CreateWorkflowBody, ReplaceWorkflowBody } from '../../../schemas/workflows.js';
import { toListEnvelope } from '../../../services/shared/pagination.js';
import { toRunDetailResource } from '../../../services/workflows/runs-view.js';
import { toWorkflowResource } from '../../../services/workflows/workflows-service.js';
import { done, Id, input, page, tool, type McpTool } from '../mcp-tool.js';

/** Workflows and their runs. */
export const WORKFLOW_TOOLS: readonly McpTool[] = [
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
];
