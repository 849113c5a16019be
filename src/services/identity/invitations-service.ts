import { DomainError, errors } from '../../errors.js';
import { sha256Hex } from '../../lib/crypto.js';
import { emailDomain } from '../../lib/email-domain.js';
import type { PasswordHasher } from './passwords.js';
import { newId, randomToken } from '../../lib/ids.js';
import type { Clock } from '../../lib/time.js';
import type { InvitationRow, Role, UserRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import type { Repositories } from '../../db/repositories/index.js';
import type { AuthEvents } from '../../db/auth-events.js';
import { check, nameProblems, passwordProblems } from './account-rules.js';
import { tokenHash, tokenState, type TokenLookup } from './link-tokens.js';
import { FULL_SCOPE, type ActorContext } from '../access/actor.js';
import { workspaceReadOnlyError, type Workspace } from '../access/workspace.js';
import { recordAudit, userTarget } from '../audit/audit-record.js';
import { toUser } from './users-view.js';
import { type User } from '../../schemas/users.js';

export const INVITATION_TTL_MS = 72 * 60 * 60 * 1000;


export function invitationLink(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/invitations/${token}`;
}

/**
 * A fresh link for an invited user, inside the caller's transaction. Every older link of the user dies
 * first, so at most one link works. Only the SHA-256 of the token is stored: it has 256 random bits.
 */
export async function issueInvitation(
  repos: Repositories,
  { orgId, userId, now }: { orgId: string; userId: string; now: number },
): Promise<{ token: string; expiresAt: number }> {
  await repos.invitations.closeOpenForUser(orgId, userId, now);
  const token = randomToken(32);
  const expiresAt = now + INVITATION_TTL_MS;
  await repos.invitations.insert({
    id: newId('inv'),
    org_id: orgId,
    user_id: userId,
    token_hash: sha256Hex(token),
    created_at: now,
    expires_at: expiresAt,
    used_at: null,
  });
  return { token, expiresAt };
}

async function lookup(repos: Repositories, token: string, now: number): Promise<TokenLookup<InvitationRow>> {
  const hash = tokenHash(token);
  return tokenState(hash === null ? undefined : await repos.invitations.findByTokenHash(hash), now);
}

export async function openInvitation(repos: Repositories, token: string, now: number): Promise<InvitationRow> {
  const found = await lookup(repos, token, now);
  if (found.state === 'not_found') throw errors.notFound('invitation');
  if (found.state === 'expired') throw errors.invitationExpired();
  return found.row;
}

/**
 * Accepting makes a member: a change a read-only workspace refuses (DASHBOARD 10). The invitation's
 * organisation is read, as nobody's request carries its state.
 */
export async function requireActiveOrganization(repos: Repositories, orgId: string): Promise<Workspace> {
  const workspace = await repos.organizations.workspace(orgId);
  if (!workspace) throw errors.notFound('invitation');
  if (workspace.state !== 'active') throw workspaceReadOnlyError(workspace);
  return workspace;
}

/**
 * How the invitee's organisation meets them with single sign-on: `required` (their domain must use it: the
 * invitation is accepted only through the provider), `offered` (a connection and their verified domain), or none.
 */
export type InvitationSso = 'required' | 'offered' | null;

export type InvitationView =
  | { state: 'open'; email: string; role: Role; organizationName: string; sso: InvitationSso }
  | { state: 'not_found' }
  | { state: 'expired' };

export interface AcceptInvitationInput {
  name: string;
  password: string;
}

/** The answer to a password acceptance while the organisation requires single sign-on of the invitee (DASHBOARD 12). */
export const acceptWithSso = () =>
  new DomainError(403, 'sso_required', 'Your organisation signs in with single sign-on: accept this invitation with single sign-on.');

/** The invitee's standing with the organisation's single sign-on (the invitation page, and who may accept through it). */
export async function invitationSso(repos: Repositories, user: UserRow): Promise<InvitationSso> {
  const domain = emailDomain(user.email_normalized);
  if (domain === null) return null;
  if (await repos.sso.requiresSso(user.org_id, domain)) return 'required';
  const [connection, verified] = await Promise.all([repos.sso.findConnection(user.org_id), repos.sso.findDomain(user.org_id, domain)]);
  return connection && verified?.verified_at != null ? 'offered' : null;
}

/**
 * Inside the caller's transaction: the invitation is used and its user becomes active, audited. Shared by the
 * password acceptance below and the single sign-on one (sso-service). Refused (404) when another request used
 * the invitation first.
 */
export async function activateInvited(
  repos: Repositories,
  invitation: InvitationRow,
  input: { name: string | null; passwordHash: string | null },
  context: ActorContext,
  workspace: Workspace,
  now: number,
): Promise<UserRow> {
  if (!(await repos.invitations.markUsed(invitation.org_id, invitation.id, now))) throw errors.notFound('invitation');
  const user = await repos.users.update(invitation.org_id, invitation.user_id, {
    status: 'active',
    name: input.name,
    ...(input.passwordHash === null ? {} : { password_hash: input.passwordHash }),
    updated_at: now,
  });
  if (!user) throw errors.notFound('invitation');
  const actor = { type: 'user', orgId: user.org_id, userId: user.id, label: user.email, role: user.role, scope: FULL_SCOPE, keyId: null, sessionId: null, confirmedAt: null, workspace, context } as const;
  await recordAudit(repos, actor, {
    action: 'invitation.accepted',
    target: userTarget(user),
    changes: { status: { old: 'invited', new: 'active' }, name: { old: null, new: input.name } },
    at: now,
  });
  return user;
}

export function createInvitationsService({ store, clock, authEvents, passwords }: { store: Store; clock: Clock; authEvents: AuthEvents; passwords: PasswordHasher }) {
  return {
    /** What the invitation page shows; never throws for a bad token. */
    async view(token: string): Promise<InvitationView> {
      const found = await lookup(store.repos, token, clock.now());
      if (found.state !== 'open') return found;
      const { org_id: orgId, user_id: userId } = found.row;
      const [user, org] = await Promise.all([store.repos.users.findById(orgId, userId), store.repos.organizations.findById(orgId)]);
      if (!user || !org) return { state: 'not_found' };
      return { state: 'open', email: user.email, role: user.role, organizationName: org.name, sso: await invitationSso(store.repos, user) };
    },

    /** Activates the invited user. Exactly one of concurrent accepts of one link wins; the rest get 404. */
    async accept(token: string, input: AcceptInvitationInput, context: ActorContext): Promise<User> {
      const now = clock.now();
      // The cheap checks first, so an unknown token (or a read-only workspace) never costs a scrypt hash,
      // and the refusal comes before the form's 400, in CONTRACT 1's order.
      const open = await openInvitation(store.repos, token, now);
      await requireActiveOrganization(store.repos, open.org_id);
      // Single sign-on required of the invitee: their password could never sign them in, so none is set and
      // nothing changes; the invitation is accepted through the provider instead.
      const invitee = await store.repos.users.findById(open.org_id, open.user_id);
      if (!invitee) throw errors.notFound('invitation');
      if ((await invitationSso(store.repos, invitee)) === 'required') throw acceptWithSso();
      // The rules hold for every door; the JSON endpoint's schema refuses the same values before this.
      check([...nameProblems('name', input.name), ...passwordProblems('password', input.password)]);
      const passwordHash = await passwords.hash(input.password, invitee.email_normalized);
      const row = await store.transaction(async (repos) => {
        const invitation = await openInvitation(repos, token, now);
        // Again in the transaction: the subscription may have been cancelled while the password was hashed.
        const workspace = await requireActiveOrganization(repos, invitation.org_id);
        return activateInvited(repos, invitation, { name: input.name, passwordHash }, context, workspace, now);
      });
      await authEvents.userChanged(row.id);
      return toUser(row);
    },
  };
}

export type InvitationsService = ReturnType<typeof createInvitationsService>;
