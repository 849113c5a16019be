import type { TObject } from '@sinclair/typebox';
import { EVENT_SCHEMAS, type EventType } from '../../schemas/events.js';

/** When each event fires, for its operation's summary and description. */
const FIRES_WHEN: Record<EventType, { summary: string; when: string }> = {
  'project.created': { summary: 'A project was created', when: 'a project is created, through the API or the dashboard' },
  'project.updated': {
    summary: 'A project was updated',
    when: "a project's name, description, status or visibility changes (an update that changes nothing sends no event); `data.previous` holds the old values of the fields that changed",
  },
  'project.deleted': {
    summary: 'A project was deleted',
    when: 'a project is deleted, with its workflows, runs and tasks (no `workflow.failed` fires for runs destroyed that way)',
  },
  'workflow.completed': { summary: 'A workflow run completed', when: 'a workflow run completes its last step' },
  'workflow.failed': {
    summary: 'A workflow run failed',
    when: 'a workflow run ends early: an approval was rejected (`approval_rejected`), a step\'s task was cancelled (`task_cancelled`), or someone cancelled the run (`cancelled`)',
  },
  'task.assigned': {
    summary: 'A task was assigned',
    when: 'a task gets a new assignee: created with one (alone or by a run step), or reassigned; not when the assignee is cleared or stays the same',
  },
};

const DELIVERY = [
  'The service POSTs the body as `application/json` to every subscription listening for the event when it occurred.',
  'Verify `X-Service-Signature` over the raw body bytes before parsing them (`verifyWebhook` of `workspace-service/client` does it).',
  'Delivery is at least once: a retry, a replay or a crash recovery can deliver the same event again, with the same `X-Service-Event-Id` and the same body bytes; de-duplicate by `X-Service-Event-Id`.',
  'Answer 2xx within 10 seconds, then do the work: anything else (another status, a redirect, no answer in time, a connection or TLS error) is retried after 30 s, 2 min, 10 min, 30 min and 2 h, then the delivery is failed.',
].join(' ');

/** `project.created` -> `projectCreatedWebhook` */
export function webhookOperationId(event: EventType): string {
  return `${event.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase())}Webhook`;
}

const header = (name: string, description: string, schema: Record<string, unknown>, required = true) => ({ name, in: 'header', required, description, schema });

function parameters(event: EventType) {
  return [
    header('X-Service-Signature', 'Hex HMAC-SHA256 of the exact body bytes, keyed by the subscription\'s secret. Compare in constant time.', {
      type: 'string',
      pattern: '^[0-9a-f]{64}$',
      examples: ['5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592'],
    }),
    header('X-Service-Event', 'The event name; the same as the body\'s `event`.', { type: 'string', const: event }),
    header('X-Service-Event-Id', 'The event: the same on every retry and replay. De-duplicate by it.', {
      type: 'string',
      pattern: '^evt_[0-9a-z]+$',
      examples: ['evt_0123456789abcdefghijklmn'],
    }),
    header('X-Service-Delivery-Id', 'This delivery: one per event and subscription.', {
      type: 'string',
      pattern: '^dlv_[0-9a-z]+$',
      examples: ['dlv_0123456789abcdefghijklmn'],
    }),
    header('X-Service-Delivery-Attempt', 'The attempt number of this delivery, from 1; replays continue the count.', { type: 'integer', minimum: 1, examples: [1] }),
    header('User-Agent', 'Names the service.', { type: 'string', examples: ['WorkspaceService-Webhooks/1.0 (+https://github.com/workspace-service)'] }, false),
  ];
}

const FAILED_ATTEMPT = 'The attempt failed and is retried on the schedule of the description; after the sixth failure the delivery is failed (replayable from the dashboard or the API).';

/** A JSON copy of a TypeBox schema: plain data, without TypeBox's symbol-keyed properties. */
const plain = (schema: TObject): Record<string, unknown> => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

/**
 * The `webhooks` section of the OpenAPI document: one entry per event the service delivers (CONTRACT 7,
 * DASHBOARD 7), describing the request the service sends to a subscriber.
 */
export function webhookOperations(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [event, schema] of Object.entries(EVENT_SCHEMAS) as [EventType, TObject][]) {
    const { summary, when } = FIRES_WHEN[event];
    const json = plain(schema);
    const example = (json.examples as unknown[])[0];
    out[event] = {
      post: {
        operationId: webhookOperationId(event),
        summary,
        description: `Sent when ${when}. ${DELIVERY}`,
        tags: ['Webhook events'],
        security: [],
        parameters: parameters(event),
        requestBody: { required: true, description: `The \`${event}\` event.`, content: { 'application/json': { schema: json, example } } },
        responses: {
          '2XX': { description: 'Acknowledged: the delivery is done (any 2xx status within 10 seconds; the response body is only kept in the delivery history).' },
          '4XX': { description: FAILED_ATTEMPT },
          '5XX': { description: FAILED_ATTEMPT },
        },
      },
    };
  }
  return out;
}
