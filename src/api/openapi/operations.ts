// What each operation's route schema leaves to the document: the success response's description and an
// example request and response. Keyed by operationId; document.ts refuses an operation missing here, and
// Redocly (`npm run lint:openapi`) checks every example against its schema.

interface OperationDocs {
  /** The success response's description. */
  response: string;
  /** Example request body, for operations that take one. */
  request?: unknown;
  /** Example success body, for responses that have one. */
  example?: unknown;
}

const at = '2026-11-22T09:30:00.000Z';
const later = '2026-11-22T10:05:12.345Z';

const project = {
  id: 'proj_40zapspamjlk10kmts7pcdbq',
  name: 'Apollo',
  description: 'Guidance computer, second revision',
  status: 'active',
  visibility: 'organization',
  created_at: at,
  updated_at: at,
};
const projectItem = { id: project.id, name: project.name, status: project.status, created_at: project.created_at };

const user = {
  id: 'user_7c2k1xq0v9m3b5n8r4t6w2ya',
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  role: 'member',
  status: 'active',
  created_at: at,
  updated_at: at,
};
const invited = { ...user, id: 'user_q3m8z1c5v7b2n4x6k9p0r1sd', email: 'grace@example.com', name: null, role: 'admin', status: 'invited' };
const userItem = { id: user.id, email: user.email, name: user.name, role: user.role, created_at: user.created_at };

const webhook = {
  id: 'wh_5n2b8v4c6x1z3m7k9q0w2e4r',
  url: 'https://hooks.example.com/workspace',
  events: ['project.created', 'project.updated'],
  active: true,
  status: 'active',
  created_at: at,
  failing_since: null,
  disabled_at: null,
  disabled_reason: null,
  previous_secret_expires_at: null,
  rate_limit: null,
  ordering: 'none',
};

const delivery = {
  id: 'dlv_8r3t5y7u9i1o2p4a6s8d0f2g',
  event_id: 'evt_1q3w5e7r9t2y4u6i8o0p1a3s',
  event_type: 'project.created',
  webhook_id: webhook.id,
  status: 'delivered',
  attempts: 1,
  next_attempt_at: null,
  last_status_code: 204,
  last_error: null,
  last_attempt_at: later,
  replayed: false,
  test: false,
  cancel_reason: null,
  waiting: null,
  created_at: at,
  updated_at: later,
};
const payload = JSON.stringify({
  event: 'project.created',
  timestamp: at,
  data: { project_id: project.id, name: project.name, description: project.description, status: 'active', created_at: at, updated_at: at },
});

const replayJob = {
  id: 'rpl_2w4e6r8t0y1u3i5o7p9a2s4d',
  webhook_id: webhook.id,
  since: '2026-11-21T00:00:00.000Z',
  status: 'running',
  count: 42,
  more: false,
  queued: 10,
  skipped: 0,
  delivered: 7,
  failed: 1,
  pending: 2,
  requested_by: user.id,
  created_at: later,
  finished_at: null,
};


const workflow = {
  id: 'wf_3k5m7n9p1q3r5s7t9v1w3x5y',
  project_id: project.id,
  name: 'Release sign-off',
  description: 'Checks before a release ships',
  version: 3,
  steps: [
    { id: 'step_1a3b5c7d9e1f3g5h7i9j1k3l', type: 'task', title: 'Write the release notes', assignee_id: user.id, due_in: 'P2D', duration: null },
    { id: 'step_2m4n6o8p0q2r4s6t8u0v2w4x', type: 'approval', title: 'Approve the release', assignee_id: null, due_in: null, duration: null },
    { id: 'step_3y5z7a9b1c3d5e7f9g1h3i5j', type: 'wait', title: 'Cool-down', assignee_id: null, due_in: null, duration: 'PT1H' },
  ],
  created_at: at,
  updated_at: later,
};
const workflowInput = {
  name: workflow.name,
  description: workflow.description,
  steps: [
    { type: 'task', title: 'Write the release notes', assignee_id: user.id, due_in: '2d' },
    { type: 'approval', title: 'Approve the release' },
    { type: 'wait', title: 'Cool-down', duration: '1h' },
  ],
};
const runItem = {
  id: 'run_4k6m8n0p2q4r6s8t0v2w4x6y',
  workflow_id: workflow.id,
  project_id: project.id,
  workflow_version: 3,
  number: 42,
  status: 'waiting',
  created_at: later,
  started_at: later,
  finished_at: null,
  error: null,
  error_code: null,
};
const task = {
  id: 'task_5a7b9c1d3e5f7g9h1i3j5k7l',
  project_id: project.id,
  kind: 'todo',
  title: 'Write the release notes',
  description: null,
  status: 'open',
  decision: null,
  assignee_id: user.id,
  due_at: '2026-11-24T10:05:12.345Z',
  workflow_id: workflow.id,
  run_id: runItem.id,
  completed_by: null,
  completed_at: null,
  created_at: later,
  updated_at: later,
};
const { description: _description, completed_by: _completedBy, completed_at: _completedAt, ...taskItem } = task;
const run = {
  ...runItem,
  steps: [
    { position: 0, step_id: workflow.steps[0]!.id, type: 'task', title: 'Write the release notes', status: 'waiting', task_id: task.id, started_at: later, finished_at: null },
    { position: 1, step_id: workflow.steps[1]!.id, type: 'approval', title: 'Approve the release', status: 'pending', task_id: null, started_at: null, finished_at: null },
    { position: 2, step_id: workflow.steps[2]!.id, type: 'wait', title: 'Cool-down', status: 'pending', task_id: null, started_at: null, finished_at: null },
  ],
};
const event = {
  id: 'evt_6n8p0q2r4s6t8v0w2x4y6z8a',
  type: 'task.assigned',
  created_at: later,
  data: {
    task_id: task.id,
    project_id: project.id,
    title: task.title,
    assignee_id: user.id,
    previous_assignee_id: null,
    assigned_by: null,
    workflow_id: workflow.id,
    run_id: runItem.id,
    due_at: task.due_at,
  },
};

const auditEntry = {
  id: 'aud_8b0c2d4e6f8g0h2i4j6k8l0m',
  created_at: later,
  actor: { type: 'user', id: user.id, label: user.email },
  action: 'task.assigned',
  target: { type: 'task', id: task.id, label: task.title },
  source: 'api',
  ip: '203.0.113.7',
  user_agent: 'workspace-service-client',
  request_id: 'req_5t7u9v1w3x5y7z9a1b3c5d7e',
  outcome: 'success',
  changes: { assignee_id: { old: null, new: user.id } },
};
const apiKey = {
  id: 'key_9c1d3e5f7g9h1i3j5k7l9m1n',
  name: 'CI',
  scope: 'workflows,tasks:read',
  user_id: user.id,
  prefix: 'wsk_9Qm2Lx7a',
  created_at: later,
  last_used_at: null,
  expires_at: '2027-02-24T10:05:12.345Z',
};
const exportItem = {
  id: 'exp_0d2e4f6g8h0i2j4k6l8m0n2o',
  status: 'ready',
  created_at: at,
  ready_at: later,
  expires_at: '2026-11-29T10:05:12.345Z',
  size_bytes: 48213,
};

export const operationDocs: Record<string, OperationDocs> = {
  listProjects: {
    response: 'A page of projects, newest first. Follow `next_cursor` for the next page.',
    example: { data: [projectItem], next_cursor: 'eyJzIjoxMjN9' },
  },
  createProject: {
    response: 'The created project. It fires `project.created`.',
    request: { name: 'Apollo', description: 'Guidance computer, second revision', status: 'active' },
    example: project,
  },
  getProject: { response: 'The project.', example: project },
  updateProject: {
    response:
      "The project after the change. A change fires `project.updated` (`previous` holds the old values, `visibility` included); a call that changes nothing returns it as it was. Going `private` is 409 while open tasks or workflow steps name someone who could not see it.",
    request: { visibility: 'private' },
    example: { ...project, visibility: 'private', updated_at: later },
  },
  deleteProject: { response: 'Deleted with its workflows, runs and tasks. It fires `project.deleted`.' },
  listCollaborators: {
    response: "A page of the project's collaborators, newest first.",
    example: { data: [{ user: { id: user.id, email: user.email, name: user.name }, role: 'editor', created_at: later }], next_cursor: null },
  },
  putCollaborator: {
    response: 'The collaborator with their project role: 201 when added, 200 when the role changed or was already this one. Audit row `project.collaborator_added` or `project.collaborator_role_changed`.',
    request: { role: 'editor' },
    example: { user: { id: user.id, email: user.email, name: user.name }, role: 'editor', created_at: later },
  },
  deleteCollaborator: { response: 'Removed (audit row `project.collaborator_removed`); in a private project their open tasks there are unassigned.' },

  listUsers: {
    response: 'A page of members (invited ones included), newest first.',
    example: { data: [userItem], next_cursor: null },
  },
  inviteUser: {
    response: 'The invited user. The invitation e-mail links to `{PUBLIC_BASE_URL}/invitations/{token}`, valid 72 hours.',
    request: { email: 'grace@example.com', role: 'admin' },
    example: invited,
  },
  getUser: { response: 'The user.', example: user },
  updateUser: { response: 'The user with the new role.', request: { role: 'admin' }, example: { ...user, role: 'admin', updated_at: later } },
  deleteUser: { response: 'Removed, with their invitation, sessions and API keys.' },

  acceptInvitation: {
    response:
      'The user, now active. (The e-mailed link `GET /invitations/{token}` opens the dashboard form that makes this call; ' +
      'an unknown or used token is 404, an expired one 410. When the organisation requires single sign-on of the ' +
      "invitee's domain, no password is set: 403 `sso_required`, and the invitation is accepted through the provider on that page.)",
    request: { name: 'Grace Hopper', password: 'correct horse battery staple' },
    example: { ...invited, name: 'Grace Hopper', status: 'active', updated_at: later },
  },

  listWebhooks: { response: 'A page of subscriptions, newest first.', example: { data: [webhook], next_cursor: null } },
  createWebhook: {
    response: 'The subscription with its signing `secret`, shown this once.',
    request: { url: 'https://hooks.example.com/workspace', events: ['project.created', 'project.updated'] },
    example: { ...webhook, secret: 'whsec_3q2+7wEXAMPLEj8Nc1vYkz0Yh5Rp9bT4sLmG6aD2fU0=' },
  },
  deleteWebhook: { response: 'Deleted; its pending deliveries are cancelled.' },
  getWebhook: { response: 'The subscription, never its secret.', example: webhook },
  updateWebhook: {
    response: 'The subscription as changed.',
    request: { url: 'https://hooks.example.com/v2/workspace', events: ['project.created', 'task.assigned'], rate_limit: 50, ordering: 'fifo' },
    example: { ...webhook, url: 'https://hooks.example.com/v2/workspace', events: ['project.created', 'task.assigned'], rate_limit: 50, ordering: 'fifo' },
  },
  rotateWebhookSecret: {
    response: 'The new secret, shown this once, and when the previous one stops signing.',
    request: { previous_expires_in: 3600 },
    example: { secret: 'whsec_Qm9vdHN0cmFwRVhBTVBMRXNlY3JldEtleTAxMjM0NTY=', previous_expires_at: later },
  },
  sendTestWebhook: {
    response: 'Accepted: the test delivery, sent once; read it in the history for the attempt.',
    request: { event: 'project.created' },
    example: { delivery_id: 'dlv_8r3t5y7u9i1o2p4a6s8d0f2g' },
  },
  enableWebhook: { response: 'The subscription, active again.', example: webhook },

  listDeliveries: { response: 'A page of deliveries, newest first.', example: { data: [delivery], next_cursor: null } },
  getDelivery: {
    response: 'The delivery with the exact body sent and every attempt.',
    example: {
      ...delivery,
      payload,
      attempt_history: [
        {
          id: 'att_6y8u0i2o4p6a8s0d2f4g6h8j',
          attempt_number: 1,
          trigger: 'automatic',
          outcome: 'success',
          started_at: later,
          duration_ms: 84,
          request_headers: {
            'content-type': 'application/json',
            'x-service-event': 'project.created',
            'x-service-event-id': delivery.event_id,
            'x-service-delivery-id': delivery.id,
            'x-service-delivery-attempt': '1',
          },
          response_status: 204,
          response_headers: { date: 'Sun, 22 Nov 2026 10:05:12 GMT' },
          response_body: '',
          error: null,
          held_reason: null,
          held_ms: null,
        },
      ],
    },
  },
  replayDelivery: {
    response: 'Accepted: the delivery, pending its replay attempt.',
    example: { ...delivery, status: 'pending', next_attempt_at: later, replayed: true },
  },
  replayFailedDeliveries: {
    response: 'Accepted: the job, which re-queues the failed deliveries in batches.',
    request: { since: '2026-11-21T00:00:00.000Z' },
    example: { ...replayJob, queued: 0, delivered: 0, failed: 0, pending: 0 },
  },
  getReplayJob: { response: 'The job and its progress.', example: replayJob },
  listWorkflows: { response: "A page of the project's workflows, newest first.", example: { data: [workflow], next_cursor: null } },
  createWorkflow: { response: 'The workflow, at version 1.', request: workflowInput, example: { ...workflow, version: 1, updated_at: at } },
  getWorkflow: { response: 'The workflow with its steps; durations as ISO 8601.', example: workflow },
  replaceWorkflow: {
    response: 'The workflow as replaced; its version is one higher when anything changed.',
    request: { name: workflow.name, description: workflow.description, version: 3, steps: [workflow.steps[0], { type: 'approval', title: 'Approve the release' }] },
    example: { ...workflow, version: 4, steps: [workflow.steps[0], { ...workflow.steps[1], id: 'step_9q1r3s5t7u9v1w3x5y7z9a1b' }] },
  },
  deleteWorkflow: { response: 'Deleted with its finished runs; the tasks its runs created stay in the project.' },
  startRun: {
    response: 'The run, queued with a copy of the steps; a worker starts it at once.',
    request: {},
    example: { ...run, status: 'queued', started_at: null, steps: run.steps.map((s) => ({ ...s, status: 'pending', task_id: null, started_at: null })) },
  },
  listRuns: { response: "A page of the workflow's runs, newest first, without their steps.", example: { data: [runItem], next_cursor: null } },
  getRun: { response: 'The run with its steps.', example: run },
  cancelRun: {
    response: 'The run, cancelled.',
    request: {},
    example: { ...run, status: 'cancelled', finished_at: later, error: 'Run cancelled by Ada Lovelace', error_code: 'cancelled', steps: run.steps.map((s, i) => (i === 0 ? { ...s, status: 'failed', finished_at: later } : s)) },
  },

  listProjectTasks: { response: "A page of the project's tasks, newest first.", example: { data: [taskItem], next_cursor: null } },
  createTask: {
    response: 'The task, open.',
    request: { title: 'Renew the certificate', assignee_id: user.id, due_at: '2026-12-31' },
    example: { ...task, title: 'Renew the certificate', due_at: '2026-12-31T23:59:59.999Z', workflow_id: null, run_id: null },
  },
  listTasks: { response: 'A page of tasks, newest first.', example: { data: [taskItem], next_cursor: null } },
  getTask: { response: 'The task.', example: task },
  updateTask: { response: 'The task as changed.', request: { assignee_id: invited.id }, example: { ...task, assignee_id: invited.id } },
  completeTask: { response: 'The task, done.', request: {}, example: { ...task, status: 'done', completed_by: user.id, completed_at: later } },
  approveTask: {
    response: 'The approval, approved.',
    request: {},
    example: { ...task, kind: 'approval', title: 'Approve the release', status: 'done', decision: 'approved', completed_by: user.id, completed_at: later },
  },
  rejectTask: {
    response: 'The approval, rejected.',
    request: { reason: 'The notes miss the migration step' },
    example: { ...task, kind: 'approval', title: 'Approve the release', status: 'done', decision: 'rejected', completed_by: user.id, completed_at: later },
  },
  cancelTask: { response: 'The task, cancelled.', request: { reason: 'No longer needed' }, example: { ...task, status: 'cancelled', completed_by: user.id, completed_at: later } },

  listEvents: { response: 'A page of events, newest first.', example: { data: [event], next_cursor: 'eyJzIjoxMjN9' } },
  getEvent: { response: 'The event; `data` is the webhook body\'s `data`, byte for byte.', example: event },
  getOrganization: {
    response: "The key's organisation.",
    example: { id: 'org_7p9q1r3s5t7u9v1w3x5y7z9a', name: 'Acme', state: 'active', deletion_at: null, two_step_required_at: null, created_at: at },
  },
  listAuditLog: { response: 'A page of audit rows, newest first.', example: { data: [auditEntry], next_cursor: null } },
  listApiKeys: { response: 'A page of API keys, newest first; never their secrets.', example: { data: [apiKey], next_cursor: null } },
  createApiKey: {
    response: 'The key with its secret, shown this once.',
    request: { scope: 'workflows,tasks:read', name: 'CI', expires_at: '2027-02-24T10:05:12.345Z' },
    example: { ...apiKey, key: 'wsk_9Qm2Lx7aEXAMPLEt4Rz8Vb1Nc6Hd0Jf3Kg5Ps2Wq7Ye9Ua' },
  },
  revokeApiKey: { response: 'Revoked: refused from the next request on.' },
  requestExport: { response: 'Accepted: the export, pending until a worker builds it.', request: {}, example: { ...exportItem, status: 'pending', ready_at: null, expires_at: null, size_bytes: null } },
  listExports: { response: 'A page of exports, newest first.', example: { data: [exportItem], next_cursor: null } },
  getExport: { response: 'The export.', example: exportItem },
  downloadExport: { response: 'The ZIP: `manifest.json` and one JSON Lines file per collection.' },
};
