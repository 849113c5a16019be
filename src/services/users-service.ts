import type { FastifyBaseLogger } from 'fastify';
import { isUniqueViolation } from '../db/database.js';
import type { Role, UserRow } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { errors } from '../errors.js';
import { newId } from '../lib/ids.js';
import type { Clock } from '../lib/time.js';
import { invitationMail } from '../mail/invitation-mail.js';
import type { Mailer } from '../mail/mailer.js';
import type { AuthEvents } from './auth-events.js';
import { invitationLink, issueInvitation } from './invitations-service.js';
import { decodeCursor, pageResult, type PageRequest, type PageResult } from './pagination.js';
import type { Principal } from './permissions.js';
import { normalizeEmail, toUser, toUserListItem, type User, type UserListItem } from './users-view.js';

/** Who is calling: the organisation and the role its key's user holds now. */
export type Caller = Pick<Principal, 'orgId' | 'role'>;

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

/** CONTRACT section 5: only an owner grants `owner` or changes an owner's role. */
function assertOwnerRule(caller: Caller, ...roles: (Role | undefined)[]): void {
  if (caller.role !== 'owner' && roles.includes('owner')) {
    throw errors.forbidden("only an owner may grant the owner role or change an owner's role");
  }
}

interface PendingMail {
  user: UserRow;
  token: string;
  expiresAt: number;
  organizationName: string;
}

export function createUsersService({ store, clock, authEvents, mailer, publicBaseUrl, log }: UsersServiceDeps) {
  /**
   * Runs after the invitation committed. A failed send keeps the invitation (the admin re-invites to
   * resend) and is logged with the user id; the token never reaches the log.
   */
  async function sendInvitation({ user, token, expiresAt, organizationName }: PendingMail): Promise<void> {
    const link = invitationLink(publicBaseUrl, token);
    try {
      await mailer.send(invitationMail({ to: user.email, organizationName, role: user.role, link, expiresAt: new Date(expiresAt) }));
    } catch (err) {
      const { message = String(err), code } = err as { message?: string; code?: unknown };
      log.error(
        { userId: user.id, orgId: user.org_id, err: { message: message.replaceAll(token, '[redacted]'), code } },
        'invitation e-mail could not be sent; re-inviting the user sends a new one',
      );
    }
  }

  return {
    async list(orgId: string, page: PageRequest): Promise<PageResult<UserListItem>> {
      const rows = await store.repos.users.list(orgId, page.limit, decodeCursor(page.cursor));
      return pageResult(rows, toUserListItem);
    },

    async get(orgId: string, userId: string): Promise<User> {
      const row = await store.repos.users.findById(orgId, userId);
      if (!row) throw errors.notFound('user');
      return toUser(row);
    },

    /** Invites a new user, or re-issues the invitation of an invited one (same id, new role, new link). */
    async invite(caller: Caller, input: InviteUserInput): Promise<User> {
      assertOwnerRule(caller, input.role);
      const { orgId } = caller;
      const now = clock.now();
      const pending = await store.transaction(async (repos): Promise<PendingMail> => {
        await repos.organizations.lock(orgId);
        const org = await repos.organizations.findById(orgId);
        if (!org) throw errors.notFound('organization');
        const existing = await repos.users.findByEmail(orgId, normalizeEmail(input.email));
        assertOwnerRule(caller, input.role, existing?.role);
        if (existing?.status === 'active') throw errors.conflict('this e-mail belongs to an active member');
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
        return { user, token, expiresAt, organizationName: org.name };
      });
      await sendInvitation(pending);
      return toUser(pending.user);
    },

    async changeRole(caller: Caller, userId: string, role: Role): Promise<User> {
      assertOwnerRule(caller, role);
      const { orgId } = caller;
      const now = clock.now();
      const result = await store.transaction(async (repos) => {
        await repos.organizations.lock(orgId);
        const current = await repos.users.findById(orgId, userId);
        if (!current) throw errors.notFound('user');
        assertOwnerRule(caller, current.role);
        // The same role again: no write, updated_at stays.
        if (current.role === role) return { row: current, changed: false };
        if (current.role === 'owner' && current.status === 'active' && (await repos.users.countActiveOwners(orgId)) <= 1) {
          throw errors.conflict('the organization must keep at least one active owner');
        }
        const updated = await repos.users.update(orgId, userId, { role, updated_at: now });
        if (!updated) throw errors.notFound('user');
        return { row: updated, changed: true };
      });
      if (result.changed) await authEvents.userChanged(userId);
      return toUser(result.row);
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
