import type { FastifyBaseLogger } from 'fastify';
import { isUniqueViolation } from '../db/database.js';
import type { Repositories } from '../db/repositories/index.js';
import type { SsoConnectionRow, SsoDomainRow, SsoPurpose, SsoRole, UserRow } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { DomainError, errors, fieldError } from '../errors.js';
import { sha256Hex } from '../lib/crypto.js';
import { newId, randomToken } from '../lib/ids.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { Clock } from '../lib/time.js';
import type { RateLimiter } from '../rate-limit/rate-limiter.js';
import type { Mailer, MailMessage } from '../mail/mailer.js';
import { sendSecurityMail } from '../mail/security-mail.js';
import { ssoLinkedOwnersMail, ssoLinkedUserMail, ssoSettingsChangedMail, type LinkedIdentity, type LinkWay } from '../mail/sso-mail.js';
import { DnsUnavailableError, type TxtLookup } from '../sso/dns-txt.js';
import { OidcError, type OidcClaims, type OidcClient, type OidcConnection } from '../sso/oidc-client.js';
import { actingRole, type Actor, type ActorContext, type UserActor } from './actor.js';
import { createdChanges, keyTarget, recordAudit, userTarget, type AuditTarget } from './audit.js';
import type { AuthEvents } from './auth-events.js';
import { requireConfirmed } from './confirmation.js';
import { tooManyAttempts } from './accounts-service.js';
import { nameProblems } from './account-rules.js';
import { activateInvited, openInvitation, requireActiveOrganization } from './invitations-service.js';
import { sessionActor, type SessionsService, type StartedSession } from './sessions-service.js';
import { normalizeEmail } from './users-view.js';
import { emailDomain, normalizeDomain } from '../lib/email-domain.js';
import { ACTIVE_WORKSPACE, requireWritable } from './workspace.js';

/** A round trip to the provider may take this long (the person signs in there). */
export const SSO_ATTEMPT_MS = 10 * 60 * 1000;
/** Verified domains are looked up again after this long. */
export const DOMAIN_RECHECK_MS = 24 * 60 * 60 * 1000;
/** A verified domain whose record has been missing this long is no longer verified. */
export const DOMAIN_GRACE_MS = 7 * 24 * 60 * 60 * 1000;
/** "Sign in with single sign-on" round trips a client address may start per minute. */
export const SSO_START_LIMIT = 60;
export const DOMAINS_PER_ORGANIZATION = 20;
export const TXT_PREFIX = '_workspace-verification';
export const TXT_VALUE_PREFIX = 'workspace-verification=';

export interface SsoDomainView {
  domain: string;
  status: 'pending' | 'verified' | 'record_missing';
  recordName: string;
  recordValue: string;
  createdAt: number;
  verifiedAt: number | null;
  lastCheckedAt: number | null;
  missingSince: number | null;
  /** When a missing record makes the domain unverified. */
  unverifiesAt: number | null;
}

export interface SsoSettingsView {
  redirectUrl: string;
  /** Whether the viewer may change anything here: owners and the operator (DASHBOARD 12, "Who may change sign-in"). */
  canChange: boolean;
  connection: {
    issuer: string;
    clientId: string;
    jit: boolean;
    defaultRole: SsoRole;
    requiredAt: number | null;
    testedAt: number | null;
    test: { subject: string; email: string | null; emailVerified: boolean | null } | null;
    updatedAt: number;
  } | null;
  domains: SsoDomainView[];
  /** Why "Require single sign-on" cannot be offered yet, or null when it can. */
  requireBlockedBy: string | null;
  /** The live API keys of the members the requirement binds (owners only; 0 for others). */
  requiredMembersKeys: number;
  /**
   * Owners and admins in verified domains not linked at the provider (by name, else e-mail): never linked by
   * e-mail, they link themselves; while single sign-on is required an admin who has not cannot sign in.
   */
  unlinkedAdmins: string[];
}

/** The signed-in person's own link at the organisation's provider ("Link my single sign-on account"). */
export interface SsoLinkView {
  /** The connection's issuer, or null when the organisation has none (nothing to link). */
  issuer: string | null;
  linked: { email: string | null; subject: string; createdAt: number } | null;
}

export interface SaveConnectionInput {
  issuer: string;
  clientId: string;
  /** Empty keeps the stored secret, only while the issuer and client ID stay the same; required for a new one. */
  clientSecret: string;
  jit: boolean;
  defaultRole: string;
}

export type SsoCallbackResult =
  | { kind: 'session'; session: StartedSession; next: string | null }
  | { kind: 'test'; claims: OidcClaims; recorded: boolean }
  | { kind: 'confirmed'; next: string | null }
  | { kind: 'linked'; claims: OidcClaims; already: boolean; next: string | null };

export interface SsoDeps {
  store: Store;
  clock: Clock;
  box: SecretBox;
  oidc: OidcClient;
  txt: TxtLookup;
  sessions: SessionsService;
  rateLimiter: RateLimiter;
  mailer: Mailer;
  authEvents: AuthEvents;
  publicBaseUrl: string;
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
}

/** DASHBOARD 12's refusal when nobody may be signed in: the organisation's administrators decide. */
const askAnAdministrator = (organization: string) => new DomainError(403, 'sso_not_member', `Ask an administrator of ${organization} to invite you.`);
const ssoFailed = (reason: string) => new DomainError(400, 'sso_failed', `Single sign-on failed: ${reason}.`);
const notConfigured = () => new DomainError(409, 'sso_not_configured', 'Save a single sign-on connection first.');

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

/** The dashboard's admins see the settings; API keys never reach them (a confirmed session's business). */
function requireAdminView(actor: Actor): void {
  const role = actingRole(actor);
  if (role !== 'admin' && role !== 'owner') throw errors.forbidden('only an admin or owner sees single sign-on');
  if (actor.type === 'user' && actor.keyId !== null) throw errors.forbidden('single sign-on is configured from the dashboard or the CLI');
}

/** Owners (and the operator's CLI) change who can sign in: the connection, the domains, the requirement. */
function requireOwner(actor: Actor): void {
  if (actingRole(actor) !== 'owner') throw errors.forbidden('only an owner changes single sign-on');
  if (actor.type === 'user' && actor.keyId !== null) throw errors.forbidden('single sign-on is configured from the dashboard or the CLI');
}

function orgTarget(org: { id: string; name: string }): AuditTarget {
  return { type: 'organization', id: org.id, label: org.name };
}

/** Who made a change, as the owners' mail names them. */
function actorWords(actor: Actor): string {
  return actor.type === 'user' ? actor.label : actor.type === 'cli' ? 'An operator (command line)' : 'The service';
}

function domainView(row: SsoDomainRow): SsoDomainView {
  return {
    domain: row.domain,
    status: row.verified_at === null ? 'pending' : row.missing_since !== null ? 'record_missing' : 'verified',
    recordName: `${TXT_PREFIX}.${row.domain}`,
    recordValue: `${TXT_VALUE_PREFIX}${row.token}`,
    createdAt: row.created_at,
    verifiedAt: row.verified_at,
    lastCheckedAt: row.last_checked_at,
    missingSince: row.missing_since,
    unverifiesAt: row.missing_since === null ? null : row.missing_since + DOMAIN_GRACE_MS,
  };
}

/** Why the requirement cannot be switched on, or null (a verified domain and a successful test, as Infisical asks). */
function requireBlockedBy(connection: SsoConnectionRow | undefined, domains: readonly SsoDomainRow[]): string | null {
  if (!connection) return 'Save a single sign-on connection first.';
  if (!domains.some((d) => d.verified_at !== null)) return 'Verify at least one email domain first.';
  if (connection.tested_at === null) return 'Run "Test single sign-on" successfully first.';
  return null;
}

/** The changes of a save, in the owners' mail's words. */
function connectionChangeWords(before: SsoConnectionRow | undefined, after: { issuer: string; client_id: string; jit: boolean; default_role: SsoRole }, secretReplaced: boolean): string[] {
  if (!before) return [`connected ${after.issuer} (client ID ${after.client_id})${after.jit ? ', creating members on first sign-in as ' + after.default_role : ''}`];
  const words: string[] = [];
  if (before.issuer !== after.issuer) words.push(`changed the identity provider from ${before.issuer} to ${after.issuer}`);
  if (before.client_id !== after.client_id) words.push(`changed the client ID from ${before.client_id} to ${after.client_id}`);
  if (secretReplaced) words.push('replaced the client secret');
  if ((before.jit === 1) !== after.jit) words.push(after.jit ? `turned on creating members on first sign-in (as ${after.default_role})` : 'turned off creating members on first sign-in');
  if (before.default_role !== after.default_role) words.push(`changed the default role from ${before.default_role} to ${after.default_role}`);
  return words;
}

/** A link made inside a unit of work, mailed after it commits. */
interface PendingLink {
  user: UserRow;
  link: LinkedIdentity;
}

/**
 * Single sign-on per organisation (DASHBOARD 12): the OpenID Connect connection, the domains it proves by
 * DNS, signing in (identity by organisation, issuer and subject, kept when the connection is replaced;
 * members linked by e-mail only on a verified domain with a provider-verified address, owners and admins never),
 * linking one's own account and accepting an invitation through the provider, the test round trip, "Confirm
 * it's you" at the provider, and the requirement. Only owners change any of it, and every owner hears of each
 * change and each new link. The sign-in gate for the other methods is in the sessions service.
 */
export function createSsoService(deps: SsoDeps) {
  const { store, clock, box, oidc, txt, sessions, rateLimiter, mailer, authEvents, publicBaseUrl, log } = deps;
  const redirectUrl = `${publicBaseUrl}/dashboard/sso/callback`;
  const settingsUrl = `${publicBaseUrl}/dashboard/settings/sso`;
  const auditUrl = `${publicBaseUrl}/dashboard/audit-log`;
  const securityUrl = `${publicBaseUrl}/dashboard/account/security`;

  const send = (mail: MailMessage, userId: string) => void sendSecurityMail(mailer, log, mail, userId);

  function oidcConnection(row: SsoConnectionRow): OidcConnection {
    return { cacheKey: `${row.id}:${row.updated_at}`, issuer: row.issuer, clientId: row.client_id, clientSecret: box.open(row.client_secret) };
  }

  async function organization(repos: Repositories, orgId: string) {
    const org = await repos.organizations.findById(orgId);
    if (!org) throw errors.notFound('organization');
    return org;
  }

  /** Every owner hears of a change to who can sign in, whoever made it (after the change committed). */
  async function mailOwnersOfChange(actor: Actor, changes: readonly string[]): Promise<void> {
    if (changes.length === 0) return;
    const org = await store.repos.organizations.findById(actor.orgId);
    const at = new Date(clock.now());
    for (const owner of await store.repos.users.findActiveOwners(actor.orgId)) {
      send(ssoSettingsChangedMail({ to: owner.email, organizationName: org?.name ?? 'Workspace', at }, actorWords(actor), changes, settingsUrl), owner.id);
    }
  }

  /** Every owner, and the member, hear of a new link (after it committed). */
  async function mailLink(pending: PendingLink | null): Promise<void> {
    if (!pending) return;
    const { user, link } = pending;
    const org = await store.repos.organizations.findById(user.org_id);
    const input = (to: string) => ({ to, organizationName: org?.name ?? 'Workspace', at: new Date(clock.now()) });
    for (const owner of await store.repos.users.findActiveOwners(user.org_id)) {
      if (owner.id !== user.id) send(ssoLinkedOwnersMail(input(owner.email), link, auditUrl), owner.id);
    }
    send(ssoLinkedUserMail(input(user.email), link, securityUrl), user.id);
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
    const org = await organization(repos, connection.org_id);
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
      const org = await organization(repos, connection.org_id);
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

  async function lookup(name: string): Promise<string[]> {
    try {
      return await txt(name);
    } catch (error) {
      if (error instanceof DnsUnavailableError) throw new DomainError(503, 'dns_unavailable', `The DNS lookup of ${name} failed (${error.code}). Try again in a moment.`);
      throw error;
    }
  }

  return {
    redirectUrl,

    async settings(actor: Actor): Promise<SsoSettingsView> {
      requireAdminView(actor);
      if (actor.type !== 'user') await organization(store.repos, actor.orgId);
      const [connection, domains] = await Promise.all([store.repos.sso.findConnection(actor.orgId), store.repos.sso.listDomains(actor.orgId)]);
      const canChange = actingRole(actor) === 'owner';
      return {
        redirectUrl,
        canChange,
        connection: connection
          ? {
              issuer: connection.issuer,
              clientId: connection.client_id,
              jit: connection.jit === 1,
              defaultRole: connection.default_role,
              requiredAt: connection.required_at,
              testedAt: connection.tested_at,
              test:
                connection.tested_at === null
                  ? null
                  : { subject: connection.test_subject ?? '', email: connection.test_email, emailVerified: connection.test_email_verified === null ? null : connection.test_email_verified === 1 },
              updatedAt: connection.updated_at,
            }
          : null,
        domains: domains.map(domainView),
        requireBlockedBy: requireBlockedBy(connection, domains),
        requiredMembersKeys: canChange ? (await keysOfBoundMembers(store.repos, actor.orgId, domains)).length : 0,
        unlinkedAdmins: connection ? await unlinkedAdmins(store.repos, actor.orgId, connection.issuer, domains) : [],
      };
    },

    /** The signed-in person's own link ("Link my single sign-on account" on the Security and single sign-on pages). */
    async linkState(actor: Actor): Promise<SsoLinkView> {
      if (actor.type !== 'user') return { issuer: null, linked: null };
      const connection = await store.repos.sso.findConnection(actor.orgId);
      if (!connection) return { issuer: null, linked: null };
      const identity = await store.repos.sso.identityOfUser(actor.orgId, connection.issuer, actor.userId);
      return { issuer: connection.issuer, linked: identity ? { email: identity.email, subject: identity.subject, createdAt: identity.created_at } : null };
    },

    /**
     * "Save connection" (owners): the issuer's discovery document is fetched and checked first; the secret is
     * sealed and never shown again, and never sent to another provider: a new issuer or client ID needs it
     * typed again. While single sign-on is required, the issuer and client stay as they are.
     */
    async saveConnection(actor: Actor, input: SaveConnectionInput): Promise<void> {
      requireOwner(actor);
      await requireWritable(store.repos, actor);
      const now = clock.now();
      requireConfirmed(actor, now);
      const issuer = input.issuer.trim().replace(/\/+$/, '');
      const clientId = input.clientId.trim();
      const problems = [
        ...(issuer === '' ? [{ field: 'issuer', message: 'is required' }] : issuer.length > 2048 ? [{ field: 'issuer', message: 'must be at most 2048 characters' }] : []),
        ...(clientId === '' ? [{ field: 'client_id', message: 'is required' }] : clientId.length > 512 ? [{ field: 'client_id', message: 'must be at most 512 characters' }] : []),
        ...(input.clientSecret.length > 4096 ? [{ field: 'client_secret', message: 'must be at most 4096 characters' }] : []),
        ...(input.defaultRole !== 'viewer' && input.defaultRole !== 'member' ? [{ field: 'default_role', message: 'must be viewer or member (members created on first sign-in are never admins or owners)' }] : []),
      ];
      if (problems.length > 0) throw errors.validation(problems);
      const current = await store.repos.sso.findConnection(actor.orgId);
      if (!current && input.clientSecret === '') throw fieldError('client_secret', 'is required');
      const otherProvider = current !== undefined && (current.issuer !== issuer || current.client_id !== clientId);
      if (current?.required_at != null && otherProvider) {
        throw errors.conflict('Single sign-on is required: stop requiring it before you change the issuer or the client ID.');
      }
      // The stored secret belongs to the provider and client it was given for (security review F2).
      if (otherProvider && input.clientSecret === '') throw fieldError('client_secret', 'must be typed again when the issuer or the client ID changes: the stored secret is never sent to another provider');
      const secret = input.clientSecret !== '' ? input.clientSecret : box.open(current!.client_secret);
      try {
        await oidc.check({ cacheKey: 'check', issuer, clientId, clientSecret: secret });
      } catch (error) {
        if (error instanceof OidcError) throw fieldError('issuer', `was refused: ${error.message}`);
        throw error;
      }
      const role = input.defaultRole as SsoRole;
      const words = await store.transaction(async (repos) => {
        const org = await organization(repos, actor.orgId);
        const before = await repos.sso.findConnection(actor.orgId);
        const values = { issuer, client_id: clientId, client_secret: box.seal(secret), jit: input.jit ? 1 : 0, default_role: role, updated_at: Math.max(now, (before?.updated_at ?? 0) + 1) };
        if (before) {
          await repos.sso.updateConnection(actor.orgId, { ...values, resetTest: before.issuer !== issuer || before.client_id !== clientId });
        } else {
          await repos.sso.insertConnection({ id: newId('sso'), org_id: actor.orgId, ...values, required_at: null, tested_at: null, test_subject: null, test_email: null, test_email_verified: null, created_at: now });
        }
        const changes: Record<string, { old: unknown; new: unknown }> = {};
        const was = { issuer: before?.issuer ?? null, client_id: before?.client_id ?? null, jit: before ? before.jit === 1 : null, default_role: before?.default_role ?? null };
        const after = { issuer, client_id: clientId, jit: input.jit, default_role: role };
        for (const key of Object.keys(after) as (keyof typeof after)[]) if (was[key] !== after[key]) changes[key] = { old: was[key], new: after[key] };
        if (input.clientSecret !== '') changes.client_secret = { old: before ? 'set' : null, new: 'replaced' };
        await recordAudit(repos, actor, { action: 'sso.connection_saved', target: orgTarget(org), changes, at: now });
        return connectionChangeWords(before, after, before !== undefined && input.clientSecret !== '');
      });
      await mailOwnersOfChange(actor, words);
    },

    /** "Delete connection" (owners): nobody signs in through it any more; the links stay, should it come back. */
    async deleteConnection(actor: Actor): Promise<void> {
      requireOwner(actor);
      await requireWritable(store.repos, actor);
      const now = clock.now();
      requireConfirmed(actor, now);
      const issuer = await store.transaction(async (repos) => {
        const org = await organization(repos, actor.orgId);
        const connection = await repos.sso.findConnection(actor.orgId);
        if (!connection) throw errors.notFound('single sign-on connection');
        if (connection.required_at !== null) throw errors.conflict('Single sign-on is required: stop requiring it before you delete the connection.');
        await repos.sso.deleteConnection(actor.orgId);
        await recordAudit(repos, actor, { action: 'sso.connection_deleted', target: orgTarget(org), changes: { issuer: { old: connection.issuer, new: null } }, at: now });
        return connection.issuer;
      });
      await mailOwnersOfChange(actor, [`deleted the connection to ${issuer}; nobody signs in through it until a connection is saved again`]);
    },

    /** "Add domain" (owners): the TXT record to publish. */
    async addDomain(actor: Actor, input: string): Promise<SsoDomainView> {
      requireOwner(actor);
      const domain = normalizeDomain(input);
      if (domain === null) throw fieldError('domain', 'must be a domain name such as example.com');
      await requireWritable(store.repos, actor);
      const now = clock.now();
      requireConfirmed(actor, now);
      return store.transaction(async (repos) => {
        const org = await organization(repos, actor.orgId);
        if (await repos.sso.findDomain(actor.orgId, domain)) throw errors.conflict(`${domain} is already listed`);
        if ((await repos.sso.listDomains(actor.orgId)).length >= DOMAINS_PER_ORGANIZATION) throw errors.conflict(`An organisation may list at most ${DOMAINS_PER_ORGANIZATION} domains`);
        const taken = await repos.sso.verifiedDomainAnyOrg(domain);
        if (taken) throw new DomainError(409, 'domain_taken', `${domain} is verified by another organisation`);
        const row: Omit<SsoDomainRow, 'seq'> = { id: newId('dom'), org_id: actor.orgId, domain, token: randomToken(24), created_at: now, verified_at: null, last_checked_at: null, missing_since: null };
        await repos.sso.insertDomain(row);
        await recordAudit(repos, actor, { action: 'sso.domain_added', target: orgTarget(org), changes: { domain: { old: null, new: domain } }, at: now });
        return domainView({ seq: 0, ...row });
      });
    },

    /** "Verify domain" (owners): the TXT record looked up now; verified for this organisation unless another holds it. */
    async verifyDomain(actor: Actor, input: string): Promise<SsoDomainView> {
      requireOwner(actor);
      await requireWritable(store.repos, actor);
      requireConfirmed(actor, clock.now());
      const domain = normalizeDomain(input);
      const row = domain ? await store.repos.sso.findDomain(actor.orgId, domain) : undefined;
      if (!domain || !row) throw errors.notFound('domain');
      const expected = `${TXT_VALUE_PREFIX}${row.token}`;
      const found = await lookup(`${TXT_PREFIX}.${domain}`);
      if (!found.includes(expected)) {
        throw new DomainError(409, 'dns_record_not_found', `No TXT record "${expected}" was found at ${TXT_PREFIX}.${domain}. DNS changes can take a while to appear; try again later.`);
      }
      const now = clock.now();
      let verified: { view: SsoDomainView; newly: boolean };
      try {
        verified = await store.transaction(async (repos) => {
          const org = await organization(repos, actor.orgId);
          const taken = await repos.sso.verifiedDomainAnyOrg(domain);
          if (taken && taken.org_id !== actor.orgId) throw new DomainError(409, 'domain_taken', `${domain} is verified by another organisation`);
          const wasVerified = row.verified_at !== null;
          await repos.sso.markVerified(actor.orgId, domain, row.verified_at ?? now, now);
          if (!wasVerified) await recordAudit(repos, actor, { action: 'sso.domain_verified', target: orgTarget(org), changes: { domain: { old: null, new: domain } }, at: now });
          return { view: domainView({ ...row, verified_at: row.verified_at ?? now, last_checked_at: now, missing_since: null }), newly: !wasVerified };
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw new DomainError(409, 'domain_taken', `${domain} is verified by another organisation`);
        throw error;
      }
      if (verified.newly) await mailOwnersOfChange(actor, [`verified the domain ${domain}: the identity provider now vouches for addresses at ${domain}`]);
      return verified.view;
    },

    /** "Remove" a domain (owners). */
    async removeDomain(actor: Actor, input: string): Promise<void> {
      requireOwner(actor);
      const domain = normalizeDomain(input) ?? '';
      await requireWritable(store.repos, actor);
      const now = clock.now();
      requireConfirmed(actor, now);
      const wasVerified = await store.transaction(async (repos) => {
        const org = await organization(repos, actor.orgId);
        const connection = await repos.sso.findConnection(actor.orgId);
        const domains = await repos.sso.listDomains(actor.orgId);
        const row = domains.find((d) => d.domain === domain);
        if (!row) throw errors.notFound('domain');
        if (connection?.required_at != null && row.verified_at !== null && domains.filter((d) => d.verified_at !== null).length === 1) {
          throw errors.conflict('Single sign-on is required: stop requiring it before you remove the last verified domain.');
        }
        await repos.sso.deleteDomain(actor.orgId, domain);
        await recordAudit(repos, actor, { action: 'sso.domain_removed', target: orgTarget(org), changes: { domain: { old: domain, new: null } }, at: now });
        return row.verified_at !== null;
      });
      if (wasVerified) await mailOwnersOfChange(actor, [`removed the verified domain ${domain}`]);
    },

    /**
     * "Require single sign-on" (owner): offered only after a verified domain and a successful test. API keys are
     * credentials of their own and keep working, unless the owner asks to revoke those of the members it binds
     * (security review F6): then they are revoked in the same transaction, and answer 401 on every instance.
     */
    async setRequired(actor: Actor, required: boolean, options: { revokeKeys?: boolean } = {}): Promise<{ revokedKeys: number }> {
      requireOwner(actor);
      await requireWritable(store.repos, actor);
      const now = clock.now();
      requireConfirmed(actor, now);
      const result = await store.transaction(async (repos) => {
        const org = await organization(repos, actor.orgId);
        const connection = await repos.sso.findConnection(actor.orgId);
        const domains = await repos.sso.listDomains(actor.orgId);
        if (required) {
          const blocked = requireBlockedBy(connection, domains);
          if (blocked) throw new DomainError(409, 'sso_not_ready', blocked);
        } else if (!connection) {
          return { changed: false, revoked: [] as string[] };
        }
        const changed = (connection!.required_at !== null) !== required;
        if (changed) {
          await repos.sso.setRequired(actor.orgId, required ? now : null);
          await recordAudit(repos, actor, { action: required ? 'sso.required' : 'sso.not_required', target: orgTarget(org), changes: { sso_required: { old: !required, new: required } }, at: now });
        }
        const revoked: string[] = [];
        if (required && options.revokeKeys) {
          for (const key of await keysOfBoundMembers(repos, actor.orgId, domains)) {
            const row = await repos.apiKeys.revoke(actor.orgId, key.id, now);
            if (!row) continue;
            revoked.push(row.id);
            await recordAudit(repos, actor, { action: 'api_key.revoked', target: keyTarget(row), changes: { reason: { old: null, new: 'sso_required' } }, at: now });
          }
        }
        return { changed, revoked };
      });
      for (const keyId of result.revoked) await authEvents.keyRevoked(keyId);
      const words = [
        ...(result.changed ? [required ? 'required single sign-on of members whose email is in a verified domain' : 'stopped requiring single sign-on'] : []),
        ...(result.revoked.length > 0 ? [`revoked ${result.revoked.length} API ${result.revoked.length === 1 ? 'key' : 'keys'} of members who must sign in with single sign-on`] : []),
      ];
      await mailOwnersOfChange(actor, words);
      return { revokedKeys: result.revoked.length };
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
      const domain = emailDomain(invited.email_normalized);
      const [connection, domainRow] = await Promise.all([store.repos.sso.findConnection(invitation.org_id), domain ? store.repos.sso.findDomain(invitation.org_id, domain) : undefined]);
      if (!connection || domainRow?.verified_at == null) {
        throw new DomainError(409, 'sso_not_configured', 'This organisation does not sign in with single sign-on for your address: choose a password instead.');
      }
      return begin(connection, 'invitation', bindingOf(browserSecret), { userId: invited.id, invitationId: invitation.id, loginHint: invited.email });
    },

    /** Of the given members, those linked at the organisation's provider (the members table; admins and owners). */
    async linkedMembers(actor: Actor, userIds: readonly string[]): Promise<Set<string>> {
      if (actor.type === 'user' && actor.role !== 'admin' && actor.role !== 'owner') return new Set();
      const connection = await store.repos.sso.findConnection(actor.orgId);
      return connection ? store.repos.sso.identitiesOfUsers(actor.orgId, connection.issuer, userIds) : new Set();
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
          await mailLink(linked.pending);
          return { kind: 'linked', claims, already: linked.already, next: attempt.next };
        }
        case 'invitation': {
          if (attempt.invitation_id === null || attempt.user_id === null) throw ssoFailed('this invitation round trip is incomplete. Start again');
          const accepted = await acceptInvitation(connection, attempt.invitation_id, attempt.user_id, claims, context, now);
          await authEvents.userChanged(attempt.user_id);
          await mailLink(accepted.pending);
          return { kind: 'session', session: accepted.session, next: null };
        }
        case 'sign_in': {
          const signedInNow = await store.transaction(async (repos) => {
            const org = await repos.organizations.findForShare(attempt.org_id);
            if (!org || org.state === 'deleting') throw ssoFailed('the organisation is being deleted');
            const { user, pending } = await memberFor(repos, connection, claims, context, now);
            return { session: await sessions.start(repos, user, context, 'sso'), pending };
          });
          await mailLink(signedInNow.pending);
          return { kind: 'session', session: signedInNow.session, next: attempt.next };
        }
      }
    },

    /**
     * The worker's daily re-check of verified domains: a record found clears a flag; a missing one flags the
     * domain, and after 7 days missing it is no longer verified (its members sign in as before, and it can be
     * verified again, here or by another organisation).
     */
    async recheckDomains(limit = 50): Promise<{ checked: number; flagged: number; unverified: number }> {
      const now = clock.now();
      const due = await store.repos.sso.dueForCheckAcrossOrgs(now - DOMAIN_RECHECK_MS, limit);
      let flagged = 0;
      let unverified = 0;
      for (const row of due) {
        let found: string[];
        try {
          found = await lookup(`${TXT_PREFIX}.${row.domain}`);
        } catch (error) {
          // Not answering is not an answer: try again at the next pass, tomorrow.
          log.warn({ domain: row.domain, err: (error as Error).message }, 'single sign-on: could not re-check a domain');
          await store.repos.sso.recordCheck(row.org_id, row.domain, { last_checked_at: now, missing_since: row.missing_since, verified_at: row.verified_at });
          continue;
        }
        if (found.includes(`${TXT_VALUE_PREFIX}${row.token}`)) {
          await store.repos.sso.recordCheck(row.org_id, row.domain, { last_checked_at: now, missing_since: null, verified_at: row.verified_at });
          continue;
        }
        const missingSince = row.missing_since ?? now;
        if (now - missingSince < DOMAIN_GRACE_MS) {
          if (row.missing_since === null) flagged++;
          await store.repos.sso.recordCheck(row.org_id, row.domain, { last_checked_at: now, missing_since: missingSince, verified_at: row.verified_at });
          continue;
        }
        unverified++;
        await store.transaction(async (repos) => {
          await repos.sso.recordCheck(row.org_id, row.domain, { last_checked_at: now, missing_since: null, verified_at: null });
          const org = await repos.organizations.findById(row.org_id);
          if (org) {
            await recordAudit(repos, { type: 'system', orgId: row.org_id, context: { source: 'system', ip: null, userAgent: null, requestId: null } }, {
              action: 'sso.domain_unverified',
              target: orgTarget(org),
              changes: { domain: { old: row.domain, new: null } },
              at: now,
            });
          }
        });
      }
      if (flagged + unverified > 0) log.warn({ flagged, unverified }, 'single sign-on: domains whose verification record is missing');
      return { checked: due.length, flagged, unverified };
    },

    /** Housekeeping: round trips nobody finished. */
    async prune(): Promise<number> {
      return store.repos.sso.deleteExpiredAttempts(clock.now(), 1000);
    },
  };
}

/** Owners and admins the requirement binds (a verified domain) who have not linked their account at this provider. */
async function unlinkedAdmins(repos: Repositories, orgId: string, issuer: string, domains: readonly SsoDomainRow[]): Promise<string[]> {
  const verified = new Set(domains.filter((d) => d.verified_at !== null).map((d) => d.domain));
  const admins = (await repos.users.listActive(orgId)).filter((user) => (user.role === 'owner' || user.role === 'admin') && verified.has(emailDomain(user.email_normalized) ?? ''));
  const linked = await repos.sso.identitiesOfUsers(orgId, issuer, admins.map((user) => user.id));
  return admins.filter((user) => !linked.has(user.id)).map((user) => user.name ?? user.email);
}

/**
 * The live API keys of the members "Require single sign-on" binds: active, not owners (break glass), with an
 * e-mail in a verified domain, decided by the same e-mail rule as the sign-in gate.
 */
async function keysOfBoundMembers(repos: Repositories, orgId: string, domains: readonly SsoDomainRow[]) {
  const verified = new Set(domains.filter((d) => d.verified_at !== null).map((d) => d.domain));
  if (verified.size === 0) return [];
  const bound = (await repos.users.listActive(orgId)).filter((user) => user.role !== 'owner' && verified.has(emailDomain(user.email_normalized) ?? ''));
  return repos.apiKeys.liveForUsers(orgId, bound.map((user) => user.id));
}

export type SsoService = ReturnType<typeof createSsoService>;

function bindingOf(browserSecret: string): string {
  return sha256Hex(`sso:${browserSecret}`);
}

/** The provider's `name`, kept when it fits the account rules; otherwise none (the member can set one). */
function cleanName(name: string | null): string | null {
  const trimmed = name?.trim() ?? '';
  return nameProblems('name', trimmed).length === 0 ? trimmed : null;
}
