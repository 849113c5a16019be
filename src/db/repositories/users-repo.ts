import type { Insertable } from 'kysely';
import type { Role, UserRow, UsersTable, UserStatus } from '../schema.js';
import { toPage, type Page, type RepoContext } from './executor.js';

export function usersRepository({ db }: RepoContext) {
  return {
    async insert(row: Insertable<UsersTable>): Promise<UserRow> {
      return db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow();
    },

    async findById(orgId: string, userId: string): Promise<UserRow | undefined> {
      return db.selectFrom('users').selectAll().where('org_id', '=', orgId).where('id', '=', userId).executeTakeFirst();
    },

    async findByIds(orgId: string, userIds: readonly string[]): Promise<UserRow[]> {
      if (userIds.length === 0) return [];
      return db.selectFrom('users').selectAll().where('org_id', '=', orgId).where('id', 'in', userIds).execute();
    },

    /** Without an organisation: only for the CLI, which addresses users by their global id. */
    async findByIdAnyOrg(userId: string): Promise<UserRow | undefined> {
      return db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
    },

    async findByEmail(orgId: string, emailNormalized: string): Promise<UserRow | undefined> {
      return db
        .selectFrom('users')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('email_normalized', '=', emailNormalized)
        .executeTakeFirst();
    },

    /** `listed`: invited and active (GET /v1/users without a status); `all`: every member (the dashboard's table). */
    async list(orgId: string, limit: number, beforeSeq: number | null, status: UserStatus | 'listed' | 'all' = 'all'): Promise<Page<UserRow>> {
      let query = db.selectFrom('users').selectAll().where('org_id', '=', orgId);
      if (status === 'listed') query = query.where('status', '!=', 'suspended' satisfies UserStatus);
      else if (status !== 'all') query = query.where('status', '=', status);
      if (beforeSeq !== null) query = query.where('seq', '<', beforeSeq);
      const rows = await query.orderBy('seq', 'desc').limit(limit + 1).execute();
      return toPage(rows, limit);
    },

    /** The newest `limit` members, any status, as a list to pick from needs them: id, name, e-mail and status only. */
    async people(orgId: string, limit: number): Promise<Pick<UserRow, 'id' | 'name' | 'email' | 'status'>[]> {
      return db.selectFrom('users').select(['id', 'name', 'email', 'status']).where('org_id', '=', orgId).orderBy('seq', 'desc').limit(limit).execute();
    },

    async update(
      orgId: string,
      userId: string,
      changes: Partial<
        Pick<UserRow, 'role' | 'status' | 'name' | 'password_hash' | 'email' | 'email_normalized' | 'updated_at' | 'external_id' | 'given_name' | 'family_name' | 'formatted_name' | 'provisioned_at'>
      >,
    ): Promise<UserRow | undefined> {
      return db
        .updateTable('users')
        .set(changes)
        .where('org_id', '=', orgId)
        .where('id', '=', userId)
        .returningAll()
        .executeTakeFirst();
    },

    /** Who the lifecycle e-mails go to. */
    async findActiveOwners(orgId: string): Promise<UserRow[]> {
      return db
        .selectFrom('users')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('role', '=', 'owner' satisfies Role)
        .where('status', '=', 'active' satisfies UserStatus)
        .orderBy('seq')
        .execute();
    },

    /** Every active member (the two-step requirement's notices). */
    async listActive(orgId: string): Promise<UserRow[]> {
      return db.selectFrom('users').selectAll().where('org_id', '=', orgId).where('status', '=', 'active' satisfies UserStatus).orderBy('seq').execute();
    },

    /** The ids of the users (active or invited) who hold one of `roles`. */
    async idsWithRoles(orgId: string, roles: readonly Role[]): Promise<string[]> {
      const rows = await db.selectFrom('users').select('id').where('org_id', '=', orgId).where('role', 'in', [...roles]).execute();
      return rows.map((r) => r.id);
    },

    /** Active owners and admins: who hears about the organisation's webhooks (CONTRACT 11). */
    async findActiveAdmins(orgId: string): Promise<UserRow[]> {
      return db
        .selectFrom('users')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('role', 'in', ['owner', 'admin'] satisfies Role[])
        .where('status', '=', 'active' satisfies UserStatus)
        .orderBy('seq')
        .execute();
    },

    async countActiveOwners(orgId: string): Promise<number> {
      const row = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', orgId)
        .where('role', '=', 'owner' satisfies Role)
        .where('status', '=', 'active' satisfies UserStatus)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /**
     * The salt of the password hashes already kept for this address in any organisation, oldest account first:
     * sign-in derives one key per salt, so accounts of one person share one (services/identity/passwords.ts).
     */
    async passwordHashesByEmailAnyOrg(emailNormalized: string): Promise<string[]> {
      const rows = await db
        .selectFrom('users')
        .select('password_hash')
        .where('email_normalized', '=', emailNormalized)
        .where('password_hash', 'is not', null)
        .orderBy('seq')
        .execute();
      return rows.map((r) => r.password_hash!);
    },

    /** A hash rewritten in place (a shared salt, services/identity/passwords.ts), unless the password changed meanwhile. */
    async setPasswordHashIfUnchanged(orgId: string, userId: string, expected: string, next: string): Promise<void> {
      await db.updateTable('users').set({ password_hash: next }).where('org_id', '=', orgId).where('id', '=', userId).where('password_hash', '=', expected).execute();
    },

    /** Removes the user; sessions, keys, invitations and password links go with it (ON DELETE CASCADE). */
    async delete(orgId: string, userId: string): Promise<boolean> {
      const result = await db.deleteFrom('users').where('org_id', '=', orgId).where('id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /**
     * Every active user with this e-mail, in any organisation (sign-in: one e-mail may belong to several), oldest
     * first. Sign-in's candidates; an organisation being deleted has none (DASHBOARD 10).
     */
    async findActiveByEmailAnyOrg(emailNormalized: string): Promise<UserRow[]> {
      return db
        .selectFrom('users')
        .selectAll()
        .where('email_normalized', '=', emailNormalized)
        .where('status', '=', 'active' satisfies UserStatus)
        .where((eb) => eb.exists(eb.selectFrom('organizations as o').select('o.id').whereRef('o.id', '=', 'users.org_id').where('o.state', '!=', 'deleting')))
        .orderBy('seq')
        .execute();
    },
  };
}
