import type { AuthEvents } from '../../db/auth-events.js';
import { isUniqueViolation } from '../../db/database.js';
import type { Repositories } from '../../db/repositories/index.js';
import type { UserRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { newId } from '../../lib/ids.js';
import type { Clock } from '../../lib/time.js';
import type { Actor } from '../access/actor.js';
import { createdChanges, recordAudit, userTarget } from '../audit/audit-record.js';
import { normalizeEmail } from '../identity/users-view.js';
import { isLastOwner, LAST_OWNER } from '../members/member-rules.js';
import type { UsersService } from '../members/users-service.js';
import { syncProvisionedRoles } from './group-roles.js';
import { requireWritable } from '../access/workspace.js';
import {
  applyPatch,
  displayNameOf,
  groupQuery,
  listResponse,
  normalizeGroupName,
  parseGroupResource,
  parseUserResource,
  ScimFault,
  scimFaults,
  toGroupResource,
  toUserResource,
  userQuery,
  type ScimGroupInput,
  type ScimUserInput,
} from './scim-resources.js';

type Json = Record<string, unknown>;

export interface ListParams {
  filter?: string | undefined;
  startIndex?: number | undefined;
  count?: number | undefined;
  /** `excludedAttributes=members`: Entra lists groups without their members. */
  withoutMembers?: boolean;
}

/** The largest page a SCIM list answers (ServiceProviderConfig's `filter.maxResults`). */
export const SCIM_MAX_RESULTS = 200;

export interface ScimDirectoryDeps {
  store: Store;
  clock: Clock;
  authEvents: AuthEvents;
  users: Pick<UsersService, 'remove'>;
  /** `{PUBLIC_BASE_URL}/scim/v2`, for `meta.location`. */
  baseUrl: string;
}

function page(params: ListParams): { offset: number; limit: number; startIndex: number } {
  // RFC 7644 3.4.2.4: startIndex below 1 is 1; a negative count is 0.
  const startIndex = Math.max(1, Math.floor(params.startIndex ?? 1));
  const limit = Math.min(SCIM_MAX_RESULTS, Math.max(0, Math.floor(params.count ?? 100)));
  return { offset: startIndex - 1, limit, startIndex };
}

/**
 * Users and Groups of SCIM 2.0 (CONTRACT 16) for one organisation, as its identity provider sees them. A User
 * is a member; `active: false` suspends them: their sessions end, their keys are revoked, and every instance
 * forgets their cached principals before the answer goes out (the same announcement as a removal), so the
 * next request anywhere is refused. Group membership decides provisioned members' roles (group-roles.ts).
 * Every change is audited with source `scim`, the token's name as actor.
 */
export function createScimDirectoryService({ store, clock, authEvents, users, baseUrl }: ScimDirectoryDeps) {
  async function requireUser(repos: Repositories, orgId: string, id: string): Promise<UserRow> {
    const user = await repos.users.findById(orgId, id);
    if (!user) throw scimFaults.notFound('User', id);
    return user;
  }

  /**
   * Writes a provider's view of a member (create, PUT or PATCH) in the caller's transaction. Returns the row,
   * whether its principals must be forgotten (status or e-mail changed), and whether this write made the member
   * provisioned (only then can their role differ from what their groups say: a new member starts in no group,
   * with the default role).
   */
  async function writeUser(
    repos: Repositories,
    actor: Actor,
    current: UserRow | null,
    input: ScimUserInput,
    now: number,
  ): Promise<{ row: UserRow; announce: boolean; claimed: boolean }> {
    const orgId = actor.orgId;
    const emailNormalized = normalizeEmail(input.email);
    if (current === null || current.email_normalized !== emailNormalized) {
      const taken = await repos.users.findByEmail(orgId, emailNormalized);
      if (taken && taken.id !== current?.id) throw scimFaults.uniqueness(`userName ${input.email} belongs to another member`);
    }
    const fields = {
      email: input.email,
      email_normalized: emailNormalized,
      name: displayNameOf(input) ?? current?.name ?? null,
      external_id: input.externalId,
      given_name: input.givenName,
      family_name: input.familyName,
      formatted_name: input.formatted,
      updated_at: now,
    };
    // While read-only (DASHBOARD 10) the provider may still take access away, nothing else.
    const suspending = current !== null && !input.active && current.status !== 'suspended';
    if (!suspending) await requireWritable(repos, actor);
    if (current === null) {
      const org = await repos.organizations.findById(orgId);
      const row = await repos.users
        .insert({
          id: newId('user'),
          org_id: orgId,
          ...fields,
          role: org?.scim_default_role ?? 'member',
          status: input.active ? 'active' : 'suspended',
          password_hash: null,
          created_at: now,
          provisioned_at: now,
        })
        .catch((err: unknown) => {
          throw isUniqueViolation(err) ? scimFaults.uniqueness(`userName ${input.email} belongs to another member`) : err;
        });
      await recordAudit(repos, actor, { action: 'member.provisioned', target: userTarget(row), changes: createdChanges({ role: row.role, status: row.status, external_id: row.external_id }), at: now });
      return { row, announce: false, claimed: false };
    }

    // An invited member the provider claims becomes active at once (no invitation is needed any more).
    const status = input.active ? (current.status === 'suspended' || current.status === 'invited' ? 'active' : current.status) : 'suspended';
    if (status === 'suspended' && current.status !== 'suspended' && current.role === 'owner' && isLastOwner(current, await repos.users.countActiveOwners(orgId))) {
      throw new ScimFault(409, null, LAST_OWNER);
    }
    const row = (await repos.users
      .update(orgId, current.id, { ...fields, status, provisioned_at: current.provisioned_at ?? now })
      .catch((err: unknown) => {
        throw isUniqueViolation(err) ? scimFaults.uniqueness(`userName ${input.email} belongs to another member`) : err;
      }))!;
    const changes: Record<string, { old: unknown; new: unknown }> = {};
    for (const field of ['email', 'name', 'external_id'] as const) if (current[field] !== row[field]) changes[field] = { old: current[field], new: row[field] };
    if (current.status !== status) changes.status = { old: current.status, new: status };
    if (current.provisioned_at === null) changes.provisioned = { old: false, new: true };
    if (status === 'suspended' && current.status !== 'suspended') {
      // Reactivation restores the status, not the access: keys and apps stay revoked, sessions stay ended (CONTRACT 16).
      const keys = await repos.apiKeys.revokeForUser(orgId, current.id, now);
      const sessions = await repos.sessions.deleteForUser(orgId, current.id, null);
      // Connected apps end too (CONTRACT 17): their tokens would otherwise work again on reactivation.
      const apps = (await repos.oauth.revokeGrantsForUser(orgId, current.id, now)).length;
      await recordAudit(repos, actor, {
        action: 'member.suspended',
        target: userTarget(row),
        changes: { ...changes, revoked_keys: { old: null, new: keys }, ended_sessions: { old: null, new: sessions }, revoked_apps: { old: null, new: apps } },
        at: now,
      });
    } else if (current.status === 'suspended' && status === 'active') {
      await recordAudit(repos, actor, { action: 'member.reactivated', target: userTarget(row), changes, at: now });
    } else if (Object.keys(changes).length > 0) {
      await recordAudit(repos, actor, { action: 'member.updated', target: userTarget(row), changes, at: now });
    }
    return { row, announce: current.status !== status || current.email !== row.email, claimed: current.provisioned_at === null };
  }

  async function finishUser(actor: Actor, work: (repos: Repositories, now: number) => Promise<{ row: UserRow; announce: boolean; claimed: boolean }>): Promise<Json> {
    const now = clock.now();
    const { row, announce } = await store.transaction(async (repos) => {
      await repos.organizations.lock(actor.orgId);
      const result = await work(repos, now);
      const changed = result.claimed ? await syncProvisionedRoles(repos, actor, [result.row.id], now) : [];
      const fresh = changed.length > 0 ? await requireUser(repos, actor.orgId, result.row.id) : result.row;
      return { row: fresh, announce: result.announce || changed.length > 0 };
    });
    // Before the answer: every instance forgets the member's principals (the 2-second promise rests on this).
    if (announce) await authEvents.userChanged(row.id);
    return toUserResource(row, baseUrl);
  }

  async function groupMembers(repos: Repositories, orgId: string, groupId: string) {
    return repos.scim.membersOf(orgId, [groupId]);
  }

  /** Writes a group's name and members; returns the users whose membership changed (their roles follow). */
  async function writeGroup(repos: Repositories, actor: Actor, groupId: string | null, input: ScimGroupInput, now: number): Promise<{ id: string; touched: string[] }> {
    const orgId = actor.orgId;
    await requireWritable(repos, actor);
    const normalized = normalizeGroupName(input.displayName);
    const clash = await repos.scim.findGroupByName(orgId, normalized);
    if (clash && clash.id !== groupId) throw scimFaults.uniqueness(`a group named ${input.displayName} exists`);
    const known = await repos.scim.knownUsers(orgId, input.memberIds);
    const unknown = input.memberIds.filter((id) => !known.has(id));
    if (unknown.length > 0) throw scimFaults.invalidValue(`no user with id ${unknown[0]}: members are the organisation's users`);

    let id = groupId;
    // Sets, not lists: a provider's group can hold thousands of members.
    const wanted = new Set(input.memberIds);
    const before = new Set(id === null ? [] : (await groupMembers(repos, orgId, id)).map((m) => m.user_id));
    const added = input.memberIds.filter((u) => !before.has(u));
    const removed = [...before].filter((u) => !wanted.has(u));
    if (id === null) {
      const row = await repos.scim
        .insertGroup({ id: newId('grp'), org_id: orgId, display_name: input.displayName, display_name_normalized: normalized, external_id: input.externalId, org_role: null, created_at: now, updated_at: now })
        .catch((err: unknown) => {
          throw isUniqueViolation(err) ? scimFaults.uniqueness(`a group named ${input.displayName} exists`) : err;
        });
      id = row.id;
      await recordAudit(repos, actor, { action: 'scim_group.created', target: { type: 'scim_group', id, label: input.displayName }, changes: createdChanges({ members: input.memberIds.length }), at: now });
    } else {
      const current = (await repos.scim.findGroup(orgId, id))!;
      await repos.scim.updateGroup(orgId, id, { display_name: input.displayName, display_name_normalized: normalized, external_id: input.externalId, updated_at: now });
      const changes: Record<string, { old: unknown; new: unknown }> = {};
      if (current.display_name !== input.displayName) changes.display_name = { old: current.display_name, new: input.displayName };
      if (added.length > 0) changes.members_added = { old: null, new: added.length };
      if (removed.length > 0) changes.members_removed = { old: null, new: removed.length };
      if (Object.keys(changes).length > 0) await recordAudit(repos, actor, { action: 'scim_group.updated', target: { type: 'scim_group', id, label: input.displayName }, changes, at: now });
    }
    await repos.scim.addMembers(orgId, id, added, now);
    await repos.scim.removeMembers(orgId, id, removed);
    return { id, touched: [...added, ...removed] };
  }

  async function finishGroup(actor: Actor, work: (repos: Repositories, now: number) => Promise<{ id: string; touched: string[] }>): Promise<Json> {
    const now = clock.now();
    const { resource, changed } = await store.transaction(async (repos) => {
      await repos.organizations.lock(actor.orgId);
      const { id, touched } = await work(repos, now);
      const changed = await syncProvisionedRoles(repos, actor, touched, now);
      const row = (await repos.scim.findGroup(actor.orgId, id))!;
      return { resource: toGroupResource(row, await groupMembers(repos, actor.orgId, id), baseUrl), changed };
    });
    for (const userId of changed) await authEvents.userChanged(userId);
    return resource;
  }

  async function requireGroup(repos: Repositories, orgId: string, id: string) {
    const group = await repos.scim.findGroup(orgId, id);
    if (!group) throw scimFaults.notFound('Group', id);
    return group;
  }

  return {
    async listUsers(orgId: string, params: ListParams): Promise<Json> {
      const query = userQuery(params.filter);
      const { offset, limit, startIndex } = page(params);
      const { total, rows } = await store.repos.scim.users(orgId, query, offset, limit);
      return listResponse(rows.map((row) => toUserResource(row, baseUrl)), total, startIndex);
    },

    async getUser(orgId: string, id: string): Promise<Json> {
      return toUserResource(await requireUser(store.repos, orgId, id), baseUrl);
    },

    async createUser(actor: Actor, body: unknown): Promise<Json> {
      const input = parseUserResource(body, true);
      return finishUser(actor, (repos, now) => writeUser(repos, actor, null, input, now));
    },

    async replaceUser(actor: Actor, id: string, body: unknown): Promise<Json> {
      return finishUser(actor, async (repos, now) => {
        const current = await requireUser(repos, actor.orgId, id);
        return writeUser(repos, actor, current, parseUserResource(body, current.status !== 'suspended'), now);
      });
    },

    async patchUser(actor: Actor, id: string, body: unknown): Promise<Json> {
      return finishUser(actor, async (repos, now) => {
        const current = await requireUser(repos, actor.orgId, id);
        const patched = applyPatch(toUserResource(current, baseUrl), body);
        return writeUser(repos, actor, current, parseUserResource(patched, current.status !== 'suspended'), now);
      });
    },

    /** As DELETE /v1/users/:id: the member, their keys, sessions and collaborations go (the last owner stays, 409). */
    async deleteUser(actor: Actor, id: string): Promise<void> {
      await requireUser(store.repos, actor.orgId, id);
      await users.remove(actor, id);
    },

    async listGroups(orgId: string, params: ListParams): Promise<Json> {
      const query = groupQuery(params.filter);
      const { offset, limit, startIndex } = page(params);
      const { total, rows } = await store.repos.scim.groups(orgId, query, offset, limit);
      const members = params.withoutMembers ? [] : await store.repos.scim.membersOf(orgId, rows.map((r) => r.id));
      return listResponse(
        rows.map((row) => toGroupResource(row, params.withoutMembers ? null : members.filter((m) => m.group_id === row.id), baseUrl)),
        total,
        startIndex,
      );
    },

    async getGroup(orgId: string, id: string, withoutMembers = false): Promise<Json> {
      const group = await requireGroup(store.repos, orgId, id);
      return toGroupResource(group, withoutMembers ? null : await groupMembers(store.repos, orgId, id), baseUrl);
    },

    async createGroup(actor: Actor, body: unknown): Promise<Json> {
      const input = parseGroupResource(body);
      return finishGroup(actor, (repos, now) => writeGroup(repos, actor, null, input, now));
    },

    async replaceGroup(actor: Actor, id: string, body: unknown): Promise<Json> {
      const input = parseGroupResource(body);
      return finishGroup(actor, async (repos, now) => {
        await requireGroup(repos, actor.orgId, id);
        return writeGroup(repos, actor, id, input, now);
      });
    },

    async patchGroup(actor: Actor, id: string, body: unknown): Promise<Json> {
      return finishGroup(actor, async (repos, now) => {
        const group = await requireGroup(repos, actor.orgId, id);
        // Members as bare `{ value }`: a remove that names members by value object (Entra) must match them exactly.
        const resource = { ...toGroupResource(group, null, baseUrl), members: (await groupMembers(repos, actor.orgId, id)).map((m) => ({ value: m.user_id })) };
        const patched = applyPatch(resource, body);
        return writeGroup(repos, actor, id, parseGroupResource(patched), now);
      });
    },

    async deleteGroup(actor: Actor, id: string): Promise<void> {
      const now = clock.now();
      const changed = await store.transaction(async (repos) => {
        await repos.organizations.lock(actor.orgId);
        const group = await requireGroup(repos, actor.orgId, id);
        await requireWritable(repos, actor);
        const members = (await groupMembers(repos, actor.orgId, id)).map((m) => m.user_id);
        await repos.scim.deleteGroup(actor.orgId, id);
        await recordAudit(repos, actor, { action: 'scim_group.deleted', target: { type: 'scim_group', id, label: group.display_name }, changes: { members: { old: members.length, new: null } }, at: now });
        return syncProvisionedRoles(repos, actor, members, now);
      });
      for (const userId of changed) await authEvents.userChanged(userId);
    },
  };
}

export type ScimDirectoryService = ReturnType<typeof createScimDirectoryService>;
