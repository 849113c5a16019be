import { sql, type RawBuilder } from 'kysely';
import type { DB, OrganizationRow } from '../schema.js';
import type { RepoContext } from './executor.js';

/** Every table whose rows carry `org_id`: what an organisation's deletion empties (DASHBOARD 10). */
type OrgScopedTable = { [T in keyof DB]: 'org_id' extends keyof DB[T] ? T : never }[keyof DB];

/**
 * The deletion's plan, in order. A step with `children` takes a batch of the parent's rows, removes
 * their children by the children's own index (the child tables below have no index on `org_id`, and
 * `replay_job_items` has no `org_id` at all), then the parents. Children go before parents so the
 * schema's ON DELETE CASCADE never does unbounded work behind a batch: tasks and workflows before
 * projects, sessions, tokens, keys and invitations before users. The unindexed child tables are also
 * swept by `org_id` afterwards (one scan) for rows whose parent was already gone.
 */
export const DELETION_STEPS = [
  { table: 'deliveries', children: [{ table: 'delivery_attempts', key: 'delivery_id' }] },
  { table: 'delivery_attempts' },
  { table: 'delivery_hourly' },
  { table: 'replay_jobs', children: [{ table: 'replay_job_items', key: 'job_id' }] },
  { table: 'events' },
  { table: 'webhooks' },
  { table: 'workflow_runs', children: [{ table: 'workflow_run_steps', key: 'run_id' }] },
  { table: 'workflow_run_steps' },
  { table: 'tasks' },
  { table: 'workflows' },
  { table: 'scim_group_projects' },
  { table: 'project_collaborators' },
  { table: 'projects' },
  { table: 'export_chunks' },
  { table: 'exports' },
  { table: 'api_keys', children: [{ table: 'idempotency_keys', key: 'api_key_id' }] },
  { table: 'idempotency_keys' },
  { table: 'invitations' },
  { table: 'sessions' },
  { table: 'totp_factors' },
  { table: 'recovery_codes' },
  { table: 'passkeys' },
  { table: 'sso_attempts' },
  { table: 'sso_identities' },
  { table: 'sso_domains' },
  { table: 'sso_connections' },
  { table: 'scim_group_members' },
  { table: 'scim_groups' },
  { table: 'scim_tokens' },
  { table: 'oauth_grants', children: [{ table: 'oauth_entries', key: 'grant_id' }] },
  { table: 'auth_tokens' },
  { table: 'request_counts' },
  { table: 'stripe_events' },
  { table: 'audit_log' },
  { table: 'users' },
] as const satisfies readonly DeletionStep[];

interface DeletionStep {
  table: OrgScopedTable;
  children?: readonly { table: keyof DB; key: string }[];
}

/** The tables the deletion empties; the compiler refuses a table with `org_id` missing from the plan. */
export const ORGANIZATION_DATA_TABLES: readonly OrgScopedTable[] = [...new Set(DELETION_STEPS.map((s) => s.table))];
type Missing = Exclude<OrgScopedTable, (typeof DELETION_STEPS)[number]['table']>;
const everyTableCovered: [Missing] extends [never] ? true : Missing = true;
void everyTableCovered;

/** Tables without an index on `org_id`: the last transaction's sweep leaves them out (a full scan each). */
const UNINDEXED: ReadonlySet<string> = new Set(['delivery_attempts', 'workflow_run_steps', 'idempotency_keys']);

/** An organisation the job has taken: its identity and the dates the tombstone keeps. */
export type ClaimedOrganization = Pick<OrganizationRow, 'id' | 'name' | 'created_at' | 'cancelled_at' | 'deletion_at' | 'deletion_started_at'> & {
  /** True when another worker had begun it (its lease ran out): this claim resumes it. */
  resumed: boolean;
};

/** A cancelled organisation as the lifecycle job schedules it. */
export type ScheduledOrganization = Pick<OrganizationRow, 'id' | 'name' | 'state' | 'deletion_at' | 'reminded_7d_at' | 'reminded_1d_at' | 'lease_expires_at'>;

/**
 * The lifecycle job's queries (reminders, the deletion's claim, lease and batches), across organisations
 * like the run engine's: the job serves every organisation. Each batch deletes at most `limit` rows of one
 * table in one statement; the caller runs each in its own short transaction.
 */
export function deletionRepository(ctx: RepoContext) {
  const { db, dialect } = ctx;
  const pg = dialect === 'postgres';
  /** A row's physical address, to delete exactly the rows a LIMITed select found. */
  const rowAddress = sql.raw(pg ? 'ctid' : 'rowid');

  /** DELETE of at most `limit` rows of `table` matching `where`, in one statement; returns how many went. */
  async function deleteLimited(table: string, where: RawBuilder<unknown>, limit: number): Promise<number> {
    const t = sql.table(table);
    const chosen = sql`SELECT ${rowAddress} FROM ${t} WHERE ${where} LIMIT ${limit}`;
    // PostgreSQL reaches rows by ctid only through `= ANY(ARRAY(...))` (a TID scan); `IN (subquery)` would join.
    const result = pg
      ? await sql`DELETE FROM ${t} WHERE ctid = ANY(ARRAY(${chosen}))`.execute(db)
      : await sql`DELETE FROM ${t} WHERE rowid IN (${chosen})`.execute(db);
    return Number(result.numAffectedRows ?? 0n);
  }

  const claimable = (now: number) =>
    sql<boolean>`deletion_at IS NOT NULL AND deletion_at <= ${now}
      AND (state = 'read_only' OR (state = 'deleting' AND (lease_expires_at IS NULL OR lease_expires_at <= ${now})))`;

  return {
    /** Cancelled organisations (read-only, or being deleted): few at any time, found by the deletion-date index. */
    async scheduledAcrossOrgs(): Promise<ScheduledOrganization[]> {
      return db
        .selectFrom('organizations')
        .select(['id', 'name', 'state', 'deletion_at', 'reminded_7d_at', 'reminded_1d_at', 'lease_expires_at'])
        .where('deletion_at', 'is not', null)
        .where('state', 'in', ['read_only', 'deleting'])
        .orderBy('deletion_at')
        .execute();
    },

    /**
     * Takes the reminder for this cancellation (`deletion_at` names it): true for exactly one caller,
     * whichever worker asks, so each reminder goes out at most once. Sent before it is due, or once the
     * organisation was resumed, it is refused.
     */
    async claimReminder(orgId: string, which: '7d' | '1d', deletionAt: number, now: number): Promise<boolean> {
      const column = which === '7d' ? 'reminded_7d_at' : 'reminded_1d_at';
      const result = await db
        .updateTable('organizations')
        .set(which === '7d' ? { reminded_7d_at: now } : { reminded_1d_at: now })
        .where('id', '=', orgId)
        .where('state', '=', 'read_only')
        .where('deletion_at', '=', deletionAt)
        .where(column, 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /**
     * Inside the caller's transaction: takes the organisation whose deletion date came first — read-only,
     * or being deleted under a lease that ran out (a worker died) — and marks it `deleting` under this
     * owner's lease. PostgreSQL skips a row another worker is claiming at that instant; SQLite has one writer.
     */
    async claimDueAcrossOrgs(owner: string, now: number, leaseMs: number): Promise<ClaimedOrganization | undefined> {
      const due = await sql<{ id: string; deletion_started_at: number | string | null }>`
        SELECT id, deletion_started_at FROM organizations WHERE ${claimable(now)}
        ORDER BY deletion_at LIMIT 1${pg ? sql` FOR UPDATE SKIP LOCKED` : sql``}`.execute(db);
      const candidate = due.rows[0];
      if (!candidate) return undefined;
      const row = await db
        .updateTable('organizations')
        .set((eb) => ({
          state: 'deleting',
          deletion_started_at: eb.fn.coalesce('deletion_started_at', eb.val(now)),
          lease_owner: owner,
          lease_expires_at: now + leaseMs,
          updated_at: now,
        }))
        .where('id', '=', candidate.id)
        .where(claimable(now))
        .returning(['id', 'name', 'created_at', 'cancelled_at', 'deletion_at', 'deletion_started_at'])
        .executeTakeFirst();
      return row && { ...row, resumed: candidate.deletion_started_at !== null };
    },

    /**
     * Extends this owner's lease. False when it is no longer ours (it ran out and another worker took the
     * organisation, or the organisation is gone): the caller stops. Inside a batch's transaction it also
     * holds the organisation's row, so no other worker's batch runs at the same time.
     */
    async renewLease(orgId: string, owner: string, now: number, leaseMs: number): Promise<boolean> {
      const result = await db
        .updateTable('organizations')
        .set({ lease_expires_at: now + leaseMs })
        .where('id', '=', orgId)
        .where('state', '=', 'deleting')
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** A clean stop: the organisation goes back to the queue at once instead of when the lease runs out. */
    async releaseLease(orgId: string, owner: string): Promise<void> {
      await db.updateTable('organizations').set({ lease_owner: null, lease_expires_at: null }).where('id', '=', orgId).where('lease_owner', '=', owner).execute();
    },

    /** SQLite runs one worker: deletions left by a killed process are resumed at once. */
    async releaseAllLeasesAcrossOrgs(): Promise<number> {
      const result = await db
        .updateTable('organizations')
        .set({ lease_owner: null, lease_expires_at: null })
        .where('state', '=', 'deleting')
        .where('lease_owner', 'is not', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** One statement of `limit` rows at most of the organisation's rows in `table`. */
    async deleteBatch(orgId: string, table: OrgScopedTable, limit: number): Promise<number> {
      return deleteLimited(table, sql`org_id = ${orgId}`, limit);
    },

    /** Up to `limit` ids of the organisation's rows in a parent table (the next batch of a step with children). */
    async parentIds(orgId: string, table: OrgScopedTable, limit: number): Promise<string[]> {
      const result = await sql<{ id: string }>`SELECT id FROM ${sql.table(table)} WHERE org_id = ${orgId} LIMIT ${limit}`.execute(db);
      return result.rows.map((r) => r.id);
    },

    /** Up to `limit` rows of `table` whose `key` is one of `parentIds` (the organisation's parents, read above). */
    async deleteChildren(table: string, key: string, parentIds: readonly string[], limit: number): Promise<number> {
      if (parentIds.length === 0) return 0;
      return deleteLimited(table, sql`${sql.ref(key)} IN (${sql.join(parentIds)})`, limit);
    },

    /** The parents whose children are gone. */
    async deleteParents(orgId: string, table: OrgScopedTable, ids: readonly string[]): Promise<number> {
      if (ids.length === 0) return 0;
      const result = await sql`DELETE FROM ${sql.table(table)} WHERE org_id = ${orgId} AND id IN (${sql.join(ids)})`.execute(db);
      return Number(result.numAffectedRows ?? 0n);
    },

    /**
     * The last transaction: whatever reached an indexed table while the batches ran (a write that began
     * before the deletion did), the tombstone (id and dates only; one already there from an interrupted
     * run is fine), and the organisation's row. False, with nothing changed, if the lease is no longer ours.
     */
    async finish(org: Pick<OrganizationRow, 'id' | 'created_at' | 'cancelled_at' | 'deletion_at'>, owner: string, now: number): Promise<{ finished: boolean; swept: number }> {
      const held = await db
        .selectFrom('organizations')
        .select('id')
        .where('id', '=', org.id)
        .where('state', '=', 'deleting')
        .where('lease_owner', '=', owner)
        .$if(pg, (q) => q.forUpdate())
        .executeTakeFirst();
      if (!held) return { finished: false, swept: 0 };
      let swept = 0;
      for (const table of ORGANIZATION_DATA_TABLES) {
        if (UNINDEXED.has(table)) continue;
        const result = await sql`DELETE FROM ${sql.table(table)} WHERE org_id = ${org.id}`.execute(db);
        swept += Number(result.numAffectedRows ?? 0n);
      }
      await db
        .insertInto('organization_tombstones')
        .values({ id: org.id, created_at: org.created_at, cancelled_at: org.cancelled_at, deletion_at: org.deletion_at, deleted_at: now })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      await db.deleteFrom('organizations').where('id', '=', org.id).execute();
      return { finished: true, swept };
    },

    /** Whether a tombstone exists: a deletion interrupted after its last transaction has nothing left to do. */
    async tombstone(orgId: string) {
      return db.selectFrom('organization_tombstones').selectAll().where('id', '=', orgId).executeTakeFirst();
    },
  };
}

export type DeletionRepository = ReturnType<typeof deletionRepository>;
