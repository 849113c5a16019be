import type { AuthEvents } from '../../db/auth-events.js';
import type { ProjectRole, ScimDefaultRole, ScimGroupRole } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import type { Repositories } from '../../db/repositories/index.js';
import { errors, fieldError } from '../../errors.js';
import { sha256Hex } from '../../lib/crypto.js';
import { newId, randomToken } from '../../lib/ids.js';
import { BLANK_MESSAGE, isBlank } from '../../lib/text.js';
import type { Clock } from '../../lib/time.js';
import { actingRole, type Actor } from '../access/actor.js';
import { recordAudit } from '../audit/audit-record.js';
import { requireConfirmed } from '../identity/confirmation.js';
import { syncProvisionedRoles } from './group-roles.js';
import { requireWritable } from '../access/workspace.js';

/** Two tokens live at once: the one in use and its replacement (CONTRACT 16's rotation). */
export const SCIM_TOKENS_LIVE = 2;
/** `last_used_at` is written at most this often per token and process. */
const TOUCH_INTERVAL_MS = 60_000;

export const SCIM_GROUP_ROLES: readonly ScimGroupRole[] = ['viewer', 'member', 'admin'];
export const SCIM_DEFAULT_ROLES: readonly ScimDefaultRole[] = ['viewer', 'member'];
export const PROJECT_ROLES: readonly ProjectRole[] = ['viewer', 'editor', 'manager'];

export interface ScimCaller {
  orgId: string;
  tokenId: string;
  /** The token's name: the audit log's actor label. */
  name: string;
}

export interface ScimTokenView {
  id: string;
  name: string;
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
}

export interface ScimGroupView {
  id: string;
  displayName: string;
  members: number;
  orgRole: ScimGroupRole | null;
  projects: { projectId: string; projectName: string; role: ProjectRole }[];
}

export interface ScimSettingsView {
  baseUrl: string;
  defaultRole: ScimDefaultRole;
  tokens: ScimTokenView[];
  groups: ScimGroupView[];
  provisionedMembers: number;
}

export interface ScimSettingsDeps {
  store: Store;
  clock: Clock;
  authEvents: AuthEvents;
  /** `{PUBLIC_BASE_URL}/scim/v2`: what the owner pastes into the provider. */
  baseUrl: string;
}

/** Owners (and the operator's command line) set up provisioning; an API key never does (a confirmed session's business). */
function requireOwner(actor: Actor): void {
  if (actingRole(actor) !== 'owner') throw errors.forbidden('only an owner sets up provisioning (SCIM)');
  if (actor.type === 'user' && actor.keyId !== null) throw errors.forbidden('provisioning is set up from the dashboard or the CLI');
}

function checkName(name: string): string {
  if (name === '' || isBlank(name)) throw fieldError('name', name === '' ? 'is required' : BLANK_MESSAGE);
  if ([...name].length > 100) throw fieldError('name', 'must be at most 100 characters');
  return name;
}

/**
 * The owner's side of provisioning (CONTRACT 16, DASHBOARD 14): SCIM tokens (`wss_…`, only the SHA-256
 * kept, two live at once), the mapping of the provider's groups to roles, and the default role. A change of
 * a mapping re-derives the roles of the members it reaches at once.
 */
export function createScimSettingsService({ store, clock, authEvents, baseUrl }: ScimSettingsDeps) {
  const touched = new Map<string, number>();

  /** Runs the change, then re-derives the roles of the members it reaches, in one transaction; announces role changes after commit. */
  async function resync(actor: Actor, userIds: (repos: Repositories) => Promise<string[]>, change: (repos: Repositories, now: number) => Promise<void>): Promise<number> {
    const now = clock.now();
    const changed = await store.transaction(async (repos) => {
      await repos.organizations.lock(actor.orgId);
      await requireWritable(repos, actor);
      await change(repos, now);
      return syncProvisionedRoles(repos, actor, await userIds(repos), now);
    });
    for (const userId of changed) await authEvents.userChanged(userId);
    return changed.length;
  }

  return {
    baseUrl,

    /** The organisation and token behind a bearer token, or null (unknown, revoked, or the organisation is being deleted). */
    async authenticate(token: string): Promise<ScimCaller | null> {
      if (!token.startsWith('wss_') || token.length > 200) return null;
      const row = await store.repos.scim.findLiveTokenByHash(sha256Hex(token));
      if (!row || row.org_state === 'deleting') return null;
      const now = clock.now();
      const last = touched.get(row.id);
      if (last === undefined || now - last >= TOUCH_INTERVAL_MS) {
        if (touched.size > 10_000) touched.clear();
        touched.set(row.id, now);
        await store.repos.scim.touchToken(row.org_id, row.id, now);
      }
      return { orgId: row.org_id, tokenId: row.id, name: row.name };
    },

    async view(actor: Actor): Promise<ScimSettingsView> {
      requireOwner(actor);
      const repos = store.repos;
      const [org, tokens, groups, mappings, provisioned] = await Promise.all([
        repos.organizations.findById(actor.orgId),
        repos.scim.liveTokens(actor.orgId),
        repos.scim.allGroups(actor.orgId),
        repos.scim.mappings(actor.orgId),
        repos.scim.provisionedUserIds(actor.orgId),
      ]);
      if (!org) throw errors.notFound('organization');
      const members = await repos.scim.membersOf(actor.orgId, groups.map((g) => g.id));
      const projectIds = [...new Set([...mappings.values()].flatMap((m) => m.projects.map((p) => p.projectId)))];
      const names = new Map((await repos.projects.findByIds(actor.orgId, projectIds)).map((p) => [p.id, p.name]));
      return {
        baseUrl,
        defaultRole: org.scim_default_role,
        provisionedMembers: provisioned.length,
        tokens: tokens.map((t) => ({ id: t.id, name: t.name, prefix: t.token_prefix, createdAt: t.created_at, lastUsedAt: t.last_used_at })),
        groups: groups.map((g) => ({
          id: g.id,
          displayName: g.display_name,
          members: members.filter((m) => m.group_id === g.id).length,
          orgRole: g.org_role,
          projects: (mappings.get(g.id)?.projects ?? []).map((p) => ({ ...p, projectName: names.get(p.projectId) ?? p.projectId })),
        })),
      };
    },

    /** A new token, its secret returned this once (DASHBOARD 14, "Your new SCIM token"). */
    async createToken(actor: Actor, name: string): Promise<{ id: string; token: string; name: string }> {
      requireOwner(actor);
      const now = clock.now();
      requireConfirmed(actor, now);
      const tokenName = checkName(name);
      return store.transaction(async (repos) => {
        await repos.organizations.lock(actor.orgId);
        await requireWritable(repos, actor);
        const live = await repos.scim.liveTokens(actor.orgId);
        if (live.length >= SCIM_TOKENS_LIVE) throw errors.conflict(`at most ${SCIM_TOKENS_LIVE} SCIM tokens are valid at once: revoke the old one first`);
        const token = `wss_${randomToken(32)}`;
        const row = await repos.scim.insertToken({
          id: newId('sct'),
          org_id: actor.orgId,
          name: tokenName,
          token_hash: sha256Hex(token),
          token_prefix: token.slice(0, 12),
          created_at: now,
          last_used_at: null,
          revoked_at: null,
        });
        await recordAudit(repos, actor, { action: 'scim.token_created', target: { type: 'scim_token', id: row.id, label: tokenName }, at: now });
        return { id: row.id, token, name: tokenName };
      });
    },

    async listTokens(actor: Actor): Promise<ScimTokenView[]> {
      requireOwner(actor);
      const rows = await store.repos.scim.liveTokens(actor.orgId);
      return rows.map((t) => ({ id: t.id, name: t.name, prefix: t.token_prefix, createdAt: t.created_at, lastUsedAt: t.last_used_at }));
    },

    /** Refused from the next request on: tokens are looked up on every SCIM call, never cached. Allowed while read-only (taking access away). */
    async revokeToken(actor: Actor, tokenId: string): Promise<{ name: string }> {
      requireOwner(actor);
      const now = clock.now();
      return store.transaction(async (repos) => {
        const row = await repos.scim.revokeToken(actor.orgId, tokenId, now);
        if (!row) throw errors.notFound('SCIM token');
        await recordAudit(repos, actor, { action: 'scim.token_revoked', target: { type: 'scim_token', id: row.id, label: row.name }, at: now });
        return { name: row.name };
      });
    },

    /**
     * "Save mapping": the group's organisation role (null: none; undefined: unchanged), and optionally a project
     * role on one project (`projectRole` null removes that project's mapping). The group's members' roles follow
     * at once. Returns how many members' organisation roles changed.
     */
    async saveMapping(actor: Actor, input: { groupId: string; orgRole?: ScimGroupRole | null | undefined; projectId?: string | null; projectRole?: ProjectRole | null }): Promise<number> {
      requireOwner(actor);
      if (input.orgRole !== undefined && input.orgRole !== null && !SCIM_GROUP_ROLES.includes(input.orgRole)) throw fieldError('org_role', 'must be viewer, member or admin (a group never makes owners)');
      if (input.projectRole && !PROJECT_ROLES.includes(input.projectRole)) throw fieldError('project_role', 'must be viewer, editor or manager');
      if (input.projectRole && !input.projectId) throw fieldError('project', 'is required with a project role');
      return resync(
        actor,
        async (repos) => (await repos.scim.membersOf(actor.orgId, [input.groupId])).map((m) => m.user_id),
        async (repos, now) => {
          const group = await repos.scim.findGroup(actor.orgId, input.groupId);
          if (!group) throw errors.notFound('group');
          const changes: Record<string, { old: unknown; new: unknown }> = {};
          if (input.orgRole !== undefined && group.org_role !== input.orgRole) {
            await repos.scim.updateGroup(actor.orgId, group.id, { org_role: input.orgRole, updated_at: now });
            changes.org_role = { old: group.org_role, new: input.orgRole };
          }
          if (input.projectId) {
            const project = await repos.projects.findById(actor.orgId, input.projectId);
            if (!project) throw fieldError('project', 'is not a project of this organisation');
            const before = (await repos.scim.mappings(actor.orgId)).get(group.id)?.projects.find((p) => p.projectId === project.id)?.role ?? null;
            if (input.projectRole) await repos.scim.setProjectRole(actor.orgId, group.id, project.id, input.projectRole, now);
            else await repos.scim.removeProjectRole(actor.orgId, group.id, project.id);
            if (before !== (input.projectRole ?? null)) changes[`project:${project.name}`] = { old: before, new: input.projectRole ?? null };
          }
          if (Object.keys(changes).length > 0) await recordAudit(repos, actor, { action: 'scim.mapping_saved', target: { type: 'scim_group', id: group.id, label: group.display_name }, changes, at: now });
        },
      );
    },

    /** "Default role": what a provisioned member in no mapped group holds (viewer or member). */
    async setDefaultRole(actor: Actor, role: ScimDefaultRole): Promise<number> {
      requireOwner(actor);
      if (!SCIM_DEFAULT_ROLES.includes(role)) throw fieldError('default_role', 'must be viewer or member');
      return resync(
        actor,
        (repos) => repos.scim.provisionedUserIds(actor.orgId),
        async (repos, now) => {
          const org = await repos.organizations.findById(actor.orgId);
          if (!org) throw errors.notFound('organization');
          if (org.scim_default_role === role) return;
          await repos.organizations.setSettings(actor.orgId, { scim_default_role: role });
          await recordAudit(repos, actor, { action: 'scim.default_role_changed', target: { type: 'organization', id: org.id, label: org.name }, changes: { default_role: { old: org.scim_default_role, new: role } }, at: now });
        },
      );
    },
  };
}

export type ScimSettingsService = ReturnType<typeof createScimSettingsService>;
