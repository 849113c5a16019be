import { requireConfirmed } from '../identity/confirmation.js';
import type { FastifyBaseLogger } from 'fastify';
import { isUniqueViolation } from '../../db/database.js';
import type { Role, UserRow, UserStatus } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { errors, fieldError } from '../../errors.js';
import { EMAIL_MAX_LENGTH, EMAIL_PATTERN } from '../../lib/email.js';
import { newId } from '../../lib/ids.js';
import type { Clock } from '../../lib/time.js';
import { invitationMail } from '../../mail/invitation-mail.js';
import type { Mailer } from '../../mail/mailer.js';
import { sendLinkMail } from '../../mail/send-link-mail.js';
import type { AuthEvents } from '../../db/auth-events.js';
import { invitationLink, issueInvitation } from '../identity/invitations-service.js';
import { decodeCursor, pageResult, type PageRequest, type PageResult } from '../shared/pagination.js';
import { authorize, FULL_SCOPE, type Actor, type UserActor } from '../access/actor.js';
import { isLastOwner, LAST_OWNER, OWNER_RULE, ownerRuleAllows } from './member-rules.js';
import { recordAudit, userTarget } from '../audit/audit-record.js';
import { normalizeEmail, toUser, toUserListItem } from '../identity/users-view.js';
import type { UserListItem, User } from '../../schemas/users.js';
import { requireWritable } from '../access/workspace.js';
import { MANAGED_BY_PROVIDER, roleIsManaged } from '../provisioning/group-roles.js';

export interface InviteUserInput {
  email: string;
  role: Role;
}

export interface UsersServiceDeps {
  store: Store;
  clock: Clock;
  authEvents: AuthEvents;
  mailer: Mailer;
  publicBaseUrl: string;
  log: Pick<FastifyBaseLogger, 'error'>;
}

/** CONTRACT section 5: only an owner grants `owner`, or changes or removes an owner. */
function assertOwnerRule(actor: Actor, ...roles: (Role | undefined)[]): void {
  if (!ownerRuleAllows(actor, ...roles)) throw errors.forbidden(OWNER_RULE);
}


interface PendingMail {
  user: UserRow;
  /** Who sent it, as the mail names them ("Ana Lima (ana@example.com)"); null for the CLI. */
  invitedBy: string | null;
  token: string;
  expiresAt: number;
  organizationName: string;
}

export function createUsersService({ store, clock, authEvents, mailer, publicBaseUrl, log }: UsersServiceDeps) {
  /**
   * Runs after the invitation committed. A failed send keeps the invitation (the admin re-invites to
   * resend) and is logged with the user id; the token never reaches the log.
   */
  async function sendInvitation({ user, invitedBy, token, expiresAt, organizationName }: PendingMail): Promise<void> {
    const link = invitationLink(publicBaseUrl, token);
    await sendLinkMail(mailer, log, invitationMail({ to: user.email, organizationName, role: user.role, invitedBy, link, expiresAt: new Date(expiresAt) }), {
      token,
      userId: user.id,
      orgId: user.org_id,
      failure: 'invitation e-mail could not be sent; re-inviting the user sends a new one',
    });
  }

  return {
    /** GET /v1/users: invited and active members, or only those of `status` (suspended ones only when asked, CONTRACT 16). */
    async list(orgId: string, page: PageRequest, status?: UserStatus): Promise<PageResult<UserListItem>> {
      const rows = await store.repos.users.list(orgId, page.limit, decodeCursor(page.cursor), status ?? 'listed');
      return pageResult(rows, toUserListItem);
    },

    /** The dashboard's "Members" table: whole user objects (with status), same keyset paging as `list`. */
    /**
     * The operator's command line acting as one member, with that member's current role and full scope: `--as`
     * shows what they would see (CONTRACT 15's private projects left out) and is refused what they could not do.
     */
    async actAs(orgId: string, userId: string): Promise<UserActor> {
      const [user, workspace] = await Promise.all([store.repos.users.findById(orgId, userId), store.repos.organizations.workspace(orgId)]);
      if (!user || !workspace) throw errors.notFound('user');
      return {
        type: 'user',
        orgId,
        userId: user.id,
        label: user.email,
        role: user.role,
        scope: FULL_SCOPE,
        keyId: null,
        sessionId: null,
        confirmedAt: null,
        workspace,
        context: { source: 'cli', ip: null, userAgent: null, requestId: null },
      };
    },

    async listMembers(orgId: string, page: PageRequest): Promise<PageResult<User>> {
      const rows = await store.repos.users.list(orgId, page.limit, decodeCursor(page.cursor));
      return pageResult(rows, toUser);
    },

    /** The newest `limit` members of any status, for lists to pick a person from (their names, not whole rows). */
    async people(orgId: string, limit: number): Promise<{ id: string; name: string | null; email: string; status: User['status'] }[]> {
      return store.repos.users.people(orgId, limit);
    },

    /** The members among `userIds`, each by name (or e-mail while they have none): for pages that name a few people. */
    async names(orgId: string, userIds: readonly string[]): Promise<Map<string, string>> {
      const rows = await store.repos.users.findByIds(orgId, [...new Set(userIds)]);
      return new Map(rows.map((u) => [u.id, u.name ?? u.email]));
    },

    /** Names for e-mails a record kept as its label (a bulk replay's requester); a removed person keeps the e-mail. */
    async namesByEmail(orgId: string, emails: readonly string[]): Promise<Map<string, string>> {
      const names = new Map<string, string>();
      for (const email of new Set(emails)) {
        const user = await store.repos.users.findByEmail(orgId, normalizeEmail(email));
        if (user?.name) names.set(email, user.name);
      }
      return names;
    },

    /** Among these members, who was provisioned by SCIM, and whose role the provider therefore manages (CONTRACT 16). */
    async provisioning(orgId: string, userIds: readonly string[]): Promise<{ provisioned: Set<string>; managed: Set<string> }> {
      const rows = await store.repos.users.findByIds(orgId, [...new Set(userIds)]);
      const provisioned = rows.filter((u) => u.provisioned_at !== null);
      return { provisioned: new Set(provisioned.map((u) => u.id)), managed: new Set(provisioned.filter(roleIsManaged).map((u) => u.id)) };
    },

    /** How many active owners the organisation has: what the last-owner rule counts. */
    async activeOwnerCount(orgId: string): Promise<number> {
      return store.repos.users.countActiveOwners(orgId);
    },

    /** When each invited member's open invitation link expires (members without one are absent). */
    async invitationExpiries(orgId: string, userIds: readonly string[]): Promise<Map<string, number>> {
      return store.repos.invitations.openExpiries(orgId, userIds);
    },

    async get(orgId: string, userId: string): Promise<User> {
      const row = await store.repos.users.findById(orgId, userId);
      if (!row) throw errors.notFound('user');
      return toUser(row);
    },

    /** Invites a new user, or re-issues the invitation of an invited one (same id, new role, new link). */
    async invite(actor: Actor, input: InviteUserInput): Promise<User> {
      authorize(actor, 'users', 'create');
      assertOwnerRule(actor, input.role);
      await requireWritable(store.repos, actor);
      if (grantsPower(input.role)) requireConfirmed(actor, clock.now());
      // The API's schema checks this first; the dashboard and other doors rely on this check (CONTRACT 5).
      if ([...input.email].length > EMAIL_MAX_LENGTH) throw fieldError('email', `must be at most ${EMAIL_MAX_LENGTH} characters`);
      if (!EMAIL_PATTERN.test(input.email)) throw fieldError('email', 'must be a valid e-mail address');
      const { orgId } = actor;
      const now = clock.now();
      const pending = await store.transaction(async (repos): Promise<PendingMail> => {
        await repos.organizations.lock(orgId);
        const org = await repos.organizations.findById(orgId);
        if (!org) throw errors.notFound('organization');
        const existing = await repos.users.findByEmail(orgId, normalizeEmail(input.email));
        assertOwnerRule(actor, input.role, existing?.role);
        if (existing?.status === 'active') throw errors.conflict('this e-mail belongs to an active member');
        if (existing?.status === 'suspended') throw errors.conflict('this e-mail belongs to a suspended member: your identity provider reactivates them');
        const user = existing
          ? await repos.users.update(orgId, existing.id, { role: input.role, updated_at: now })
          : await repos.users
              .insert({
                id: newId('user'),
                org_id: orgId,
                email: input.email,
                email_normalized: normalizeEmail(input.email),
                name: null,
                role: input.role,
                status: 'invited',
                password_hash: null,
                created_at: now,
                updated_at: now,
              })
              .catch((err: unknown) => {
                throw isUniqueViolation(err) ? errors.conflict('this e-mail was invited at the same moment') : err;
              });
        if (!user) throw errors.notFound('user');
        const { token, expiresAt } = await issueInvitation(repos, { orgId, userId: user.id, now });
        await recordAudit(repos, actor, {
          action: 'member.invited',
          target: userTarget(user),
          changes: { role: { old: existing?.role ?? null, new: input.role } },
          at: now,
        });
        const inviter = actor.type === 'user' ? await repos.users.findById(orgId, actor.userId) : undefined;
        const invitedBy = inviter ? (inviter.name ? `${inviter.name} (${inviter.email})` : inviter.email) : null;
        return { user, invitedBy, token, expiresAt, organizationName: org.name };
      });
      await sendInvitation(pending);
      return toUser(pending.user);
    },

    async changeRole(actor: Actor, userId: string, role: Role): Promise<User> {
      authorize(actor, 'users', 'update');
      assertOwnerRule(actor, role);
      await requireWritable(store.repos, actor);
      if (grantsPower(role)) requireConfirmed(actor, clock.now());
      const { orgId } = actor;
      const now = clock.now();
      const result = await store.transaction(async (repos) => {
        await repos.organizations.lock(orgId);
        const current = await repos.users.findById(orgId, userId);
        if (!current) throw errors.notFound('user');
        assertOwnerRule(actor, current.role);
        // The same role again: no write, updated_at stays.
        if (current.role === role) return { row: current, changed: false };
        if (roleIsManaged(current)) throw errors.conflict(MANAGED_BY_PROVIDER);
        if (current.role === 'owner' && isLastOwner(current, await repos.users.countActiveOwners(orgId))) throw errors.conflict(LAST_OWNER);
        const updated = await repos.users.update(orgId, userId, { role, updated_at: now });
        if (!updated) throw errors.notFound('user');
        await recordAudit(repos, actor, {
          action: 'member.role_changed',
          target: userTarget(updated),
          changes: { role: { old: current.role, new: role } },
          at: now,
        });
        return { row: updated, changed: true };
      });
      if (result.changed) await authEvents.userChanged(userId);
      return toUser(result.row);
    },

    /**
     * Removes a member, invited or active, with their invitation, sessions, password links and API keys,
     * in one transaction (CONTRACT 5, DASHBOARD 5). Their open tasks become unassigned. Returns the member as
     * they were, for the door to say whom it removed.
     */
    async remove(actor: Actor, userId: string): Promise<User> {
      authorize(actor, 'users', 'delete');
      await requireWritable(store.repos, actor);
      const { orgId } = actor;
      const now = clock.now();
      const removed = await store.transaction(async (repos) => {
        await repos.organizations.lock(orgId);
        const current = await repos.users.findById(orgId, userId);
        if (!current) throw errors.notFound('user');
        assertOwnerRule(actor, current.role);
        if (current.role === 'owner' && isLastOwner(current, await repos.users.countActiveOwners(orgId))) throw errors.conflict(LAST_OWNER);
        await repos.tasks.unassignUser(orgId, userId, now);
        await repos.collaborators.deleteForUser(orgId, userId);
        await repos.users.delete(orgId, userId);
        await recordAudit(repos, actor, {
          action: 'member.removed',
          target: userTarget(current),
          changes: { role: { old: current.role, new: null }, status: { old: current.status, new: null } },
          at: now,
        });
        return current;
      });
      // Cached principals of the user's keys die on every instance before this returns.
      await authEvents.userChanged(userId);
      return toUser(removed);
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;

/** Admin and owner can manage members, keys and webhooks: granting them is a sensitive action (DASHBOARD 11). */
function grantsPower(role: Role): boolean {
  return role === 'admin' || role === 'owner';
}
