import { Type, type Static } from '@sinclair/typebox';
import { EVENT_TYPES } from './events.js';
import type { HistoryState } from '../db/repositories/delivery-history-repo.js';
import { ListEnvelope, PageQuery, Timestamp } from './common.js';

/** The most deliveries one bulk replay takes (DASHBOARD 6); a second request takes the next ones. */
export const MAX_BULK_REPLAY = 10_000;

/** The states in the order the dashboard's filter offers them. */
export const HISTORY_STATES: readonly HistoryState[] = ['delivered', 'retrying', 'pending', 'failed', 'cancelled'];

const DeliveryStatus = Type.Union(
  HISTORY_STATES.map((s) => Type.Literal(s)),
  {
    title: 'DeliveryStatus',
    description:
      'delivered; retrying: failed at least once and waits for its next automatic attempt (next_attempt_at); ' +
      'pending: waits for its first attempt, or for a replay; failed: permanently failed (schedule used up, or a replay failed); ' +
      'cancelled: its subscription was deleted, or was disabled, before it was sent (see cancel_reason).',
  },
);

const EventType = Type.Union(EVENT_TYPES.map((name) => Type.Literal(name)), { title: 'EventType' });

const StringMap = Type.Record(Type.String(), Type.String());

const deliveryFields = {
  id: Type.String({ examples: ['dlv_0123456789abcdefghijklmn'] }),
  event_id: Type.String({ description: 'X-Service-Event-Id: the same on every attempt and replay.' }),
  event_type: EventType,
  webhook_id: Type.String(),
  status: DeliveryStatus,
  attempts: Type.Integer({ minimum: 0, description: 'Attempts made so far, automatic and replayed.' }),
  next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'When a pending or retrying delivery is next attempted.' }),
  last_status_code: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  last_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'When the latest attempt started; null before the first.' }),
  replayed: Type.Boolean({ description: 'A replay attempt was made or is queued.' }),
  test: Type.Boolean({ description: 'A test event sent with POST /v1/webhooks/{id}/test: one attempt, not counted for health.' }),
  cancel_reason: Type.Union([Type.Literal('subscription_disabled'), Type.Literal('subscription_deleted'), Type.Null()], {
    description: 'Why a cancelled delivery was cancelled; null for the other states. `subscription_disabled` ones are sent again by replay-failed once the subscription is enabled.',
  }),
  waiting: Type.Union([Type.Literal('order'), Type.Literal('rate_limit'), Type.Null()], {
    description:
      'Extension (CONTRACT 14): why a pending delivery is not on the wire yet. `order`: earlier deliveries of its ordered (fifo) subscription go first; ' +
      '`rate_limit`: it is due and waits for a free start under the subscription\'s rate_limit. null otherwise.',
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const Delivery = Type.Object(deliveryFields, { $id: 'Delivery', title: 'Delivery' });
export type Delivery = Static<typeof Delivery>;

export const DeliveryAttempt = Type.Object(
  {
    id: Type.String({ examples: ['att_0123456789abcdefghijklmn'] }),
    attempt_number: Type.Integer({ minimum: 1, description: 'X-Service-Delivery-Attempt of this attempt.' }),
    trigger: Type.Union([Type.Literal('automatic'), Type.Literal('replay'), Type.Literal('test')]),
    outcome: Type.Union([Type.Literal('success'), Type.Literal('failure')]),
    started_at: Timestamp,
    duration_ms: Type.Integer({ minimum: 0 }),
    request_headers: StringMap,
    response_status: Type.Union([Type.Integer(), Type.Null()]),
    response_headers: Type.Union([StringMap, Type.Null()]),
    response_body: Type.Union([Type.String(), Type.Null()], { description: 'The first 64 KiB of the response body.' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why the attempt failed: HTTP status, network, TLS, timeout or SSRF refusal.' }),
    held_reason: Type.Union([Type.Literal('order'), Type.Literal('rate_limit'), Type.Null()], {
      description: 'Extension (CONTRACT 14): why this attempt started later than it was due (`rate_limit`), or after earlier deliveries of its order (`order`); null when it was not held.',
    }),
    held_ms: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'How long it was held, in milliseconds; null when it was not.' }),
  },
  { $id: 'DeliveryAttempt', title: 'DeliveryAttempt' },
);
export type DeliveryAttempt = Static<typeof DeliveryAttempt>;

export const DeliveryDetail = Type.Object(
  {
    ...deliveryFields,
    payload: Type.String({ description: 'The exact request body sent on every attempt.' }),
    attempt_history: Type.Array(DeliveryAttempt),
  },
  { $id: 'DeliveryDetail', title: 'DeliveryDetail' },
);
export type DeliveryDetail = Static<typeof DeliveryDetail>;

export const DeliveryList = ListEnvelope(Delivery, 'DeliveryList');

export const ListDeliveriesQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(DeliveryStatus),
    event: Type.Optional(EventType),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Deliveries created at or after this time.' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Deliveries created before this time.' })),
    id: Type.Optional(Type.String({ maxLength: 100, description: 'A delivery id (dlv_…) or an event id (evt_…).' })),
  },
);

export const DeliveryParams = Type.Object({ id: Type.String(), delivery_id: Type.String() });

export const NoQuery = Type.Object({});

export const ReplayFailedBody = Type.Object(
  { since: Type.String({ format: 'date-time', description: 'Replay failed deliveries whose event occurred at or after this time.' }) },
  { additionalProperties: false, title: 'ReplayFailedRequest' },
);

export const ReplayJob = Type.Object(
  {
    id: Type.String({ examples: ['rpl_0123456789abcdefghijklmn'] }),
    webhook_id: Type.String(),
    since: Timestamp,
    status: Type.Union([Type.Literal('running'), Type.Literal('done')], { description: 'running while deliveries are being re-queued.' }),
    count: Type.Integer({ minimum: 0, maximum: MAX_BULK_REPLAY, description: `The failed deliveries the job took (the oldest, at most ${MAX_BULK_REPLAY}): exactly what it replays.` }),
    more: Type.Boolean({ description: 'More failed deliveries matched than one job takes; ask again for the next ones.' }),
    queued: Type.Integer({ minimum: 0, description: 'Re-queued so far.' }),
    skipped: Type.Integer({ minimum: 0, description: 'No longer failed when their turn came (replayed one by one meanwhile).' }),
    delivered: Type.Integer({ minimum: 0, description: 'Re-queued deliveries now delivered.' }),
    failed: Type.Integer({ minimum: 0, description: 'Re-queued deliveries whose replay failed.' }),
    pending: Type.Integer({ minimum: 0, description: 'Re-queued deliveries still waiting for their replay attempt.' }),
    requested_by: Type.String(),
    created_at: Timestamp,
    finished_at: Type.Union([Timestamp, Type.Null()]),
  },
  { $id: 'ReplayJob', title: 'ReplayJob' },
);
export type ReplayJob = Static<typeof ReplayJob>;

export const ReplayJobParams = Type.Object({ id: Type.String(), job_id: Type.String() });
