import type { FastifyBaseLogger } from 'fastify';
import type { AuthTokenPurpose, AuthTokenRow, OrganizationRow, SignInMethod, UserRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import type { Repositories } from '../../db/repositories/index.js';
import { DomainError, errors, fieldError } from '../../errors.js';
import { sha256Hex } from '../../lib/crypto.js';
import { EMAIL_MAX_LENGTH } from '../../lib/email.js';
import { newId, randomToken } from '../../lib/ids.js';
import { toIso, type Clock } from '../../lib/time.js';
import type { Mailer } from '../../mail/mailer.js';
import { passwordResetMail } from '../../mail/password-mail.js';
import { sendLinkMail } from '../../mail/send-link-mail.js';
import type { RateLimitDecision, RateLimiter } from '../../rate-limit/rate-limiter.js';
import { selfActor, type Actor, type ActorContext, type UserActor } from '../access/actor.js';
import { ACTIVE_WORKSPACE } from '../access/workspace.js';
import { check, nameProblems, passwordProblems } from './account-rules.js';
import { tokenHash, tokenState, type TokenLookup } from './link-tokens.js';
import { recordAudit, userTarget } from '../audit/audit-record.js';
import type { AcceptInvitationInput, InvitationsService } from './invitations-service.js';
import type { PasswordHasher, PasswordMatch } from './passwords.js';
import { refusedBySso, sessionActor, ssoRequired, type SessionsService, type StartedSession } from './sessions-service.js';
import { normalizeEmail, toUser } from './users-view.js';
import { type User } from '../../schemas/users.js';

export { NAME_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './account-rules.js';

export const SETUP_LINK_TTL_MS = 72 * 60 * 60 * 1000;
export const RESET_LINK_TTL_MS = 60 * 60 * 1000;
/** A password that matched several organisations: the choice between them is open this long, once. */
export const CHOICE_TTL_MS = 5 * 60 * 1000;

/** DASHBOARD 2: at most 10 failed sign-ins per client address and 5 per e-mail per 15 minutes. */
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
export const SIGN_IN_IP_LIMIT = 10;
export const SIGN_IN_EMAIL_LIMIT = 5;
/** "Forgot password?" counts every request (each may send mail), in buckets of its own. */
export const FORGOT_IP_LIMIT = 10;
export const FORGOT_EMAIL_LIMIT = 5;
/** Wrong current passwords on the account page, per user: a stolen session cannot guess at leisure. */
export const CURRENT_PASSWORD_LIMIT = 5;

export const INVALID_CREDENTIALS = 'Email or password is incorrect';

const PASSWORD_PURPOSES: readonly AuthTokenPurpose[] = ['setup', 'reset'];

export type PasswordLinkPurpose = 'setup' | 'reset';

export interface PasswordLink {
  url: string;
  expires_at: string;
}

export interface OrganizationChoice {
  id: string;
  name: string;
}

/** A sign-in either starts a session, or asks which organisation (the password matched several). */
export type SignInResult =
  | { kind: 'session'; session: StartedSession }
  | { kind: 'choose'; token: string; organizations: OrganizationChoice[] };

export type PasswordLinkView =
  | { state: 'open'; email: string; organizationName: string; purpose: PasswordLinkPurpose }
  | { state: 'not_found' }
  | { state: 'expired' };

export interface AccountsServiceDeps {
  store: Store;
  clock: Clock;
  sessions: SessionsService;
  mailer: Mailer;
  rateLimiter: RateLimiter;
  publicBaseUrl: string;
  /** Accepting an invitation from the dashboard goes through the same service as the API. */
  invitations: InvitationsService;
  passwords: PasswordHasher;
  log: Pick<FastifyBaseLogger, 'error'>;
}

export function passwordLinkUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/dashboard/password/${token}`;
}

const invalidCredentials = () => new DomainError(401, 'invalid_credentials', INVALID_CREDENTIALS);

/** 429 with the page's sentence; Retry-After carries the exact seconds. */
export function tooManyAttempts(retryAfterSeconds: number): DomainError {
  const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
  return new DomainError(429, 'rate_limited', `Too many attempts; try again in ${minutes} minute${minutes === 1 ? '' : 's'}`, undefined, {
    'retry-after': String(retryAfterSeconds),
  });
}

function refusal(decisions: readonly RateLimitDecision[]): DomainError | null {
  const refused = decisions.filter((d) => !d.allowed);
  return refused.length === 0 ? null : tooManyAttempts(Math.max(...refused.map((d) => d.retryAfterSeconds)));
}

export const linkNotFound = () =>
  new DomainError(404, 'not_found', 'This link is not valid: it was used already, or replaced by a newer one. Ask for a new one with "Forgot password?" on the sign-in page.');
export const linkExpired = () =>
  new DomainError(410, 'link_expired', 'This link has expired. Ask for a new one with "Forgot password?" on the sign-in page.');
const choiceNotFound = () => new DomainError(404, 'not_found', 'This sign-in was already used or is unknown. Sign in again.');
const choiceExpired = () => new DomainError(410, 'sign_in_expired', 'This sign-in has expired. Sign in again.');


async function lookupLink(repos: Repositories, token: string, now: number): Promise<TokenLookup<AuthTokenRow>> {
  const hash = tokenHash(token);
  return tokenState(hash === null ? undefined : (await repos.authTokens.findByTokenHash(hash, PASSWORD_PURPOSES))[0], now);
}

/**
 * The organisation, if its people may still sign in or receive a link: not from the moment its deletion
 * begins (DASHBOARD 10). Read in the transaction that would start the session or issue the link, holding
 * the organisation's row (shared), so a deletion beginning at that instant either waits for it (and then
 * removes what it wrote) or is seen here; sign-ins of one organisation do not wait for each other.
 */
async function openOrganization(repos: Repositories, orgId: string): Promise<OrganizationRow | undefined> {
  const org = await repos.organizations.findForShare(orgId);
  return org && org.state !== 'deleting' ? org : undefined;
}

async function openLink(repos: Repositories, token: string, now: number): Promise<AuthTokenRow> {
  const found = await lookupLink(repos, token, now);
  if (found.state === 'not_found') throw linkNotFound();
  if (found.state === 'expired') throw linkExpired();
  return found.row;
}

/** Only the person themselves acts on their own account (the operator's CLI has commands of its own). */
const selfOnly = (actor: Actor): UserActor => selfActor(actor, 'only a signed-in user can change their own account');

/**
 * Signing in, password links (setup, reset), the account page, and invitations that end signed in: every
 * way a person gets or keeps a dashboard session. Doors (dashboard pages, CLI) only translate; throttling,
 * token rules and audit rows are decided here.
 */
export function createAccountsService(deps: AccountsServiceDeps) {
  const { store, clock, sessions, mailer, rateLimiter, publicBaseUrl, log } = deps;
  const { invitations, passwords } = deps;

  /** Inside the caller's transaction: a new link; every older open setup/reset link of the user dies. */
  async function issueLink(repos: Repositories, user: UserRow, purpose: PasswordLinkPurpose, now: number) {
    await repos.authTokens.closeOpenForUser(user.org_id, user.id, PASSWORD_PURPOSES, now);
    const token = randomToken(32);
    const expiresAt = now + (purpose === 'setup' ? SETUP_LINK_TTL_MS : RESET_LINK_TTL_MS);
    await repos.authTokens.insert([
      { id: newId('tok'), org_id: user.org_id, user_id: user.id, purpose, token_hash: sha256Hex(token), created_at: now, expires_at: expiresAt, used_at: null },
    ]);
    return { token, expiresAt };
  }

  /** A session for a user read again inside the transaction: removed or deactivated meanwhile, no session. */
  async function startFor(repos: Repositories, orgId: string, userId: string, context: ActorContext, method: SignInMethod, gone: () => DomainError) {
    if (!(await openOrganization(repos, orgId))) throw gone();
    const user = await repos.users.findById(orgId, userId);
    if (!user || user.status !== 'active') throw gone();
    return sessions.start(repos, user, context, method);
  }

  /** The user's password against `given`; always one scrypt, also when the user has no password yet. */
  async function checkCurrent(user: UserRow, given: string): Promise<boolean> {
    return passwords.verify(given, user.email_normalized, user.password_hash);
  }

  /**
   * Counts an attempt against its buckets before its work is done, so parallel guesses cannot all pass a
   * check made before any of them failed; `refund` takes it back when it succeeded (only failures are
   * limited). Throws the page's 429 when a bucket is full, having taken back what it had counted.
   */
  async function reserveAttempt(buckets: readonly { bucket: string; limit: number }[]): Promise<{ refund(): Promise<void> }> {
    const taken: string[] = [];
    const refund = async () => {
      await Promise.all(taken.map((bucket) => rateLimiter.undo(bucket)));
    };
    for (const { bucket, limit } of buckets) {
      const decision = await rateLimiter.hit(bucket, limit, SIGN_IN_WINDOW_MS);
      if (!decision.allowed) {
        await refund();
        throw tooManyAttempts(decision.retryAfterSeconds);
      }
      taken.push(bucket);
    }
    return { refund };
  }

  function signInBuckets(ip: string | null, email: string) {
    return [
      { bucket: `signin-ip:${ip ?? 'unknown'}`, limit: SIGN_IN_IP_LIMIT },
      { bucket: `signin-email:${email}`, limit: SIGN_IN_EMAIL_LIMIT },
    ];
  }

  /** Hashes from before salts were shared per address are rewritten with the address's, once their password is known. */
  async function upgradeHashes(password: string, normalized: string, users: readonly UserRow[], found: PasswordMatch): Promise<void> {
    for (const user of users) {
      const rehashed = await passwords.rehash(password, normalized, user.password_hash!, found);
      if (rehashed) await store.repos.users.setPasswordHashIfUnchanged(user.org_id, user.id, user.password_hash!, rehashed);
    }
  }

  async function sendReset(pending: { user: UserRow; organizationName: string; token: string; expiresAt: number }): Promise<void> {
    const { user, organizationName, token, expiresAt } = pending;
    const mail = passwordResetMail({ to: user.email, organizationName, link: passwordLinkUrl(publicBaseUrl, token), expiresAt: new Date(expiresAt) });
    await sendLinkMail(mailer, log, mail, { token, userId: user.id, orgId: user.org_id, failure: 'password reset e-mail could not be sent' });
  }

  return {
    /**
     * "Sign in". Throttled before any password is checked; every attempt that does not start a session is
     * counted against the client address and the e-mail, and audited in each organisation the e-mail belongs
     * to. The answer to a wrong password and to an unknown e-mail is the same error after the same work: one
     * key derivation, however many organisations share the address (services/identity/passwords.ts). The single sign-on
     * requirement is told only to someone who gave the right password, and counts as a failure too, so the
     * refusal is no free list of who is a member (DASHBOARD 12).
     */
    async signIn(email: string, password: string, context: ActorContext): Promise<SignInResult> {
      const normalized = normalizeEmail(email);
      check([
        ...(normalized === '' ? [{ field: 'email', message: 'is required' }] : []),
        ...(password === '' ? [{ field: 'password', message: 'is required' }] : []),
      ]);
      const attempt = await reserveAttempt(signInBuckets(context.ip, normalized));

      const users = normalized.length <= EMAIL_MAX_LENGTH ? await store.repos.users.findActiveByEmailAnyOrg(normalized) : [];
      const candidates = users.filter((user) => user.password_hash !== null);
      const found = await passwords.match(password, normalized, candidates.map((user) => user.password_hash!));
      const matches = candidates.filter((_, i) => found.matched[i]);

      const allowed: UserRow[] = [];
      for (const user of matches) if (!(await refusedBySso(store.repos, user))) allowed.push(user);

      if (allowed.length === 0) {
        const now = clock.now();
        // Also when nobody has the e-mail (an empty transaction): the same round trips either way.
        await store.transaction(async (repos) => {
          for (const user of users) {
            const reason = matches.includes(user) ? { reason: { old: null, new: 'sso_required' } } : undefined;
            await recordAudit(repos, sessionActor(user, null, context, ACTIVE_WORKSPACE), { action: 'user.sign_in_failed', target: userTarget(user), outcome: 'failure', ...(reason ? { changes: reason } : {}), at: now });
          }
        });
        throw matches.length > 0 ? ssoRequired(false) : invalidCredentials();
      }

      await upgradeHashes(password, normalized, allowed, found);
      await attempt.refund();
      if (allowed.length === 1) {
        const [user] = allowed as [UserRow];
        const session = await store.transaction((repos) => startFor(repos, user.org_id, user.id, context, 'password', invalidCredentials));
        return { kind: 'session', session };
      }

      const token = randomToken(32);
      const choiceHash = sha256Hex(token);
      const now = clock.now();
      const organizations = await store.transaction(async (repos) => {
        await repos.authTokens.insert(
          allowed.map((user) => ({
            id: newId('tok'),
            org_id: user.org_id,
            user_id: user.id,
            purpose: 'choice' as const,
            token_hash: choiceHash,
            created_at: now,
            expires_at: now + CHOICE_TTL_MS,
            used_at: null,
          })),
        );
        const found: OrganizationChoice[] = [];
        for (const user of allowed) {
          const org = await repos.organizations.findById(user.org_id);
          if (org && org.state !== 'deleting') found.push({ id: org.id, name: org.name });
        }
        return found;
      });
      organizations.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
      return { kind: 'choose', token, organizations };
    },

    /** "Choose an organisation": the choice token (single use, 5 minutes) becomes a session there. */
    async chooseOrganization(token: string, orgId: string, context: ActorContext): Promise<StartedSession> {
      const hash = tokenHash(token);
      if (hash === null) throw choiceNotFound();
      const now = clock.now();
      return store.transaction(async (repos) => {
        const found = tokenState((await repos.authTokens.findByTokenHash(hash, ['choice'])).find((r) => r.org_id === orgId), now);
        if (found.state === 'not_found') throw choiceNotFound();
        if (found.state === 'expired') throw choiceExpired();
        // Every row of the token closes at once: one choice per password check.
        if ((await repos.authTokens.markUsedByHash(hash, 'choice', now)) === 0) throw choiceNotFound();
        return startFor(repos, found.row.org_id, found.row.user_id, context, 'password', choiceNotFound);
      });
    },

    /**
     * A link to choose a password: `setup` (72 hours) or `reset` (1 hour), single use; any older open
     * link of the user dies. Operators (the CLI) may make one for any active user (an empty orgId: in any
     * organisation); a signed-in user only for themselves.
     */
    async issuePasswordLink(actor: Actor, userId: string, purpose: PasswordLinkPurpose): Promise<PasswordLink> {
      if (actor.type === 'user' && actor.userId !== userId) throw errors.forbidden('a password link can only be made for yourself');
      const now = clock.now();
      return store.transaction(async (repos) => {
        const user = actor.orgId === '' ? await repos.users.findByIdAnyOrg(userId) : await repos.users.findById(actor.orgId, userId);
        // Invited users choose their password by accepting the invitation.
        if (!user || user.status !== 'active' || !(await openOrganization(repos, user.org_id))) throw errors.notFound('user');
        const { token, expiresAt } = await issueLink(repos, user, purpose, now);
        return { url: passwordLinkUrl(publicBaseUrl, token), expires_at: toIso(expiresAt) };
      });
    },

    /** What the password page shows; never throws for a bad token. */
    async viewPasswordLink(token: string): Promise<PasswordLinkView> {
      const found = await lookupLink(store.repos, token, clock.now());
      if (found.state !== 'open') return found;
      const { org_id: orgId, user_id: userId, purpose } = found.row;
      const [user, org] = await Promise.all([store.repos.users.findById(orgId, userId), store.repos.organizations.findById(orgId)]);
      if (!user || user.status !== 'active' || !org || org.state === 'deleting') return { state: 'not_found' };
      return { state: 'open', email: user.email, organizationName: org.name, purpose: purpose === 'setup' ? 'setup' : 'reset' };
    },

    /**
     * "Save password" on a link: the new password, the link used, every session of the user ended and a
     * new one started, audited, all in one transaction. Used, superseded or unknown: 404; expired: 410.
     */
    async setPassword(token: string, password: string, context: ActorContext): Promise<StartedSession> {
      const now = clock.now();
      // The cheap checks first, so a dead link never costs a scrypt hash.
      const link = await openLink(store.repos, token, now);
      check(passwordProblems('password', password));
      const owner = await store.repos.users.findById(link.org_id, link.user_id);
      if (!owner) throw linkNotFound();
      const passwordHash = await passwords.hash(password, owner.email_normalized);
      return store.transaction(async (repos) => {
        const row = await openLink(repos, token, now);
        if (!(await openOrganization(repos, row.org_id))) throw linkNotFound();
        if (!(await repos.authTokens.markUsed(row.org_id, row.id, now))) throw linkNotFound();
        const user = await repos.users.findById(row.org_id, row.user_id);
        if (!user || user.status !== 'active') throw linkNotFound();
        await repos.users.update(user.org_id, user.id, { password_hash: passwordHash });
        await repos.sessions.deleteForUser(user.org_id, user.id, null);
        await recordAudit(repos, sessionActor(user, null, context, ACTIVE_WORKSPACE), { action: 'user.password_changed', target: userTarget(user), at: now });
        return sessions.start(repos, user, context, 'link');
      });
    },

    /**
     * "Send reset link": a 1-hour link e-mailed to every active account with the address. The answer is
     * the same whether or not one exists; the mail goes out after the answer is decided, so its time
     * does not tell either. Every request counts against the client address and the e-mail.
     */
    async forgotPassword(email: string, context: ActorContext): Promise<void> {
      const normalized = normalizeEmail(email);
      if (normalized === '') throw fieldError('email', 'is required');
      const throttled = refusal(
        await Promise.all([
          rateLimiter.hit(`forgot-ip:${context.ip ?? 'unknown'}`, FORGOT_IP_LIMIT, SIGN_IN_WINDOW_MS),
          rateLimiter.hit(`forgot-email:${normalized}`, FORGOT_EMAIL_LIMIT, SIGN_IN_WINDOW_MS),
        ]),
      );
      if (throttled) throw throttled;
      const users = normalized.length <= EMAIL_MAX_LENGTH ? await store.repos.users.findActiveByEmailAnyOrg(normalized) : [];
      const now = clock.now();
      const pending = await store.transaction(async (repos) => {
        const links = [];
        for (const user of users) {
          const org = await openOrganization(repos, user.org_id);
          // A password that could not sign in is not worth a link (single sign-on required of this member).
          if (!org || (await refusedBySso(repos, user))) continue;
          links.push({ user, organizationName: org.name, ...(await issueLink(repos, user, 'reset', now)) });
        }
        return links;
      });
      for (const link of pending) void sendReset(link);
    },

    /**
     * "Change password": the current one must match (wrong: 400 on `current_password`, throttled per
     * user); the user's other sessions end, this one stays; open password links die.
     */
    async changePassword(actor: Actor, currentPassword: string, newPassword: string): Promise<void> {
      const self = selfOnly(actor);
      check(passwordProblems('new_password', newPassword));
      const attempt = await reserveAttempt([{ bucket: `password-user:${self.userId}`, limit: CURRENT_PASSWORD_LIMIT }]);
      const user = await store.repos.users.findById(self.orgId, self.userId);
      if (!user) throw errors.notFound('user');
      if (!(await checkCurrent(user, currentPassword))) throw fieldError('current_password', 'is incorrect');
      await attempt.refund();
      const passwordHash = await passwords.hash(newPassword, user.email_normalized);
      const now = clock.now();
      await store.transaction(async (repos) => {
        const updated = await repos.users.update(self.orgId, self.userId, { password_hash: passwordHash });
        if (!updated) throw errors.notFound('user');
        await repos.sessions.deleteForUser(self.orgId, self.userId, self.sessionId);
        await repos.authTokens.closeOpenForUser(self.orgId, self.userId, ['setup', 'reset', 'choice'], now);
        await recordAudit(repos, self, { action: 'user.password_changed', target: userTarget(updated), at: now });
      });
    },

    /** "Save name": 1 to 255 code points, audited old → new; the same name again changes nothing. */
    async changeName(actor: Actor, name: string): Promise<User> {
      const self = selfOnly(actor);
      check(nameProblems('name', name));
      const now = clock.now();
      return store.transaction(async (repos) => {
        const current = await repos.users.findById(self.orgId, self.userId);
        if (!current) throw errors.notFound('user');
        if (current.name === name) return toUser(current);
        const updated = await repos.users.update(self.orgId, self.userId, { name, updated_at: now });
        if (!updated) throw errors.notFound('user');
        await recordAudit(repos, self, {
          action: 'user.name_changed',
          target: userTarget(updated),
          changes: { name: { old: current.name, new: name } },
          at: now,
        });
        return toUser(updated);
      });
    },

    /**
     * The invitation form without JavaScript: the same acceptance as `POST /invitations/{token}/accept`
     * (rules, audit row), then a session, so the invitee lands signed in.
     */
    async acceptInvitation(token: string, input: AcceptInvitationInput, context: ActorContext): Promise<{ user: User; session: StartedSession }> {
      const user = await invitations.accept(token, input, context);
      const session = await store.transaction(async (repos) => {
        const row = await repos.users.findByIdAnyOrg(user.id);
        if (!row) throw errors.notFound('invitation');
        return startFor(repos, row.org_id, row.id, context, 'link', () => errors.notFound('invitation'));
      });
      return { user, session };
    },

    /** Housekeeping: password links and sign-in choices past their end. */
    async prune(): Promise<number> {
      return store.repos.authTokens.deleteExpired(clock.now());
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
