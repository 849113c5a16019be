import { Type, type Static } from '@sinclair/typebox';
import { EVENT_TYPES } from './events.js';
import { ListEnvelope, Nullable, PageQuery, Timestamp } from './common.js';

/** A subscription's delivery rate limit is 1 to this many per second, or none. */
export const MAX_RATE_LIMIT = 1000;
/** Seconds the previous signing secret keeps signing after a rotation: the default and the most. */
export const DEFAULT_PREVIOUS_EXPIRES_IN = 86_400;
export const MAX_PREVIOUS_EXPIRES_IN = 604_800;

const EventName = Type.Union(EVENT_TYPES.map((name) => Type.Literal(name)), { title: 'EventType' });

const NullableTime = (description: string) => Type.Union([Timestamp, Type.Null()], { description });

const webhookFields = {
  id: Type.String({ examples: ['wh_0123456789abcdefghijklmn'] }),
  url: Type.String({
    examples: ['https://hooks.example.com/workspace'],
    description: 'The endpoint. To members and viewers each query value and any user part read "•••" (`?token=•••`): receivers often authenticate with them. Admins and owners see it whole.',
  }),
  events: Type.Array(EventName),
  active: Type.Boolean({ description: 'true exactly when `status` is `active`.' }),
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
    description: 'The same state as `active`, for clients of either documented shape. `disabled`: the service stopped sending to it (CONTRACT 11); `POST /v1/webhooks/{id}/enable` brings it back.',
  }),
  created_at: Timestamp,
  failing_since: NullableTime('Extension: start of the current failure streak (every attempt since failed); null while healthy.'),
  disabled_at: NullableTime('Extension: when the service disabled the subscription; null while active.'),
  disabled_reason: Type.Union([Type.Literal('failing'), Type.Literal('gone'), Type.Null()], {
    description: 'Extension: `failing` (every attempt failed for WEBHOOK_DISABLE_AFTER) or `gone` (the endpoint answered 410 Gone); null while active.',
  }),
  previous_secret_expires_at: NullableTime('Extension: until when a rotated-out secret still signs beside the current one; null when none does.'),
  rate_limit: Nullable(Type.Integer({ minimum: 1, maximum: MAX_RATE_LIMIT }), {
    description:
      'Extension (CONTRACT 14): attempts started to this subscription in any one-second window, across every worker; the rest wait their turn (not failed, not counted as attempts). null: no limit.',
    examples: [50],
  }),
  ordering: Type.Union([Type.Literal('none'), Type.Literal('fifo')], {
    description:
      'Extension (CONTRACT 14): `fifo` sends one attempt at a time, in the order the events were committed; a failing delivery holds the later ones through its retries. Replays and test events stand outside the order.',
  }),
};

export const Webhook = Type.Object(webhookFields, { $id: 'Webhook', title: 'Webhook' });
export type Webhook = Static<typeof Webhook>;

const Secret = Type.String({
  minLength: 16,
  maxLength: 256,
  pattern: '^[\\x20-\\x7E]*$',
  description:
    '16 to 256 printable ASCII characters. One starting with `whsec_` must continue with base64 (it is the Standard Webhooks key). ' +
    'Omitted: the service generates `whsec_` + 32 random bytes in standard base64.',
});

export const CreatedWebhook = Type.Object(
  {
    id: webhookFields.id,
    url: webhookFields.url,
    events: webhookFields.events,
    secret: Type.String({ description: 'The signing secret; returned only here, never again.', examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo='] }),
    active: webhookFields.active,
    status: webhookFields.status,
    created_at: webhookFields.created_at,
    failing_since: webhookFields.failing_since,
    disabled_at: webhookFields.disabled_at,
    disabled_reason: webhookFields.disabled_reason,
    previous_secret_expires_at: webhookFields.previous_secret_expires_at,
    rate_limit: webhookFields.rate_limit,
    ordering: webhookFields.ordering,
  },
  { $id: 'CreatedWebhook', title: 'CreatedWebhook' },
);
/** Only the creation response carries the secret. */
export type CreatedWebhook = Static<typeof CreatedWebhook>;

export const WebhookList = ListEnvelope(Webhook, 'WebhookList');

export const ListWebhooksQuery = Type.Object({ ...PageQuery });

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  // In the schema too, so a bad scheme is reported together with the other fields' errors (leading
  // white space passes here and gets the service's more specific message).
  pattern: '^\\s*[Hh][Tt][Tt][Pp][Ss]://',
  patternMessage: 'must be an absolute https:// URL',
  description: 'Absolute https:// URL without user-info, at most 2,048 characters, on a public host.',
});

const Events = Type.Array(EventName, { minItems: 1, description: 'At least one event name; duplicates are dropped.' });

const deliveryControl = {
  rate_limit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_RATE_LIMIT }), { description: webhookFields.rate_limit.description!, examples: [50] })),
  ordering: Type.Optional(webhookFields.ordering),
};

export const CreateWebhookBody = Type.Object(
  { url: Url, events: Events, secret: Type.Optional(Secret), ...deliveryControl },
  { additionalProperties: false, title: 'CreateWebhookRequest' },
);

export const UpdateWebhookBody = Type.Object(
  { url: Type.Optional(Url), events: Type.Optional(Events), ...deliveryControl },
  {
    additionalProperties: false,
    minProperties: 1,
    title: 'UpdateWebhookRequest',
    description: 'The fields to change (at least one), with the rules of creation. Waiting and later attempts go to the new URL.',
    examples: [{ url: 'https://hooks.example.com/v2/workspace' }],
  },
);

export const RotateSecretBody = Type.Object(
  {
    secret: Type.Optional(Secret),
    previous_expires_in: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_PREVIOUS_EXPIRES_IN,
        default: DEFAULT_PREVIOUS_EXPIRES_IN,
        description: `Seconds the previous secret keeps signing beside the new one (0 to ${MAX_PREVIOUS_EXPIRES_IN}; default ${DEFAULT_PREVIOUS_EXPIRES_IN}: a day).`,
      }),
    ),
  },
  { additionalProperties: false, title: 'RotateSecretRequest', examples: [{ previous_expires_in: 3600 }] },
);

export const RotatedSecret = Type.Object(
  {
    secret: Type.String({ description: 'The new signing secret: shown only here, never again.', examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo='] }),
    previous_expires_at: Type.String({ format: 'date-time', description: 'When the previous secret stops signing (now, for a window of 0).', examples: ['2026-11-23T09:30:00.000Z'] }),
  },
  { $id: 'RotatedSecret', title: 'RotatedSecret' },
);
export type RotatedSecret = Static<typeof RotatedSecret>;

export const TestEventBody = Type.Object(
  { event: Type.Optional(Type.Union(EVENT_TYPES.map((name) => Type.Literal(name)), { description: "One of the subscription's events; default its first." })) },
  { additionalProperties: false, title: 'TestEventRequest', examples: [{ event: 'project.created' }] },
);

export const TestEventAccepted = Type.Object(
  { delivery_id: Type.String({ description: 'The test delivery, in the history with trigger `test`.', examples: ['dlv_0123456789abcdefghijklmn'] }) },
  { $id: 'TestEventAccepted', title: 'TestEventAccepted' },
);
