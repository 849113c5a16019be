import { errors, fieldError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { toIso, type Clock } from '../../lib/time.js';
import type { ReplayJobRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { authorize, type Actor } from '../access/actor.js';
import { recordAudit } from '../audit/audit-record.js';
import { requireActiveWebhook, requireWebhook } from './webhooks-service.js';
import { requireWritable } from '../access/workspace.js';
import { MAX_BULK_REPLAY, type ReplayJob } from '../../schemas/deliveries.js';

/** How many deliveries the runner re-queues per transaction: short transactions, progress in steps. */
const BATCH = 500;

export interface ReplayPreview {
  /** Failed deliveries a replay asked for now would take (at most MAX_BULK_REPLAY). */
  count: number;
  /** More failed deliveries match than one replay takes. */
  more: boolean;
}

/** The date-time format lets through instants no clock names (a leap second, 23:59:60): they parse to NaN. */
function requireSince(since: number): void {
  if (!Number.isFinite(since)) throw fieldError('since', 'must be a valid date-time');
}

/**
 * Bulk replay of a subscription's permanently failed deliveries (DASHBOARD 6): asking for one fixes its
 * set of deliveries (the oldest MAX_BULK_REPLAY failed since the chosen time) and writes the audit row in
 * one transaction; the delivery worker's job runner then re-queues them in batches, so no request stays
 * open for it and progress is visible while it runs. The re-queued deliveries are ordinary replays.
 */
export function createReplayJobsService({ store, clock }: { store: Store; clock: Clock }) {
  async function toJob(row: ReplayJobRow): Promise<ReplayJob> {
    const outcomes = await store.repos.replayJobs.outcomes(row.org_id, row.id);
    return {
      id: row.id,
      webhook_id: row.webhook_id,
      since: toIso(row.since),
      status: row.status,
      count: row.total,
      more: row.more === 1,
      queued: row.queued,
      skipped: row.skipped,
      delivered: outcomes.get('delivered') ?? 0,
      failed: outcomes.get('failed') ?? 0,
      pending: outcomes.get('pending') ?? 0,
      requested_by: row.requested_by,
      created_at: toIso(row.created_at),
      finished_at: row.finished_at === null ? null : toIso(row.finished_at),
    };
  }

  return {
    /** What a replay asked for now would take: the confirmation's "N deliveries will be sent again". */
    async preview(actor: Actor, webhookId: string, since: number): Promise<ReplayPreview> {
      authorize(actor, 'webhooks', 'create');
      requireSince(since);
      await requireWebhook(store.repos, actor.orgId, webhookId);
      const found = await store.repos.deliveries.countFailedSince(actor.orgId, webhookId, since, MAX_BULK_REPLAY + 1);
      return { count: Math.min(found, MAX_BULK_REPLAY), more: found > MAX_BULK_REPLAY };
    },

    async start(actor: Actor, webhookId: string, since: number): Promise<ReplayJob> {
      authorize(actor, 'webhooks', 'create');
      await requireWritable(store.repos, actor);
      requireSince(since);
      const { orgId } = actor;
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        const webhook = await requireActiveWebhook(repos, orgId, webhookId);
        const found = await repos.deliveries.failedSince(orgId, webhookId, since, MAX_BULK_REPLAY + 1);
        const ids = found.slice(0, MAX_BULK_REPLAY);
        const job: ReplayJobRow = {
          id: newId('rpl'),
          org_id: orgId,
          webhook_id: webhookId,
          since,
          // Nothing to replay is a job that is already done: the answer has one shape either way.
          status: ids.length > 0 ? 'running' : 'done',
          total: ids.length,
          queued: 0,
          skipped: 0,
          more: found.length > MAX_BULK_REPLAY ? 1 : 0,
          requested_by: actor.type === 'user' ? actor.label : actor.type,
          created_at: now,
          finished_at: ids.length > 0 ? null : now,
        };
        await repos.replayJobs.insert(job, ids);
        await recordAudit(repos, actor, {
          action: 'delivery.replayed',
          target: { type: 'webhook', id: webhookId, label: webhook.url },
          changes: { failed_since: { old: null, new: toIso(since) }, replayed: { old: null, new: ids.length }, job: { old: null, new: job.id } },
          at: now,
        });
        return job;
      });
      return toJob(row);
    },

    async get(actor: Actor, webhookId: string, jobId: string): Promise<ReplayJob> {
      authorize(actor, 'webhooks', 'read');
      await requireWebhook(store.repos, actor.orgId, webhookId);
      const row = await store.repos.replayJobs.findById(actor.orgId, webhookId, jobId);
      if (!row) throw errors.notFound('replay job');
      return toJob(row);
    },

    /** The subscription's latest bulk replays, newest first; an id outside the organisation is not found, like every page's (F12). */
    async listRecent(actor: Actor, webhookId: string, limit = 5): Promise<ReplayJob[]> {
      authorize(actor, 'webhooks', 'read');
      await requireWebhook(store.repos, actor.orgId, webhookId);
      const rows = await store.repos.replayJobs.listRecent(actor.orgId, webhookId, limit);
      return Promise.all(rows.map(toJob));
    },

    /**
     * The job runner's step (any organisation): re-queues one batch of the oldest running job in one
     * transaction, skipping deliveries that are no longer failed. Returns how many items it took; 0 when
     * no job has work left. A job asked for before the subscription was cancelled carries on in the
     * read-only workspace: like the deliveries of events committed before, it is work already accepted.
     */
    async runBatch(): Promise<number> {
      const job = await store.repos.replayJobs.nextRunningAcrossOrgs();
      if (!job) return 0;
      const now = clock.now();
      return store.transaction(async (repos) => {
        const ids = await repos.replayJobs.claimWaitingAcrossOrgs(job.id, BATCH);
        if (ids.length > 0) {
          // A subscription deleted since the job was asked for takes nothing more: re-queued, its deliveries
          // would only be cancelled by the worker, and their history would no longer say they failed.
          const live = await repos.webhooks.findById(job.org_id, job.webhook_id);
          // An ordered subscription's replay keeps the deliveries' original order (CONTRACT 14).
          const ordered = live?.ordering === 'fifo' ? { webhookId: live.id } : undefined;
          const queued = new Set(live ? await repos.deliveries.requestReplayOfFailed(job.org_id, ids, now, ordered) : []);
          const skipped = ids.filter((id) => !queued.has(id));
          await repos.replayJobs.markSkippedAcrossOrgs(job.id, skipped);
          await repos.replayJobs.addProgressAcrossOrgs(job.id, queued.size, skipped.length);
        }
        const finished = await repos.replayJobs.finishIfDrainedAcrossOrgs(job.id, now);
        // A drained job still counts as work done, so the runner looks for the next job at once.
        return ids.length > 0 || finished ? Math.max(ids.length, 1) : 0;
      });
    },

    /** Finished jobs older than `before` go, with their items. */
    async prune(before: number): Promise<number> {
      let removed = 0;
      for (;;) {
        const n = await store.transaction((repos) => repos.replayJobs.pruneFinishedBatchAcrossOrgs(before, 100));
        removed += n;
        if (n < 100) return removed;
      }
    },
  };
}

export type ReplayJobsService = ReturnType<typeof createReplayJobsService>;
