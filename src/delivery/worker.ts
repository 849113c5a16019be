import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Dispatcher } from 'undici';
import type { Config } from '../config.js';
import type { AttemptCompletion, ClaimedDelivery } from '../db/repositories/deliveries-repo.js';
import type { DeliveryRow } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { newId } from '../lib/ids.js';
import type { Signal } from '../lib/signal.js';
import type { AttemptOutcome } from '../lib/metrics.js';
import { HOUR_MS, type Clock } from '../lib/time.js';
import { sendAttempt, type AttemptResult } from './sender.js';
import { createWakeTimer } from '../lib/wake-timer.js';

/** Hours of the attempts-per-hour roll-up kept (31 days). */
const HOURLY_RETENTION_HOURS = 31 * 24;

export interface DeliveryWorkerDeps {
  config: Config;
  store: Store;
  clock: Clock;
  logger: FastifyBaseLogger;
  waker: Signal;
  dispatcher: Dispatcher;
  /** Called once per finished attempt, after its result and the delivery's next state are stored. */
  onAttemptFinished?: (outcome: AttemptOutcome) => void;
  /**
   * Other retention jobs (the audit log, expired sessions), run on the history-pruning cadence; each
   * returns how many rows it removed and is logged as `delivery worker: pruned <name>`.
   */
  housekeeping?: readonly { name: string; run: () => Promise<number> }[];
}

export interface DeliveryWorkerTuning {
  /** Poll fallback for work created by other processes; default 1 s. */
  pollIntervalMs?: number;
  /** How long a claim is held; default 2 × WEBHOOK_TIMEOUT + 5 s (an attempt is bounded by one timeout). */
  leaseMs?: number;
  /** The most deliveries one claim takes; default 100. */
  claimBatchSize?: number;
  /** How often history is pruned; default 10 min (first run 5 s after start). */
  pruneIntervalMs?: number;
  /** Identifies this process's leases; default random. */
  workerId?: string;
}

export interface DeliveryWorker {
  /** Claims due work now (also what the waker and the timers call). */
  kick(): void;
  stop(): Promise<void>;
  /** Deliveries currently being sent. */
  inFlight(): number;
}

/**
 * The delivery loop. It claims due deliveries in bounded batches under a database lease, sends each
 * outside any transaction, and records the attempt and the next state in one short transaction. The
 * global and per-subscription limits are enforced at claim time, so a slow endpoint holds only its own
 * slots. It wakes on the container's waker (new events), when a slot frees, at the earliest due retry,
 * and every poll interval.
 */
export function createDeliveryWorker(deps: DeliveryWorkerDeps, tuning: DeliveryWorkerTuning = {}): DeliveryWorker {
  const { config, store, clock, logger, dispatcher } = deps;
  const owner = tuning.workerId ?? `wkr_${randomBytes(8).toString('hex')}`;
  const pollMs = tuning.pollIntervalMs ?? 1000;
  const leaseMs = tuning.leaseMs ?? 2 * config.webhookTimeoutMs + 5_000;
  const batchSize = tuning.claimBatchSize ?? 100;
  const pruneMs = tuning.pruneIntervalMs ?? 10 * 60_000;
  const schedule = config.webhookRetrySchedule;
  const globalLimit = config.webhookConcurrency;
  const perWebhookLimit = config.webhookPerSubscriptionConcurrency;

  const claimThreshold = Math.max(1, Math.min(batchSize, Math.ceil(globalLimit / 4)));
  const perWebhook = new Map<string, number>();
  const running = new Set<Promise<void>>();
  let stopping = false;
  let pumping = false;
  let pumpAgain = false;
  const timer = createWakeTimer(() => kick());
  const arm = (delayMs: number) => timer.arm(delayMs);

  const saturated = () => [...perWebhook].filter(([, n]) => n >= perWebhookLimit).map(([id]) => id);

  function kick(): void {
    if (stopping) return;
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    void pump().finally(() => {
      pumping = false;
      if (pumpAgain && !stopping) {
        pumpAgain = false;
        kick();
      }
    });
  }

  async function pump(): Promise<void> {
    try {
      for (;;) {
        pumpAgain = false;
        const room = globalLimit - running.size;
        // While attempts run, wait until a useful batch of slots is free: finishing attempts kick again.
        if (stopping || room <= 0 || (running.size > 0 && room < claimThreshold)) return;
        const now = clock.now();
        const exclude = saturated();
        const claimed = await store.transaction((repos) =>
          repos.deliveries.claimDueQueueItems({
            owner,
            now,
            leaseMs,
            limit: Math.min(room, batchSize),
            excludeWebhooks: exclude,
            perWebhookRoom: (id) => perWebhookLimit - (perWebhook.get(id) ?? 0),
          }),
        );
        for (const item of claimed) start(item);
        if (claimed.length > 0) continue;
        // Nothing due now: sleep until the earliest retry, or the poll interval, whichever is sooner.
        const due = await store.repos.deliveries.nextQueueDueAt(clock.now(), saturated());
        const wait = due === null ? pollMs : Math.min(pollMs, Math.max(10, due - clock.now()));
        arm(wait);
        if (!pumpAgain) return;
      }
    } catch (err) {
      logger.error({ err }, 'delivery worker: claim failed; retrying');
      arm(pollMs);
    }
  }

  function start(item: ClaimedDelivery): void {
    perWebhook.set(item.webhook_id, (perWebhook.get(item.webhook_id) ?? 0) + 1);
    const task = deliver(item)
      .catch((err) => logger.error({ err, delivery_id: item.id }, 'delivery worker: attempt bookkeeping failed'))
      .finally(() => {
        running.delete(task);
        const left = (perWebhook.get(item.webhook_id) ?? 1) - 1;
        if (left <= 0) perWebhook.delete(item.webhook_id);
        else perWebhook.set(item.webhook_id, left);
        kick();
      });
    running.add(task);
  }

  async function deliver(item: ClaimedDelivery): Promise<void> {
    const attemptNumber = item.attempt_count + 1;
    const result = await sendAttempt(
      {
        url: item.url,
        secret: item.secret,
        body: item.body,
        eventType: item.event_type,
        eventId: item.event_id,
        deliveryId: item.id,
        attemptNumber,
      },
      { dispatcher, timeoutMs: config.webhookTimeoutMs, now: () => clock.now() },
    );
    await complete(item, attemptNumber, result);
  }

  async function complete(item: ClaimedDelivery, attemptNumber: number, result: AttemptResult): Promise<void> {
    const now = clock.now();
    const replay = item.replay_requested_at !== null;
    let next: Pick<DeliveryRow, 'status' | 'failure_count' | 'next_attempt_at'>;
    if (result.success) {
      next = { status: 'delivered', failure_count: item.failure_count, next_attempt_at: null };
    } else if (replay) {
      // A replay is one attempt outside the schedule: its failure leaves the delivery failed, no retries.
      next = { status: 'failed', failure_count: item.failure_count, next_attempt_at: null };
    } else {
      const failures = item.failure_count + 1;
      const delay = schedule[failures - 1];
      next =
        delay === undefined
          ? { status: 'failed', failure_count: failures, next_attempt_at: null }
          : { status: 'pending', failure_count: failures, next_attempt_at: now + delay };
    }
    await commitCompletion({
        webhookId: item.webhook_id,
        attempt: {
          id: newId('att'),
          org_id: item.org_id,
          delivery_id: item.id,
          attempt_number: attemptNumber,
          trigger: replay ? 'replay' : 'automatic',
          started_at: result.startedAt,
          duration_ms: result.durationMs,
          request_headers: JSON.stringify(result.requestHeaders),
          response_status: result.status,
          response_headers: result.responseHeaders === null ? null : JSON.stringify(result.responseHeaders),
          response_body: result.responseBody,
          error: result.error,
          outcome: result.success ? 'success' : 'failure',
        },
        delivery: {
          ...next,
          attempt_count: attemptNumber,
          last_status_code: result.status,
          last_error: result.error,
        },
      });
    deps.onAttemptFinished?.(next.status === 'delivered' ? 'delivered' : next.status === 'pending' ? 'retry_scheduled' : 'failed');
    if (next.status === 'pending' && next.next_attempt_at !== null) arm(Math.max(10, next.next_attempt_at - clock.now()));
  }

  // Group commit: completions that finish close together share one short transaction.
  let completions: { completion: AttemptCompletion; done: (err?: unknown) => void }[] = [];
  function commitCompletion(completion: AttemptCompletion): Promise<void> {
    return new Promise((resolve, reject) => {
      completions.push({ completion, done: (err) => (err === undefined ? resolve() : reject(err)) });
      // A few milliseconds of grouping turn many small write transactions into one.
      if (completions.length === 1) setTimeout(flushCompletions, 5);
    });
  }
  function flushCompletions(): void {
    const batch = completions;
    completions = [];
    store
      .transaction((repos) => repos.deliveries.completeQueueAttempts(owner, batch.map((b) => b.completion), clock.now()))
      .then(
        () => batch.forEach((b) => b.done()),
        (err: unknown) => batch.forEach((b) => b.done(err ?? new Error('completion failed'))),
      );
  }

  async function prune(): Promise<void> {
    const now = clock.now();
    const cutoffs = { deliveredBefore: now - config.deliveredRetentionMs, failedBefore: now - config.failedRetentionMs, batchSize: 500 };
    let removed = 0;
    while (!stopping) {
      const n = await store.transaction((repos) => repos.deliveries.pruneHistoryBatchAcrossOrgs(cutoffs));
      removed += n;
      if (n < cutoffs.batchSize) break;
    }
    const eventsBefore = now - Math.max(config.deliveredRetentionMs, config.failedRetentionMs);
    while (!stopping) {
      const n = await store.repos.deliveries.pruneOrphanEventsBatchAcrossOrgs(eventsBefore, 500);
      if (n < 500) break;
    }
    // The hourly roll-up outlives the 24 hours the charts show, for a month of figures.
    await store.repos.deliveries.pruneHourlyAcrossOrgs(Math.floor(now / HOUR_MS) - HOURLY_RETENTION_HOURS);
    if (removed > 0) logger.info({ removed }, 'delivery worker: pruned delivery history');
  }

  const unsubscribe = deps.waker.subscribe(() => kick());
  async function housekeep(job: { name: string; run: () => Promise<number> }): Promise<void> {
    if (stopping) return;
    const removed = await job.run();
    if (removed > 0) logger.info({ removed }, `delivery worker: pruned ${job.name}`);
  }

  // Each runs on its own: a failure of one does not hold back the others.
  const runPrune = () => {
    void prune().catch((err) => logger.error({ err }, 'delivery worker: pruning failed'));
    for (const job of deps.housekeeping ?? []) {
      void housekeep(job).catch((err) => logger.error({ err }, `delivery worker: pruning ${job.name} failed`));
    }
  };
  const firstPrune = setTimeout(runPrune, Math.min(5000, pruneMs));
  const pruneTimer = setInterval(runPrune, pruneMs);
  firstPrune.unref?.();
  pruneTimer.unref?.();
  kick();

  return {
    kick,
    inFlight: () => running.size,
    async stop() {
      stopping = true;
      unsubscribe();
      clearTimeout(firstPrune);
      clearInterval(pruneTimer);
      timer.clear();
      // Attempts under way finish (each is bounded by WEBHOOK_TIMEOUT) and record their outcome.
      while (running.size > 0 || pumping) {
        await Promise.allSettled([...running]);
        if (pumping) await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
  };
}
