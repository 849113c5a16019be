import { parseScope } from '../../services/access/permissions.js';
import { SCOPE_HELP } from '../../schemas/access.js';
import { ORG_OPTION, required, type CommandGroup } from '../command.js';
import { formatFields, formatTable } from '../output.js';
import { withContainer } from '../runtime.js';


/** `--expires`: whole days from now (`30`, `30d`) or an ISO 8601 time; null when it is neither. */
export function expiryFrom(value: string, now: number): number | null {
  const days = /^(\d{1,4})d?$/.exec(value.trim());
  if (days) return Number(days[1]) > 0 ? now + Number(days[1]) * 86_400_000 : null;
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) return null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : at;
}

export const keyGroup: CommandGroup = {
  name: 'key',
  summary: 'API keys',
  commands: [
    {
      name: 'create',
      summary: 'create an API key for an active user',
      details: `SCOPE is ${SCOPE_HELP}, e.g. projects,tasks:read. What the key may do is its scope intersected with the user's current role.\nThe key is shown once; store it now.`,
      options: {
        user: { type: 'string', value: 'USER', description: 'user id (user_...)', required: true },
        scope: {
          type: 'string',
          value: 'SCOPE',
          description: 'what the key may reach',
          required: true,
          check: (value) => (parseScope(value) ? null : `must be ${SCOPE_HELP}`),
        },
        name: { type: 'string', value: 'LABEL', description: 'a label to recognise the key by' },
        expires: {
          type: 'string',
          value: 'WHEN',
          description: 'when the key stops working: a number of days (30 or 30d) or an ISO 8601 time; never by default',
          check: (value) => (expiryFrom(value, Date.now()) === null ? 'must be a number of days (30 or 30d) or an ISO 8601 time' : null),
        },
      },
      async run(input) {
        const key = await withContainer(input, (c) =>
          c.services.admin.createKey({
            userId: required(input, 'user'),
            scope: required(input, 'scope'),
            name: input.options.name,
            expiresAt: input.options.expires === undefined ? null : expiryFrom(input.options.expires, c.clock.now()),
          }),
        );
        return {
          data: key,
          text: formatFields([
            ['API key id', key.id],
            ['Scope', key.scope],
            ['Name', key.name],
            ['User', key.user_id],
            ['Expires', key.expires_at ?? 'never'],
            ['Organization', key.organization_id],
            ['API key', `${key.key}  (shown once: store it now)`],
          ]),
        };
      },
    },
    {
      name: 'revoke',
      summary: 'revoke an API key; it is refused from the next request on',
      positionals: [{ name: 'KEY_ID', description: 'the key id (key_...)' }],
      async run(input) {
        const key = await withContainer(input, (c) => c.services.admin.revokeKey(input.args[0]!));
        return { data: key, text: `Revoked ${key.id} (${key.prefix}...) at ${key.revoked_at}` };
      },
    },
    {
      name: 'list',
      summary: "list an organisation's API keys (ids and prefixes, never secrets)",
      options: { org: ORG_OPTION },
      async run(input) {
        const keys = await withContainer(input, (c) => c.services.admin.listKeys(required(input, 'org')));
        return { data: { data: keys }, text: formatTable(keys, ['id', 'prefix', 'scope', 'name', 'user_id', 'created_at', 'expires_at', 'revoked_at']) };
      },
    },
  ],
};
