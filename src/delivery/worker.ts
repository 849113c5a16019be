import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Dispatcher } from 'undici';
import type { Config } from '../config.js';
import { rateIntervalUs, type AttemptCompletion, type ClaimControls, type ClaimedDelivery } from '../db/repositories/delivery-queue-repo.js';
import type { DeliveryRow } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { storeDeliveryQueue, type DeliveryQueue, type HandBack, type QueueClaim } from '../db/delivery-queue.js';
import { newId } from '../lib/ids.js';
import type { Signal } from '../lib/signal.js';
import type { AttemptOutcome } from '../tracing/metrics.js';
import { HOUR_MS, type Clock } from '../lib/time.js';
import type { Tracing } from '../tracing/tracing.js';
import { sendAttempt, type AttemptRequest, type AttemptResult } from './sender.js';
import { retryAfterMs } from './retry-after.js';
import { createWakeTimer } from '../lib/wake-timer.js';
import { pacedBatches } from '../lib/paced-batches.js';
import { createSecretBox, type SecretBox } from '../lib/secret-box.js';
import type { SigningSecrets } from './signing.js';

/** A subscription URL as a span shows it: no query string or credentials, which may carry secrets. */
function safeUrl(url: string): { full: string; host: string; port: number } | null {
  try {
    const u = new URL(url);
    return { full: `${u.protocol}//${u.host}${u.pathname}`, host: u.hostname, port: Number(u.port) || (u.protocol === 'https:' ? 443 : 80) };
  } catch {
    return null;
  }
}

/** An attempt that never went out (its secret did not open): a failure with a reason, retried as any other. */
function unsent(startedAt: number, error: string): AttemptResult {
  return { success: false, startedAt, durationMs: 0, requestHeaders: {}, status: null, responseHeaders: null, responseBody: null, error };
}

/** Hours of the attempts-per-hour roll-up kept (31 days). */
const HOURLY_RETENTION_HOURS = 31 * 24;

/**
 * A rate-limited attempt starts within this of its reserved start or not at all (it is handed back, due
 * again): a start late by more would crowd the next one and let a receiver count R + 1 in a second.
 */
const LATE_START_MS = 10;
/** How often PostgreSQL's stalled ordered subscriptions are looked for (delivery-queue-repo, promoteStalledHeadsAcrossOrgs). */
const STALLED_HEADS_MS = 2000;

export interface DeliveryWorkerDeps {
  config: Config;
  store: Store;
  clock: Clock;
  logger: FastifyBaseLogger;
  waker: Signal;
  dispatcher: Dispatcher;
  /** Where the queue's transactions run; default `store.transaction` (closed by the caller). */
  queue?: DeliveryQueue;
  /** Called once per finished attempt, after its result and the delivery's next state are stored. */
  onAttemptFinished?: (outcome: AttemptOutcome) => void;
  /**
   * Other retention jobs (the audit log, expired sessions), run on the history-pruning cadence; each
   * returns how many rows it removed and is logged as `delivery worker: pruned <name>`.
   */
  housekeeping?: readonly { name: string; run: () => Promise<number> }[];
  /** Each attempt is a span continuing its event's trace (off: no span, the stored context is passed on). */
  tracing?: Tracing;
  /** Opens the stored (sealed) signing secrets; default: stored as given (no WEBHOOK_SECRETS_KEY). */
  secrets?: SecretBox;
}

/** An attempt sent, its outcome waiting to be recorded. */
interface Finished {
  completion: AttemptCompletion;
  outcome: AttemptOutcome;
}

export interface DeliveryWorkerTuning {
  /** Poll fallback for work created by other processes; default 1 s. */
  pollIntervalMs?: number;
  /** How long a claim is held; default 2 × WEBHOOK_TIMEOUT + 5 s (an attempt is bounded by one timeout). */
  leaseMs?: number;
  /** The most deliveries one claim takes; default 100. */
  claimBatchSize?: number;
  /** While attempts run or wait, room needed before a claim; default a quarter of WEBHOOK_CONCURRENCY. */
  claimThreshold?: number;
  /** How long a finished attempt may wait for a claim to share its transaction before it is recorded alone; default 10 ms. */
  recordDelayMs?: number;
  /** Deliveries claimed ahead of free slots; default half of WEBHOOK_CONCURRENCY. */
  readyLimit?: number;
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
 * The delivery loop. It claims due deliveries in bounded batches under a database lease and sends each
 * outside any transaction. A finished attempt frees its slot at once; its outcome (the attempt row and the
 * delivery's next state) is recorded by the next cycle, one short write transaction that records every
 * attempt finished since the last one and then claims for the free slots. The lease keeps the delivery
 * from being claimed again until then, and a crash before that commit sends it again once the lease is
 * gone (at least once). The global and per-subscription limits count attempts on the wire and are enforced
 * at claim time, so a slow endpoint holds only its own slots. It wakes on the container's waker (new
 * events), when enough slots are free, at the earliest due retry, and every poll interval.
 */
export function createDeliveryWorker(deps: DeliveryWorkerDeps, tuning: DeliveryWorkerTuning = {}): DeliveryWorker {
  const { config, store, clock, logger, dispatcher, tracing } = deps;
  const queue = deps.queue ?? storeDeliveryQueue(store, { disableAfterMs: config.webhookDisableAfterMs });
  const box = deps.secrets ?? createSecretBox([]);
  // The process id in the lease names the process holding a delivery (an operator's `ps`, a crash test).
  const owner = tuning.workerId ?? `wkr_${process.pid}_${randomBytes(6).toString('hex')}`;
  const pollMs = tuning.pollIntervalMs ?? 1000;
  const leaseMs = tuning.leaseMs ?? 2 * config.webhookTimeoutMs + 5_000;
  const batchSize = tuning.claimBatchSize ?? 100;
  const pruneMs = tuning.pruneIntervalMs ?? 10 * 60_000;
  const recordMs = tuning.recordDelayMs ?? 10;
  const schedule = config.webhookRetrySchedule;
  const globalLimit = config.webhookConcurrency;
  const perWebhookLimit = config.webhookPerSubscriptionConcurrency;
  const sendOptions = { dispatcher, timeoutMs: config.webhookTimeoutMs, now: () => clock.now() };

  // A claim waits until a useful batch is wanted (finishing attempts kick again): fewer, larger claims, each
  // sharing its transaction with the completions recorded in the meantime.
  const claimThreshold = Math.max(1, Math.min(batchSize, tuning.claimThreshold ?? Math.ceil(globalLimit / 4)));
  // Claimed ahead of free slots, so a freed slot starts its next attempt at once instead of waiting for the
  // next claim's transaction. Bounded: a claimed delivery waits at most one attempt's time (WEBHOOK_TIMEOUT)
  // for a slot, which the lease (2 × WEBHOOK_TIMEOUT + 5 s) covers.
  const readyLimit = Math.max(0, tuning.readyLimit ?? Math.ceil(globalLimit / 2));
  /** Per subscription: attempts on the wire plus claimed ones waiting (the per-subscription limit counts both). */
  const perWebhook = new Map<string, number>();
  /** Attempts on the wire (the global limit counts these); each settles within WEBHOOK_TIMEOUT. */
  const sends = new Set<Promise<void>>();
  /** Claimed, waiting for a free slot, in due order. */
  let ready: ClaimedDelivery[] = [];
  /** Claimed with a reserved start (rate-limited): each starts at its time, on its own timer. */
  const timed = new Map<ClaimedDelivery, NodeJS.Timeout>();
  /** Reached their reserved start too late: the next cycle gives them back unsent. */
  let handBacks: HandBack[] = [];
  /** Rate-limited subscriptions the last claims held back, until their next free start (ms). */
  const throttled = new Map<string, number>();
  let stalledCheckAt = 0;
  /** Attempts sent whose outcome is not recorded yet: the next cycle records them. */
  let finished: Finished[] = [];
  let stopping = false;
  let cycling: Promise<void> | null = null;
  let again = false;
  let recordTimer: NodeJS.Timeout | null = null;
  const timer = createWakeTimer(() => kick());
  const arm = (delayMs: number) => {
    if (!stopping) timer.arm(delayMs);
  };

  /** Subscriptions a claim leaves out: those at their concurrency limit, and rate-limited ones with no start free soon. */
  const saturated = () => {
    const now = clock.now();
    const out = [...perWebhook].filter(([, n]) => n >= perWebhookLimit).map(([id]) => id);
    for (const [id, until] of throttled) {
      // A claim may take a start up to RATE_HORIZON_MS ahead; until then it would only be handed back.
      if (until - 1000 > now) out.push(id);
      else throttled.delete(id);
    }
    return out;
  };
  /** Deliveries a claim may take now: free slots plus room in the ready queue. */
  const capacity = () => (stopping ? 0 : globalLimit + readyLimit - sends.size - ready.length - timed.size);

  /** Claims due work now (and records finished attempts); also what the waker and the timers call. */
  function kick(): void {
    if (cycling) {
      again = true;
      return;
    }
    cycling = cycles().finally(() => {
      cycling = null;
      if (again) kick();
    });
  }

  /**
   * One cycle is one short write transaction: the attempts finished since the last one are recorded, then
   * due deliveries are claimed. Cycles run one at a time, back to back while asked for.
   */
  async function cycles(): Promise<void> {
    for (;;) {
      again = false;
      const claimedAll = await cycle();
      if (!again && !claimedAll) return;
    }
  }

  /** Returns true when the claim filled its batch (more may be due at once). */
  async function cycle(): Promise<boolean> {
    if (recordTimer !== null) {
      clearTimeout(recordTimer);
      recordTimer = null;
    }
    const batch = finished;
    finished = [];
    const backs = handBacks;
    handBacks = [];
    const room = capacity();
    // Nothing running and nothing waiting: any room is worth a claim (a quiet queue, a single new event).
    const limit = room > 0 && (room >= claimThreshold || (sends.size === 0 && ready.length === 0)) ? Math.min(room, batchSize) : 0;
    if (batch.length === 0 && backs.length === 0 && limit === 0) return false;
    const now = clock.now();
    await promoteStalledHeads(now);
    let claimed: ClaimedDelivery[];
    const controls: ClaimControls = { throttled: {} };
    try {
      claimed = await queue.cycle(
        owner,
        batch.map((f) => f.completion),
        limit > 0 ? claimInput(now, limit, controls) : null,
        now,
        backs,
      );
    } catch (err) {
      // Hand-backs are tried again with the next cycle; when stopping, their leases simply run out (they
      // were never sent, and go out once the lease has expired).
      if (!stopping) handBacks.push(...backs);
      if (batch.length === 0) {
        logger.error({ err }, 'delivery worker: claim failed; retrying');
        arm(pollMs);
        return false;
      }
      // Each completion alone, so one that cannot be recorded fails alone; the claim waits for the next cycle.
      await recordEach(batch);
      again = true;
      return false;
    }
    recorded(batch);
    for (const [id, until] of Object.entries(controls.throttled)) throttled.set(id, until);
    for (const item of claimed) {
      perWebhook.set(item.webhook_id, (perWebhook.get(item.webhook_id) ?? 0) + 1);
      if (item.not_before === undefined) ready.push(item);
      else timed.set(item, setTimeout(startTimed, Math.max(0, item.not_before - clock.now()), item));
    }
    fill();
    // A throttled subscription may claim again once its next start comes inside the horizon.
    for (const until of Object.values(controls.throttled)) arm(Math.max(10, until - 1000 - clock.now()));
    if (limit === 0) return false;
    if (claimed.length > 0) return claimed.length >= limit && capacity() >= claimThreshold;
    // Nothing due now: sleep until the earliest retry, or the poll interval, whichever is sooner.
    let due: number | null;
    try {
      due = await queue.nextDueAt(clock.now(), saturated());
    } catch (err) {
      // The database is out (its outage is reported by /readyz): look again at the next poll, and never let
      // the rejection escape the loop (an unhandled rejection ends the process).
      logger.warn({ err }, 'delivery worker: could not read the next due time; polling');
      due = null;
    }
    arm(due === null ? pollMs : Math.min(pollMs, Math.max(10, due - clock.now())));
    return false;
  }

  /** PostgreSQL only, at most every STALLED_HEADS_MS; a failure waits for the next look. */
  async function promoteStalledHeads(now: number): Promise<void> {
    if (now < stalledCheckAt) return;
    stalledCheckAt = now + STALLED_HEADS_MS;
    try {
      await queue.promoteStalledHeads(now);
    } catch (err) {
      logger.warn({ err }, 'delivery worker: could not look for stalled ordered subscriptions');
    }
  }

  /**
   * A rate-limited delivery at its reserved start. It does not wait for a free slot (its start is its
   * own, counted in the claim's capacity): a late start would crowd the next one. Reached too late (the
   * event loop was held up), it is handed back unsent and claimed again with a new start.
   */
  function startTimed(item: ClaimedDelivery): void {
    timed.delete(item);
    if (clock.now() - item.not_before! > LATE_START_MS || stopping) {
      release(item);
      handBacks.push({ id: item.id, webhookId: item.webhook_id, fifo: item.fifo === 1 });
      kick();
      return;
    }
    start(item);
  }

  /** The subscription's count of claimed-or-sending deliveries, less one. */
  function release(item: ClaimedDelivery): void {
    const left = (perWebhook.get(item.webhook_id) ?? 1) - 1;
    if (left <= 0) perWebhook.delete(item.webhook_id);
    else perWebhook.set(item.webhook_id, left);
  }

  function claimInput(now: number, limit: number, controls: ClaimControls): QueueClaim {
    const exclude = saturated();
    // Candidates beyond the batch are needed only when a subscription's room could cut the claim short.
    let tightest = perWebhookLimit;
    for (const n of perWebhook.values()) tightest = Math.min(tightest, perWebhookLimit - n);
    return {
      now,
      leaseMs,
      limit,
      window: tightest >= limit ? limit : undefined,
      excludeWebhooks: exclude,
      perWebhookRoom: (id: string) => perWebhookLimit - (perWebhook.get(id) ?? 0),
      defaultRoom: perWebhookLimit,
      busyWebhooks: [...perWebhook.keys()],
      controls,
    };
  }

  async function recordEach(batch: Finished[]): Promise<void> {
    for (const f of batch) {
      try {
        await queue.cycle(owner, [f.completion], null, clock.now());
        recorded([f]);
      } catch (err) {
        // The delivery stays leased: it goes out again once the lease expires (at least once).
        logger.error({ err, delivery_id: f.completion.attempt.delivery_id }, 'delivery worker: attempt bookkeeping failed');
      }
    }
  }

  /** After the commit that holds them: metrics, and a timer for the earliest retry. */
  function recorded(batch: Finished[]): void {
    let retryAt = Infinity;
    for (const f of batch) {
      deps.onAttemptFinished?.(f.outcome);
      const next = f.completion.delivery.next_attempt_at;
      if (f.outcome === 'retry_scheduled' && next !== null && next < retryAt) retryAt = next;
    }
    if (retryAt !== Infinity) arm(Math.max(10, retryAt - clock.now()));
  }

  /** Starts waiting deliveries while slots are free. */
  function fill(): void {
    if (ready.length === 0 || sends.size >= globalLimit) return;
    const n = Math.min(ready.length, globalLimit - sends.size);
    const starting = ready.length === n ? ready : ready.slice(0, n);
    ready = ready.length === n ? [] : ready.slice(n);
    for (const item of starting) start(item);
  }

  /**
   * One attempt, traced when tracing is on: a client span whose parent is the trace context stored with the
   * event (the request that caused it), and whose own context travels to the receiver in `traceparent`.
   */
  function attempt(item: ClaimedDelivery, attemptNumber: number): Promise<AttemptResult> {
    let secrets: SigningSecrets;
    try {
      secrets = signingSecrets(item, clock.now());
    } catch (err) {
      // Start-up checks the key against every stored secret; a value that still does not open is not sent
      // unsigned or badly signed: the attempt fails and is retried on the schedule.
      logger.error({ err, webhook_id: item.webhook_id }, 'delivery worker: cannot open the signing secret');
      return Promise.resolve(unsent(clock.now(), 'signing secret unavailable: it does not open with WEBHOOK_SECRETS_KEY'));
    }
    const request: AttemptRequest = {
      url: item.url,
      secrets,
      body: item.body,
      eventType: item.event_type,
      eventId: item.event_id,
      deliveryId: item.id,
      attemptNumber,
      traceparent: item.trace_parent,
      test: item.test === 1,
    };
    if (!tracing?.enabled) return sendAttempt(request, sendOptions);
    const target = safeUrl(item.url);
    const attributes = {
      'http.request.method': 'POST',
      ...(target ? { 'url.full': target.full, 'server.address': target.host, 'server.port': target.port } : {}),
      'webhook.id': item.webhook_id,
      'webhook.event': item.event_type,
      'webhook.event_id': item.event_id,
      'webhook.delivery_id': item.id,
      'webhook.attempt': attemptNumber,
      'workspace.organization_id': item.org_id,
    };
    return tracing.span(`POST webhook ${item.event_type}`, { kind: 'client', parent: item.trace_parent, attributes }, async (span) => {
      const result = await sendAttempt({ ...request, traceparent: span.traceparent ?? item.trace_parent }, sendOptions);
      if (result.status !== null) span.setAttributes({ 'http.response.status_code': result.status });
      if (!result.success) span.fail(result.error ?? 'delivery failed');
      return result;
    });
  }

  /** The secrets valid now: the current one, and a rotated-out one until its expiry (CONTRACT 11). */
  function signingSecrets(item: ClaimedDelivery, now: number): SigningSecrets {
    const previousValid = item.secret_previous !== null && item.secret_previous_expires_at !== null && item.secret_previous_expires_at > now;
    return { current: box.open(item.secret), previous: previousValid ? box.open(item.secret_previous!) : null };
  }

  function start(item: ClaimedDelivery): void {
    const attemptNumber = item.attempt_count + 1;
    const send = attempt(item, attemptNumber)
      .then((result) => {
        sends.delete(send);
        release(item);
        finished.push(completionOf(item, attemptNumber, result));
        // The slot goes to the next claimed delivery at once; this outcome is recorded by the next cycle (the
        // lease holds the delivery until then). A cycle starts now when a claim is worth it, else within recordMs.
        fill();
        if (capacity() >= claimThreshold || (sends.size === 0 && ready.length === 0)) kick();
        else recordTimer ??= setTimeout(kick, recordMs);
      })
      // completionOf is pure; should bookkeeping here ever throw, the attempt is logged, not lost silently.
      .catch((err: unknown) => logger.error({ err, delivery_id: item.id }, 'delivery worker: attempt bookkeeping failed'));
    sends.add(send);
  }

  function completionOf(item: ClaimedDelivery, attemptNumber: number, result: AttemptResult): Finished {
    const now = clock.now();
    const replay = item.replay_requested_at !== null;
    const test = item.test === 1 && !replay;
    let next: Pick<DeliveryRow, 'status' | 'failure_count' | 'next_attempt_at'>;
    if (result.success) {
      next = { status: 'delivered', failure_count: item.failure_count, next_attempt_at: null };
    } else if (replay || test) {
      // A replay or a test event is one attempt outside the schedule: its failure leaves the delivery failed, no retries.
      next = { status: 'failed', failure_count: item.failure_count, next_attempt_at: null };
    } else {
      const failures = item.failure_count + 1;
      const delay = schedule[failures - 1];
      // A 429 or 503 may ask for a later retry (CONTRACT 14), never an extra attempt.
      const asked = result.status === 429 || result.status === 503 ? retryAfterMs(result.responseHeaders?.['retry-after'], now) : null;
      const wait = delay === undefined ? 0 : Math.max(delay, Math.min(asked ?? 0, config.webhookRetryAfterMaxMs));
      next =
        delay === undefined
          ? { status: 'failed', failure_count: failures, next_attempt_at: null }
          : { status: 'pending', failure_count: failures, next_attempt_at: now + wait };
    }
    const held = heldFor(item, result.startedAt);
    return {
      outcome: next.status === 'delivered' ? 'delivered' : next.status === 'pending' ? 'retry_scheduled' : 'failed',
      completion: {
        webhookId: item.webhook_id,
        fifo: item.fifo === 1,
        attempt: {
          id: newId('att'),
          org_id: item.org_id,
          delivery_id: item.id,
          attempt_number: attemptNumber,
          trigger: replay ? 'replay' : test ? 'test' : 'automatic',
          started_at: result.startedAt,
          duration_ms: result.durationMs,
          request_headers: JSON.stringify(result.requestHeaders),
          response_status: result.status,
          response_headers: result.responseHeaders === null ? null : JSON.stringify(result.responseHeaders),
          response_body: result.responseBody,
          error: result.error,
          outcome: result.success ? 'success' : 'failure',
          held_reason: held?.reason ?? null,
          held_ms: held?.ms ?? null,
        },
        delivery: {
          ...next,
          attempt_count: attemptNumber,
          last_status_code: result.status,
          last_error: result.error,
        },
      },
    };
  }

  /**
   * Why an attempt started later than it was due, for the history: the rate limit (more than one interval
   * after its due time), or, for the first attempt of an ordered delivery, the earlier ones of its order.
   */
  function heldFor(item: ClaimedDelivery, startedAt: number): { reason: 'rate_limit' | 'order'; ms: number } | null {
    const due = item.next_attempt_at ?? null;
    if (due === null) return null;
    if (item.rate_limit !== null && startedAt - due > rateIntervalUs(item.rate_limit) / 1000) return { reason: 'rate_limit', ms: Math.round(startedAt - due) };
    if (item.fifo === 1 && item.attempt_count === 0 && due - item.created_at > 0) return { reason: 'order', ms: due - item.created_at };
    return null;
  }

  /**
   * Retention: delivered and failed history, events no delivery refers to, the hourly roll-up. Each in
   * small batches that pause between them (pacedBatches), so a million rows due never stall the API's writes.
   */
  async function prune(): Promise<void> {
    const now = clock.now();
    const stop = { stopping: () => stopping };
    const removed = await pacedBatches(
      (batchSize) => store.transaction((repos) => repos.deliveryRetention.pruneHistoryBatchAcrossOrgs({ deliveredBefore: now - config.deliveredRetentionMs, failedBefore: now - config.failedRetentionMs, batchSize })),
      { size: 100, ...stop },
    );
    // GET /v1/events shows EVENT_RETENTION of events; one a delivery still refers to stays for that delivery.
    const eventsBefore = now - config.eventRetentionMs;
    await pacedBatches((size) => store.repos.deliveryRetention.pruneOrphanEventsBatchAcrossOrgs(eventsBefore, size), { size: 200, ...stop });
    // The hourly roll-up outlives the 24 hours the charts show, for a month of figures.
    await store.repos.deliveryRetention.pruneHourlyAcrossOrgs(Math.floor(now / HOUR_MS) - HOURLY_RETENTION_HOURS);
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
    inFlight: () => sends.size,
    async stop() {
      stopping = true;
      unsubscribe();
      clearTimeout(firstPrune);
      clearInterval(pruneTimer);
      timer.clear();
      // Attempts under way finish (each is bounded by WEBHOOK_TIMEOUT) and their outcomes are recorded.
      // Deliveries claimed but not started go out too: they are leased to this process.
      // Reserved starts not reached yet go back unsent: the next claim, here or elsewhere, takes them.
      for (const [item, t] of timed) {
        clearTimeout(t);
        release(item);
        handBacks.push({ id: item.id, webhookId: item.webhook_id, fifo: item.fifo === 1 });
      }
      timed.clear();
      while (sends.size > 0 || cycling || finished.length > 0 || ready.length > 0 || handBacks.length > 0) {
        fill();
        if (sends.size > 0) await Promise.allSettled([...sends]);
        else if (cycling) await cycling;
        else kick();
      }
      if (recordTimer !== null) clearTimeout(recordTimer);
    },
  };
}
