import type { FastifyBaseLogger } from 'fastify';
import type { Repositories } from '../../db/repositories/index.js';
import type { SignInMethod, UserRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { DomainError, errors, fieldError } from '../../errors.js';
import { normalizeRecoveryCode, recoveryCodeHash } from '../../lib/recovery-codes.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { Clock } from '../../lib/time.js';
import { totpStepOf } from '../../lib/totp.js';
import type { Mailer, MailMessage } from '../../mail/mailer.js';
import { breakGlassMail, lockoutMail, recoveryCodeUsedMail, sendSecurityMail } from '../../mail/security-mail.js';
import type { RateLimiter } from '../../rate-limit/rate-limiter.js';
import type { ActorContext, Actor } from '../access/actor.js';
import type { PasswordHasher } from './passwords.js';
import { tooManyAttempts, SIGN_IN_IP_LIMIT, SIGN_IN_WINDOW_MS } from './accounts-service.js';
import { recordAudit, userTarget } from '../audit/audit-record.js';
import { sessionActor, type ResolvedSession, type SessionsService, type StartedSession } from './sessions-service.js';
import { ACTIVE_WORKSPACE } from '../access/workspace.js';
import { challengeBinding, passkeyRefused, type AuthenticationResponseJSON, type WebauthnRelyingParty } from './webauthn.js';

/** Wrong codes one two-step sign-in may give before it ends (back to the password). */
export const TWO_STEP_ATTEMPT_LIMIT = 5;
/** Second-factor failures per account per 15 minutes, across sign-ins, confirmations and instances. */
export const TWO_STEP_ACCOUNT_LIMIT = 10;
/** Passkey sign-in ceremonies a client address may start per minute (each stores a challenge for 5 minutes). */
export const PASSKEY_OPTIONS_LIMIT = 60;

export type TwoStepProof =
  | { kind: 'code'; code: string }
  | { kind: 'recovery'; code: string }
  | { kind: 'passkey'; response: unknown; browserSecret: string };

export type ConfirmProof = { kind: 'password'; password: string; code: string } | { kind: 'passkey'; response: unknown; browserSecret: string };

/** What a user can prove themselves with: which fields "Confirm it's you" and "Two-step verification" show. */
export interface FactorsOf {
  password: boolean;
  code: boolean;
  passkey: boolean;
}

export interface TwoStepDeps {
  store: Store;
  clock: Clock;
  box: SecretBox;
  sessions: SessionsService;
  rateLimiter: RateLimiter;
  mailer: Mailer;
  relyingParty: WebauthnRelyingParty;
  passwords: PasswordHasher;
  publicBaseUrl: string;
  log: Pick<FastifyBaseLogger, 'error'>;
}

const wrongCode = () => fieldError('code', 'That code is not valid.');
const wrongRecoveryCode = () => fieldError('recovery_code', 'That recovery code is not valid.');
export const twoStepEnded = () => new DomainError(401, 'two_step_ended', 'Too many wrong codes. Sign in again.');

/**
 * The second step of signing in (DASHBOARD 11), passkey sign-in, and "Confirm it's you". A code is good
 * once (its time step is taken by a conditional UPDATE), a recovery code once; five wrong answers end a
 * sign-in, ten per account in 15 minutes (counted in the shared rate limiter, so across instances) pause
 * the account's second step with a 429, an audit row and a mail.
 */
export function createTwoStepService(deps: TwoStepDeps) {
  const { store, clock, box, sessions, rateLimiter, mailer, relyingParty, passwords, publicBaseUrl, log } = deps;
  const securityUrl = `${publicBaseUrl}/dashboard/account/security`;

  const send = (mail: MailMessage, userId: string) => void sendSecurityMail(mailer, log, mail, userId);

  async function factorsOf(repos: Repositories, user: UserRow): Promise<FactorsOf> {
    const [totp, passkeys] = await Promise.all([repos.secondFactors.findTotp(user.org_id, user.id), repos.secondFactors.listPasskeys(user.org_id, user.id)]);
    return { password: user.password_hash !== null, code: totp?.enabled_at != null, passkey: passkeys.length > 0 };
  }

  /**
   * Counts one attempt against the account's bucket before checking it (parallel guesses cannot all pass a
   * check made before any failed). `failed` records the failure (at the tenth: audit and mail);
   * `succeeded` takes the attempt back.
   */
  async function attempt(user: UserRow, context: ActorContext) {
    const bucket = `two-step:${user.id}`;
    const decision = await rateLimiter.hit(bucket, TWO_STEP_ACCOUNT_LIMIT, SIGN_IN_WINDOW_MS);
    if (!decision.allowed) throw tooManyAttempts(decision.retryAfterSeconds);
    return {
      succeeded: () => rateLimiter.undo(bucket),
      async failed(): Promise<void> {
        if (decision.remaining > 0) return;
        const now = clock.now();
        const org = await store.repos.organizations.findById(user.org_id);
        await store.transaction((repos) =>
          recordAudit(repos, sessionActor(user, null, context, ACTIVE_WORKSPACE), { action: 'user.two_step_locked', target: userTarget(user), outcome: 'failure', at: now }),
        );
        send(lockoutMail({ to: user.email, organizationName: org?.name ?? 'Workspace', securityUrl, at: new Date(now) }, Math.ceil(SIGN_IN_WINDOW_MS / 60_000)), user.id);
      },
    };
  }

  /** An owner broke the glass of the single sign-on requirement: every owner is told (DASHBOARD 12). */
  async function mailBreakGlass(user: UserRow, started: StartedSession): Promise<void> {
    if (!started.breakGlass) return;
    const org = await store.repos.organizations.findById(user.org_id);
    const owners = await store.repos.users.findActiveOwners(user.org_id);
    const at = new Date(clock.now());
    for (const owner of owners) {
      send(breakGlassMail({ to: owner.email, organizationName: org?.name ?? 'Workspace', securityUrl: `${publicBaseUrl}/dashboard/audit-log`, at }, user.email), owner.id);
    }
  }

  /** A code from the user's authenticator app, its time step taken: false when wrong or already used. */
  async function codeAccepted(repos: Repositories, user: UserRow, code: string, now: number): Promise<boolean> {
    const totp = await repos.secondFactors.findTotp(user.org_id, user.id);
    if (!totp || totp.enabled_at === null) return false;
    const step = await totpStepOf(box.open(totp.secret), code, now);
    return step !== null && (await repos.secondFactors.takeTotpStep(user.org_id, user.id, step));
  }

  return {
    /** What the user can prove themselves with (the fields of "Two-step verification" and "Confirm it's you"). */
    async factors(orgId: string, userId: string): Promise<FactorsOf> {
      const user = await store.repos.users.findById(orgId, userId);
      if (!user) throw errors.notFound('user');
      return factorsOf(store.repos, user);
    },

    /** Options for "Use a passkey" at the second step: this user's passkeys only. */
    async twoStepPasskeyOptions(pending: ResolvedSession, browserSecret: string) {
      const now = clock.now();
      return store.transaction(async (repos) => {
        const passkeys = await repos.secondFactors.listPasskeys(pending.user.org_id, pending.user.id);
        if (passkeys.length === 0) throw passkeyRefused();
        return relyingParty.authenticationOptions(repos, 'two_step', challengeBinding(browserSecret), passkeys, pending.user.id, now);
      });
    },

    /** "Verify": the two-step session becomes a signed-in one, or the answer is refused (and counted). */
    async complete(pending: ResolvedSession, proof: TwoStepProof): Promise<StartedSession> {
      if (pending.stage !== 'two_step') throw twoStepEnded();
      const user = pending.user;
      const context = pending.actor.context;
      if (proof.kind === 'code' && proof.code.trim() === '') throw fieldError('code', 'is required');
      if (proof.kind === 'recovery' && proof.code.trim() === '') throw fieldError('recovery_code', 'is required');
      const tries = await attempt(user, context);
      const now = clock.now();
      let method: SignInMethod;
      let left = -1;
      try {
        // Spent before the transaction, so a refused passkey cannot bring its challenge back (F4).
        const spent = proof.kind === 'passkey' ? await relyingParty.spend<AuthenticationResponseJSON>(store.repos, proof.response, now) : null;
        method = await store.transaction(async (repos) => {
          if (proof.kind === 'code') {
            if (!(await codeAccepted(repos, user, proof.code, now))) throw wrongCode();
            return 'password_code';
          }
          if (proof.kind === 'recovery') {
            const normalized = normalizeRecoveryCode(proof.code);
            if (normalized === null || !(await repos.secondFactors.useRecoveryCode(user.org_id, user.id, recoveryCodeHash(normalized), now))) throw wrongRecoveryCode();
            left = await repos.secondFactors.unusedRecoveryCodes(user.org_id, user.id);
            await recordAudit(repos, sessionActor(user, pending.sessionId, context, ACTIVE_WORKSPACE), { action: 'user.recovery_code_used', target: userTarget(user), at: now });
            return 'password_recovery';
          }
          await relyingParty.verifyAuthentication(repos, spent!, 'two_step', challengeBinding(proof.browserSecret), user.id, now);
          return 'password_passkey';
        });
      } catch (error) {
        if (!(error instanceof DomainError) || error.status !== 400) throw error;
        await tries.failed();
        const failures = await store.repos.sessions.addFailure(user.org_id, pending.sessionId);
        if (failures >= TWO_STEP_ATTEMPT_LIMIT) {
          await store.repos.sessions.delete(user.org_id, pending.sessionId);
          throw twoStepEnded();
        }
        throw error;
      }
      await tries.succeeded();
      const started = await store.transaction((repos) => sessions.promote(repos, pending, method));
      await mailBreakGlass(user, started);
      if (left >= 0) {
        const org = await store.repos.organizations.findById(user.org_id);
        send(recoveryCodeUsedMail({ to: user.email, organizationName: org?.name ?? 'Workspace', securityUrl, at: new Date(now) }, left), user.id);
      }
      return started;
    },

    /**
     * Options for "Sign in with a passkey": no one named, the browser offers its discoverable passkeys. Open
     * to anyone, and each call stores a challenge: limited per client address.
     */
    async signInOptions(browserSecret: string, context: ActorContext) {
      const decision = await rateLimiter.hit(`passkey-options-ip:${context.ip ?? 'unknown'}`, PASSKEY_OPTIONS_LIMIT, 60_000);
      if (!decision.allowed) throw tooManyAttempts(decision.retryAfterSeconds);
      const now = clock.now();
      return store.transaction((repos) => relyingParty.authenticationOptions(repos, 'sign_in', challengeBinding(browserSecret), null, null, now));
    },

    /** A passkey alone signs in (two factors in one step), throttled per client address like passwords. */
    async signInWithPasskey(browserSecret: string, response: unknown, context: ActorContext): Promise<StartedSession> {
      const bucket = `signin-ip:${context.ip ?? 'unknown'}`;
      const decision = await rateLimiter.hit(bucket, SIGN_IN_IP_LIMIT, SIGN_IN_WINDOW_MS);
      if (!decision.allowed) throw tooManyAttempts(decision.retryAfterSeconds);
      const now = clock.now();
      const spent = await relyingParty.spend<AuthenticationResponseJSON>(store.repos, response, now);
      const session = await store.transaction(async (repos) => {
        const passkey = await relyingParty.verifyAuthentication(repos, spent, 'sign_in', challengeBinding(browserSecret), null, now);
        const org = await repos.organizations.findForShare(passkey.org_id);
        const user = await repos.users.findById(passkey.org_id, passkey.user_id);
        if (!org || org.state === 'deleting' || !user || user.status !== 'active') throw passkeyRefused();
        return { user, started: await sessions.start(repos, user, context, 'passkey') };
      });
      await rateLimiter.undo(bucket);
      await mailBreakGlass(session.user, session.started);
      return session.started;
    },

    /** Options for "Use a passkey" on "Confirm it's you". */
    async confirmPasskeyOptions(actor: Actor, browserSecret: string) {
      if (actor.type !== 'user') throw errors.forbidden('only a signed-in user confirms');
      const now = clock.now();
      return store.transaction(async (repos) => {
        const passkeys = await repos.secondFactors.listPasskeys(actor.orgId, actor.userId);
        if (passkeys.length === 0) throw passkeyRefused();
        return relyingParty.authenticationOptions(repos, 'confirm', challengeBinding(browserSecret), passkeys, actor.userId, now);
      });
    },

    /**
     * "Confirm it's you": the password and a code (a code only when the user has an authenticator app), or
     * a passkey. A recovery code never confirms. Failures count against the account like the second step's.
     */
    async confirm(actor: Actor, proof: ConfirmProof): Promise<number> {
      if (actor.type !== 'user' || actor.sessionId === null) throw errors.forbidden('only a signed-in user confirms');
      const user = await store.repos.users.findById(actor.orgId, actor.userId);
      if (!user) throw errors.notFound('user');
      const factors = await factorsOf(store.repos, user);
      if (proof.kind === 'password') {
        if (proof.password === '') throw fieldError('password', 'is required');
        if (factors.code && proof.code.trim() === '') throw fieldError('code', 'is required');
      }
      const tries = await attempt(user, actor.context);
      const now = clock.now();
      try {
        const spent = proof.kind === 'passkey' ? await relyingParty.spend<AuthenticationResponseJSON>(store.repos, proof.response, now) : null;
        await store.transaction(async (repos) => {
          if (proof.kind === 'passkey') {
            await relyingParty.verifyAuthentication(repos, spent!, 'confirm', challengeBinding(proof.browserSecret), user.id, now);
            return;
          }
          if (!factors.code && factors.passkey) throw fieldError('password', 'Use your passkey to confirm.');
          if (!(await passwords.verify(proof.password, user.email_normalized, user.password_hash))) throw fieldError('password', 'is incorrect');
          if (factors.code && !(await codeAccepted(repos, user, proof.code, now))) throw wrongCode();
        });
      } catch (error) {
        if (error instanceof DomainError && error.status === 400) await tries.failed();
        throw error;
      }
      await tries.succeeded();
      return sessions.confirm(actor);
    },
  };
}

export type TwoStepService = ReturnType<typeof createTwoStepService>;
