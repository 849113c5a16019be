import type { FastifyBaseLogger } from 'fastify';
import type { Repositories } from '../../db/repositories/index.js';
import type { SsoConnectionRow, SsoPurpose, UserRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { DomainError, errors, fieldError } from '../../errors.js';
import { sha256Hex } from '../../lib/crypto.js';
import { emailDomain } from '../../lib/email-domain.js';
import { newId, randomToken } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { Clock } from '../../lib/time.js';
import type { LinkWay } from '../../mail/sso-mail.js';
import type { RateLimiter } from '../../rate-limit/rate-limiter.js';
import { OidcError, type OidcClaims, type OidcClient, type OidcConnection } from '../../sso/oidc-client.js';
import type { Actor, ActorContext, UserActor } from '../access/actor.js';
import { nameProblems } from './account-rules.js';
import { tooManyAttempts } from './accounts-service.js';
import { createdChanges, recordAudit, userTarget } from '../audit/audit-record.js';
import type { AuthEvents } from '../../db/auth-events.js';
import { requireConfirmed } from './confirmation.js';
import { activateInvited, invitationSso, openInvitation, requireActiveOrganization } from './invitations-service.js';
import { sessionActor, type SessionsService, type StartedSession } from './sessions-service.js';
import type { PendingLink, SsoNotices } from './sso-notices.js';
import { notConfigured, organizationOf, requireOwner } from './sso-rules.js';
import { normalizeEmail } from './users-view.js';
import { ACTIVE_WORKSPACE } from '../access/workspace.js';

/** A round trip to the provider may take this long (the person signs in there). */
export const SSO_ATTEMPT_MS = 10 * 60 * 1000;
/** "Sign in with single sign-on" round trips a client address may start per minute. */
export const SSO_START_LIMIT = 60;

/** The signed-in person's own link at the organisation's provider ("Link my single sign-on account"). */
export interface SsoLinkView {
  /** The connection's issuer, or null when the organisation has none (nothing to link). */
  issuer: string | null;
  linked: { email: string | null; subject: string; createdAt: number } | null;
}

export type SsoCallbackResult =
  | { kind: 'session'; session: StartedSession; next: string | null }
  | { kind: 'test'; claims: OidcClaims; recorded: boolean }
  | { kind: 'confirmed'; next: string | null }
  | { kind: 'linked'; claims: OidcClaims; already: boolean; next: string | null };

export interface SsoSignInDeps {
  store: Store;
  clock: Clock;
  box: SecretBox;
  oidc: OidcClient;
  sessions: SessionsService;
  rateLimiter: RateLimiter;
  authEvents: AuthEvents;
  notices: SsoNotices;
  redirectUrl: string;
  log: Pick<FastifyBaseLogger, 'info'>;
}

/** DASHBOARD 12's refusal when nobody may be signed in: the organisation's administrators decide. */
const askAnAdministrator = (organization: string) => new DomainError(403, 'sso_not_member', `Ask an administrator of ${organization} to invite you.`);
const ssoFailed = (reason: string) => new DomainError(400, 'sso_failed', `Single sign-on failed: ${reason}.`);

/**
 * Owners and admins are never linked by e-mail: whoever runs the provider could otherwise sign in as them
 * (security review F1). They link from their own session, or accept their invitation through the provider.
 */
function linkYourself(organization: string, user: UserRow, required: boolean): DomainError {
  const message =
    user.status === 'invited'
      ? `Owners and admins of ${organization} accept their invitation themselves: open the invitation e-mail and choose "Accept with single sign-on".`
      : !required
        ? `Owners and admins of ${organization} link single sign-on to their account themselves: sign in with your password, then choose "Link my single sign-on account" on your Security page.`
        : user.role === 'owner'
          ? `Owners of ${organization} link single sign-on to their account themselves: sign in with your password and second factor, then choose "Link my single sign-on account" on your Security page.`
          : `Admins of ${organization} link single sign-on to their account themselves, and while single sign-on is required a password does not sign you in: ask an owner to make you a member until your first single sign-on, then an admin again.`;
  return new DomainError(403, 'sso_link_yourself', message);
}

/**
 * Single sign-on's round trips (DASHBOARD 12): signing in (identity by organisation, issuer and subject, kept
 * when the connection is replaced; members linked by e-mail only on a verified domain with a provider-verified
 * address, owners and admins never), "Link my single sign-on account", "Accept with single sign-on" on an
 * invitation, the owner's test, and "Confirm it's you" at the provider. Every new link is mailed (sso-notices.ts).
 */
export function createSsoSignInService(deps: SsoSignInDeps) {
  const { store, clock, box, oidc, sessions, rateLimiter, authEvents, notices, redirectUrl, log } = deps;

  function oidcConnection(row: SsoConnectionRow): OidcConnection {
    return { cacheKey: `${row.id}:${row.updated_at}`, issuer: row.issuer, clientId: row.client_id, clientSecret: box.open(row.client_secret) };
  }

  /** Inside the caller's unit: a new identity, audited. */
  async function link(repos: Repositories, connection: SsoConnectionRow, user: UserRow, claims: OidcClaims, way: LinkWay, context: ActorContext, sessionId: string | null, now: number): Promise<PendingLink> {
    await repos.sso.insertIdentity({
      id: newId('idn'),
      org_id: connection.org_id,
      connection_id: connection.id,
      issuer: claims.issuer,
      subject: claims.subject,
      user_id: user.id,
      email: claims.email,
      created_at: now,
      last_sign_in_at: way === 'self' ? null : now,
    });
    await recordAudit(repos, sessionActor(user, sessionId, context, ACTIVE_WORKSPACE), {
      action: 'sso.identity_linked',
      target: userTarget(user),
      changes: { subject: { old: null, new: claims.subject }, issuer: { old: null, new: claims.issuer }, via: { old: null, new: way } },
      at: now,
    });
    return { user, link: { member: user.email, issuer: claims.issuer, subject: claims.subject, providerEmail: claims.email, way } };
  }

  /** A round trip begins: `state`, `nonce` and the PKCE verifier made here, kept by the state's hash. */
  async function begin(
    connection: SsoConnectionRow,
    purpose: SsoPurpose,
    binding: string,
    extra: { userId?: string | null; next?: string | null; loginHint?: string | null; fresh?: boolean; invitationId?: string | null },
  ): Promise<URL> {
    const state = randomToken(32);
    const nonce = randomToken(32);
    const codeVerifier = randomToken(48);
    const url = await oidc
      .authorizationUrl(oidcConnection(connection), redirectUrl, { state, nonce, codeVerifier, loginHint: extra.loginHint ?? null, ...(extra.fresh ? { maxAgeSeconds: 0 } : {}) })
      .catch((error: unknown) => {
        if (error instanceof OidcError) throw new DomainError(502, 'sso_provider_unavailable', `The identity provider could not be reached: ${error.message}.`);
        throw error;
      });
    await store.repos.sso.insertAttempt({
      state_hash: sha256Hex(state),
      org_id: connection.org_id,
      connection_id: connection.id,
      purpose,
      binding,
      code_verifier: codeVerifier,
      nonce,
      user_id: extra.userId ?? null,
      next: extra.next ?? null,
      expires_at: clock.now() + SSO_ATTEMPT_MS,
      invitation_id: extra.invitationId ?? null,
    });
    return url;
  }

  /**
   * The person behind the provider's answer in this organisation: their identity (by organisation, issuer and
   * subject), or an active (or invited) member with the same e-mail, linked when the domain is verified here and
   * the provider vouches for the address and the member is neither an owner nor an admin, or a new member when
   * the organisation creates them; otherwise refused.
   */
  async function memberFor(repos: Repositories, connection: SsoConnectionRow, claims: OidcClaims, context: ActorContext, now: number): Promise<{ user: UserRow; pending: PendingLink | null }> {
    const org = await organizationOf(repos, connection.org_id);
    const identity = await repos.sso.findIdentity(connection.org_id, claims.issuer, claims.subject);
    if (identity) {
      const user = await repos.users.findById(connection.org_id, identity.user_id);
      if (!user || user.status !== 'active') throw askAnAdministrator(org.name);
      await repos.sso.touchIdentity(connection.org_id, identity.id, claims.email, now);
      return { user, pending: null };
    }
    const email = claims.email ? normalizeEmail(claims.email) : null;
    const domain = email ? emailDomain(email) : null;
    const domainRow = domain ? await repos.sso.findDomain(connection.org_id, domain) : undefined;
    const vouched = claims.emailVerified === true && domainRow?.verified_at != null;
    const existing = email ? await repos.users.findByEmail(connection.org_id, email) : undefined;
    let user: UserRow;
    let way: LinkWay;
    if (existing) {
      // Suspended by the identity provider's provisioning (CONTRACT 16): no way in, not even a first link.
      if (existing.status === 'suspended') throw askAnAdministrator(org.name);
      if (!vouched) {
        const why = claims.emailVerified !== true ? 'the identity provider did not confirm this email address (email_verified)' : `${domain} is not a verified domain of ${org.name}`;
        throw new DomainError(403, 'sso_not_linked', `${org.name} has a member with this email, but ${why}, so single sign-on cannot be linked to it. Ask an administrator of ${org.name}.`);
      }
      if (existing.role === 'owner' || existing.role === 'admin') throw linkYourself(org.name, existing, connection.required_at !== null);
      if (await repos.sso.identityOfUser(connection.org_id, claims.issuer, existing.id)) {
        throw new DomainError(403, 'sso_not_linked', `This member of ${org.name} is already linked to another account at the identity provider. Ask an administrator of ${org.name}.`);
      }
      user = existing;
      way = 'email';
      if (existing.status === 'invited') {
        // Signing in through the organisation's provider accepts the invitation: the address is proven.
        await repos.invitations.closeOpenForUser(connection.org_id, existing.id, now);
        const name = existing.name ?? cleanName(claims.name);
        user = (await repos.users.update(connection.org_id, existing.id, { status: 'active', name, updated_at: now }))!;
        await recordAudit(repos, sessionActor(user, null, context, ACTIVE_WORKSPACE), { action: 'invitation.accepted', target: userTarget(user), changes: { status: { old: 'invited', new: 'active' } }, at: now });
      }
    } else {
      // A read-only workspace (cancelled) gains no members, by any door.
      if (connection.jit !== 1 || !vouched || email === null || org.state !== 'active') throw askAnAdministrator(org.name);
      user = await repos.users.insert({
        id: newId('user'),
        org_id: connection.org_id,
        email: claims.email!.trim(),
        email_normalized: email,
        name: cleanName(claims.name),
        role: connection.default_role,
        status: 'active',
        password_hash: null,
        created_at: now,
        updated_at: now,
      });
      way = 'created';
      await recordAudit(repos, sessionActor(user, null, context, ACTIVE_WORKSPACE), { action: 'member.added', target: userTarget(user), changes: createdChanges({ role: user.role, status: 'active', via: 'sso' }), at: now });
    }
    return { user, pending: await link(repos, connection, user, claims, way, context, null, now) };
  }

  /** "Link my single sign-on account": the signed-in person's account, to whoever just signed in at the provider. */
  async function linkSelf(connection: SsoConnectionRow, signedIn: UserActor, claims: OidcClaims, now: number): Promise<{ already: boolean; pending: PendingLink | null }> {
    return store.transaction(async (repos) => {
      const org = await organizationOf(repos, connection.org_id);
      const identity = await repos.sso.findIdentity(connection.org_id, claims.issuer, claims.subject);
      if (identity) {
        if (identity.user_id === signedIn.userId) return { already: true, pending: null };
        throw ssoFailed(`that account at the identity provider is already linked to another member of ${org.name}`);
      }
      if (await repos.sso.identityOfUser(connection.org_id, claims.issuer, signedIn.userId)) {
        throw ssoFailed('your account is already linked to another account at this identity provider');
      }
      const user = await repos.users.findById(connection.org_id, signedIn.userId);
      if (!user || user.status !== 'active') throw ssoFailed('your account is no longer active');
      return { already: false, pending: await link(repos, connection, user, claims, 'self', signedIn.context, signedIn.sessionId, now) };
    });
  }

  /**
   * "Accept with single sign-on": the invitation (still open) is accepted by whoever the provider signs in,
   * when it vouches for the invited address; the identity is linked, whatever the role, since the person also
   * holds the invitation that was mailed to that address.
   */
  async function acceptInvitation(connection: SsoConnectionRow, invitationId: string, invitedUserId: string, claims: OidcClaims, context: ActorContext, now: number): Promise<{ session: StartedSession; pending: PendingLink }> {
    return store.transaction(async (repos) => {
      const org = await repos.organizations.findForShare(connection.org_id);
      if (!org || org.state === 'deleting') throw ssoFailed('the organisation is being deleted');
      const workspace = await requireActiveOrganization(repos, connection.org_id);
      const invitation = await repos.invitations.findById(connection.org_id, invitationId);
      const invited = await repos.users.findById(connection.org_id, invitedUserId);
      if (!invitation || invitation.used_at !== null || invitation.expires_at <= now || invitation.user_id !== invitedUserId || !invited || invited.status !== 'invited') {
        throw ssoFailed('this invitation was used, replaced or has expired meanwhile');
      }
      const email = claims.email ? normalizeEmail(claims.email) : null;
      if (claims.emailVerified !== true || email !== invited.email_normalized) {
        throw ssoFailed(`the identity provider signed in ${claims.email ?? 'an account without an email address'}${claims.emailVerified === true ? '' : ' (not verified)'}, but this invitation is for ${invited.email}`);
      }
      if (await repos.sso.findIdentity(connection.org_id, claims.issuer, claims.subject)) {
        throw ssoFailed(`that account at the identity provider is already linked to another member of ${org.name}`);
      }
      const user = await activateInvited(repos, invitation, { name: invited.name ?? cleanName(claims.name), passwordHash: null }, context, workspace, now);
      const pending = await link(repos, connection, user, claims, 'invitation', context, null, now);
      return { session: await sessions.start(repos, user, context, 'sso'), pending };
    });
  }

  return {
    /** The signed-in person's own link ("Link my single sign-on account" on the Security and single sign-on pages). */
    async linkState(actor: Actor): Promise<SsoLinkView> {
      if (actor.type !== 'user') return { issuer: null, linked: null };
      const connection = await store.repos.sso.findConnection(actor.orgId);
      if (!connection) return { issuer: null, linked: null };
      const identity = await store.repos.sso.identityOfUser(actor.orgId, connection.issuer, actor.userId);
      return { issuer: connection.issuer, linked: identity ? { email: identity.email, subject: identity.subject, createdAt: identity.created_at } : null };
    },

    /**
     * "Sign in with single sign-on" → "Work email" → "Continue": the provider of the organisation that verified
     * the address's domain. Throttled per client address: each start stores a row and may ask the provider.
     */
    async startSignIn(workEmail: string, browserSecret: string, context: ActorContext, next: string | null): Promise<URL> {
      const email = normalizeEmail(workEmail);
      if (email === '') throw fieldError('email', 'is required');
      const domain = emailDomain(email);
      if (domain === null || email.length > 320) throw fieldError('email', 'must be an email address');
      const decision = await rateLimiter.hit(`sso-start-ip:${context.ip ?? 'unknown'}`, SSO_START_LIMIT, 60_000);
      if (!decision.allowed) throw tooManyAttempts(decision.retryAfterSeconds);
      const verified = await store.repos.sso.verifiedDomainAnyOrg(domain);
      const connection = verified ? await store.repos.sso.findConnection(verified.org_id) : undefined;
      const org = verified ? await store.repos.organizations.findById(verified.org_id) : undefined;
      if (!verified || !connection || !org || org.state === 'deleting') {
        throw new DomainError(404, 'sso_not_configured', `No organisation signs in with single sign-on for ${domain}. Sign in with your password, or ask your administrator.`);
      }
      return begin(connection, 'sign_in', bindingOf(browserSecret), { next, loginHint: workEmail.trim() });
    },

    /** "Test single sign-on" (owners): the round trip, nobody signed in; what the provider said is shown and kept. */
    async startTest(actor: Actor, browserSecret: string): Promise<URL> {
      requireOwner(actor);
      if (actor.type !== 'user') throw errors.forbidden('the test runs in a browser');
      const connection = await store.repos.sso.findConnection(actor.orgId);
      if (!connection) throw notConfigured();
      return begin(connection, 'test', bindingOf(browserSecret), { userId: actor.userId, fresh: true });
    },

    /** "Confirm with single sign-on": a fresh sign-in at the provider (prompt=login, max_age=0) proves the person again. */
    async startConfirm(actor: Actor, browserSecret: string, next: string | null): Promise<URL> {
      if (actor.type !== 'user' || actor.sessionId === null) throw errors.forbidden('only a signed-in user confirms');
      const connection = await store.repos.sso.findConnection(actor.orgId);
      if (!connection || !(await store.repos.sso.identityOfUser(actor.orgId, connection.issuer, actor.userId))) {
        throw new DomainError(409, 'sso_not_linked', 'Your account is not linked to single sign-on: confirm with your password or passkey.');
      }
      return begin(connection, 'confirm', bindingOf(browserSecret), { userId: actor.userId, next, fresh: true });
    },

    /**
     * "Link my single sign-on account": from a signed-in session confirmed in the last 15 minutes, a fresh sign-in
     * at the provider links whoever signs in there to this account. The way owners and admins link (never by e-mail).
     */
    async startLink(actor: Actor, browserSecret: string, next: string | null): Promise<URL> {
      if (actor.type !== 'user' || actor.sessionId === null) throw errors.forbidden('only a signed-in user links their account');
      requireConfirmed(actor, clock.now());
      const connection = await store.repos.sso.findConnection(actor.orgId);
      if (!connection) throw notConfigured();
      if (await store.repos.sso.identityOfUser(actor.orgId, connection.issuer, actor.userId)) throw errors.conflict('Your account is already linked to single sign-on.');
      return begin(connection, 'link', bindingOf(browserSecret), { userId: actor.userId, next, fresh: true });
    },

    /** "Accept with single sign-on" on an invitation: for an invitee whose domain this organisation verified. */
    async startInvitation(token: string, browserSecret: string): Promise<URL> {
      const now = clock.now();
      const invitation = await openInvitation(store.repos, token, now);
      await requireActiveOrganization(store.repos, invitation.org_id);
      const invited = await store.repos.users.findById(invitation.org_id, invitation.user_id);
      if (!invited) throw errors.notFound('invitation');
      const connection = await store.repos.sso.findConnection(invitation.org_id);
      if (!connection || (await invitationSso(store.repos, invited)) === null) {
        throw new DomainError(409, 'sso_not_configured', 'This organisation does not sign in with single sign-on for your address: choose a password instead.');
      }
      return begin(connection, 'invitation', bindingOf(browserSecret), { userId: invited.id, invitationId: invitation.id, loginHint: invited.email });
    },

    /** Whether the user can confirm through the provider (their account is linked at its issuer). */
    async canConfirmWithSso(orgId: string, userId: string): Promise<boolean> {
      const connection = await store.repos.sso.findConnection(orgId);
      return connection !== undefined && (await store.repos.sso.identityOfUser(orgId, connection.issuer, userId)) !== undefined;
    },

    /**
     * The provider sends the browser back here. The attempt is found by its `state` (once), must belong to
     * this browser, and every check of the ID token must pass before anything is decided; any failure signs
     * nobody in.
     */
    async callback(callbackUrl: URL, browserSecret: string | null, signedIn: UserActor | null, context: ActorContext): Promise<SsoCallbackResult> {
      const state = callbackUrl.searchParams.get('state');
      const now = clock.now();
      const attempt = state && state.length <= 512 ? await store.repos.sso.takeAttempt(sha256Hex(state), now) : undefined;
      if (!attempt || browserSecret === null || attempt.binding !== bindingOf(browserSecret)) {
        throw ssoFailed('this sign-in was not started in this browser, was already used, or has expired (10 minutes). Start again');
      }
      const connection = await store.repos.sso.findConnection(attempt.org_id);
      if (!connection || connection.id !== attempt.connection_id) throw ssoFailed('the single sign-on connection changed meanwhile. Start again');
      let claims: OidcClaims;
      try {
        claims = await oidc.exchange(oidcConnection(connection), callbackUrl, {
          state: state!,
          nonce: attempt.nonce,
          codeVerifier: attempt.code_verifier,
          ...(attempt.purpose === 'sign_in' || attempt.purpose === 'invitation' ? {} : { maxAgeSeconds: 0 }),
        });
      } catch (error) {
        if (error instanceof OidcError) {
          log.info({ org_id: attempt.org_id, purpose: attempt.purpose, reason: error.message }, 'single sign-on refused');
          throw ssoFailed(error.message);
        }
        throw error;
      }
      const sameSession = signedIn !== null && signedIn.userId === attempt.user_id;
      switch (attempt.purpose) {
        case 'test': {
          if (!sameSession) throw ssoFailed('the test was started by another session');
          const recorded = await store.repos.sso.recordTest(attempt.org_id, connection.id, connection.updated_at, { at: now, subject: claims.subject, email: claims.email, emailVerified: claims.emailVerified });
          return { kind: 'test', claims, recorded };
        }
        case 'confirm': {
          if (!sameSession) throw ssoFailed('the confirmation was started by another session');
          const identity = await store.repos.sso.findIdentity(attempt.org_id, claims.issuer, claims.subject);
          if (!identity || identity.user_id !== signedIn.userId) throw ssoFailed('the identity provider signed in someone else');
          await sessions.confirm(signedIn);
          return { kind: 'confirmed', next: attempt.next };
        }
        case 'link': {
          if (!sameSession) throw ssoFailed('the link was started by another session');
          const linked = await linkSelf(connection, signedIn, claims, now);
          await notices.linked(linked.pending);
          return { kind: 'linked', claims, already: linked.already, next: attempt.next };
        }
        case 'invitation': {
          if (attempt.invitation_id === null || attempt.user_id === null) throw ssoFailed('this invitation round trip is incomplete. Start again');
          const accepted = await acceptInvitation(connection, attempt.invitation_id, attempt.user_id, claims, context, now);
          await authEvents.userChanged(attempt.user_id);
          await notices.linked(accepted.pending);
          return { kind: 'session', session: accepted.session, next: null };
        }
        case 'sign_in': {
          const signedInNow = await store.transaction(async (repos) => {
            const org = await repos.organizations.findForShare(attempt.org_id);
            if (!org || org.state === 'deleting') throw ssoFailed('the organisation is being deleted');
            const { user, pending } = await memberFor(repos, connection, claims, context, now);
            return { session: await sessions.start(repos, user, context, 'sso'), pending };
          });
          await notices.linked(signedInNow.pending);
          return { kind: 'session', session: signedInNow.session, next: attempt.next };
        }
      }
    },

    /** Housekeeping: round trips nobody finished. */
    async prune(): Promise<number> {
      return store.repos.sso.deleteExpiredAttempts(clock.now(), 1000);
    },
  };
}

export type SsoSignInService = ReturnType<typeof createSsoSignInService>;

function bindingOf(browserSecret: string): string {
  return sha256Hex(`sso:${browserSecret}`);
}

/** The provider's `name`, kept when it fits the account rules; otherwise none (the member can set one). */
function cleanName(name: string | null): string | null {
  const trimmed = name?.trim() ?? '';
  return nameProblems('name', trimmed).length === 0 ? trimmed : null;
}
