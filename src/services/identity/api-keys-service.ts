import type { FastifyBaseLogger } from 'fastify';
import { requireConfirmed } from './confirmation.js';
import { keyExpiryMail } from '../../mail/key-expiry-mail.js';
import type { Mailer } from '../../mail/mailer.js';
import type { ApiKeyRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import type { Repositories } from '../../db/repositories/index.js';
import { errors, fieldError } from '../../errors.js';
import { sha256Hex } from '../../lib/crypto.js';
import { newId, randomToken } from '../../lib/ids.js';
import { BLANK_MESSAGE, isBlank } from '../../lib/text.js';
import { toIso, type Clock } from '../../lib/time.js';
import { authorize, inOrg, type Actor } from '../access/actor.js';
import { toPage } from '../../db/repositories/executor.js';
import { decodeCursor, pageResult, type PageRequest, type PageResult } from '../shared/pagination.js';
import { createdChanges, keyTarget, recordAudit } from '../audit/audit-record.js';
import { createLastUsed } from '../shared/last-used.js';
import type { AuthEvents } from '../../db/auth-events.js';
import { formatScope, parseScope, scopeCovers } from '../access/permissions.js';
import { SCOPE_HELP } from '../../schemas/access.js';
import { requireWritable } from '../access/workspace.js';

export interface CreatedKey {
  id: string;
  /** The secret: returned once, here, and never stored. */
  key: string;
  scope: string;
  name: string | null;
  user_id: string;
  organization_id: string;
  created_at: string;
  expires_at: string | null;
}

export interface KeySummary {
  id: string;
  prefix: string;
  scope: string;
  name: string | null;
  user_id: string;
  organization_id: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  /** Null: the key never expires. */
  expires_at: string | null;
}

/** A key as the dashboard lists it: with its owner's e-mail. */
export interface KeyListItem extends KeySummary {
  owner_email: string;
  /** How the dashboard names the owner; their e-mail when they have no name. */
  owner_name: string | null;
}


/** `last_used_at` is written at most this often per key (DASHBOARD 4). */
export const LAST_USED_INTERVAL_MS = 60_000;

export function summarizeKey(row: ApiKeyRow): KeySummary {
  return {
    id: row.id,
    prefix: row.key_prefix,
    scope: row.scope,
    name: row.name,
    user_id: row.user_id,
    organization_id: row.org_id,
    created_at: toIso(row.created_at),
    revoked_at: row.revoked_at === null ? null : toIso(row.revoked_at),
    last_used_at: row.last_used_at === null ? null : toIso(row.last_used_at),
    expires_at: row.expires_at === null ? null : toIso(row.expires_at),
  };
}

const DAY_MS = 86_400_000;
/** The organisation's "Maximum API key lifetime" choices, in days (CONTRACT 16); null is none. */
export const KEY_LIFETIME_LIMITS = [30, 90, 365] as const;
/** The dashboard's "Expires" choices, in days; null is "Never". */
export const KEY_EXPIRY_CHOICES = [7, 30, 90, 365] as const;

/**
 * A key's end, checked against now and the organisation's maximum lifetime (CONTRACT 16): 400 naming
 * `expires_at` for a past time, or for no end or a later one than the maximum allows.
 */
export function checkKeyExpiry(expiresAt: number | null, maxLifetimeDays: number | null, now: number): number | null {
  if (expiresAt !== null && expiresAt <= now) throw fieldError('expires_at', 'must be in the future');
  if (maxLifetimeDays === null) return expiresAt;
  const latest = now + maxLifetimeDays * DAY_MS;
  if (expiresAt === null) throw fieldError('expires_at', `is required: this organisation's API keys expire within ${maxLifetimeDays} days`);
  if (expiresAt > latest) throw fieldError('expires_at', `must be at most ${maxLifetimeDays} days from now (the organisation's maximum API key lifetime)`);
  return expiresAt;
}

function checkKeyName(name: string | null | undefined): string | null {
  if (name === undefined || name === null || name === '') return null;
  if ([...name].length > 255) throw fieldError('name', 'must be at most 255 characters');
  // No name at all is allowed (the key is "Unnamed"); a name nobody can see is not (CONTRACT 4).
  if (isBlank(name)) throw fieldError('name', BLANK_MESSAGE);
  return name;
}

export interface ApiKeysServiceDeps {
  store: Store;
  clock: Clock;
  authEvents: AuthEvents;
  /** Failures of the background last-used write; it never fails a request. */
  onTouchError?: (err: unknown) => void;
  /** For the "expires in 7 days" notices; without one, none are sent. */
  notices?: { mailer: Mailer; publicBaseUrl: string; log: Pick<FastifyBaseLogger, 'error'> };
}

/** How long before its expiry a key's user is mailed (CONTRACT 16). */
export const EXPIRY_NOTICE_MS = 7 * 86_400_000;


/**
 * API keys, whichever door asks: a user creates keys for themselves; admins and owners see and revoke every
 * key of the organisation; the CLI (an operator) acts for any active user. A key's effective permission is
 * decided at each request from its scope and its user's live role, so nothing here grants more than the role.
 */
export function createApiKeysService({ store, clock, authEvents, onTouchError, notices }: ApiKeysServiceDeps) {
  const lastUsed = createLastUsed({ now: () => clock.now(), intervalMs: LAST_USED_INTERVAL_MS, write: (orgId, keyId, at) => store.repos.apiKeys.touch(orgId, keyId, at), onError: onTouchError });

  /** Inside the caller's transaction: a new `wsk_` key with 256 random bits, only its SHA-256 stored. */
  async function issue(repos: Repositories, actor: Actor, userId: string, scopeText: string, name: string | null, wantedExpiry: number | null = null): Promise<CreatedKey> {
    const scope = parseScope(scopeText);
    if (!scope) throw fieldError('scope', `must be ${SCOPE_HELP}`);
    const now = clock.now();
    const org = await repos.organizations.findById(actor.orgId);
    const expiresAt = checkKeyExpiry(wantedExpiry, org?.max_key_lifetime_days ?? null, now);
    const key = `wsk_${randomToken(32)}`;
    const row = await repos.apiKeys.insert({
      id: newId('key'),
      org_id: actor.orgId,
      user_id: userId,
      name,
      key_hash: sha256Hex(key),
      key_prefix: key.slice(0, 12),
      scope: formatScope(scope),
      created_at: now,
      revoked_at: null,
      expires_at: expiresAt,
    });
    await recordAudit(repos, actor, {
      action: 'api_key.created',
      target: keyTarget(row),
      changes: createdChanges({ name: row.name, scope: row.scope, user_id: userId, expires_at: expiresAt === null ? null : toIso(expiresAt) }),
      at: now,
    });
    return {
      id: row.id,
      key,
      scope: row.scope,
      name: row.name,
      user_id: userId,
      organization_id: actor.orgId,
      created_at: toIso(now),
      expires_at: expiresAt === null ? null : toIso(expiresAt),
    };
  }

  const isManager = (actor: Actor) => actor.type !== 'user' || actor.role === 'owner' || actor.role === 'admin';

  return {
    issue,

    /**
     * A signed-in user's key is always their own; an operator names the user (any organisation: the
     * actor is moved into the user's).
     */
    /** `expiresAt`: ms since the epoch, or null (never); the organisation's maximum lifetime may require one. */
    async create(actor: Actor, input: { scope: string; name?: string | null | undefined; userId?: string | undefined; expiresAt?: number | null | undefined }): Promise<CreatedKey> {
      // A person's organisation is known now (403 before 400); an operator's is the named user's, below.
      if (actor.type === 'user') {
        authorize(actor, 'api_keys', 'create');
        if (input.userId !== undefined && input.userId !== actor.userId) throw errors.forbidden('a key is created for its own user only');
        // Through the API, a key never creates a key wider than itself (a session has full scope).
        const wanted = parseScope(input.scope);
        if (actor.keyId && wanted && !scopeCovers(actor.scope, wanted)) throw errors.forbidden(`this API key (scope ${formatScope(actor.scope)}) cannot create a key wider than itself`);
        await requireWritable(store.repos, actor);
        requireConfirmed(actor, clock.now());
      }
      const name = checkKeyName(input.name);
      return store.transaction(async (repos) => {
        const userId = actor.type === 'user' ? actor.userId : input.userId;
        if (!userId) throw fieldError('user', 'is required');
        const user = actor.type === 'user' ? await repos.users.findById(actor.orgId, userId) : await repos.users.findByIdAnyOrg(userId);
        if (!user) throw errors.notFound('user');
        const owner = inOrg(actor, user.org_id);
        if (actor.type !== 'user') await requireWritable(repos, owner);
        if (user.status !== 'active') throw errors.conflict('API keys belong to active users only');
        return issue(repos, owner, user.id, input.scope, name, input.expiresAt ?? null);
      });
    },

    /** How the audit log names the keys of its page: "Reporting key", or its prefix when unnamed. */
    async names(orgId: string, keyIds: readonly string[]): Promise<Map<string, string>> {
      const rows = await store.repos.apiKeys.labels(orgId, [...new Set(keyIds)]);
      return new Map(rows.map((r) => [r.id, r.name ?? `${r.key_prefix}…`]));
    },

    async listPage(actor: Actor, page: PageRequest): Promise<PageResult<KeyListItem>> {
      authorize(actor, 'api_keys', 'read');
      const before = decodeCursor(page.cursor);
      const rows = await store.repos.apiKeys.pageWithOwners(actor.orgId, isManager(actor) ? null : (actor as { userId: string }).userId, page.limit + 1, before);
      return pageResult(toPage(rows, page.limit), (row) => ({ ...summarizeKey(row), owner_email: row.owner_email, owner_name: row.owner_name }));
    },

    /** The actor's own keys; admins, owners and operators see every key of the organisation. */
    async list(actor: Actor): Promise<KeyListItem[]> {
      const rows = await store.repos.apiKeys.listWithOwners(actor.orgId, isManager(actor) ? null : (actor as { userId: string }).userId);
      return rows.map((row) => ({ ...summarizeKey(row), owner_email: row.owner_email, owner_name: row.owner_name }));
    },

    /**
     * Revokes at once: the key is refused from the next request on, on every instance. Allowed while the
     * workspace is read-only (DASHBOARD 10): taking access away is never refused.
     */
    async revoke(actor: Actor, keyId: string): Promise<KeySummary> {
      authorize(actor, 'api_keys', 'delete');
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        const existing = actor.type === 'user' ? await repos.apiKeys.findById(actor.orgId, keyId) : await repos.apiKeys.findByIdAnyOrg(keyId);
        // Another member's key is as invisible to a non-manager as another organisation's.
        if (!existing || (actor.type === 'user' && !isManager(actor) && existing.user_id !== actor.userId)) throw errors.notFound('API key');
        const revoked = await repos.apiKeys.revoke(existing.org_id, keyId, now);
        if (!revoked) return existing; // already revoked: nothing changes, nothing is audited
        await recordAudit(repos, inOrg(actor, existing.org_id), { action: 'api_key.revoked', target: keyTarget(revoked), at: now });
        return revoked;
      });
      await authEvents.keyRevoked(keyId);
      return summarizeKey(row);
    },

    /**
     * Notes that a key was used. Called on the request path, so it only checks a map; the write runs after
     * the response is on its way, at most once a minute per key and process.
     */
    touch: lastUsed.touch,

    /**
     * Mails the user of every live key that expires within 7 days and was not mailed yet (the worker's
     * lifecycle job). Each key is marked first, so two workers never both send; a failed send is logged.
     * Returns how many were sent.
     */
    async sendExpiryNotices(limit = 100): Promise<number> {
      if (!notices) return 0;
      const now = clock.now();
      let sent = 0;
      for (const key of await store.repos.apiKeys.expiringUnmailed(now, now + EXPIRY_NOTICE_MS, limit)) {
        if (!(await store.repos.apiKeys.markExpiryMailed(key.org_id, key.id, now))) continue;
        const mail = keyExpiryMail({
          to: key.email,
          organizationName: key.organization_name,
          keyLabel: key.name ?? `${key.key_prefix}…`,
          expiresAt: new Date(key.expires_at!),
          keysUrl: `${notices.publicBaseUrl}/dashboard/api-keys`,
        });
        try {
          await notices.mailer.send(mail);
          sent++;
        } catch (err) {
          notices.log.error({ keyId: key.id, orgId: key.org_id, err: { message: (err as Error).message } }, 'the API key expiry notice could not be sent');
        }
      }
      return sent;
    },

    /** Waits for last-used writes under way (shutdown: before the database closes). */
    flush: lastUsed.flush,
  };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;
