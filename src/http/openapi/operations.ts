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
    response: 'The project after the change. A change fires `project.updated`; a call that changes nothing returns it as it was.',
    request: { status: 'archived' },
    example: { ...project, status: 'archived', updated_at: later },
  },
  deleteProject: { response: 'Deleted with its workflows, runs and tasks. It fires `project.deleted`.' },

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
      'an unknown or used token is 404, an expired one 410.)',
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
    request: { url: 'https://hooks.example.com/v2/workspace', events: ['project.created', 'task.assigned'] },
    example: { ...webhook, url: 'https://hooks.example.com/v2/workspace', events: ['project.created', 'task.assigned'] },
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
};
