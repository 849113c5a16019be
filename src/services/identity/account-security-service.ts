import { KEY_LIFETIME_LIMITS } from './api-keys-service.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Repositories } from '../../db/repositories/index.js';
import type { PasskeyRow, SessionRow, SignInMethod, UserRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { DomainError, errors, fieldError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { newRecoveryCodes, recoveryCodeHash } from '../../lib/recovery-codes.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { Clock } from '../../lib/time.js';
import { newTotpSecret, totpStepOf, totpUri } from '../../lib/totp.js';
import type { Mailer, MailMessage } from '../../mail/mailer.js';
import { factorChangedMail, factorsResetMail, factorsResetOwnersMail, requirementMail, sendSecurityMail, type SecurityMailInput } from '../../mail/security-mail.js';
import { selfActor, type Actor, type UserActor } from '../access/actor.js';
import { recordAudit, userTarget } from '../audit/audit-record.js';
import { requireConfirmed } from './confirmation.js';
import { TWO_STEP_GRACE_MS } from './sessions-service.js';
import { challengeBinding, type RegistrationResponseJSON, type WebauthnRelyingParty } from './webauthn.js';

export interface PasskeyView {
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

export interface SessionView {
  id: string;
  current: boolean;
  ip: string | null;
  userAgent: string | null;
  method: SignInMethod;
  createdAt: number;
  lastSeenAt: number;
}

export interface SecurityOverview {
  totp: 'off' | 'setting_up' | 'on';
  recoveryCodesLeft: number;
  passkeys: PasskeyView[];
  /** Whether the organisation requires a second factor (then the last one cannot be removed). */
  organizationRequires: boolean;
}

export interface TotpSetup {
  secret: string;
  uri: string;
}

export interface AccountSecurityDeps {
  store: Store;
  clock: Clock;
  box: SecretBox;
  mailer: Mailer;
  relyingParty: WebauthnRelyingParty;
  publicBaseUrl: string;
  log: Pick<FastifyBaseLogger, 'error'>;
}

const PASSKEY_NAME_MAX = 100;

const notSettingUp = () => new DomainError(409, 'conflict', 'Choose "Set up authenticator app" first.');
const lastFactor = () =>
  new DomainError(409, 'two_step_required', 'Your organisation requires two-step verification: add another factor before you remove this one.');

/** Only the person themselves acts on their own account (the operator's CLI has commands of its own). */
const selfOnly = (actor: Actor): UserActor => selfActor(actor, 'only the signed-in user manages their own account security');

/**
 * Account security (DASHBOARD 11): the authenticator app, recovery codes, passkeys, the user's sessions, the
 * organisation's requirement, and the operator's reset. Every change of a factor asks for a confirmed
 * session, is audited in the same transaction, and is mailed to the user.
 */
export function createAccountSecurityService(deps: AccountSecurityDeps) {
  const { store, clock, box, mailer, relyingParty, publicBaseUrl, log } = deps;
  const securityUrl = `${publicBaseUrl}/dashboard/account/security`;

  const send = (mail: MailMessage, userId: string) => void sendSecurityMail(mailer, log, mail, userId);

  async function mailInput(repos: Repositories, user: UserRow, at: number): Promise<SecurityMailInput> {
    const org = await repos.organizations.findById(user.org_id);
    return { to: user.email, organizationName: org?.name ?? 'Workspace', securityUrl, at: new Date(at) };
  }

  async function currentUser(repos: Repositories, actor: UserActor): Promise<UserRow> {
    const user = await repos.users.findById(actor.orgId, actor.userId);
    if (!user) throw errors.notFound('user');
    return user;
  }

  /** Whether removing the factors `without` would leave the user with none while the organisation requires one. */
  async function wouldBreakRequirement(repos: Repositories, actor: UserActor, without: { totp?: boolean; passkeyId?: string }): Promise<boolean> {
    const org = await repos.organizations.findById(actor.orgId);
    if (!org || org.two_step_required_at === null) return false;
    const totp = await repos.secondFactors.findTotp(actor.orgId, actor.userId);
    const hasTotp = totp?.enabled_at != null && !without.totp;
    const passkeys = (await repos.secondFactors.listPasskeys(actor.orgId, actor.userId)).filter((p) => p.id !== without.passkeyId);
    return !hasTotp && passkeys.length === 0;
  }

  async function newCodes(repos: Repositories, actor: UserActor, now: number): Promise<string[]> {
    const codes = newRecoveryCodes();
    await repos.secondFactors.replaceRecoveryCodes(actor.orgId, actor.userId, codes.map((c) => recoveryCodeHash(c.replaceAll('-', ''))), now);
    return codes;
  }

  return {
    async overview(actor: Actor): Promise<SecurityOverview> {
      const self = selfOnly(actor);
      const repos = store.repos;
      const [totp, left, passkeys, org] = await Promise.all([
        repos.secondFactors.findTotp(self.orgId, self.userId),
        repos.secondFactors.unusedRecoveryCodes(self.orgId, self.userId),
        repos.secondFactors.listPasskeys(self.orgId, self.userId),
        repos.organizations.findById(self.orgId),
      ]);
      return {
        totp: !totp ? 'off' : totp.enabled_at === null ? 'setting_up' : 'on',
        recoveryCodesLeft: left,
        passkeys: passkeys.map(toPasskeyView),
        organizationRequires: org?.two_step_required_at != null,
      };
    },

    /** "Set up authenticator app": a new secret, shown until its first code turns it on. */
    async beginTotp(actor: Actor): Promise<TotpSetup> {
      const self = selfOnly(actor);
      const now = clock.now();
      requireConfirmed(self, now);
      const secret = newTotpSecret();
      await store.transaction(async (repos) => {
        const existing = await repos.secondFactors.findTotp(self.orgId, self.userId);
        if (existing?.enabled_at != null) throw errors.conflict('An authenticator app is already on. Turn it off first to set up another.');
        await repos.secondFactors.startTotp(self.orgId, self.userId, box.seal(secret), now);
      });
      return { secret, uri: totpUri(secret, 'Workspace Service', self.label) };
    },

    /** The secret being set up (for the set-up page), or null when none is. */
    async totpSetup(actor: Actor): Promise<TotpSetup | null> {
      const self = selfOnly(actor);
      const row = await store.repos.secondFactors.findTotp(self.orgId, self.userId);
      if (!row || row.enabled_at !== null) return null;
      const secret = box.open(row.secret);
      return { secret, uri: totpUri(secret, 'Workspace Service', self.label) };
    },

    /**
     * "Turn on": the first code proves the app holds the secret, and its time step is taken (it cannot sign
     * in afterwards). Returns the ten recovery codes, shown once.
     */
    async enableTotp(actor: Actor, code: string): Promise<string[]> {
      const self = selfOnly(actor);
      const now = clock.now();
      requireConfirmed(self, now);
      const row = await store.repos.secondFactors.findTotp(self.orgId, self.userId);
      if (!row || row.enabled_at !== null) throw notSettingUp();
      const step = await totpStepOf(box.open(row.secret), code, now);
      if (step === null) throw fieldError('code', 'That code is not valid.');
      const { codes, mail } = await store.transaction(async (repos) => {
        if (!(await repos.secondFactors.takeTotpStep(self.orgId, self.userId, step))) throw fieldError('code', 'That code is not valid.');
        if (!(await repos.secondFactors.enableTotp(self.orgId, self.userId, now))) throw notSettingUp();
        const user = await currentUser(repos, self);
        const codes = await newCodes(repos, self, now);
        await recordAudit(repos, self, { action: 'user.mfa_enabled', target: userTarget(user), changes: { factor: { old: null, new: 'authenticator_app' } }, at: now });
        return { codes, mail: factorChangedMail(await mailInput(repos, user, now), 'An authenticator app was turned on') };
      });
      send(mail, self.userId);
      return codes;
    },

    /** "Turn off two-step verification": the app and the recovery codes go; refused while the organisation requires a factor this would remove. */
    async disableTotp(actor: Actor): Promise<void> {
      const self = selfOnly(actor);
      const now = clock.now();
      requireConfirmed(self, now);
      const mail = await store.transaction(async (repos) => {
        const row = await repos.secondFactors.findTotp(self.orgId, self.userId);
        if (!row) throw errors.conflict('No authenticator app is set up.');
        if (row.enabled_at !== null && (await wouldBreakRequirement(repos, self, { totp: true }))) throw lastFactor();
        await repos.secondFactors.deleteTotp(self.orgId, self.userId);
        if (row.enabled_at === null) return null;
        const passkeys = await repos.secondFactors.listPasskeys(self.orgId, self.userId);
        if (passkeys.length === 0) await repos.secondFactors.deleteRecoveryCodes(self.orgId, self.userId);
        const user = await currentUser(repos, self);
        await repos.sessions.deleteForUser(self.orgId, self.userId, self.sessionId);
        await recordAudit(repos, self, { action: 'user.mfa_disabled', target: userTarget(user), changes: { factor: { old: 'authenticator_app', new: null } }, at: now });
        return factorChangedMail(await mailInput(repos, user, now), 'The authenticator app was turned off');
      });
      if (mail) send(mail, self.userId);
    },

    /** "Generate new recovery codes": the old ten stop working. */
    async regenerateRecoveryCodes(actor: Actor): Promise<string[]> {
      const self = selfOnly(actor);
      const now = clock.now();
      requireConfirmed(self, now);
      return store.transaction(async (repos) => {
        if (!(await repos.secondFactors.hasAny(self.orgId, self.userId))) throw errors.conflict('Set up an authenticator app or a passkey first.');
        const user = await currentUser(repos, self);
        const codes = await newCodes(repos, self, now);
        await recordAudit(repos, self, { action: 'user.recovery_codes_generated', target: userTarget(user), at: now });
        return codes;
      });
    },

    /** Throws `confirmation_required` unless the session confirmed recently (a page about to start a ceremony). */
    assertConfirmed(actor: Actor): void {
      requireConfirmed(selfOnly(actor), clock.now());
    },

    /** Options for "Add a passkey" (the page script hands them to the browser). */
    async passkeyRegistrationOptions(actor: Actor, browserSecret: string) {
      const self = selfOnly(actor);
      const now = clock.now();
      requireConfirmed(self, now);
      return store.transaction(async (repos) => {
        const user = await currentUser(repos, self);
        const existing = await repos.secondFactors.listPasskeys(self.orgId, self.userId);
        return relyingParty.registrationOptions(repos, user, existing, challengeBinding(browserSecret), now);
      });
    },

    /**
     * The browser's new credential, checked against our challenge (user verification required) and kept
     * under its name. A first factor also gets recovery codes (returned, shown once); otherwise null.
     */
    async addPasskey(actor: Actor, browserSecret: string, name: string, response: unknown): Promise<{ passkey: PasskeyView; recoveryCodes: string[] | null }> {
      const self = selfOnly(actor);
      const now = clock.now();
      requireConfirmed(self, now);
      const trimmed = name.trim();
      if (trimmed.length > PASSKEY_NAME_MAX) throw fieldError('name', `must be at most ${PASSKEY_NAME_MAX} characters`);
      // Spent before the transaction: a refused response (no user verification, say) cannot be sent again.
      const spent = await relyingParty.spend<RegistrationResponseJSON>(store.repos, response, now);
      const { view, codes, mail } = await store.transaction(async (repos) => {
        const hadFactor = await repos.secondFactors.hasAny(self.orgId, self.userId);
        const credential = await relyingParty.verifyRegistration(spent, challengeBinding(browserSecret), self.userId);
        if (await repos.secondFactors.findPasskeyByCredentialAnyOrg(credential.credential_id)) throw errors.conflict('This passkey is already registered.');
        const count = (await repos.secondFactors.listPasskeys(self.orgId, self.userId)).length;
        const row: PasskeyRow = {
          seq: 0,
          id: newId('pk'),
          org_id: self.orgId,
          user_id: self.userId,
          ...credential,
          name: trimmed === '' ? `Passkey ${count + 1}` : trimmed,
          created_at: now,
          last_used_at: null,
        };
        const { seq: _seq, ...insert } = row;
        await repos.secondFactors.insertPasskey(insert);
        const user = await currentUser(repos, self);
        const codes = hadFactor ? null : await newCodes(repos, self, now);
        await recordAudit(repos, self, { action: 'user.passkey_added', target: userTarget(user), changes: { passkey: { old: null, new: row.name } }, at: now });
        return { view: toPasskeyView(row), codes, mail: factorChangedMail(await mailInput(repos, user, now), `A passkey ("${row.name}") was added`) };
      });
      send(mail, self.userId);
      return { passkey: view, recoveryCodes: codes };
    },

    async removePasskey(actor: Actor, passkeyId: string): Promise<void> {
      const self = selfOnly(actor);
      const now = clock.now();
      requireConfirmed(self, now);
      const mail = await store.transaction(async (repos) => {
        if (await wouldBreakRequirement(repos, self, { passkeyId })) {
          if ((await repos.secondFactors.listPasskeys(self.orgId, self.userId)).some((p) => p.id === passkeyId)) throw lastFactor();
        }
        const removed = await repos.secondFactors.deletePasskey(self.orgId, self.userId, passkeyId);
        if (!removed) throw errors.notFound('passkey');
        if (!(await repos.secondFactors.hasAny(self.orgId, self.userId))) {
          await repos.secondFactors.deleteRecoveryCodes(self.orgId, self.userId);
          await repos.secondFactors.deleteTotp(self.orgId, self.userId);
        }
        const user = await currentUser(repos, self);
        await repos.sessions.deleteForUser(self.orgId, self.userId, self.sessionId);
        await recordAudit(repos, self, { action: 'user.passkey_removed', target: userTarget(user), changes: { passkey: { old: removed.name, new: null } }, at: now });
        return factorChangedMail(await mailInput(repos, user, now), `The passkey "${removed.name}" was removed`);
      });
      send(mail, self.userId);
    },

    /** The user's sessions, newest first, the current one marked. */
    async sessions(actor: Actor): Promise<SessionView[]> {
      const self = selfOnly(actor);
      const rows = await store.repos.sessions.listForUser(self.orgId, self.userId);
      return rows.map((row) => toSessionView(row, self.sessionId));
    },

    /** "Sign out" on one row: that session ends on every instance. */
    async revokeSession(actor: Actor, sessionId: string): Promise<void> {
      const self = selfOnly(actor);
      const now = clock.now();
      await store.transaction(async (repos) => {
        if (!(await repos.sessions.deleteOfUser(self.orgId, self.userId, sessionId))) throw errors.notFound('session');
        const user = await currentUser(repos, self);
        await recordAudit(repos, self, { action: 'user.session_revoked', target: userTarget(user), changes: { sessions: { old: 1, new: 0 } }, at: now });
      });
    },

    /** "Sign out of all other sessions". */
    async revokeOtherSessions(actor: Actor): Promise<number> {
      const self = selfOnly(actor);
      const now = clock.now();
      return store.transaction(async (repos) => {
        const ended = await repos.sessions.deleteForUser(self.orgId, self.userId, self.sessionId);
        if (ended > 0) {
          const user = await currentUser(repos, self);
          await recordAudit(repos, self, { action: 'user.session_revoked', target: userTarget(user), changes: { sessions: { old: ended, new: 0 } }, at: now });
        }
        return ended;
      });
    },

    /** Whether the organisation requires two-step verification, and since when. */
    async requirement(actor: Actor): Promise<{ requiredAt: number | null; maxKeyLifetimeDays: number | null }> {
      const org = await store.repos.organizations.findById(actor.orgId);
      if (!org) throw errors.notFound('organization');
      return { requiredAt: org.two_step_required_at, maxKeyLifetimeDays: org.max_key_lifetime_days };
    },

    /**
     * "Maximum API key lifetime" (owner; CONTRACT 16): from now on a key without an expiry, or with a later one,
     * is refused at creation. Keys that exist keep their expiry.
     */
    async setMaxKeyLifetime(actor: Actor, days: number | null): Promise<void> {
      if (actor.type === 'user' && actor.role !== 'owner') throw errors.forbidden('only an owner changes the organisation\'s security settings');
      if (days !== null && !(KEY_LIFETIME_LIMITS as readonly number[]).includes(days)) throw fieldError('max_key_lifetime_days', `must be one of ${KEY_LIFETIME_LIMITS.join(', ')} or none`);
      const now = clock.now();
      requireConfirmed(actor, now);
      await store.transaction(async (repos) => {
        const org = await repos.organizations.findById(actor.orgId);
        if (!org) throw errors.notFound('organization');
        if (org.max_key_lifetime_days === days) return;
        await repos.organizations.setSettings(actor.orgId, { max_key_lifetime_days: days });
        await recordAudit(repos, actor, {
          action: 'organization.key_lifetime_changed',
          target: { type: 'organization', id: org.id, label: org.name },
          changes: { max_key_lifetime_days: { old: org.max_key_lifetime_days, new: days } },
          at: now,
        });
      });
    },

    /**
     * "Require two-step verification for every member" (owner): members without a factor are mailed their
     * deadline (7 days); the change is audited.
     */
    async setRequirement(actor: Actor, required: boolean): Promise<void> {
      if (actor.type === 'user' && actor.role !== 'owner') throw errors.forbidden('only an owner changes the organisation\'s security settings');
      const now = clock.now();
      requireConfirmed(actor, now);
      const mails = await store.transaction(async (repos) => {
        const org = await repos.organizations.findById(actor.orgId);
        if (!org) throw errors.notFound('organization');
        if ((org.two_step_required_at !== null) === required) return [];
        await repos.organizations.setTwoStepRequired(actor.orgId, required ? now : null);
        await recordAudit(repos, actor, {
          action: 'organization.security_changed',
          target: { type: 'organization', id: org.id, label: org.name },
          changes: { two_step_required: { old: !required, new: required } },
          at: now,
        });
        if (!required) return [];
        const members = (await repos.users.listActive(actor.orgId)).filter((u) => u.status === 'active');
        const enrolled = await repos.secondFactors.usersWithAny(actor.orgId, members.map((u) => u.id));
        return members
          .filter((u) => !enrolled.has(u.id))
          .map((u) => ({
            userId: u.id,
            mail: requirementMail({ to: u.email, organizationName: org.name, securityUrl, at: new Date(now) }, new Date(Math.max(now, u.created_at) + TWO_STEP_GRACE_MS)),
          }));
      });
      for (const { userId, mail } of mails) send(mail, userId);
    },

    /** The members table's "2-step" column (admins and owners). */
    async membersWithTwoStep(actor: Actor, userIds: readonly string[]): Promise<Set<string>> {
      if (actor.type === 'user' && actor.role !== 'admin' && actor.role !== 'owner') return new Set();
      return store.repos.secondFactors.usersWithAny(actor.orgId, userIds);
    },

    /**
     * The operator's break glass (`user reset-mfa`): the user's app, recovery codes and passkeys go, their
     * sessions end; audited as the CLI, mailed to the user and the organisation's owners.
     */
    async resetSecondFactors(actor: Actor, userId: string): Promise<{ user_id: string; passkeys_removed: number; sessions_ended: number }> {
      if (actor.type === 'user') throw errors.forbidden('only the operator resets second factors');
      const now = clock.now();
      const { result, mails } = await store.transaction(async (repos) => {
        const user = actor.orgId === '' ? await repos.users.findByIdAnyOrg(userId) : await repos.users.findById(actor.orgId, userId);
        if (!user) throw errors.notFound('user');
        const inOrg = { ...actor, orgId: user.org_id };
        await repos.secondFactors.deleteTotp(user.org_id, user.id);
        await repos.secondFactors.deleteRecoveryCodes(user.org_id, user.id);
        const passkeys = await repos.secondFactors.deletePasskeys(user.org_id, user.id);
        const sessions = await repos.sessions.deleteForUser(user.org_id, user.id, null);
        await recordAudit(repos, inOrg, { action: 'user.mfa_disabled', target: userTarget(user), changes: { factor: { old: 'all', new: null } }, at: now });
        const input = await mailInput(repos, user, now);
        const owners = (await repos.users.findActiveOwners(user.org_id)).filter((o) => o.id !== user.id);
        return {
          result: { user_id: user.id, passkeys_removed: passkeys, sessions_ended: sessions },
          mails: [
            { userId: user.id, mail: factorsResetMail(input) },
            ...owners.map((o) => ({ userId: o.id, mail: factorsResetOwnersMail({ ...input, to: o.email, securityUrl: `${publicBaseUrl}/dashboard/audit-log` }, user.email) })),
          ],
        };
      });
      // The operator's command waits for its mails: the process may end right after.
      await Promise.all(mails.map(({ userId: to, mail }) => sendSecurityMail(mailer, log, mail, to)));
      return result;
    },

    /** Housekeeping: WebAuthn challenges nobody answered. */
    async prune(): Promise<number> {
      return store.repos.webauthnChallenges.deleteExpired(clock.now(), 1000);
    },
  };
}

export type AccountSecurityService = ReturnType<typeof createAccountSecurityService>;

function toPasskeyView(row: PasskeyRow): PasskeyView {
  return { id: row.id, name: row.name, createdAt: row.created_at, lastUsedAt: row.last_used_at };
}

function toSessionView(row: SessionRow, currentId: string | null): SessionView {
  return { id: row.id, current: row.id === currentId, ip: row.ip, userAgent: row.user_agent, method: row.method, createdAt: row.created_at, lastSeenAt: row.last_seen_at };
}
