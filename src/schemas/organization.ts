import { Type } from '@sinclair/typebox';
import { EVENT_TYPES } from './events.js';
import { PageQuery, Timestamp } from './common.js';

export const Organization = Type.Object(
  {
    id: Type.String({ examples: ['org_0123456789abcdefghijklmn'] }),
    name: Type.String(),
    state: Type.Union([Type.Literal('active'), Type.Literal('read_only')], {
      description: '`read_only` once the subscription is cancelled: every change is refused with 403 `workspace_read_only` until it is resumed.',
    }),
    deletion_at: Type.Union([Timestamp, Type.Null()], { description: 'When the organisation and all its data will be deleted; null while active.' }),
    two_step_required_at: Type.Union([Timestamp, Type.Null()], {
      description:
        'Since when an owner requires two-step verification (an authenticator app or a passkey) of every member, set on the dashboard\'s organisation security settings; null when it is not required. Members without one have 7 days; API keys are not affected.',
    }),
    created_at: Timestamp,
  },
  { $id: 'Organization', title: 'Organization' },
);

export const Event = Type.Object(
  {
    id: Type.String({ description: 'The `X-Service-Event-Id` (and `webhook-id`) its deliveries carry.', examples: ['evt_0123456789abcdefghijklmn'] }),
    type: Type.Union(EVENT_TYPES.map((name) => Type.Literal(name))),
    created_at: Timestamp,
    data: Type.Object({}, { additionalProperties: true, description: 'Byte for byte the `data` of the webhook body its deliveries send (see the webhooks of this document).' }),
  },
  { $id: 'Event', title: 'Event' },
);

export const EventList = Type.Object(
  {
    data: Type.Array(Event),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  { title: 'EventList' },
);

export const ListEventsQuery = Type.Object({
  ...PageQuery,
  type: Type.Optional(Type.String({ maxLength: 1024, description: 'One or more event types, comma-separated: `task.assigned,workflow.completed`.' })),
});
