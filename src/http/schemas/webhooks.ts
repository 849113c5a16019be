import { Type } from '@sinclair/typebox';
import { EVENT_TYPES } from '../../services/events.js';
import { ListEnvelope, PageQuery, Timestamp } from './common.js';

const EventName = Type.Union(EVENT_TYPES.map((name) => Type.Literal(name)), { title: 'EventType' });

const webhookFields = {
  id: Type.String({ examples: ['wh_0123456789abcdefghijklmn'] }),
  url: Type.String(),
  events: Type.Array(EventName),
  active: Type.Literal(true),
  status: Type.Literal('active', { description: 'The same state as `active`, for clients of either documented shape.' }),
  created_at: Timestamp,
};

export const Webhook = Type.Object(webhookFields, { $id: 'Webhook', title: 'Webhook' });

export const CreatedWebhook = Type.Object(
  {
    id: webhookFields.id,
    url: webhookFields.url,
    events: webhookFields.events,
    secret: Type.String({ description: 'The signing secret; returned only here, never again.' }),
    active: webhookFields.active,
    status: webhookFields.status,
    created_at: webhookFields.created_at,
  },
  { $id: 'CreatedWebhook', title: 'CreatedWebhook' },
);

export const WebhookList = ListEnvelope(Webhook, 'WebhookList');

export const ListWebhooksQuery = Type.Object({ ...PageQuery });

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      // In the schema too, so a bad scheme is reported together with the other fields' errors (leading
      // white space passes here and gets the service's more specific message).
      pattern: '^\\s*[Hh][Tt][Tt][Pp][Ss]://',
      patternMessage: 'must be an absolute https:// URL',
      description: 'Absolute https:// URL without user-info, at most 2,048 characters, on a public host.',
    }),
    events: Type.Array(EventName, { minItems: 1, description: 'At least one event name; duplicates are dropped.' }),
    secret: Type.Optional(
      Type.String({
        minLength: 16,
        maxLength: 256,
        pattern: '^[\\x20-\\x7E]*$',
        description: '16 to 256 printable ASCII characters. Omitted: the service generates whsec_ + 32 random bytes (base64url).',
      }),
    ),
  },
  { additionalProperties: false, title: 'CreateWebhookRequest' },
);
