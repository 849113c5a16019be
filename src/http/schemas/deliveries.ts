import { Type } from '@sinclair/typebox';
import { EVENT_TYPES } from '../../services/events.js';
import { ListEnvelope, PageQuery, Timestamp } from './common.js';

const DeliveryStatus = Type.Union(
  [Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('cancelled')],
  { description: 'pending: waiting for its next attempt; delivered; failed: permanently failed (schedule used up, or a replay failed); cancelled: its subscription was deleted.' },
);

const StringMap = Type.Record(Type.String(), Type.String());

const deliveryFields = {
  id: Type.String({ examples: ['dlv_0123456789abcdefghijklmn'] }),
  event_id: Type.String({ description: 'X-Service-Event-Id: the same on every attempt and replay.' }),
  event_type: Type.Union(EVENT_TYPES.map((name) => Type.Literal(name))),
  webhook_id: Type.String(),
  status: DeliveryStatus,
  attempts: Type.Integer({ minimum: 0, description: 'Attempts made so far, automatic and replayed.' }),
  next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'When a pending delivery is next attempted.' }),
  last_status_code: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const Delivery = Type.Object(deliveryFields, { $id: 'Delivery' });

export const DeliveryAttempt = Type.Object(
  {
    id: Type.String({ examples: ['att_0123456789abcdefghijklmn'] }),
    attempt_number: Type.Integer({ minimum: 1, description: 'X-Service-Delivery-Attempt of this attempt.' }),
    trigger: Type.Union([Type.Literal('automatic'), Type.Literal('replay')]),
    outcome: Type.Union([Type.Literal('success'), Type.Literal('failure')]),
    started_at: Timestamp,
    duration_ms: Type.Integer({ minimum: 0 }),
    request_headers: StringMap,
    response_status: Type.Union([Type.Integer(), Type.Null()]),
    response_headers: Type.Union([StringMap, Type.Null()]),
    response_body: Type.Union([Type.String(), Type.Null()], { description: 'The first 64 KiB of the response body.' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why the attempt failed: HTTP status, network, TLS, timeout or SSRF refusal.' }),
  },
  { $id: 'DeliveryAttempt' },
);

export const DeliveryDetail = Type.Object(
  {
    ...deliveryFields,
    payload: Type.String({ description: 'The exact request body sent on every attempt.' }),
    attempt_history: Type.Array(DeliveryAttempt),
  },
  { $id: 'DeliveryDetail' },
);

export const DeliveryList = ListEnvelope(Delivery);

export const ListDeliveriesQuery = Type.Object({ ...PageQuery, status: Type.Optional(DeliveryStatus) });

export const DeliveryParams = Type.Object({ id: Type.String(), delivery_id: Type.String() });

export const NoQuery = Type.Object({});
