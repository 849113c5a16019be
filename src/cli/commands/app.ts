import { cliActor } from '../../services/access/actor.js';
import { ORG_OPTION, required, UsageError, type CommandGroup } from '../command.js';
import { formatTable } from '../output.js';
import { withContainer } from '../runtime.js';
import { toIso } from '../../lib/time.js';

/** `app list|revoke`: apps and AI agents connected through OAuth (CONTRACT 17), as the admins' dashboard page shows them. */
export const appGroup: CommandGroup = {
  name: 'app',
  summary: 'apps and AI agents connected through OAuth',
  commands: [
    {
      name: 'list',
      summary: "list an organisation's connected apps: who connected what, with which scopes, last used when",
      options: { org: ORG_OPTION },
      async run(input) {
        const apps = (await withContainer(input, (c) => c.services.connectedApps.listAll(cliActor(required(input, 'org'))))).map((a) => ({
          id: a.id,
          app: a.appName,
          client_id: a.clientId,
          user_id: a.userId,
          user: a.userEmail,
          resource: `/${a.resource}`,
          scope: a.scope,
          connected_at: toIso(a.createdAt),
          last_used_at: a.lastUsedAt === null ? null : toIso(a.lastUsedAt),
        }));
        return { data: { data: apps }, text: formatTable(apps, ['id', 'app', 'user', 'resource', 'scope', 'connected_at', 'last_used_at']) };
      },
    },
    {
      name: 'revoke',
      summary: 'revoke a connected app: its tokens are refused from the next request on, on every instance',
      positionals: [{ name: 'APP_ID', description: 'the connection id (oag_...) from app list' }],
      async run(input) {
        const id = input.args[0]!;
        const revoked = await withContainer(input, async (c) => {
          const orgId = await c.services.connectedApps.orgOf(id);
          if (orgId === null) throw new UsageError(`no connected app ${id}`, 'app revoke');
          return c.services.connectedApps.revoke(cliActor(orgId), id);
        });
        return { data: { id, app: revoked.appName, user_id: revoked.userId, revoked: true }, text: `Revoked ${id} (${revoked.appName}, connected by ${revoked.userEmail}).` };
      },
    },
  ],
};
