import { errors, fieldError } from '../../errors.js';
import { isUniqueViolation } from '../../db/database.js';
import { newId } from '../../lib/ids.js';
import { toIso, type Clock } from '../../lib/time.js';
import type { Role } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { isValidEmail } from '../../lib/email.js';
import { check, nameProblems } from '../identity/account-rules.js';
import { cliActor, inOrg, type Actor } from '../access/actor.js';
import { type ApiKeysService, type CreatedKey, type KeySummary, summarizeKey } from '../identity/api-keys-service.js';
import { createdChanges, recordAudit, userTarget } from '../audit/audit-record.js';
import type { AuthEvents } from '../../db/auth-events.js';
import { ROLES } from '../../schemas/access.js';
import { normalizeEmail, toUser } from '../identity/users-view.js';
import { type User } from '../../schemas/users.js';
import { requireWritable } from '../access/workspace.js';

export type { CreatedKey, KeySummary } from '../identity/api-keys-service.js';

export interface Organization {
  id: string;
  name: string;
  created_at: string;
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
  check(nameProblems(field, name));
  return name;
}

export interface AdminServiceDeps {
  store: Store;
  clock: Clock;
  authEvents: AuthEvents;
  apiKeys: ApiKeysService;
}

/**
 * Operator tasks (organisations, members added directly, API keys for any user). The CLI exposes them;
 * the tests use them to set up a world. They act as the `cli` actor and are audited like any change.
 */
export function createAdminService({ store, clock, authEvents, apiKeys }: AdminServiceDeps) {
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
        const actor = cliActor(orgId);
        await repos.organizations.insert({ id: orgId, name, created_at: now });
        await recordAudit(repos, actor, { action: 'organization.created', target: { type: 'organization', id: orgId, label: name }, at: now });
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
        await recordAudit(repos, actor, {
          action: 'member.added',
          target: userTarget(owner),
          changes: createdChanges({ role: 'owner', status: 'active' }),
          at: now,
        });
        const apiKey = await apiKeys.issue(repos, actor, owner.id, 'full', 'owner key');
        return { organization: { id: orgId, name, created_at: toIso(now) }, owner: toUser(owner), api_key: apiKey };
      });
    },

    /** An active member added directly by an operator (no invitation). */
    async addUser(input: { orgId: string; email: string; role: string; name?: string }, actor: Actor = cliActor(input.orgId)): Promise<User> {
      await requireWritable(store.repos, inOrg(actor, input.orgId));
      const email = checkEmail(input.email);
      const role = checkRole(input.role);
      const name = checkName(input.name, 'name');
      const now = clock.now();
      const result = await store.transaction(async (repos) => {
        if (!(await repos.organizations.findById(input.orgId))) throw errors.notFound('organization');
        const existing = await repos.users.findByEmail(input.orgId, normalizeEmail(email));
        if (existing?.status === 'active') throw errors.conflict('this e-mail belongs to an active member');
        if (existing?.status === 'suspended') throw errors.conflict('this e-mail belongs to a suspended member: the identity provider reactivates them');
        if (existing) {
          // An invited user added directly becomes active; the pending invitation link dies.
          await repos.invitations.closeOpenForUser(input.orgId, existing.id, now);
          const updated = await repos.users.update(input.orgId, existing.id, { role, status: 'active', name: name ?? existing.name, updated_at: now });
          await recordAudit(repos, actor, {
            action: 'member.added',
            target: userTarget(existing),
            changes: { role: { old: existing.role, new: role }, status: { old: existing.status, new: 'active' } },
            at: now,
          });
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
          await recordAudit(repos, actor, {
            action: 'member.added',
            target: userTarget(row),
            changes: createdChanges({ role, status: 'active' }),
            at: now,
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

    /** A key for any active user, from the operator's command line. */
    async createKey(input: { userId: string; scope: string; name?: string | undefined; expiresAt?: number | null }): Promise<CreatedKey> {
      return apiKeys.create(cliActor(''), input);
    },

    /** Allowed while the organisation is read-only (DASHBOARD 10), as every revocation is. */
    async revokeKey(keyId: string): Promise<KeySummary> {
      return apiKeys.revoke(cliActor(''), keyId);
    },

    async listKeys(orgId: string): Promise<KeySummary[]> {
      if (!(await store.repos.organizations.findById(orgId))) throw errors.notFound('organization');
      return (await store.repos.apiKeys.listByOrg(orgId)).map(summarizeKey);
    },
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
