import { sql, type Updateable } from 'kysely';
import type { ExportRow, ExportsTable } from '../schema.js';
import type { RepoContext } from './executor.js';

/** An export's lease is only worth holding while its organisation is not being deleted (DASHBOARD 10). */
const organizationNotDeleting = sql<boolean>`NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = exports.org_id AND o.state = 'deleting')`;

/**
 * Data exports (DASHBOARD 9, migration 007) and their ZIPs, stored in the database as ordered chunks so
 * any instance serves the download. The organisation-scoped methods serve the exports service; the
 * `...AcrossOrgs` ones are the export job's, which serves every organisation.
 */
export function exportsRepository(ctx: RepoContext) {
  const { db, dialect } = ctx;

  return {
    /** A queued export is work for the workers: the store wakes them (on every process) once this commits. */
    async insert(row: Omit<ExportRow, 'seq'>): Promise<ExportRow> {
      const inserted = await db.insertInto('exports').values(row).returningAll().executeTakeFirstOrThrow();
      if (ctx.unit) ctx.unit.workCreated += 1;
      return inserted;
    },

    async findById(orgId: string, exportId: string): Promise<ExportRow | undefined> {
      return db.selectFrom('exports').selectAll().where('org_id', '=', orgId).where('id', '=', exportId).executeTakeFirst();
    },

    /** The organisation's export that is queued or being built, if any (one at a time). */
    async findPending(orgId: string): Promise<ExportRow | undefined> {
      return db
        .selectFrom('exports')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('status', 'in', ['queued', 'running'])
        .orderBy('seq')
        .executeTakeFirst();
    },

    /** Newest first. */
    async page(orgId: string, limit: number, beforeSeq: number | null): Promise<ExportRow[]> {
      let query = db.selectFrom('exports').selectAll().where('org_id', '=', orgId);
      if (beforeSeq !== null) query = query.where('seq', '<', beforeSeq);
      return query.orderBy('seq', 'desc').limit(limit).execute();
    },

    async list(orgId: string, limit: number): Promise<ExportRow[]> {
      return db.selectFrom('exports').selectAll().where('org_id', '=', orgId).orderBy('seq', 'desc').limit(limit).execute();
    },

    /**
     * Renews the lease while this worker still holds it and the organisation is not being deleted; false
     * means the build must stop (another worker took the export over, or deletion began).
     */
    async holdLease(orgId: string, exportId: string, owner: string, now: number, leaseMs: number): Promise<boolean> {
      const result = await db
        .updateTable('exports')
        .set({ lease_expires_at: now + leaseMs, updated_at: now })
        .where('org_id', '=', orgId)
        .where('id', '=', exportId)
        .where('lease_owner', '=', owner)
        .where('status', '=', 'running')
        .where(organizationNotDeleting)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Ends a build this worker holds: ready (with its figures), failed, or back to the queue. False if the lease was lost. */
    async settle(orgId: string, exportId: string, owner: string, changes: Updateable<ExportsTable>): Promise<boolean> {
      const result = await db
        .updateTable('exports')
        .set({ ...changes, lease_owner: null, lease_expires_at: null })
        .where('org_id', '=', orgId)
        .where('id', '=', exportId)
        .where('lease_owner', '=', owner)
        .where('status', '=', 'running')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async insertChunk(orgId: string, exportId: string, position: number, data: Uint8Array): Promise<void> {
      await db.insertInto('export_chunks').values({ export_id: exportId, org_id: orgId, position, data }).execute();
    },

    /** Up to `limit` chunks from `fromPosition` on, in order. */
    async readChunks(orgId: string, exportId: string, fromPosition: number, limit: number): Promise<{ position: number; data: Uint8Array }[]> {
      return db
        .selectFrom('export_chunks')
        .select(['position', 'data'])
        .where('org_id', '=', orgId)
        .where('export_id', '=', exportId)
        .where('position', '>=', fromPosition)
        .orderBy('position')
        .limit(limit)
        .execute();
    },

    async deleteChunks(orgId: string, exportId: string): Promise<number> {
      const result = await db.deleteFrom('export_chunks').where('org_id', '=', orgId).where('export_id', '=', exportId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async delete(orgId: string, exportId: string): Promise<void> {
      await db.deleteFrom('export_chunks').where('org_id', '=', orgId).where('export_id', '=', exportId).execute();
      await db.deleteFrom('exports').where('org_id', '=', orgId).where('id', '=', exportId).execute();
    },

    // ---- the export job's ----

    /**
     * Leases the oldest export that is queued, or running under a lease that has expired (its worker died),
     * unless its organisation is being deleted. On PostgreSQL `FOR UPDATE SKIP LOCKED` keeps concurrent
     * claimers off the same row; SQLite has one writer. `started_at` is the time of this attempt: the
     * snapshot the ZIP describes.
     */
    async claimAcrossOrgs(input: { owner: string; now: number; leaseMs: number }): Promise<ExportRow | undefined> {
      const { owner, now, leaseMs } = input;
      const next = sql`SELECT seq FROM exports
        WHERE (status = 'queued' OR (status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at <= ${now}))) AND ${organizationNotDeleting}
        ORDER BY created_at, seq LIMIT 1${dialect === 'postgres' ? sql` FOR UPDATE SKIP LOCKED` : sql``}`;
      const claimed = await sql<ExportRow>`
        UPDATE exports SET status = 'running', lease_owner = ${owner}, lease_expires_at = ${now + leaseMs}, started_at = ${now}, updated_at = ${now}
        WHERE seq IN (${next}) RETURNING *`.execute(db);
      return claimed.rows[0];
    },

    /** Exports whose download has expired, and failed ones older than `failedBefore`: the prune's work. */
    async expiredAcrossOrgs(now: number, failedBefore: number, limit: number): Promise<{ org_id: string; id: string }[]> {
      return db
        .selectFrom('exports')
        .select(['org_id', 'id'])
        .where((eb) =>
          eb.or([
            eb.and([eb('status', '=', 'ready'), eb('expires_at', '<=', now)]),
            eb.and([eb('status', '=', 'failed'), eb('updated_at', '<', failedBefore)]),
          ]),
        )
        .orderBy('seq')
        .limit(limit)
        .execute();
    },

    /** SQLite runs one worker: a build left by a killed process goes back to the queue at start. */
    async releaseAllLeasesAcrossOrgs(now: number): Promise<number> {
      const result = await db
        .updateTable('exports')
        .set({ status: 'queued', lease_owner: null, lease_expires_at: null, updated_at: now })
        .where('status', '=', 'running')
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

export type ExportsRepository = ReturnType<typeof exportsRepository>;
