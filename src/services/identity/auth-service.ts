import { sha256Hex } from '../../lib/crypto.js';
import type { Store } from '../../db/store.js';
import type { AppResource } from '../../db/schema.js';
import { ACCESS_TOKEN_PREFIX } from '../apps/app-token-prefixes.js';
import { scopeFromOauth } from '../apps/app-scopes.js';
import { parseScope, type Principal } from '../access/permissions.js';

const BEARER = /^bearer[ \t]+([^\s]+)[ \t]*$/i;

/** Extracts the token of `Authorization: Bearer <token>`; null for a missing or malformed header. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = BEARER.exec(header);
  return match ? match[1]! : null;
}

export interface AuthService {
  /** The key's principal, or null for an unknown, revoked or orphaned key. */
  authenticate(token: string): Promise<Principal | null>;
  /**
   * The key's principal when it can be answered at once (a cache hit that is known to be current), else
   * undefined: then `authenticate` decides. Never answers null, so a refusal always takes the one path.
   */
  authenticateNow?(token: string): Principal | undefined;
}

/** The database lookup, also by hash: a cache in front has already hashed the token for its own key. */
export interface KeyLookup extends AuthService {
  /** `app`: the token is an OAuth access token (`wsa_`), looked up among the authorization server's tokens. */
  authenticateHash(keyHash: string, app?: boolean): Promise<Principal | null>;
}

/** An OAuth access token (CONTRACT 17) rather than an API key: the prefix says which table holds its hash. */
export const isAppToken = (token: string) => token.startsWith(ACCESS_TOKEN_PREFIX);

/**
 * Keys are looked up by the SHA-256 of the presented secret: the database compares hashes of a
 * 160-bit-plus random value, so no timing signal about a stored key's bytes reaches the caller.
 * Every call reads the key, its user's role and status and its organisation's state (one indexed query);
 * the principal cache in front of it (cached-auth-service.ts) decides when a call can be skipped.
 */
export function createAuthService(store: Store): KeyLookup {
  /**
   * An access token acts as an API key of its person would (CONTRACT 17): their live role and status, the
   * organisation's state, the consented scopes; its grant stands where a key's id would (the rate-limit
   * bucket, the cache's invalidation by id), so revoking the grant ends every token it issued.
   */
  async function appPrincipal(tokenHash: string): Promise<Principal | null> {
    const row = await store.repos.oauth.findAccessPrincipal(tokenHash);
    if (!row || row.user_status !== 'active' || row.org_state === 'deleting') return null;
    // The owner turned "Members may connect apps" off: members' and viewers' apps stop, not only new ones.
    if (row.members_may_connect_apps !== 1 && row.role !== 'owner' && row.role !== 'admin') return null;
    const payload = JSON.parse(row.payload) as { scope?: string; aud?: string };
    const resource: AppResource | null = payload.aud?.endsWith('/v1') ? 'v1' : payload.aud?.endsWith('/mcp') ? 'mcp' : null;
    if (resource === null) return null;
    return {
      keyId: row.grant_id,
      orgId: row.org_id,
      userId: row.user_id,
      email: row.email,
      role: row.role,
      scope: scopeFromOauth(payload.scope ?? ''),
      workspace: { state: row.org_state, deletionAt: row.deletion_at },
      expiresAt: row.expires_at,
      app: { name: row.client_name, resource },
    };
  }

  async function authenticateHash(keyHash: string, app = false): Promise<Principal | null> {
    if (app) return appPrincipal(keyHash);
    const row = await store.repos.apiKeys.findPrincipalByHash(keyHash);
    // From the moment deletion begins, the organisation's keys are dead.
    if (!row || row.user_status !== 'active' || row.org_state === 'deleting') return null;
    const scope = parseScope(row.scope);
    if (!scope) return null;
    return {
      keyId: row.key_id,
      orgId: row.org_id,
      userId: row.user_id,
      email: row.email,
      role: row.role,
      scope,
      workspace: { state: row.org_state, deletionAt: row.deletion_at },
      expiresAt: row.expires_at,
      app: null,
    };
  }

  return {
    async authenticate(token) {
      if (token.length > 512) return null;
      return authenticateHash(sha256Hex(token), isAppToken(token));
    },
    authenticateHash,
  };
}
