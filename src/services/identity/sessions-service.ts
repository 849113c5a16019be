import type { SessionStage, SignInMethod, UserRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import type { Repositories } from '../../db/repositories/index.js';
import { sha256Hex } from '../../lib/crypto.js';
import { newId, randomToken } from '../../lib/ids.js';
import type { Clock } from '../../lib/time.js';
import { openForToken, sealForToken } from '../../lib/token-seal.js';
import { FULL_SCOPE, type ActorContext, type UserActor } from '../access/actor.js';
import { recordAudit, userTarget } from '../audit/audit-record.js';
import { tokenHash } from './link-tokens.js';
import { ACTIVE_WORKSPACE, type Workspace } from '../access/workspace.js';
import { pacedBatches } from '../../lib/paced-batches.js';
import { DomainError } from '../../errors.js';
import { emailDomain } from '../../lib/email-domain.js';

/** DASHBOARD 2: a session ends after 2 hours without a request, and 12 hours after sign-in at the latest. */
export const SESSION_IDLE_MS = 2 * 60 * 60 * 1000;
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60 * 1000;
/** `last_seen_at` is written at most this often: a click is a read, not a write, most of the time. */
export const SESSION_TOUCH_MS = 60 * 1000;
/** A sign-in owing its second factor lasts this long (DASHBOARD 11). */
export const TWO_STEP_STAGE_MS = 10 * 60 * 1000;
/** Members of an organisation that requires two-step verification have this long to set it up. */
export const TWO_STEP_GRACE_MS = 7 * 24 * 60 * 60 * 1000;


export interface StartedSession {
  /** The cookie value: 256 random bits, stored only as its SHA-256. */
  token: string;
  sessionId: string;
  expiresAt: number;
  /** `two_step`: the password was right and a second factor is owed before any page opens. */
  stage: SessionStage;
  /** An owner signed in past the organisation's single sign-on requirement (audited; the caller mails every owner). */
  breakGlass?: boolean;
}

/** The organisation's two-step requirement as it applies to this session's user. */
export interface TwoStepStanding {
  /** When the user must have set one up by; null when nothing is required of them. */
  deadline: number | null;
  /** Past the deadline without a factor: every page but the security page sends them there. */
  mustEnroll: boolean;
}

/** A live session: the signed-in user as services see them, with their role as it is now. */
export interface ResolvedSession {
  sessionId: string;
  expiresAt: number;
  stage: SessionStage;
  method: SignInMethod;
  twoStep: TwoStepStanding;
  user: UserRow;
  organizationName: string;
  workspace: Workspace;
  actor: UserActor;
  /** The one-time slot as read with the session (sealed), or null when it is empty. */
  sealedFlash: string | null;
}

/** The answer to a member whose organisation signs in with single sign-on (DASHBOARD 12). */
export const SSO_REQUIRED = 'sso_required';
export const ssoRequired = (owner: boolean) =>
  new DomainError(
    403,
    SSO_REQUIRED,
    owner
      ? 'Your organisation signs in with single sign-on. Owners may also sign in with a password and a second factor (break glass); use single sign-on to set one up first.'
      : 'Your organisation signs in with single sign-on.',
  );

/**
 * How the organisation's single sign-on requirement meets a sign-in by another method: it does not apply
 * (no requirement, or the e-mail is not in a verified domain), it refuses, or an owner breaks the glass.
 */
async function ssoStanding(repos: Repositories, user: UserRow): Promise<'none' | 'refused' | 'break_glass'> {
  const domain = emailDomain(user.email_normalized);
  if (domain === null || !(await repos.sso.requiresSso(user.org_id, domain))) return 'none';
  return user.role === 'owner' ? 'break_glass' : 'refused';
}

/** Whether the organisation's single sign-on requirement refuses this user any other way of signing in. */
export async function refusedBySso(repos: Repositories, user: UserRow): Promise<boolean> {
  return (await ssoStanding(repos, user)) === 'refused';
}

export function sessionActor(user: UserRow, sessionId: string | null, context: ActorContext, workspace: Workspace, confirmedAt: number | null = null): UserActor {
  return {
    type: 'user',
    orgId: user.org_id,
    userId: user.id,
    label: user.email,
    role: user.role,
    scope: FULL_SCOPE,
    keyId: null,
    sessionId,
    confirmedAt,
    workspace,
    context,
  };
}

/**
 * Dashboard sessions live in the database and are read on every request, so signing out, a password
 * change or a member's removal ends them on every instance at once, and a role change applies to the
 * next click. No cache: the lookup is one indexed join.
 */
export function createSessionsService({ store, clock }: { store: Store; clock: Clock }) {
  /**
   * The organisation's requirement for this user: the one check every page of every sign-in path passes
   * through. A single sign-on session satisfies it (the provider's own policy applies there).
   */
  async function twoStepStanding(requiredAt: number | null, user: UserRow, method: SignInMethod, now: number): Promise<TwoStepStanding> {
    if (requiredAt === null || method === 'sso') return NOT_REQUIRED;
    if (await store.repos.secondFactors.hasAny(user.org_id, user.id)) return NOT_REQUIRED;
    const deadline = Math.max(requiredAt, user.created_at) + TWO_STEP_GRACE_MS;
    return { deadline, mustEnroll: now >= deadline };
  }

  return {
    /**
     * Inside the caller's transaction, for every way of signing in (password, organisation choice, password
     * link, invitation, passkey, single sign-on): a new token every time. This is the one gate of the second
     * factor: a user who has one and proved only a password or an e-mail address gets a session at the
     * `two_step` stage, which opens nothing but the two-step page, for 10 minutes.
     */
    async start(repos: Repositories, user: UserRow, context: ActorContext, method: SignInMethod): Promise<StartedSession> {
      const token = randomToken(32);
      const now = clock.now();
      const sessionId = newId('sess');
      const owesSecondFactor = (method === 'password' || method === 'link') && (await repos.secondFactors.hasAny(user.org_id, user.id));
      // Single sign-on required: members are refused; an owner passes with a second factor (now or at the next step).
      const sso = method === 'sso' ? 'none' : await ssoStanding(repos, user);
      if (sso === 'refused' || (sso === 'break_glass' && !owesSecondFactor && method !== 'passkey')) throw ssoRequired(sso === 'break_glass');
      const breakGlass = sso === 'break_glass' && !owesSecondFactor;
      const stage: SessionStage = owesSecondFactor ? 'two_step' : 'active';
      const expiresAt = now + (owesSecondFactor ? TWO_STEP_STAGE_MS : SESSION_ABSOLUTE_MS);
      await repos.sessions.insert({
        id: sessionId,
        org_id: user.org_id,
        user_id: user.id,
        token_hash: sha256Hex(token),
        created_at: now,
        last_seen_at: now,
        expires_at: expiresAt,
        ip: context.ip,
        user_agent: context.userAgent,
        stage,
        method,
        confirmed_at: owesSecondFactor ? null : confirmedBy(method, now),
      });
      if (!owesSecondFactor) await auditSignIn(repos, user, sessionId, context, method, now);
      if (breakGlass) await auditBreakGlass(repos, user, sessionId, context, method, now);
      return { token, sessionId, expiresAt, stage, breakGlass };
    },

    /**
     * The second factor given: the two-step session becomes a signed-in one, under a new token (so the
     * cookie that carried the password step opens nothing more), with its full lifetime.
     */
    async promote(repos: Repositories, pending: ResolvedSession, method: SignInMethod): Promise<StartedSession> {
      const sso = await ssoStanding(repos, pending.user);
      if (sso === 'refused') throw ssoRequired(false);
      const token = randomToken(32);
      const now = clock.now();
      const expiresAt = now + SESSION_ABSOLUTE_MS;
      const promoted = await repos.sessions.promote(pending.user.org_id, pending.sessionId, {
        tokenHash: sha256Hex(token),
        method,
        confirmedAt: confirmedBy(method, now),
        now,
        expiresAt,
      });
      if (!promoted) throw new DomainError(410, 'sign_in_expired', 'This sign-in has ended. Sign in again.');
      await auditSignIn(repos, pending.user, pending.sessionId, pending.actor.context, method, now);
      if (sso === 'break_glass') await auditBreakGlass(repos, pending.user, pending.sessionId, pending.actor.context, method, now);
      return { token, sessionId: pending.sessionId, expiresAt, stage: 'active', breakGlass: sso === 'break_glass' };
    },

    /** "Confirm it's you" passed on this session. */
    async confirm(actor: UserActor): Promise<number> {
      const now = clock.now();
      if (actor.sessionId) await store.repos.sessions.confirm(actor.orgId, actor.sessionId, now);
      return now;
    },

    /** The session behind a cookie, or null when it is unknown, expired, idle too long, or its user is gone. */
    async resolve(token: string, context: ActorContext): Promise<ResolvedSession | null> {
      const hash = tokenHash(token);
      if (hash === null) return null;
      const found = await store.repos.sessions.findByTokenHash(hash);
      if (!found) return null;
      const { session, user } = found;
      const now = clock.now();
      if (found.workspace.state === 'deleting' || user.status !== 'active' || now >= session.expires_at || now - session.last_seen_at >= SESSION_IDLE_MS) {
        await store.repos.sessions.delete(session.org_id, session.id);
        return null;
      }
      if (now - session.last_seen_at >= SESSION_TOUCH_MS) await store.repos.sessions.touch(session.org_id, session.id, now);
      return {
        sessionId: session.id,
        expiresAt: session.expires_at,
        stage: session.stage,
        method: session.method,
        twoStep: await twoStepStanding(found.twoStepRequiredAt, user, session.method, now),
        user,
        organizationName: found.organizationName,
        workspace: found.workspace,
        actor: sessionActor(user, session.id, context, found.workspace, session.confirmed_at),
        sealedFlash: session.flash,
      };
    },

    /**
     * Puts a value in the session's one-time slot for the next page (post/redirect/get): a notice, a refusal,
     * or a secret shown once. Sealed with a key derived from the cookie's token, which the database never holds.
     */
    async putFlash(session: Pick<ResolvedSession, 'sessionId' | 'actor'>, token: string, value: unknown): Promise<void> {
      await store.repos.sessions.setFlash(session.actor.orgId, session.sessionId, sealForToken(token, JSON.stringify(value)));
    },

    /**
     * What the slot held when the session was read, emptied by one conditional UPDATE (no second read): shown
     * once, by one page, even with two tabs.
     */
    async takeFlash(session: Pick<ResolvedSession, 'sessionId' | 'actor' | 'sealedFlash'>, token: string): Promise<unknown> {
      const sealed = session.sealedFlash;
      if (sealed === null || !(await store.repos.sessions.clearFlash(session.actor.orgId, session.sessionId, sealed))) return null;
      const text = openForToken(token, sealed);
      return text === null ? null : (JSON.parse(text) as unknown);
    },

    /** "Sign out": the session row is gone, so no instance accepts the cookie again. */
    async end(actor: UserActor): Promise<void> {
      const sessionId = actor.sessionId;
      if (!sessionId) return;
      const now = clock.now();
      await store.transaction(async (repos) => {
        if (!(await repos.sessions.delete(actor.orgId, sessionId))) return;
        await recordAudit(repos, actor, { action: 'user.signed_out', target: { type: 'user', id: actor.userId, label: actor.label }, at: now });
      });
    },

    /** Housekeeping for the worker: removes sessions no request can use any more. */
    async prune(): Promise<number> {
      const now = clock.now();
      return pacedBatches((size) => store.repos.sessions.deleteExpired(now, now - SESSION_IDLE_MS, size), { size: 200 });
    },
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;

/** Nothing owed: no requirement, a user who has a factor, or a single sign-on session. */
const NOT_REQUIRED: TwoStepStanding = { deadline: null, mustEnroll: false };

/** A sign-in that proves the user (password, or a password and a factor, or a passkey) opens sensitive actions; a recovery code never does. */
function confirmedBy(method: SignInMethod, now: number): number | null {
  return method === 'password_recovery' ? null : now;
}

/** `sso.break_glass`: an owner signed in without single sign-on while the organisation requires it. */
async function auditBreakGlass(repos: Repositories, user: UserRow, sessionId: string, context: ActorContext, method: SignInMethod, at: number): Promise<void> {
  await recordAudit(repos, sessionActor(user, sessionId, context, ACTIVE_WORKSPACE), {
    action: 'sso.break_glass',
    target: userTarget(user),
    changes: { method: { old: null, new: method } },
    outcome: 'success',
    at,
  });
}

/** `user.signed_in`, naming how (DASHBOARD 11). */
async function auditSignIn(repos: Repositories, user: UserRow, sessionId: string, context: ActorContext, method: SignInMethod, at: number): Promise<void> {
  // Only the audit row reads this actor; the workspace's state plays no part in signing in.
  await recordAudit(repos, sessionActor(user, sessionId, context, ACTIVE_WORKSPACE), {
    action: 'user.signed_in',
    target: userTarget(user),
    changes: { method: { old: null, new: method } },
    at,
  });
}
