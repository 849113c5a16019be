import { DomainError, errors, fieldError } from '../errors.js';
import { isUniqueViolation } from '../db/database.js';
import { sha256Hex } from '../lib/crypto.js';
import { newId, randomToken } from '../lib/ids.js';
import { toIso, type Clock } from '../lib/time.js';
import type { Role } from '../db/schema.js';
import type { Store } from '../db/store.js';
import type { Repositories } from '../db/repositories/index.js';
import { isValidEmail } from '../lib/email.js';
import type { AuthEvents } from './auth-events.js';
import { formatScope, parseScope, ROLES } from './permissions.js';
import { normalizeEmail, toUser, type User } from './users-view.js';

export interface Organization {
  id: string;
  name: string;
  created_at: string;
}

export interface CreatedKey {
  id: string;
  key: string;
  scope: string;
  name: string | null;
  user_id: string;
  organization_id: string;
  created_at: string;
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
}


function checkEmail(email: string): string {
  if (!isValidEmail(email)) throw fieldError('email', 'must be a valid e-mail address');
  return email;
}

function checkRole(role: string): Role {
  if (!ROLES.includes(role as Role)) throw fieldError('role', `must be one of: ${ROLES.join(', ')}`);
  return role as Role;
}

function checkName(name: string | undefined, field: string): string | null {
  if (name === undefined) return null;
  const length = [...name].length;
  if (length < 1 || length > 255) throw fieldError(field, 'must be 1 to 255 characters');
  return name;
}

/**
 * Operator tasks the dashboard would do (organisations, members added directly, API keys). The CLI
 * exposes them; the tests use them to set up a world.
 */
export function createAdminService({ store, clock, authEvents }: { store: Store; clock: Clock; authEvents: AuthEvents }) {
  async function issueKey(repos: Repositories, orgId: string, userId: string, scopeText: string, name: string | null): Promise<CreatedKey> {
    const scope = parseScope(scopeText);
    if (!scope) throw fieldError('scope', 'must be read, full, or a list of projects, users, webhooks (each optionally :read)');
    const key = `wsk_${randomToken(32)}`; // 256 random bits
    const now = clock.now();
    const row = await repos.apiKeys.insert({
      id: newId('key'),
      org_id: orgId,
      user_id: userId,
      name,
      key_hash: sha256Hex(key),
      key_prefix: key.slice(0, 12),
      scope: formatScope(scope),
      created_at: now,
      revoked_at: null,
    });
    return { id: row.id, key, scope: row.scope, name: row.name, user_id: userId, organization_id: orgId, created_at: toIso(now) };
  }

  return {
    async createOrganization(input: { name: string; ownerEmail: string; ownerName?: string }): Promise<{
      organization: Organization;
      owner: User;
      api_key: CreatedKey;
    }> {
      const name = checkName(input.name, 'name')!;
      const email = checkEmail(input.ownerEmail);
      const ownerName = checkName(input.ownerName, 'owner-name');
      const now = clock.now();
      return store.transaction(async (repos) => {
        const orgId = newId('org');
        await repos.organizations.insert({ id: orgId, name, created_at: now });
        const owner = await repos.users.insert({
          id: newId('user'),
          org_id: orgId,
          email,
          email_normalized: normalizeEmail(email),
          name: ownerName,
          role: 'owner',
          status: 'active',
          password_hash: null,
          created_at: now,
          updated_at: now,
        });
        const apiKey = await issueKey(repos, orgId, owner.id, 'full', 'owner key');
        return { organization: { id: orgId, name, created_at: toIso(now) }, owner: toUser(owner), api_key: apiKey };
      });
    },

    async addUser(input: { orgId: string; email: string; role: string; name?: string }): Promise<User> {
      const email = checkEmail(input.email);
      const role = checkRole(input.role);
      const name = checkName(input.name, 'name');
      const now = clock.now();
      const result = await store.transaction(async (repos) => {
        if (!(await repos.organizations.findById(input.orgId))) throw errors.notFound('organization');
        const existing = await repos.users.findByEmail(input.orgId, normalizeEmail(email));
        if (existing?.status === 'active') throw errors.conflict('this e-mail belongs to an active member');
        if (existing) {
          // An invited user added directly becomes active; the pending invitation link dies.
          await repos.invitations.closeOpenForUser(input.orgId, existing.id, now);
          const updated = await repos.users.update(input.orgId, existing.id, { role, status: 'active', name: name ?? existing.name, updated_at: now });
          return { user: toUser(updated!), reactivated: true };
        }
        try {
          const row = await repos.users.insert({
            id: newId('user'),
            org_id: input.orgId,
            email,
            email_normalized: normalizeEmail(email),
            name,
            role,
            status: 'active',
            password_hash: null,
            created_at: now,
            updated_at: now,
          });
          return { user: toUser(row), reactivated: false };
        } catch (err) {
          if (isUniqueViolation(err)) throw errors.conflict('this e-mail belongs to a member already');
          throw err;
        }
      });
      // Announced after commit: other instances must not re-read the old row while we wait for them.
      if (result.reactivated) await authEvents.userChanged(result.user.id);
      return result.user;
    },

    async createKey(input: { userId: string; scope: string; name?: string }): Promise<CreatedKey> {
      return store.transaction(async (repos) => {
        const user = await repos.users.findByIdAnyOrg(input.userId);
        if (!user) throw errors.notFound('user');
        if (user.status !== 'active') throw new DomainError(409, 'conflict', 'API keys belong to active users only');
        return issueKey(repos, user.org_id, user.id, input.scope, input.name ?? null);
      });
    },

    async revokeKey(keyId: string): Promise<KeySummary> {
      const existing = await store.repos.apiKeys.findByIdAnyOrg(keyId);
      if (!existing) throw errors.notFound('API key');
      const revoked = (await store.repos.apiKeys.revoke(existing.org_id, keyId, clock.now())) ?? existing;
      await authEvents.keyRevoked(keyId);
      return summarize(revoked);
    },

    async listKeys(orgId: string): Promise<KeySummary[]> {
      if (!(await store.repos.organizations.findById(orgId))) throw errors.notFound('organization');
      return (await store.repos.apiKeys.listByOrg(orgId)).map(summarize);
    },
  };
}

function summarize(row: { id: string; key_prefix: string; scope: string; name: string | null; user_id: string; org_id: string; created_at: number; revoked_at: number | null }): KeySummary {
  return {
    id: row.id,
    prefix: row.key_prefix,
    scope: row.scope,
    name: row.name,
    user_id: row.user_id,
    organization_id: row.org_id,
    created_at: toIso(row.created_at),
    revoked_at: row.revoked_at === null ? null : toIso(row.revoked_at),
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
