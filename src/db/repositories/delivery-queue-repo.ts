import { sql, type ExpressionBuilder, type OnConflictDatabase, type OnConflictTables } from 'kysely';
import type { DB, DeliveryAttemptRow, DeliveryRow, DeliveryStatus, WebhookDisabledReason } from '../schema.js';
import type { Executor, RepoContext } from './executor.js';
import { HOUR_MS } from '../../lib/time.js';
import { prepared } from './prepared.js';

// The worker's completion statements, one row each and compiled once (prepared.ts): a batch of completions
// runs them per row inside one transaction, so neither Kysely building nor a fresh SQLite prepare (a new
// SQL text for every batch size or IN-list length) is paid per batch.
// The attempt is written only while its delivery exists: an organisation's deletion may have removed it
// during the send, and nothing of that organisation may be written after (INSERT ... SELECT ... WHERE).
const insertAttemptQuery = (
  db: Executor,
  id: string,
  orgId: string,
  deliveryId: string,
  attemptNumber: number,
  trigger: string,
  startedAt: number,
  durationMs: number,
  requestHeaders: string,
  responseStatus: number | null,
  responseHeaders: string | null,
  responseBody: string | null,
  error: string | null,
  outcome: string,
  heldReason: string | null,
  heldMs: number | null,
) =>
  db
    .insertInto('delivery_attempts')
    .columns([
      'id',
      'org_id',
      'delivery_id',
      'attempt_number',
      'trigger',
      'started_at',
      'duration_ms',
      'request_headers',
      'response_status',
      'response_headers',
      'response_body',
      'error',
      'outcome',
      'held_reason',
      'held_ms',
    ])
    .expression((eb) =>
      eb
        .selectFrom('deliveries')
        .select([
          eb.val(id).as('id'),
          eb.val(orgId).as('org_id'),
          eb.val(deliveryId).as('delivery_id'),
          eb.val(attemptNumber).as('attempt_number'),
          eb.val(trigger).as('trigger'),
          eb.val(startedAt).as('started_at'),
          eb.val(durationMs).as('duration_ms'),
          eb.val(requestHeaders).as('request_headers'),
          eb.val(responseStatus).as('response_status'),
          eb.val(responseHeaders).as('response_headers'),
          eb.val(responseBody).as('response_body'),
          eb.val(error).as('error'),
          eb.val(outcome).as('outcome'),
          eb.val(heldReason).as('held_reason'),
          eb.val(heldMs).as('held_ms'),
        ])
        .where('deliveries.id', '=', deliveryId),
    )
    .returning('delivery_attempts.id');
const insertAttemptRow = prepared(15, insertAttemptQuery);

const addToHourly = (eb: ExpressionBuilder<OnConflictDatabase<DB, 'delivery_hourly'>, OnConflictTables<'delivery_hourly'>>) => ({
  delivered: eb('delivery_hourly.delivered', '+', eb.ref('excluded.delivered')),
  failed: eb('delivery_hourly.failed', '+', eb.ref('excluded.failed')),
});
// Sorted by key before the batch runs them, so two workers' transactions take the row locks in one order.
const addHourlyRow = prepared(5, (db, orgId: string, webhookId: string, hour: number, delivered: number, failed: number) =>
  db
    .insertInto('delivery_hourly')
    .values({ org_id: orgId, webhook_id: webhookId, hour, delivered, failed })
    .onConflict((oc) => oc.columns(['org_id', 'webhook_id', 'hour']).doUpdateSet(addToHourly)),
);
// Attempts of one subscription and hour into the roll-up, only while the delivery named exists (one whose
// attempt was just recorded): the SQLite queue thread's form of addHourly, with the row written by the
// statement itself rather than decided by the caller.
const addHourlyIfRecordedQuery = (db: Executor, deliveryId: string, orgId: string, webhookId: string, hour: number, delivered: number, failed: number) =>
  db
    .insertInto('delivery_hourly')
    .columns(['org_id', 'webhook_id', 'hour', 'delivered', 'failed'])
    .expression((eb) =>
      eb
        .selectFrom('deliveries')
        .select([eb.val(orgId).as('org_id'), eb.val(webhookId).as('webhook_id'), eb.val(hour).as('hour'), eb.val(delivered).as('delivered'), eb.val(failed).as('failed')])
        // Also what SQLite's upsert needs after INSERT ... SELECT: a WHERE, so ON CONFLICT is not read as a join.
        .where('deliveries.id', '=', deliveryId),
    )
    .onConflict((oc) => oc.columns(['org_id', 'webhook_id', 'hour']).doUpdateSet(addToHourly));

/** Completions summed per subscription and hour, in key order. */
export function hourlyCounts(completions: readonly AttemptCompletion[]): HourlyCount[] {
  const counts = new Map<string, HourlyCount>();
  for (const { attempt, webhookId } of completions) {
    // Test events are not deliveries of the subscription's events: they stay out of its health figures.
    if (attempt.trigger === 'test') continue;
    const hour = Math.floor(attempt.started_at / HOUR_MS);
    const key = `${attempt.org_id}\u0000${webhookId}\u0000${String(hour).padStart(12, '0')}`;
    let count = counts.get(key);
    if (!count) counts.set(key, (count = { orgId: attempt.org_id, webhookId, hour, delivered: 0, failed: 0 }));
    if (attempt.outcome === 'success') count.delivered++;
    else count.failed++;
  }
  return [...counts.keys()].sort().map((key) => counts.get(key)!);
}

// The claim's statements without exclusions (the usual case), one row each for the lease and the load, so
// their SQL text never varies with the batch.
const dueScan = (db: Executor, now: number, window: number) =>
  db
    .selectFrom('deliveries')
    .select(['seq', 'webhook_id'])
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
    // Index order only (no tie-break column): the scan stops after `window` rows instead of sorting the backlog.
    .orderBy('next_attempt_at')
    .limit(window);
const dueScanSqlite = prepared(2, (db, now: number, window: number) => dueScan(db, now, window));
const dueScanPostgres = prepared(2, (db, now: number, window: number) => dueScan(db, now, window).forUpdate().skipLocked());
const leaseQuery = (db: Executor, seq: number, owner: string, expiresAt: number, now: number) =>
  db
    .updateTable('deliveries')
    .set({ lease_owner: owner, lease_expires_at: expiresAt })
    .where('seq', '=', seq)
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]));
const leaseRow = prepared(4, (db, seq: number, owner: string, expiresAt: number, now: number) => leaseQuery(db, seq, owner, expiresAt, now).returning('seq'));
const claimedQuery = (db: Executor, seq: number, owner: string) =>
  db
    .selectFrom('deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    // A disabled subscription sends nothing (CONTRACT 11): its claimed rows are cancelled below, with the reason.
    .innerJoin('webhooks as w', (join) => join.onRef('w.id', '=', 'd.webhook_id').onRef('w.org_id', '=', 'd.org_id').on('w.status', '=', 'active'))
    // An organisation being deleted sends nothing more (DASHBOARD 10): its claimed rows are cancelled below.
    .innerJoin('organizations as o', (join) => join.onRef('o.id', '=', 'd.org_id').on('o.state', '!=', 'deleting'))
    .select([
      'd.seq',
      'd.next_attempt_at',
      'd.id',
      'd.org_id',
      'd.event_id',
      'd.webhook_id',
      'd.event_type',
      'd.attempt_count',
      'd.failure_count',
      'd.replay_requested_at',
      'd.test',
      'd.fifo',
      'd.created_at',
      'e.body',
      'e.trace_parent',
      'w.url',
      'w.secret',
      'w.secret_previous',
      'w.secret_previous_expires_at',
      'w.rate_limit',
    ])
    .where('d.seq', '=', seq)
    .where('d.lease_owner', '=', owner);
const claimedRow = prepared(2, claimedQuery);
// A leased row the load above cannot return (no subscription, no event, or an organisation being deleted)
// never goes out: the SQLite queue thread cancels it with this, row by row (claimDueQueueItems below cancels
// the rows its loads missed in one statement).
const cancelUnsendableQuery = (db: Executor, seq: number, owner: string, now: number) =>
  db
    .updateTable('deliveries')
    .set((eb) => ({ status: 'cancelled', next_attempt_at: null, lease_owner: null, lease_expires_at: null, updated_at: now, cancel_reason: unsendableReason(eb) }))
    .where('seq', '=', seq)
    .where('lease_owner', '=', owner)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('events as e')
            .innerJoin('webhooks as w', (join) => join.onRef('w.id', '=', 'deliveries.webhook_id').onRef('w.org_id', '=', 'deliveries.org_id').on('w.status', '=', 'active'))
            .innerJoin('organizations as o', (join) => join.onRef('o.id', '=', 'deliveries.org_id').on('o.state', '!=', 'deleting'))
            .select(sql.lit(1).as('one'))
            .whereRef('e.id', '=', 'deliveries.event_id'),
        ),
      ),
    );

// ---- delivery control (CONTRACT 14): the statements the claim and the completions add for ordered and
// rate-limited subscriptions only, so an unordered, unlimited subscription's claim runs none of them.

/** How far ahead a claim reserves rate-limited starts: the worker holds those deliveries until their slot. */
export const RATE_HORIZON_MS = 1000;
/**
 * Starts of a rate-limited subscription are spaced (1 s + RATE_MARGIN_MS) / R apart, so any R + 1 of them
 * span more than a second by this margin: starts spaced exactly 1/R s would let a millisecond of network
 * jitter show a receiver R + 1 in some one-second window. The margin absorbs the late start the worker
 * allows (LATE_START_MS) and the rest of a new TLS connection's handshake on a busy host.
 */
export const RATE_MARGIN_MS = 30;
export const rateIntervalUs = (rateLimit: number) => Math.ceil(((1000 + RATE_MARGIN_MS) * 1000) / rateLimit);

// The subscription's head lease: taken by the claim of its head, so one attempt is in flight whichever
// worker sends it, even when a head committed out of sequence order on PostgreSQL. It expires with the
// delivery's lease (a worker killed while sending), and the completion clears it.
const headLeaseQuery = (db: Executor, webhookId: string, deliveryId: string, expiresAt: number, now: number) =>
  db
    .updateTable('webhooks')
    .set({ fifo_head: deliveryId, fifo_head_expires_at: expiresAt })
    .where('id', '=', webhookId)
    .where((eb) => eb.or([eb('fifo_head', 'is', null), eb('fifo_head', '=', deliveryId), eb('fifo_head_expires_at', '<', now)]));
const headLeaseSqlite = prepared(4, (db, webhookId: string, deliveryId: string, expiresAt: number, now: number) => headLeaseQuery(db, webhookId, deliveryId, expiresAt, now).returning('id'));
// PostgreSQL: a subscription row another claim or completion has locked is skipped for this cycle rather
// than waited on (two workers' cycles lock webhook rows in different orders).
const headLeasePostgres = prepared(4, (db, webhookId: string, deliveryId: string, expiresAt: number, now: number) =>
  headLeaseQuery(db, webhookId, deliveryId, expiresAt, now)
    .where('id', 'in', (eb) => eb.selectFrom('webhooks as h').select('h.id').where('h.id', '=', webhookId).forUpdate().skipLocked())
    .returning('id'),
);
const headClearQuery = (db: Executor, webhookId: string, deliveryId: string) =>
  db.updateTable('webhooks').set({ fifo_head: null, fifo_head_expires_at: null }).where('id', '=', webhookId).where('fifo_head', '=', deliveryId);
const headClearRow = prepared(2, headClearQuery);
/** An earlier delivery of the order still pending: the candidate is not the head (literals: the partial index). */
const earlierPendingQuery = (db: Executor, webhookId: string, seq: number) =>
  db
    .selectFrom('deliveries')
    .select('seq')
    .where('webhook_id', '=', webhookId)
    .where('status', '=', sql.lit('pending'))
    .where('fifo', '=', sql.lit(1))
    .where('seq', '<', seq)
    .limit(1);
const earlierPendingRow = prepared(2, earlierPendingQuery);
/** The order's first pending delivery gets its due time (a head finished, or a replay joined the order). */
const promoteNextQuery = (db: Executor, webhookId: string, at: number) =>
  db
    .updateTable('deliveries')
    .set({ next_attempt_at: at })
    .where('seq', '=', (eb) =>
      eb
        .selectFrom('deliveries as n')
        .select('n.seq')
        .where('n.webhook_id', '=', webhookId)
        .where('n.status', '=', sql.lit('pending'))
        .where('n.fifo', '=', sql.lit(1))
        .orderBy('n.seq')
        .limit(1),
    )
    .where('next_attempt_at', 'is', null);
export const promoteNextRow = prepared(2, promoteNextQuery);
/** A claimed delivery handed back unsent: not an attempt; it is due again at once. */
const releaseQuery = (db: Executor, deliveryId: string, owner: string) =>
  db.updateTable('deliveries').set({ lease_owner: null, lease_expires_at: null }).where('id', '=', deliveryId).where('lease_owner', '=', owner);
const releaseRow = prepared(2, releaseQuery);
const rateReadQuery = (db: Executor, webhookId: string) => db.selectFrom('webhooks').select('rate_tat').where('id', '=', webhookId);
const rateReadSqlite = prepared(1, rateReadQuery);
const rateReadPostgres = prepared(1, (db, webhookId: string) => rateReadQuery(db, webhookId).forUpdate().skipLocked());
const rateWriteQuery = (db: Executor, webhookId: string, tat: number) => db.updateTable('webhooks').set({ rate_tat: tat }).where('id', '=', webhookId);
const rateWriteRow = prepared(2, rateWriteQuery);

/** Why a claimed delivery cannot go out: its subscription is disabled (replayable after enabling), or gone. */
const unsendableReason = (eb: ExpressionBuilder<DB, 'deliveries'>) =>
  eb
    .case()
    .when(
      eb.exists(
        eb
          .selectFrom('webhooks as w')
          .select(sql.lit(1).as('one'))
          .whereRef('w.id', '=', 'deliveries.webhook_id')
          .whereRef('w.org_id', '=', 'deliveries.org_id')
          .where('w.status', '=', sql.lit('disabled')),
      ),
    )
    .then(sql.lit('subscription_disabled'))
    .else(sql.lit('subscription_deleted'))
    .end();

// A subscription's failure streak (CONTRACT 11), written by the transaction that records the attempt that
// starts or ends it (streakUpdates below), so health never scans history. A success ends the streak and its
// 24-hour mail mark; a failure starts one only where none runs; the disabling is a conditional UPDATE that
// matches only once the streak has lasted WEBHOOK_DISABLE_AFTER (or at once on 410 Gone).
const streakEndedQuery = (db: Executor, orgId: string, webhookId: string) =>
  db
    .updateTable('webhooks')
    .set({ failing_since: null, failing_mail_at: null })
    .where('org_id', '=', orgId)
    .where('id', '=', webhookId)
    .where('failing_since', 'is not', null);
const streakStartedQuery = (db: Executor, orgId: string, webhookId: string, since: number) =>
  db
    .updateTable('webhooks')
    .set({ failing_since: since })
    .where('org_id', '=', orgId)
    .where('id', '=', webhookId)
    .where('failing_since', 'is', null)
    .where('status', '=', sql.lit('active'));
const disableDueQuery = (db: Executor, orgId: string, webhookId: string, gone: number, cutoff: number, at: number) =>
  db
    .updateTable('webhooks')
    .set((eb) => ({
      status: 'disabled',
      disabled_at: at,
      disabled_reason: eb.case().when(eb.val(gone), '=', 1).then(sql.lit('gone')).else(sql.lit('failing')).end().$castTo<WebhookDisabledReason>(),
      disabled_notified_at: null,
      updated_at: at,
    }))
    .where('org_id', '=', orgId)
    .where('id', '=', webhookId)
    .where('status', '=', sql.lit('active'))
    .where((eb) => eb.or([eb(eb.val(gone), '=', 1), eb('failing_since', '<=', cutoff)]));
const streakEndedRow = prepared(2, streakEndedQuery);
const streakStartedRow = prepared(3, streakStartedQuery);
const disableDueRow = prepared(5, disableDueQuery);

/** What one batch of completions does to one subscription's failure streak. */
export interface StreakUpdate {
  orgId: string;
  webhookId: string;
  /** An attempt succeeded: the streak (if any) ended. */
  succeeded: boolean;
  /** Start of the first failed attempt after the batch's last success; null when none failed after it. */
  failingSince: number | null;
  /** The disabling matches a streak that began at or before this (the last failure's start - WEBHOOK_DISABLE_AFTER); -1: never. */
  cutoff: number;
  /** 1 when one of those failures was a 410 Gone: disabled at once. */
  gone: number;
}

/** Per subscription, in key order (two workers update webhook rows in one order): test attempts do not count. */
export function streakUpdates(completions: readonly AttemptCompletion[], disableAfterMs: number | null): StreakUpdate[] {
  const groups = new Map<string, AttemptCompletion['attempt'][]>();
  for (const { attempt, webhookId } of completions) {
    if (attempt.trigger === 'test') continue;
    const key = `${attempt.org_id}\u0000${webhookId}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = []));
    group.push(attempt);
  }
  const updates: StreakUpdate[] = [];
  for (const key of [...groups.keys()].sort()) {
    const attempts = groups.get(key)!.sort((a, b) => a.started_at - b.started_at);
    let lastSuccess = -1;
    attempts.forEach((a, i) => {
      if (a.outcome === 'success') lastSuccess = i;
    });
    const failures = attempts.slice(lastSuccess + 1);
    const [orgId, webhookId] = key.split('\u0000') as [string, string];
    const lastFailure = failures[failures.length - 1];
    updates.push({
      orgId,
      webhookId,
      succeeded: lastSuccess >= 0,
      failingSince: failures[0]?.started_at ?? null,
      cutoff: lastFailure && disableAfterMs !== null ? lastFailure.started_at - disableAfterMs : -1,
      gone: failures.some((a) => a.response_status === 410) ? 1 : 0,
    });
  }
  return updates;
}

// Still ours means still pending: a cancellation (subscription deleted) clears the lease. No `status` test,
// which would lead SQLite's planner onto the status index across the whole backlog.
const completeDeliveryQuery = (
  db: Executor,
  deliveryId: string,
  owner: string,
  status: DeliveryStatus,
  attemptCount: number,
  failureCount: number,
  nextAttemptAt: number | null,
  lastStatusCode: number | null,
  lastError: string | null,
  at: number,
) =>
  db
    .updateTable('deliveries')
    .set({
      status,
      attempt_count: attemptCount,
      failure_count: failureCount,
      next_attempt_at: nextAttemptAt,
      last_status_code: lastStatusCode,
      last_error: lastError,
      updated_at: at,
      lease_owner: null,
      lease_expires_at: null,
      replay_requested_at: null,
    })
    .where('id', '=', deliveryId)
    .where('lease_owner', '=', owner);
const completeDeliveryRow = prepared(9, completeDeliveryQuery);

/**
 * The queue's statements as Kysely builders, for the SQLite queue thread (sqlite-queue-thread.ts), which
 * compiles them once and runs them on its own connection: the same SQL as the repository's methods below.
 */
export const queueQueries = {
  dueScan,
  lease: leaseQuery,
  cancelUnsendable: cancelUnsendableQuery,
  claimed: claimedQuery,
  insertAttempt: insertAttemptQuery,
  completeDelivery: completeDeliveryQuery,
  addHourlyIfRecorded: addHourlyIfRecordedQuery,
  streakEnded: streakEndedQuery,
  streakStarted: streakStartedQuery,
  disableDue: disableDueQuery,
  headLease: headLeaseQuery,
  headClear: headClearQuery,
  earlierPending: earlierPendingQuery,
  promoteNext: promoteNextQuery,
  release: releaseQuery,
  rateRead: rateReadQuery,
  rateWrite: rateWriteQuery,
};

/** What `claimDueQueueItems` leases. */
export interface QueueClaimInput {
  owner: string;
  now: number;
  leaseMs: number;
  limit: number;
  /**
   * Candidates read; default 4 × limit (at most 1,000). Wider than the batch lets one busy subscription's
   * backlog not fill the whole claim; a caller that knows no subscription's room can cut the claim short
   * passes `limit`, which claims the same rows and reads no more than it takes.
   */
  window?: number | undefined;
  excludeWebhooks: string[];
  perWebhookRoom: (webhookId: string) => number;
  /** Filled with what the controls held back (rate-limited subscriptions and their next free start). */
  controls?: ClaimControls | undefined;
}

/** A claimed delivery as the queue loads it, before the controls decide whether it goes out now. */
export type LoadedDelivery = ClaimedDelivery & { seq: number; next_attempt_at: number | null };

/** A delivery leased by the worker, with what it needs to send: the event's stored body and the subscription. */
export interface ClaimedDelivery {
  id: string;
  org_id: string;
  event_id: string;
  webhook_id: string;
  event_type: string;
  attempt_count: number;
  failure_count: number;
  replay_requested_at: number | null;
  /** 1: a test event (one attempt, `X-Service-Test: true`, not counted for health). */
  test: number;
  body: string;
  /** The recording operation's trace context: each attempt continues it (a `traceparent` header). */
  trace_parent: string | null;
  url: string;
  /** Stored forms (sealed when WEBHOOK_SECRETS_KEY is set): the worker opens them. */
  secret: string;
  secret_previous: string | null;
  secret_previous_expires_at: number | null;
  /** 1: in its subscription's order (CONTRACT 14). */
  fifo: number;
  created_at: number;
  /** The subscription's attempts per second; null: no limit. */
  rate_limit: number | null;
  /** When it was due (the claim reads it; rate-limited waits are measured from it). */
  next_attempt_at?: number | null;
  /** Its reserved start (ms) under the subscription's rate limit; absent: at once. */
  not_before?: number;
}

/** What the controls decided in one claim, besides the deliveries that go out. */
export interface ClaimControls {
  /** Rate-limited subscriptions with no slot inside the horizon: their next free start (ms). */
  throttled: Record<string, number>;
}

export interface AttemptCompletion {
  attempt: Omit<DeliveryAttemptRow, 'seq' | 'held_reason' | 'held_ms'> & Partial<Pick<DeliveryAttemptRow, 'held_reason' | 'held_ms'>>;
  /** The delivery's subscription, for the hourly roll-up. */
  webhookId: string;
  /** In its subscription's order: finishing it clears the head lease and, when final, promotes the next. */
  fifo?: boolean;
  /** The delivery row's new state; applied only while the lease is still ours and it is still pending. */
  delivery: Pick<DeliveryRow, 'status' | 'attempt_count' | 'failure_count' | 'next_attempt_at' | 'last_status_code' | 'last_error'>;
}

/** One subscription's attempts in one epoch hour. */
export interface HourlyCount {
  orgId: string;
  webhookId: string;
  hour: number;
  delivered: number;
  failed: number;
}

/**
 * The delivery queue: the worker's cross-organisation operations, addressed by delivery id (the worker
 * serves every organisation), plus the one organisation-scoped change to an order (releaseOrder). The SQLite
 * queue thread runs the same statements from `queueQueries`.
 */
export function deliveryQueueRepository(ctx: RepoContext) {
  const { db, dialect } = ctx;

  /**
   * CONTRACT 14 at claim time, for the loaded rows of ordered or rate-limited subscriptions (the others
   * pass untouched). An ordered delivery goes only as its subscription's head: the first of the order
   * still pending, with the head lease. A rate-limited one goes with a reserved start inside the horizon,
   * spaced by the subscription's interval from every other start (rate_tat, read and moved under a row
   * lock, so all workers share it). What does not go is handed back unsent, due as before.
   */
  async function applyControls(rows: LoadedDelivery[], owner: string, now: number, expiresAt: number, controls: ClaimControls | undefined): Promise<LoadedDelivery[]> {
    const going: LoadedDelivery[] = [];
    const nowUs = now * 1000;
    const horizonUs = nowUs + RATE_HORIZON_MS * 1000;
    /** Per rate-limited subscription: the next free start (µs), once read under its row lock; null: locked elsewhere. */
    const tats = new Map<string, number | null>();
    for (const row of rows) {
      let head = false;
      if (row.fifo === 1) {
        const leased = (await (dialect === 'postgres' ? headLeasePostgres : headLeaseSqlite).all(ctx, row.webhook_id, row.id, expiresAt, now)).length > 0;
        if (leased && (await earlierPendingRow.all(ctx, row.webhook_id, row.seq)).length > 0) {
          // Not the first of its order (it committed out of sequence): the first goes before it.
          await headClearRow.all(ctx, row.webhook_id, row.id);
          await promoteNextRow.all(ctx, row.webhook_id, now);
        } else head = leased;
        if (!head) {
          await releaseRow.all(ctx, row.id, owner);
          continue;
        }
      }
      if (row.rate_limit !== null) {
        let tat = tats.get(row.webhook_id);
        if (tat === undefined) {
          const read = await (dialect === 'postgres' ? rateReadPostgres : rateReadSqlite).first(ctx, row.webhook_id);
          tat = read === undefined ? null : Number(read.rate_tat ?? 0);
          tats.set(row.webhook_id, tat);
        }
        const start = tat === null ? Infinity : Math.max(tat, nowUs);
        if (start > horizonUs) {
          await releaseRow.all(ctx, row.id, owner);
          if (head) await headClearRow.all(ctx, row.webhook_id, row.id);
          if (controls) controls.throttled[row.webhook_id] = start === Infinity ? now + 50 : Math.ceil(start / 1000);
          continue;
        }
        tats.set(row.webhook_id, start + rateIntervalUs(row.rate_limit));
        row.not_before = start / 1000;
      }
      going.push(row);
    }
    for (const [webhookId, tat] of tats) {
      if (tat !== null) await rateWriteRow.all(ctx, webhookId, tat);
    }
    return going;
  }

  /** Adds attempts to the hourly roll-up (in the transaction that records them). */
  async function addHourly(counts: readonly HourlyCount[]): Promise<void> {
    for (const c of counts) await addHourlyRow.all(ctx, c.orgId, c.webhookId, c.hour, c.delivered, c.failed);
  }

  return {
    /**
     * Runs inside a transaction. Leases up to `limit` due, unleased pending deliveries for `owner`, at most `perWebhook[id]` (or
     * `defaultPerWebhook`) per subscription and none of `excludeWebhooks`. The conditional UPDATE is the
     * claim: of two workers racing for a row, only one sees it unleased. PostgreSQL also skips rows another
     * worker is claiming at that instant instead of waiting on their locks.
     */
    async claimDueQueueItems(input: QueueClaimInput): Promise<ClaimedDelivery[]> {
      const { owner, now, leaseMs, limit, excludeWebhooks } = input;
      if (limit <= 0) return [];
      const window = Math.max(limit, Math.min(input.window ?? limit * 4, 1000));
      // The usual claim excludes no subscription: its scan is compiled once.
      let candidates: { seq: number; webhook_id: string }[];
      if (excludeWebhooks.length === 0) {
        candidates = await (dialect === 'postgres' ? dueScanPostgres : dueScanSqlite).all(ctx, now, window);
      } else {
        const ordered = dueScan(db, now, window).where('webhook_id', 'not in', excludeWebhooks);
        candidates = dialect === 'postgres' ? await ordered.forUpdate().skipLocked().execute() : await ordered.execute();
      }
      const taken = new Map<string, number>();
      const seqs: number[] = [];
      for (const c of candidates) {
        const used = taken.get(c.webhook_id) ?? 0;
        if (used >= input.perWebhookRoom(c.webhook_id)) continue;
        taken.set(c.webhook_id, used + 1);
        seqs.push(c.seq);
        if (seqs.length >= limit) break;
      }
      if (seqs.length === 0) return [];
      // No `status` test here: SQLite's planner would take the status index and walk the whole backlog
      // instead of the primary key. The caller's transaction keeps the candidates pending meanwhile (SQLite
      // holds the write lock from BEGIN IMMEDIATE; PostgreSQL locked them FOR UPDATE above), and the lease
      // test still lets only one claimer win a row.
      const seqsLeased: number[] = [];
      for (const seq of seqs) {
        if ((await leaseRow.all(ctx, seq, owner, now + leaseMs, now)).length > 0) seqsLeased.push(seq);
      }
      if (seqsLeased.length === 0) return [];
      // The subscription is checked and its secret read here, at claim time, the instant before sending.
      const rows: LoadedDelivery[] = [];
      for (const seq of seqsLeased) {
        const row = await claimedRow.first(ctx, seq, owner);
        if (row) rows.push(row);
      }
      rows.sort((x, y) => (x.next_attempt_at ?? 0) - (y.next_attempt_at ?? 0) || x.seq - y.seq);
      if (rows.length < seqsLeased.length) {
        // Pending without a subscription (the deletion's cancellation did not reach it), or of an organisation
        // being deleted: it never goes out.
        const found = new Set(rows.map((r) => r.seq));
        await db
          .updateTable('deliveries')
          .set((eb) => ({ status: 'cancelled', next_attempt_at: null, lease_owner: null, lease_expires_at: null, updated_at: now, cancel_reason: unsendableReason(eb) }))
          .where('seq', 'in', seqsLeased.filter((q) => !found.has(q)))
          .where('lease_owner', '=', owner)
          .execute();
      }
      const going = rows.some((r) => r.fifo === 1 || r.rate_limit !== null) ? await applyControls(rows, owner, now, now + leaseMs, input.controls) : rows;
      return going.map(({ seq: _seq, ...row }) => row);
    },

    /** Claimed deliveries the worker did not send (a start it reached too late): unleased, due as before, and no attempt. */
    async handBack(deliveryIds: readonly { id: string; webhookId: string; fifo: boolean }[], owner: string): Promise<void> {
      for (const d of deliveryIds) {
        await releaseRow.all(ctx, d.id, owner);
        if (d.fifo) await headClearRow.all(ctx, d.webhookId, d.id);
      }
    },

    /**
     * PostgreSQL's safety net for the order: a head that finished while a new delivery of its subscription
     * was being committed (each unseen by the other) leaves the order with no due time. This gives the
     * first pending delivery of every ordered subscription its due time, where it has none. SQLite never
     * needs it: its writes are one at a time, so each sees the other.
     */
    async promoteStalledHeadsAcrossOrgs(now: number): Promise<number> {
      const result = await db
        .updateTable('deliveries')
        .set({ next_attempt_at: now })
        .where('next_attempt_at', 'is', null)
        .where('status', '=', sql.lit('pending'))
        .where('fifo', '=', sql.lit(1))
        .where('seq', 'in', (eb) =>
          eb.selectFrom('deliveries as h').select((h) => h.fn.min('h.seq').as('seq')).where('h.status', '=', sql.lit('pending')).where('h.fifo', '=', sql.lit(1)).groupBy('h.webhook_id'),
        )
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** Ordering turned off: the subscription's waiting deliveries are due at once, as any unordered ones. */
    async releaseOrder(orgId: string, webhookId: string, at: number): Promise<number> {
      const result = await db
        .updateTable('deliveries')
        .set((eb) => ({ fifo: 0, next_attempt_at: eb.fn.coalesce('next_attempt_at', eb.val(at)) }))
        .where('org_id', '=', orgId)
        .where('webhook_id', '=', webhookId)
        .where('status', '=', sql.lit('pending'))
        .where('fifo', '=', sql.lit(1))
        .executeTakeFirst();
      await db.updateTable('webhooks').set({ fifo_head: null, fifo_head_expires_at: null }).where('org_id', '=', orgId).where('id', '=', webhookId).execute();
      const released = Number(result.numUpdatedRows);
      if (released > 0 && ctx.unit) ctx.unit.workCreated += released;
      return released;
    },

    /**
     * Records finished attempts and moves their deliveries on (the worker commits a batch of completions in
     * one transaction). Each update applies only if the delivery is still pending under our lease: a deletion
     * may have cancelled it meanwhile; the attempt is still history, but the cancellation stands. A delivery
     * that is gone (its organisation was deleted during the send) records nothing.
     */
    async completeQueueAttempts(owner: string, completions: AttemptCompletion[], at: number, disableAfterMs: number | null = null): Promise<void> {
      const recorded: AttemptCompletion[] = [];
      for (const completion of completions) {
        const { attempt: a, delivery: d } = completion;
        const inserted = await insertAttemptRow.all(ctx, a.id, a.org_id, a.delivery_id, a.attempt_number, a.trigger, a.started_at, a.duration_ms, a.request_headers, a.response_status, a.response_headers, a.response_body, a.error, a.outcome, a.held_reason ?? null, a.held_ms ?? null);
        if (inserted.length === 0) continue;
        recorded.push(completion);
        await completeDeliveryRow.all(ctx, a.delivery_id, owner, d.status, d.attempt_count, d.failure_count, d.next_attempt_at, d.last_status_code, d.last_error, at);
        if (completion.fifo) {
          await headClearRow.all(ctx, completion.webhookId, a.delivery_id);
          if (d.status !== 'pending') await promoteNextRow.all(ctx, completion.webhookId, at);
        }
      }
      await addHourly(hourlyCounts(recorded));
      for (const u of streakUpdates(recorded, disableAfterMs)) {
        if (u.succeeded) await streakEndedRow.all(ctx, u.orgId, u.webhookId);
        if (u.failingSince !== null) {
          await streakStartedRow.all(ctx, u.orgId, u.webhookId, u.failingSince);
          await disableDueRow.all(ctx, u.orgId, u.webhookId, u.gone, u.cutoff, at);
        }
      }
    },

    addHourly,

    /**
     * Embedded (SQLite) start-up: only one worker process runs on an embedded database, so every lease
     * left behind belongs to a dead process and goes back to the queue at once.
     */
    async releaseAllQueueLeasesAcrossOrgs(): Promise<number> {
      const result = await db
        .updateTable('deliveries')
        .set({ lease_owner: null, lease_expires_at: null })
        .where('lease_owner', 'is not', null)
        .executeTakeFirst();
      // So do the ordered subscriptions' head leases: the head is still the first of its order.
      await db.updateTable('webhooks').set({ fifo_head: null, fifo_head_expires_at: null }).where('fifo_head', 'is not', null).execute();
      return Number(result.numUpdatedRows);
    },

    /** The earliest time a pending, unleased delivery (outside `excludeWebhooks`) becomes due; null if none. */
    async nextQueueDueAt(now: number, excludeWebhooks: string[]): Promise<number | null> {
      let query = db
        .selectFrom('deliveries')
        .select('next_attempt_at')
        .where('status', '=', 'pending')
        .where('next_attempt_at', 'is not', null)
        .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]));
      if (excludeWebhooks.length > 0) query = query.where('webhook_id', 'not in', excludeWebhooks);
      // ORDER BY + LIMIT walks the queue index and stops at the first match (min() would scan the range).
      const row = await query.orderBy('next_attempt_at').limit(1).executeTakeFirst();
      return row?.next_attempt_at ?? null;
    },
  };
}
