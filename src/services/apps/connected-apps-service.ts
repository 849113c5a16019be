import type { AuthEvents } from '../../db/auth-events.js';
import type { AppResource } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import type { ConnectedAppRow } from '../../db/repositories/oauth-repo.js';
import { errors } from '../../errors.js';
import type { Clock } from '../../lib/time.js';
import { systemActor, type Actor, type UserActor } from '../access/actor.js';
import { requireWritable } from '../access/workspace.js';
import { recordAudit } from '../audit/audit-record.js';
import { createLastUsed } from '../shared/last-used.js';
import { requireConfirmed } from '../identity/confirmation.js';
import { oauthScopeText, scopeFromOauth } from './app-scopes.js';

/** `last_used_at` is written at most this often per grant and process. */
const TOUCH_INTERVAL_MS = 60_000;

/** A connected app as the dashboard and the CLI show it (CONTRACT 17). */
export interface ConnectedApp {
  id: string;
  appName: string;
  clientId: string;
  userId: string;
  userEmail: string;
  userName: string | null;
  resource: AppResource;
  /** The consented scopes as OAuth writes them. */
  scope: string;
  createdAt: number;
  lastUsedAt: number | null;
}

/** The owners' switches of CONTRACT 17. */
export interface AppSettings {
  membersMayConnect: boolean;
  agentsMayDelete: boolean;
}

/** What the person is asked to allow (the consent page's request, as the service needs it). */
export interface ConnectRequest {
  clientId: string;
  clientName: string;
  resource: AppResource;
  scope: string;
}

function view(row: ConnectedAppRow): ConnectedApp {
  return {
    id: row.id,
    appName: row.client_name,
    clientId: row.client_id,
    userId: row.user_id,
    userEmail: row.email,
    userName: row.user_name,
    resource: row.resource,
    scope: oauthScopeText(scopeFromOauth(row.scope)),
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

const isManager = (actor: Actor) => actor.type !== 'user' || actor.role === 'owner' || actor.role === 'admin';

export type ConnectedAppsService = ReturnType<typeof createConnectedAppsService>;

/**
 * Apps and AI agents connected through OAuth (CONTRACT 17): who connected what, the owners' switches, and the
 * end of a grant from every door. A grant's tokens act as an API key of its person would; ending the grant ends
 * them on every instance (the principal cache listens for the grant's id, as it does for a key's).
 */
export function createConnectedAppsService(deps: { store: Store; clock: Clock; authEvents: AuthEvents; onTouchError?: (err: unknown) => void }) {
  const { store, clock, authEvents } = deps;
  const lastUsed = createLastUsed({ now: () => clock.now(), intervalMs: TOUCH_INTERVAL_MS, write: (orgId, grantId, at) => store.repos.oauth.touchGrant(orgId, grantId, at), onError: deps.onTouchError });

  async function settingsOf(orgId: string): Promise<AppSettings> {
    const org = await store.repos.organizations.findById(orgId);
    if (!org) throw errors.notFound('organization');
    return { membersMayConnect: org.members_may_connect_apps === 1, agentsMayDelete: org.agents_may_delete === 1 };
  }

  return {
    /** The person's own connected apps, newest first ("Connected apps" on the account page). */
    async listMine(actor: Actor & { type: 'user' }): Promise<ConnectedApp[]> {
      return (await store.repos.oauth.listGrants(actor.orgId, actor.userId, clock.now())).map(view);
    },

    /** Every app connected in the organisation (admins and owners; /dashboard/settings/apps, `app list`). */
    async listAll(actor: Actor): Promise<ConnectedApp[]> {
      if (!isManager(actor)) throw errors.forbidden('only admins and owners see every connected app');
      return (await store.repos.oauth.listGrants(actor.orgId, null, clock.now())).map(view);
    },

    /** Ends a connected app: its person may, and so may admins and owners. Its tokens stop on every instance. */
    async revoke(actor: Actor, grantId: string): Promise<ConnectedApp> {
      const now = clock.now();
      const app = await store.transaction(async (repos) => {
        const row = await repos.oauth.findGrant(actor.orgId, grantId);
        const mine = row !== undefined && actor.type === 'user' && row.user_id === actor.userId;
        if (!row || (!mine && !isManager(actor))) throw errors.notFound('connected app');
        await repos.oauth.revokeGrant(row.id, now);
        await recordAudit(repos, actor, {
          action: 'app.revoked',
          target: { type: 'oauth_grant', id: row.id, label: row.client_name },
          changes: { user: { old: row.user_id, new: null } },
          at: now,
        });
        return view(row);
      });
      await authEvents.keyRevoked(grantId);
      return app;
    },

    settings: (actor: Actor) => settingsOf(actor.orgId),

    /** The organisation a connection belongs to, live or not (the operator's CLI names connections by id). */
    async orgOf(grantId: string): Promise<string | null> {
      return (await store.repos.oauth.findGrantAnyOrg(grantId))?.org_id ?? null;
    },

    /** "Members may connect apps" and "Allow AI agents to delete" (owners; audited). */
    async setSettings(actor: Actor, change: Partial<AppSettings>): Promise<AppSettings> {
      if (actor.type === 'user' && actor.role !== 'owner') throw errors.forbidden("only an owner changes the organisation's app settings");
      const now = clock.now();
      requireConfirmed(actor, now);
      const result = await store.transaction(async (repos) => {
        const org = await repos.organizations.findById(actor.orgId);
        if (!org) throw errors.notFound('organization');
        await requireWritable(repos, actor);
        const before = { membersMayConnect: org.members_may_connect_apps === 1, agentsMayDelete: org.agents_may_delete === 1 };
        const after = { ...before, ...change };
        if (after.membersMayConnect === before.membersMayConnect && after.agentsMayDelete === before.agentsMayDelete) return { after: before, membersChanged: false };
        await repos.organizations.setSettings(actor.orgId, {
          members_may_connect_apps: after.membersMayConnect ? 1 : 0,
          agents_may_delete: after.agentsMayDelete ? 1 : 0,
        });
        const changes: Record<string, { old: boolean; new: boolean }> = {};
        if (after.membersMayConnect !== before.membersMayConnect) changes.members_may_connect_apps = { old: before.membersMayConnect, new: after.membersMayConnect };
        if (after.agentsMayDelete !== before.agentsMayDelete) changes.agents_may_delete = { old: before.agentsMayDelete, new: after.agentsMayDelete };
        await recordAudit(repos, actor, { action: 'organization.apps_settings_changed', target: { type: 'organization', id: org.id, label: org.name }, changes, at: now });
        return { after, membersChanged: after.membersMayConnect !== before.membersMayConnect };
      });
      // Members' apps stop (or work again) on every instance before the answer.
      if (result.membersChanged) await authEvents.orgChanged(actor.orgId);
      return result.after;
    },

    /**
     * "Allow" on the consent page: refused for a member or viewer while "Members may connect apps" is off, and
     * in a workspace that is read-only; otherwise `issue` makes the grant, the connection is audited and an
     * earlier connection of the same app replaced.
     */
    async connect<T extends { grantId: string }>(actor: Actor & { type: 'user' }, request: ConnectRequest, issue: () => Promise<T>): Promise<T> {
      await store.transaction(async (repos) => {
        const org = await repos.organizations.findById(actor.orgId);
        if (org?.members_may_connect_apps !== 1 && !isManager(actor)) throw errors.forbidden('your organisation lets only admins and owners connect apps');
        // A new credential, like a new API key: refused while the workspace is read-only (DASHBOARD 10).
        await requireWritable(repos, actor);
      });
      const issued = await issue();
      const now = clock.now();
      const replaced = await store.transaction(async (repos) => {
        // Connecting the same app again replaces the earlier connection: one row per app and person.
        const older = await repos.oauth.olderGrants(actor.orgId, { id: issued.grantId, user_id: actor.userId, client_id: request.clientId, resource: request.resource });
        for (const id of older) await repos.oauth.revokeGrant(id, now);
        await recordAudit(repos, actor, {
          action: 'app.connected',
          target: { type: 'oauth_grant', id: issued.grantId, label: request.clientName },
          changes: { scope: { old: null, new: oauthScopeText(scopeFromOauth(request.scope)) }, resource: { old: null, new: request.resource } },
          at: now,
        });
        return older;
      });
      for (const id of replaced) await authEvents.keyRevoked(id);
      return issued;
    },

    /** Whether a connect request may be shown an "Allow" at all (the consent page explains a refusal instead). */
    async mayConnect(actor: Actor & { type: 'user' }): Promise<boolean> {
      return isManager(actor) || (await settingsOf(actor.orgId)).membersMayConnect;
    },

    /** The authorization server ended a grant itself (a refresh token or code used twice, a token revoked). */
    async grantEnded(grantId: string): Promise<void> {
      const row = await store.repos.oauth.findGrantAnyOrg(grantId);
      if (row && row.revoked_at !== null) {
        await store.transaction(async (repos) => {
          await recordAudit(repos, systemActor(row.org_id), { action: 'app.revoked', target: { type: 'oauth_grant', id: row.id, label: null }, changes: { user: { old: row.user_id, new: null } }, at: clock.now() });
        });
      }
      await authEvents.keyRevoked(grantId);
    },

    /** One audit row per MCP tools/call (CONTRACT 17): the tool, and the app or key that called it. */
    async recordToolCall(actor: UserActor, call: { tool: string; via: string; outcome: 'success' | 'failure' }): Promise<void> {
      await store.transaction(async (repos) => {
        await recordAudit(repos, actor, { action: 'mcp.tool_called', target: { type: 'mcp_tool', id: call.tool, label: call.via }, outcome: call.outcome, at: clock.now() });
      });
    },

    /** Whether a person may still use apps: active, in an organisation that is not being deleted. */
    async activeUser(userId: string): Promise<boolean> {
      const user = await store.repos.users.findByIdAnyOrg(userId);
      if (!user || user.status !== 'active') return false;
      const org = await store.repos.organizations.findById(user.org_id);
      return org !== undefined && org.state !== 'deleting';
    },

    /** Expired codes, tokens and the server's sessions go (the worker's lifecycle pass); how many. */
    async sweepExpired(): Promise<number> {
      // The authorization server reads the system clock; so does its storage (container.ts).
      return store.repos.oauth.deleteExpiredEntries(Date.now());
    },

    /** Records use at most once a minute per grant, off the request's path (like API keys). */
    touch: lastUsed.touch,
    /** Waits for last-used writes under way (shutdown). */
    flush: lastUsed.flush,
  };
}
