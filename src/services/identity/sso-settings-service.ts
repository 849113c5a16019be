import type { FastifyBaseLogger } from 'fastify';
import { isUniqueViolation } from '../../db/database.js';
import type { Repositories } from '../../db/repositories/index.js';
import type { SsoConnectionRow, SsoDomainRow, SsoRole, UserRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { DomainError, errors, fieldError } from '../../errors.js';
import { emailDomain, normalizeDomain } from '../../lib/email-domain.js';
import { newId, randomToken } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { Clock } from '../../lib/time.js';
import { DnsUnavailableError, type TxtLookup } from '../../sso/dns-txt.js';
import { OidcError, type OidcClient } from '../../sso/oidc-client.js';
import { actingRole, type Actor } from '../access/actor.js';
import { keyTarget, recordAudit, type AuditTarget } from '../audit/audit-record.js';
import type { AuthEvents } from '../../db/auth-events.js';
import { requireConfirmed } from './confirmation.js';
import type { SsoNotices } from './sso-notices.js';
import { organizationOf, requireAdminView, requireOwner } from './sso-rules.js';
import { requireWritable } from '../access/workspace.js';

/** Verified domains are looked up again after this long. */
export const DOMAIN_RECHECK_MS = 24 * 60 * 60 * 1000;
/** A verified domain whose record has been missing this long is no longer verified. */
export const DOMAIN_GRACE_MS = 7 * 24 * 60 * 60 * 1000;
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

export interface SaveConnectionInput {
  issuer: string;
  clientId: string;
  /** Empty keeps the stored secret, only while the issuer and client ID stay the same; required for a new one. */
  clientSecret: string;
  jit: boolean;
  defaultRole: string;
}

export interface SsoSettingsDeps {
  store: Store;
  clock: Clock;
  box: SecretBox;
  oidc: OidcClient;
  txt: TxtLookup;
  authEvents: AuthEvents;
  notices: SsoNotices;
  redirectUrl: string;
  log: Pick<FastifyBaseLogger, 'warn'>;
}

function orgTarget(org: { id: string; name: string }): AuditTarget {
  return { type: 'organization', id: org.id, label: org.name };
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

/**
 * Single sign-on's settings (DASHBOARD 12): the OpenID Connect connection, the e-mail domains it proves by DNS
 * (with the worker's daily re-check), and the requirement. Admins see them; only owners (and the operator) change
 * them, and every owner hears of each change (sso-notices.ts).
 */
export function createSsoSettingsService(deps: SsoSettingsDeps) {
  const { store, clock, box, oidc, txt, authEvents, notices, redirectUrl, log } = deps;

  /**
   * Every change here (after the owner check and the input's own): a writable workspace and a session confirmed in
   * the last 15 minutes. Returns the time it is made at.
   */
  async function confirmedChange(actor: Actor): Promise<number> {
    await requireWritable(store.repos, actor);
    const now = clock.now();
    requireConfirmed(actor, now);
    return now;
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
    async settings(actor: Actor): Promise<SsoSettingsView> {
      requireAdminView(actor);
      if (actor.type !== 'user') await organizationOf(store.repos, actor.orgId);
      const [connection, domains] = await Promise.all([store.repos.sso.findConnection(actor.orgId), store.repos.sso.listDomains(actor.orgId)]);
      const canChange = actingRole(actor) === 'owner';
      const bound = await boundPeople(store.repos, actor.orgId, domains);
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
        requiredMembersKeys: canChange ? (await keysOfBoundMembers(store.repos, actor.orgId, bound)).length : 0,
        unlinkedAdmins: connection ? await unlinkedAdmins(store.repos, actor.orgId, connection.issuer, bound) : [],
      };
    },

    /**
     * "Save connection" (owners): the issuer's discovery document is fetched and checked first; the secret is
     * sealed and never shown again, and never sent to another provider: a new issuer or client ID needs it
     * typed again. While single sign-on is required, the issuer and client stay as they are.
     */
    async saveConnection(actor: Actor, input: SaveConnectionInput): Promise<void> {
      requireOwner(actor);
      const now = await confirmedChange(actor);
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
        const org = await organizationOf(repos, actor.orgId);
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
      await notices.changed(actor, words);
    },

    /** "Delete connection" (owners): nobody signs in through it any more; the links stay, should it come back. */
    async deleteConnection(actor: Actor): Promise<void> {
      requireOwner(actor);
      const now = await confirmedChange(actor);
      const issuer = await store.transaction(async (repos) => {
        const org = await organizationOf(repos, actor.orgId);
        const connection = await repos.sso.findConnection(actor.orgId);
        if (!connection) throw errors.notFound('single sign-on connection');
        if (connection.required_at !== null) throw errors.conflict('Single sign-on is required: stop requiring it before you delete the connection.');
        await repos.sso.deleteConnection(actor.orgId);
        await recordAudit(repos, actor, { action: 'sso.connection_deleted', target: orgTarget(org), changes: { issuer: { old: connection.issuer, new: null } }, at: now });
        return connection.issuer;
      });
      await notices.changed(actor, [`deleted the connection to ${issuer}; nobody signs in through it until a connection is saved again`]);
    },

    /** "Add domain" (owners): the TXT record to publish. */
    async addDomain(actor: Actor, input: string): Promise<SsoDomainView> {
      requireOwner(actor);
      const domain = normalizeDomain(input);
      if (domain === null) throw fieldError('domain', 'must be a domain name such as example.com');
      const now = await confirmedChange(actor);
      return store.transaction(async (repos) => {
        const org = await organizationOf(repos, actor.orgId);
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
      await confirmedChange(actor);
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
          const org = await organizationOf(repos, actor.orgId);
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
      if (verified.newly) await notices.changed(actor, [`verified the domain ${domain}: the identity provider now vouches for addresses at ${domain}`]);
      return verified.view;
    },

    /** "Remove" a domain (owners). */
    async removeDomain(actor: Actor, input: string): Promise<void> {
      requireOwner(actor);
      const domain = normalizeDomain(input) ?? '';
      const now = await confirmedChange(actor);
      const wasVerified = await store.transaction(async (repos) => {
        const org = await organizationOf(repos, actor.orgId);
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
      if (wasVerified) await notices.changed(actor, [`removed the verified domain ${domain}`]);
    },

    /**
     * "Require single sign-on" (owner): offered only after a verified domain and a successful test. API keys are
     * credentials of their own and keep working, unless the owner asks to revoke those of the members it binds
     * (security review F6): then they are revoked in the same transaction, and answer 401 on every instance.
     */
    async setRequired(actor: Actor, required: boolean, options: { revokeKeys?: boolean } = {}): Promise<{ revokedKeys: number }> {
      requireOwner(actor);
      const now = await confirmedChange(actor);
      const result = await store.transaction(async (repos) => {
        const org = await organizationOf(repos, actor.orgId);
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
          for (const key of await keysOfBoundMembers(repos, actor.orgId, await boundPeople(repos, actor.orgId, domains))) {
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
      await notices.changed(actor, words);
      return { revokedKeys: result.revoked.length };
    },

    /** Of the given members, those linked at the organisation's provider (the members table; admins and owners). */
    async linkedMembers(actor: Actor, userIds: readonly string[]): Promise<Set<string>> {
      if (actor.type === 'user' && actor.role !== 'admin' && actor.role !== 'owner') return new Set();
      const connection = await store.repos.sso.findConnection(actor.orgId);
      return connection ? store.repos.sso.identitiesOfUsers(actor.orgId, connection.issuer, userIds) : new Set();
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

  };
}

/**
 * The active people "Require single sign-on" binds: those whose e-mail is in a verified domain, by the sign-in
 * gate's own rule (sessions-service.ts). Read once for the settings page's two questions below.
 */
async function boundPeople(repos: Repositories, orgId: string, domains: readonly SsoDomainRow[]): Promise<UserRow[]> {
  const verified = new Set(domains.filter((d) => d.verified_at !== null).map((d) => d.domain));
  if (verified.size === 0) return [];
  return (await repos.users.listActive(orgId)).filter((user) => verified.has(emailDomain(user.email_normalized) ?? ''));
}

/** Owners and admins among them who have not linked their account at this provider (they are never linked by e-mail). */
async function unlinkedAdmins(repos: Repositories, orgId: string, issuer: string, bound: readonly UserRow[]): Promise<string[]> {
  const admins = bound.filter((user) => user.role === 'owner' || user.role === 'admin');
  const linked = await repos.sso.identitiesOfUsers(orgId, issuer, admins.map((user) => user.id));
  return admins.filter((user) => !linked.has(user.id)).map((user) => user.name ?? user.email);
}

/** The live API keys of those who are not owners (owners keep theirs, for break glass). */
async function keysOfBoundMembers(repos: Repositories, orgId: string, bound: readonly UserRow[]) {
  return repos.apiKeys.liveForUsers(orgId, bound.filter((user) => user.role !== 'owner').map((user) => user.id));
}

export type SsoSettingsService = ReturnType<typeof createSsoSettingsService>;
