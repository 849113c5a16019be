import { Type } from '@sinclair/typebox';
import { SCOPE_HELP } from './access.js';
import { ListEnvelope, PageQuery, Timestamp } from './common.js';

const NullableText = (description: string) => Type.Union([Type.String(), Type.Null()], { description });
const NullableTime = (description: string) => Type.Union([Timestamp, Type.Null()], { description });

export const AuditEntry = Type.Object(
  {
    id: Type.String({ examples: ['aud_0123456789abcdefghijklmn'] }),
    created_at: Timestamp,
    actor: Type.Object({
      type: Type.Union([Type.Literal('user'), Type.Literal('cli'), Type.Literal('system')]),
      id: NullableText('The user; null for the command line and the service itself.'),
      label: NullableText('How the actor was named at the time (an e-mail).'),
    }),
    action: Type.String({ description: 'Past tense, `resource.verb`: `project.created`, `task.assigned`, `api_key.revoked`, ...' }),
    target: Type.Union([Type.Object({ type: Type.String(), id: Type.String(), label: NullableText('How the target was named at the time.') }), Type.Null()]),
    source: Type.Union([Type.Literal('api'), Type.Literal('dashboard'), Type.Literal('cli'), Type.Literal('system'), Type.Literal('scim'), Type.Literal('mcp')], {
      description: '`scim`: the organisation\'s identity provider, through a SCIM token (the actor label is the token\'s name). `mcp`: an AI agent or app through the MCP server.',
    }),
    ip: NullableText('The client address of the request that made the change.'),
    user_agent: NullableText('Its User-Agent.'),
    request_id: NullableText('Its X-Request-Id.'),
    outcome: Type.Union([Type.Literal('success'), Type.Literal('failure')]),
    changes: Type.Union(
      [
        Type.Object(
          {},
          {
            additionalProperties: Type.Object({
              old: Type.Unknown(),
              new: Type.Unknown(),
              old_label: Type.Optional(Type.String({ description: 'When `old` is the id of a person, project, workflow or run: its name when the entry was written.' })),
              new_label: Type.Optional(Type.String({ description: 'The same for `new`.' })),
            }),
          },
        ),
        Type.Null(),
      ],
      { description: '`{ field: { old, new } }`, with `old_label` / `new_label` naming what an id points to; null when no field changed (a deletion, a revocation).' },
    ),
  },
  { $id: 'AuditEntry', title: 'AuditEntry' },
);

export const AuditLog = ListEnvelope(AuditEntry, 'AuditLog');

export const AuditLogQuery = Type.Object({
  ...PageQuery,
  action: Type.Optional(Type.String({ maxLength: 100, description: 'A prefix of the action: `project` (or `project.`) for every project action, `workflow` for workflow and workflow run actions, `project.created` for that one.' })),
  actor_id: Type.Optional(Type.String({ maxLength: 200, description: 'A user id, `cli` or `system` (part of an e-mail matches too).' })),
  target_id: Type.Optional(Type.String({ maxLength: 200, description: 'A target id (part of its label matches too).' })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'From this time, inclusive.' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'Up to this time, exclusive.' })),
});

const keyFields = {
  id: Type.String({ examples: ['key_0123456789abcdefghijklmn'] }),
  name: NullableText('What the key is for; null when unnamed.'),
  scope: Type.String({ description: `${SCOPE_HELP}.` }),
  user_id: Type.String({ description: 'The user the key acts as.' }),
  prefix: Type.String({ description: 'The key\'s first 12 characters, to recognise it.' }),
  created_at: Timestamp,
  last_used_at: NullableTime('Written at most once a minute; null until first used.'),
  expires_at: NullableTime('When the key stops working (401 "API key expired"); null: never. Its user is mailed 7 days before.'),
};

export const ApiKey = Type.Object(keyFields, { $id: 'ApiKey', title: 'ApiKey' });

export const ApiKeyList = ListEnvelope(ApiKey, 'ApiKeyList');

export const CreatedApiKey = Type.Object(
  { ...keyFields, key: Type.String({ description: 'The secret (`wsk_...`): shown in this answer only, stored as a hash.' }) },
  { title: 'CreatedApiKey' },
);

export const CreateApiKeyBody = Type.Object(
  {
    scope: Type.String({ maxLength: 1024, description: `${SCOPE_HELP}; never wider than the calling key's.` }),
    name: Type.Optional(Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], { description: 'At most 255 characters, not blank; empty or null for none.' })),
    user_id: Type.Optional(Type.String({ maxLength: 128, description: 'Only the calling key\'s own user (the default).' })),
    expires_at: Type.Optional(
      Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description: 'When the key stops working; null or absent: never. Must be in the future, and within the organisation\'s maximum API key lifetime when an owner set one (400 otherwise).',
      }),
    ),
  },
  { additionalProperties: false, title: 'CreateApiKeyRequest' },
);

export const Export = Type.Object(
  {
    id: Type.String({ examples: ['exp_0123456789abcdefghijklmn'] }),
    status: Type.Union(['pending', 'building', 'ready', 'failed', 'expired'].map((s) => Type.Literal(s)), {
      description: '`pending` until a worker takes it, `building`, then `ready` (download it) or `failed`; `expired` 7 days after it was ready.',
    }),
    created_at: Timestamp,
    ready_at: NullableTime('When it became ready.'),
    expires_at: NullableTime('Until when it can be downloaded.'),
    size_bytes: Type.Union([Type.Integer(), Type.Null()], { description: 'The ZIP\'s size once ready.' }),
  },
  { $id: 'Export', title: 'Export' },
);

export const ExportList = ListEnvelope(Export, 'ExportList');
