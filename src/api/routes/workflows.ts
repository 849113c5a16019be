import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../http/app-deps.js';
import { emptyBodyIsObject, extension } from './route-parts.js';
import { actorOf } from '../hooks/auth.js';
import { authErrorResponses, ErrorResponse, IdParams } from '../../schemas/common.js';
import { EmptyBody } from '../../schemas/tasks.js';
import { CreateWorkflowBody, ListQuery, ReplaceWorkflowBody, Run, RunList, Workflow, WorkflowList } from '../../schemas/workflows.js';
import { toListEnvelope } from '../../services/shared/pagination.js';
import { toRunDetailResource, toRunResource } from '../../services/workflows/runs-view.js';
import { toWorkflowResource } from '../../services/workflows/workflows-service.js';

const tags = ['Workflows'];
const changeErrors = { ...authErrorResponses, 404: ErrorResponse, 409: ErrorResponse, 415: ErrorResponse, 422: ErrorResponse };


/** Workflows and their runs (CONTRACT 13): the services the dashboard's workflow pages call. */
export const workflowRoutes: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const { workflows, runs } = services;

  app.get('/v1/projects/:id/workflows', {
    config: { auth: { resource: 'workflows', action: 'read' } },
    schema: { tags, operationId: 'listWorkflows', summary: "List a project's workflows, newest first (extension)", ...extension, params: IdParams, querystring: ListQuery, response: { 200: WorkflowList, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request) => {
      const { limit = 20, cursor } = request.query;
      const page = await workflows.listPage(actorOf(request), request.params.id, { limit, cursor });
      return toListEnvelope({ items: page.items.map(toWorkflowResource), nextCursor: page.nextCursor });
    },
  });

  app.post('/v1/projects/:id/workflows', {
    config: { auth: { resource: 'workflows', action: 'create', project: 'project' } },
    schema: {
      tags,
      operationId: 'createWorkflow',
      summary: 'Create a workflow in a project (extension)',
      description: 'A refused step is named in `details` (`steps[1].duration`). An archived project takes no new workflow (409).',
      ...extension,
      params: IdParams,
      body: CreateWorkflowBody,
      response: { 201: Workflow, ...changeErrors },
    },
    handler: async (request, reply) => reply.code(201).send(toWorkflowResource(await workflows.create(actorOf(request), request.params.id, request.body))),
  });

  app.get('/v1/workflows/:id', {
    config: { auth: { resource: 'workflows', action: 'read' } },
    schema: { tags, operationId: 'getWorkflow', summary: 'Read a workflow with its steps (extension)', ...extension, params: IdParams, response: { 200: Workflow, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request) => toWorkflowResource(await workflows.get(actorOf(request), request.params.id)),
  });

  app.put('/v1/workflows/:id', {
    config: { auth: { resource: 'workflows', action: 'update', project: 'workflow' } },
    schema: {
      tags,
      operationId: 'replaceWorkflow',
      summary: 'Replace a workflow: its name, description and steps (extension)',
      description:
        'What GET returns can be PUT back unchanged (its read-only fields are ignored). A step keeps its `id`; a step without one is new. ' +
        'A change bumps `version`; runs already started keep the steps they copied. With `version`, a workflow changed since it was read is a 409.',
      ...extension,
      params: IdParams,
      body: ReplaceWorkflowBody,
      response: { 200: Workflow, ...changeErrors },
    },
    handler: async (request) => toWorkflowResource(await workflows.replace(actorOf(request), request.params.id, request.body)),
  });

  app.delete('/v1/workflows/:id', {
    config: { auth: { resource: 'workflows', action: 'delete', project: 'workflow' } },
    schema: {
      tags,
      operationId: 'deleteWorkflow',
      summary: 'Delete a workflow and its finished runs (extension)',
      description: 'Refused (409) while a run is active: cancel it first. The tasks its runs created stay in the project.',
      ...extension,
      params: IdParams,
      response: { 204: { type: 'null', description: 'Deleted.' }, ...authErrorResponses, 404: ErrorResponse, 409: ErrorResponse },
    },
    handler: async (request, reply) => {
      await workflows.remove(actorOf(request), request.params.id);
      return reply.code(204).send();
    },
  });

  app.post('/v1/workflows/:id/runs', {
    config: { auth: { resource: 'workflows', action: 'create', project: 'workflow' }, bodyOptional: true },
    preValidation: emptyBodyIsObject,
    schema: {
      tags,
      operationId: 'startRun',
      summary: 'Start a run of a workflow (extension; no request body)',
      description:
        'The run copies the workflow\'s steps and is `queued` until a worker starts it. 409 for a workflow without steps, in an archived ' +
        'project, or over WORKFLOW_MAX_ACTIVE_RUNS. `workflow.completed` or `workflow.failed` fires when it ends.',
      ...extension,
      params: IdParams,
      body: EmptyBody,
      response: { 201: Run, ...changeErrors },
    },
    handler: async (request, reply) => reply.code(201).send(toRunDetailResource(await workflows.startRun(actorOf(request), request.params.id))),
  });

  app.get('/v1/workflows/:id/runs', {
    config: { auth: { resource: 'workflows', action: 'read' } },
    schema: { tags, operationId: 'listRuns', summary: "List a workflow's runs, newest first (extension)", ...extension, params: IdParams, querystring: ListQuery, response: { 200: RunList, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request) => {
      const { limit = 20, cursor } = request.query;
      const page = await workflows.listRuns(actorOf(request), request.params.id, { limit, cursor });
      return toListEnvelope({ items: page.items.map(toRunResource), nextCursor: page.nextCursor });
    },
  });

  app.get('/v1/runs/:id', {
    config: { auth: { resource: 'workflows', action: 'read' } },
    schema: { tags, operationId: 'getRun', summary: 'Read a run with its steps and their tasks (extension)', ...extension, params: IdParams, response: { 200: Run, ...authErrorResponses, 404: ErrorResponse } },
    handler: async (request) => toRunDetailResource(await runs.get(actorOf(request), request.params.id)),
  });

  app.post('/v1/runs/:id/cancel', {
    config: { auth: { resource: 'workflows', action: 'update', project: 'run' }, bodyOptional: true },
    preValidation: emptyBodyIsObject,
    schema: {
      tags,
      operationId: 'cancelRun',
      summary: 'Cancel an active run (extension; no request body)',
      description: 'The run ends `cancelled` (`error_code: cancelled`) at once and its open task is cancelled; `workflow.failed` fires. A finished run is a 409.',
      ...extension,
      params: IdParams,
      body: EmptyBody,
      response: { 200: Run, ...changeErrors },
    },
    handler: async (request) => {
      const actor = actorOf(request);
      await runs.cancel(actor, request.params.id);
      return toRunDetailResource(await runs.get(actor, request.params.id));
    },
  });
};
