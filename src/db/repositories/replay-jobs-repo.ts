import type { DeliveryStatus, ReplayJobRow, ReplayJobsTable } from '../schema.js';
import type { RepoContext } from './executor.js';

/** Items are written in chunks: one INSERT of a whole job (10,000 rows) would pass the parameter limits. */
const INSERT_CHUNK = 500;

/**
 * Bulk replays (migration 005). The organisation-scoped methods serve the services; the `...AcrossOrgs`
 * ones are the job runner's, which serves every organisation.
 */
export function replayJobsRepository(ctx: RepoContext) {
  const { db } = ctx;
  return {
    async insert(job: ReplayJobsTable, deliveryIds: readonly string[]): Promise<void> {
      await db.insertInto('replay_jobs').values(job).execute();
      for (let i = 0; i < deliveryIds.length; i += INSERT_CHUNK) {
        const chunk = deliveryIds.slice(i, i + INSERT_CHUNK).map((delivery_id) => ({ job_id: job.id, delivery_id, state: 'waiting' as const }));
        await db.insertInto('replay_job_items').values(chunk).execute();
      }
      // Work for the workers (their job runner): the store wakes them once this commits.
      if (deliveryIds.length > 0 && ctx.unit) ctx.unit.workCreated += 1;
    },

    async findById(orgId: string, webhookId: string, jobId: string): Promise<ReplayJobRow | undefined> {
      return db
        .selectFrom('replay_jobs')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('webhook_id', '=', webhookId)
        .where('id', '=', jobId)
        .executeTakeFirst();
    },

    /** A subscription's latest jobs, newest first. */
    async listRecent(orgId: string, webhookId: string, limit: number): Promise<ReplayJobRow[]> {
      return db
        .selectFrom('replay_jobs')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('webhook_id', '=', webhookId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
    },

    /** How the job's re-queued deliveries stand now, by stored status. */
    async outcomes(orgId: string, jobId: string): Promise<Map<DeliveryStatus, number>> {
      const rows = await db
        .selectFrom('replay_job_items as i')
        .innerJoin('deliveries as d', 'd.id', 'i.delivery_id')
        .select((eb) => ['d.status', eb.fn.countAll<number | string>().as('n')])
        .where('i.job_id', '=', jobId)
        .where('i.state', '=', 'queued')
        .where('d.org_id', '=', orgId)
        .groupBy('d.status')
        .execute();
      return new Map(rows.map((r) => [r.status, Number(r.n)]));
    },

    // ---- the job runner's ----

    /** The oldest running job, if any. */
    async nextRunningAcrossOrgs(): Promise<ReplayJobRow | undefined> {
      return db.selectFrom('replay_jobs').selectAll().where('status', '=', 'running').orderBy('created_at').orderBy('id').limit(1).executeTakeFirst();
    },

    /**
     * Takes up to `limit` waiting items of a job. The conditional UPDATE is the claim: of two runners
     * racing for an item, only one changes it from waiting.
     */
    async claimWaitingAcrossOrgs(jobId: string, limit: number): Promise<string[]> {
      const waiting = await db
        .selectFrom('replay_job_items')
        .select('delivery_id')
        .where('job_id', '=', jobId)
        .where('state', '=', 'waiting')
        .orderBy('delivery_id')
        .limit(limit)
        .execute();
      if (waiting.length === 0) return [];
      const claimed = await db
        .updateTable('replay_job_items')
        .set({ state: 'queued' })
        .where('job_id', '=', jobId)
        .where('delivery_id', 'in', waiting.map((w) => w.delivery_id))
        .where('state', '=', 'waiting')
        .returning('delivery_id')
        .execute();
      return claimed.map((c) => c.delivery_id);
    },

    /** Items that were no longer failed when their turn came. */
    async markSkippedAcrossOrgs(jobId: string, deliveryIds: readonly string[]): Promise<void> {
      if (deliveryIds.length === 0) return;
      await db.updateTable('replay_job_items').set({ state: 'skipped' }).where('job_id', '=', jobId).where('delivery_id', 'in', deliveryIds).execute();
    },

    async addProgressAcrossOrgs(jobId: string, queued: number, skipped: number): Promise<void> {
      await db
        .updateTable('replay_jobs')
        .set((eb) => ({ queued: eb('queued', '+', queued), skipped: eb('skipped', '+', skipped) }))
        .where('id', '=', jobId)
        .execute();
    },

    /** Marks the job done once no item waits; false while some still do. */
    async finishIfDrainedAcrossOrgs(jobId: string, at: number): Promise<boolean> {
      const waiting = await db
        .selectFrom('replay_job_items')
        .select('delivery_id')
        .where('job_id', '=', jobId)
        .where('state', '=', 'waiting')
        .limit(1)
        .executeTakeFirst();
      if (waiting) return false;
      await db.updateTable('replay_jobs').set({ status: 'done', finished_at: at }).where('id', '=', jobId).where('status', '=', 'running').execute();
      return true;
    },

    /** Finished jobs (and their items) that finished before `before`, one batch; returns how many went. */
    async pruneFinishedBatchAcrossOrgs(before: number, batchSize: number): Promise<number> {
      const done = await db.selectFrom('replay_jobs').select('id').where('status', '=', 'done').where('finished_at', '<', before).limit(batchSize).execute();
      if (done.length === 0) return 0;
      const ids = done.map((j) => j.id);
      await db.deleteFrom('replay_job_items').where('job_id', 'in', ids).execute();
      await db.deleteFrom('replay_jobs').where('id', 'in', ids).execute();
      return ids.length;
    },
  };
}

export type ReplayJobsRepository = ReturnType<typeof replayJobsRepository>;
