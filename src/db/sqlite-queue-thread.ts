import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Compilable, Kysely } from 'kysely';
import type BetterSqlite3 from 'better-sqlite3';
import { HOUR_MS } from '../lib/time.js';
import type { DeliveryQueue, HandBack, QueueClaim } from './delivery-queue-contract.js';
import { queueQueries, RATE_HORIZON_MS, RATE_MARGIN_MS, streakUpdates, type AttemptCompletion, type LoadedDelivery } from './repositories/delivery-queue-repo.js';
import type { DB } from './schema.js';

/**
 * The delivery worker's queue on SQLite, run by a thread with its own connection to the database file.
 *
 * better-sqlite3 answers on the thread that calls it, so on the event loop every statement, every COMMIT
 * (WAL writes) and every checkpoint (two fsyncs) is time no attempt is sent or answered: 40 % of the event
 * loop during a drain (docs/decisions.md, "Issue 11"). Here the event loop sends each cycle (the finished
 * attempts to record, what to claim) in one message; the thread runs it as one transaction and answers with
 * the claimed deliveries.
 *
 * One writer: while the thread runs a transaction, the event loop holds the main connection (Kysely's
 * connection lock), so this process's other units of work wait their turn without ever meeting the
 * thread's write lock (they would block the event loop in busy_timeout). Other processes wait on
 * busy_timeout as for any write. The SQL is the repository's (`queueQueries`), compiled once here.
 */

/** A statement compiled by Kysely: its SQL, and for each parameter the builder argument (or -1, a constant). */
interface StatementSpec {
  sql: string;
  slots: number[];
  constants: unknown[];
}

type StatementName =
  | 'insertAttempt'
  | 'completeDelivery'
  | 'addHourly'
  | 'dueScan'
  | 'lease'
  | 'cancelUnsendable'
  | 'claimed'
  | 'streakEnded'
  | 'streakStarted'
  | 'disableDue'
  | 'headLease'
  | 'headClear'
  | 'earlierPending'
  | 'promoteNext'
  | 'release'
  | 'rateRead'
  | 'rateWrite';

interface ThreadData {
  file: string;
  driver: string;
  pragmas: string[];
  statements: Record<StatementName, StatementSpec>;
}

/**
 * One finished attempt, flat: 0-12 the attempt row's columns as insertAttempt takes them (id, org_id,
 * delivery_id, attempt_number, trigger, started_at, duration_ms, request_headers, response_status,
 * response_headers, response_body, error, outcome), 13 the subscription, 14-19 the delivery's next state
 * (status, attempt_count, failure_count, next_attempt_at, last_status_code, last_error), 20 the epoch hour,
 * 21 1 when the delivery is in its subscription's order, 22-23 held_reason and held_ms.
 */
type CompletionRecord = unknown[];

interface CycleRequest {
  id: number;
  owner: string;
  at: number;
  completions: CompletionRecord[];
  /** The failure streaks these completions start or end (streakUpdates): [org, webhook, succeeded, failingSince, cutoff, gone]. */
  streaks: [string, string, boolean, number | null, number, number][];
  /** Claimed deliveries given back unsent: [id, webhook, in order]. */
  handBacks: [string, string, boolean][];
  claim: {
    now: number;
    expiresAt: number;
    limit: number;
    window: number;
    /** The scan excluding saturated subscriptions (its arguments: now, window, then the ids). */
    excluding: StatementSpec | null;
    exclude: string[];
    /** Room of the subscriptions that have attempts under way; any other has `defaultRoom`. */
    rooms: [string, number][];
    defaultRoom: number;
    /** RATE_HORIZON_MS and RATE_MARGIN_MS. */
    horizonMs: number;
    marginMs: number;
  } | null;
}

interface CycleReply {
  id: number;
  claimed?: ClaimedRow[];
  /** Rate-limited subscriptions held back by the claim, with their next free start (ms). */
  throttled?: Record<string, number>;
  error?: { message: string; code?: string; name?: string };
}

type ClaimedRow = LoadedDelivery;

/**
 * The thread's whole program. It is started from its source text (eval), so it may use nothing outside its
 * own body; `load` is the thread's `require`. A cycle that fails anywhere is rolled back as a whole.
 */
function queueThreadMain(load: NodeRequire): void {
  const { parentPort, workerData } = load('node:worker_threads') as typeof import('node:worker_threads');
  const data = workerData as ThreadData;
  const Database = load(data.driver) as typeof BetterSqlite3;
  const db = new Database(data.file, { fileMustExist: true });
  for (const pragma of data.pragmas) db.pragma(pragma);
  const prepared = new Map<string, { statement: BetterSqlite3.Statement; spec: StatementSpec }>();
  const prepare = (spec: StatementSpec) => {
    let entry = prepared.get(spec.sql);
    if (entry === undefined) prepared.set(spec.sql, (entry = { statement: db.prepare(spec.sql), spec }));
    return entry;
  };
  // Parameters in the compiled statement's order, from the builder's arguments.
  const bind = (spec: StatementSpec, args: unknown[]) => spec.slots.map((slot, i) => (slot >= 0 ? args[slot] : spec.constants[i]));
  const s = data.statements;
  const insertAttempt = prepare(s.insertAttempt);
  const completeDelivery = prepare(s.completeDelivery);
  const addHourly = prepare(s.addHourly);
  const dueScan = prepare(s.dueScan);
  const lease = prepare(s.lease);
  const cancelUnsendable = prepare(s.cancelUnsendable);
  const claimed = prepare(s.claimed);
  const streakEnded = prepare(s.streakEnded);
  const streakStarted = prepare(s.streakStarted);
  const disableDue = prepare(s.disableDue);
  const headLease = prepare(s.headLease);
  const headClear = prepare(s.headClear);
  const earlierPending = prepare(s.earlierPending);
  const promoteNext = prepare(s.promoteNext);
  const release = prepare(s.release);
  const rateRead = prepare(s.rateRead);
  const rateWrite = prepare(s.rateWrite);
  const run = (entry: { statement: BetterSqlite3.Statement; spec: StatementSpec }, args: unknown[]) => entry.statement.run(...bind(entry.spec, args)).changes;
  const begin = db.prepare('begin immediate');
  const commit = db.prepare('commit');

  parentPort!.on('message', (request: CycleRequest) => {
    try {
      begin.run();
      const { owner, at } = request;
      // Per subscription and hour: [delivery id of a recorded attempt, org, webhook, hour, delivered, failed].
      const hourly = new Map<string, [unknown, unknown, unknown, unknown, number, number]>();
      for (const c of request.completions) {
        const deliveryId = c[2];
        // Recorded only while the delivery exists; its state moves on only while the lease is ours.
        if (insertAttempt.statement.run(...bind(insertAttempt.spec, [...c.slice(0, 13), c[22], c[23]])).changes === 0) continue;
        completeDelivery.statement.run(...bind(completeDelivery.spec, [deliveryId, owner, c[14], c[15], c[16], c[17], c[18], c[19], at]));
        // A head of an order: its lease ends, and once it is final the next of the order becomes due.
        if (c[21] === 1) {
          run(headClear, [c[13], deliveryId]);
          if (c[14] !== 'pending') run(promoteNext, [c[13], at]);
        }
        // Test events stay out of the subscription's health figures.
        if (c[4] === 'test') continue;
        const key = `${String(c[1])} ${String(c[13])} ${String(c[20])}`;
        let count = hourly.get(key);
        if (count === undefined) hourly.set(key, (count = [deliveryId, c[1], c[13], c[20], 0, 0]));
        count[c[12] === 'success' ? 4 : 5]++;
      }
      for (const count of hourly.values()) addHourly.statement.run(...bind(addHourly.spec, count));
      for (const [orgId, webhookId, succeeded, failingSince, cutoff, gone] of request.streaks) {
        if (succeeded) streakEnded.statement.run(...bind(streakEnded.spec, [orgId, webhookId]));
        if (failingSince !== null) {
          streakStarted.statement.run(...bind(streakStarted.spec, [orgId, webhookId, failingSince]));
          disableDue.statement.run(...bind(disableDue.spec, [orgId, webhookId, gone, cutoff, at]));
        }
      }
      for (const [id, webhookId, fifo] of request.handBacks) {
        run(release, [id, owner]);
        if (fifo) run(headClear, [webhookId, id]);
      }
      let rows: ClaimedRow[] = [];
      const throttled: Record<string, number> = {};
      const claim = request.claim;
      if (claim !== null) {
        const scan = claim.excluding ? prepare(claim.excluding) : dueScan;
        const candidates = scan.statement.all(...bind(scan.spec, [claim.now, claim.window, ...claim.exclude])) as { seq: number; webhook_id: string }[];
        // The same choice as claimDueQueueItems: in due order, at most each subscription's room.
        const rooms = new Map(claim.rooms);
        const taken = new Map<string, number>();
        let count = 0;
        for (const candidate of candidates) {
          if (count >= claim.limit) break;
          const used = taken.get(candidate.webhook_id) ?? 0;
          if (used >= (rooms.get(candidate.webhook_id) ?? claim.defaultRoom)) continue;
          taken.set(candidate.webhook_id, used + 1);
          count++;
          const seq = candidate.seq;
          if (lease.statement.run(...bind(lease.spec, [seq, owner, claim.expiresAt, claim.now])).changes === 0) continue;
          const row = claimed.statement.get(...bind(claimed.spec, [seq, owner])) as ClaimedRow | undefined;
          if (row !== undefined) rows.push(row);
          // Without a subscription, an event or a live organisation it never goes out.
          else cancelUnsendable.statement.run(...bind(cancelUnsendable.spec, [seq, owner, claim.now]));
        }
        // The controls of ordered and rate-limited subscriptions, as the repository's applyControls.
        if (rows.some((r) => r.fifo === 1 || r.rate_limit !== null)) {
          const going: ClaimedRow[] = [];
          const nowUs = claim.now * 1000;
          const horizonUs = nowUs + claim.horizonMs * 1000;
          const tats = new Map<string, number>();
          for (const row of rows) {
            let head = false;
            if (row.fifo === 1) {
              const leased = run(headLease, [row.webhook_id, row.id, claim.expiresAt, claim.now]) > 0;
              if (leased && earlierPending.statement.get(...bind(earlierPending.spec, [row.webhook_id, row.seq])) !== undefined) {
                run(headClear, [row.webhook_id, row.id]);
                run(promoteNext, [row.webhook_id, claim.now]);
              } else head = leased;
              if (!head) {
                run(release, [row.id, owner]);
                continue;
              }
            }
            if (row.rate_limit !== null) {
              let tat = tats.get(row.webhook_id);
              if (tat === undefined) {
                const read = rateRead.statement.get(...bind(rateRead.spec, [row.webhook_id])) as { rate_tat: number | null } | undefined;
                tat = Number(read?.rate_tat ?? 0);
              }
              const start = Math.max(tat, nowUs);
              if (start > horizonUs) {
                tats.set(row.webhook_id, tat);
                run(release, [row.id, owner]);
                if (head) run(headClear, [row.webhook_id, row.id]);
                throttled[row.webhook_id] = Math.ceil(start / 1000);
                continue;
              }
              tats.set(row.webhook_id, start + Math.ceil(((1000 + claim.marginMs) * 1000) / row.rate_limit));
              row.not_before = start / 1000;
            }
            going.push(row);
          }
          for (const [webhookId, tat] of tats) run(rateWrite, [webhookId, tat]);
          rows = going;
        }
      }
      commit.run();
      parentPort!.postMessage({ id: request.id, claimed: rows, throttled } satisfies CycleReply);
    } catch (err) {
      if (db.inTransaction) db.exec('rollback');
      const e = err as { message?: string; code?: string; name?: string };
      parentPort!.postMessage({ id: request.id, error: { message: String(e?.message ?? err), code: e?.code, name: e?.name } } satisfies CycleReply);
    }
  });
}

/** The event loop's side of one thread: numbered requests, answered in order. */
class QueueThread {
  private readonly worker: Worker;
  private readonly calls = new Map<number, { resolve: (reply: CycleReply) => void; reject: (err: Error) => void }>();
  private nextId = 1;
  private closing = false;
  /** Set once the thread has failed or exited: every later request fails with it. */
  failure: Error | null = null;

  constructor(data: ThreadData) {
    // esbuild (vitest) may wrap named functions in __name(); the eval'd source gets a stand-in.
    this.worker = new Worker(`const __name = (f) => f;\n(${queueThreadMain.toString()})(require);`, {
      eval: true,
      workerData: data,
      // Its heap holds one cycle's rows at a time; a small young generation keeps its share of RSS small
      // (the memory target holds the worker process, with 100,000 pending, under 250 MB).
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 },
    });
    this.worker.unref();
    this.worker.on('message', (reply: CycleReply) => {
      const call = this.calls.get(reply.id);
      if (!call) return;
      this.calls.delete(reply.id);
      if (this.calls.size === 0) this.worker.unref();
      if (reply.error) call.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code, name: reply.error.name ?? 'Error' }));
      else call.resolve(reply);
    });
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`the delivery queue thread exited (code ${code})`)));
  }

  private fail(err: Error): void {
    if (this.failure === null) this.failure = this.closing ? new Error('the delivery queue is closed') : err;
    for (const call of this.calls.values()) call.reject(this.failure);
    this.calls.clear();
  }

  cycle(request: Omit<CycleRequest, 'id'>): Promise<CycleReply> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      // Referenced only while it owes an answer: an idle thread never keeps the process alive.
      this.worker.ref();
      this.worker.postMessage({ id, ...request } satisfies CycleRequest);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.worker.terminate();
  }
}

const SENTINEL = '\u0000queue-arg:';

/** A builder compiled once for SQLite, as prepared.ts does: each parameter is an argument slot or a constant. */
function compile<A extends unknown[]>(db: Kysely<DB>, arity: number, build: (db: Kysely<DB>, ...args: A) => Compilable): StatementSpec {
  const sentinels = Array.from({ length: arity }, (_, i) => `${SENTINEL}${i}`) as unknown as A;
  const query = build(db, ...sentinels).compile();
  const slots = query.parameters.map((p) => (typeof p === 'string' && p.startsWith(SENTINEL) ? Number(p.slice(SENTINEL.length)) : -1));
  for (let i = 0; i < arity; i++) {
    if (!slots.includes(i)) throw new Error(`queue statement does not use argument ${i}: ${query.sql}`);
  }
  return { sql: query.sql, slots, constants: query.parameters.map((p, i) => (slots[i]! >= 0 ? null : p)) };
}

export interface ThreadQueueOptions {
  /** The SQLite file (the main connection's). */
  file: string;
  /** Extra pragmas for the thread's connection. */
  pragmas?: string[];
  /** WEBHOOK_DISABLE_AFTER in ms; null: only a 410 Gone disables. */
  disableAfterMs?: number | null;
}

/**
 * `DeliveryQueue` on a thread: each cycle is one message and one transaction. A thread that fails is
 * replaced by the next cycle.
 */
export function threadDeliveryQueue(db: Kysely<DB>, options: ThreadQueueOptions, nextDueAt: DeliveryQueue['nextDueAt']): DeliveryQueue {
  const q = queueQueries;
  const data: ThreadData = {
    file: options.file,
    driver: createRequire(import.meta.url).resolve('better-sqlite3'),
    // Same durability as the main connection: NORMAL in WAL mode survives kill -9.
    pragmas: ['journal_mode = WAL', 'synchronous = NORMAL', 'foreign_keys = ON', 'busy_timeout = 5000', 'secure_delete = FAST', ...(options.pragmas ?? [])],
    statements: {
      insertAttempt: compile(db, 15, q.insertAttempt),
      completeDelivery: compile(db, 9, q.completeDelivery),
      addHourly: compile(db, 6, q.addHourlyIfRecorded),
      dueScan: compile(db, 2, q.dueScan),
      lease: compile(db, 4, q.lease),
      cancelUnsendable: compile(db, 3, q.cancelUnsendable),
      claimed: compile(db, 2, q.claimed),
      streakEnded: compile(db, 2, q.streakEnded),
      streakStarted: compile(db, 3, q.streakStarted),
      disableDue: compile(db, 5, q.disableDue),
      headLease: compile(db, 4, q.headLease),
      headClear: compile(db, 2, q.headClear),
      earlierPending: compile(db, 2, q.earlierPending),
      promoteNext: compile(db, 2, q.promoteNext),
      release: compile(db, 2, q.release),
      rateRead: compile(db, 1, q.rateRead),
      rateWrite: compile(db, 2, q.rateWrite),
    },
  };
  // The scan excluding saturated subscriptions: one text per count of exclusions.
  const excluding = new Map<number, StatementSpec>();
  const scanExcluding = (count: number) => {
    let spec = excluding.get(count);
    if (spec === undefined) {
      spec = compile(db, 2 + count, (kdb, now, window, ...ids) => q.dueScan(kdb, now as number, window as number).where('webhook_id', 'not in', ids as string[]));
      excluding.set(count, spec);
    }
    return spec;
  };

  let thread: QueueThread | null = null;
  const current = () => {
    if (thread === null || thread.failure !== null) thread = new QueueThread(data);
    return thread;
  };

  function request(owner: string, completions: readonly AttemptCompletion[], claim: QueueClaim | null, at: number, backs: readonly HandBack[]): Omit<CycleRequest, 'id'> {
    const handBacks = backs.map((b) => [b.id, b.webhookId, b.fifo] satisfies CycleRequest['handBacks'][number]);
    const records: CompletionRecord[] = completions.map(({ attempt: a, delivery: d, webhookId, fifo }) => [
      a.id,
      a.org_id,
      a.delivery_id,
      a.attempt_number,
      a.trigger,
      a.started_at,
      a.duration_ms,
      a.request_headers,
      a.response_status,
      a.response_headers,
      a.response_body,
      a.error,
      a.outcome,
      webhookId,
      d.status,
      d.attempt_count,
      d.failure_count,
      d.next_attempt_at,
      d.last_status_code,
      d.last_error,
      Math.floor(a.started_at / HOUR_MS),
      fifo ? 1 : 0,
      a.held_reason ?? null,
      a.held_ms ?? null,
    ]);
    const streaks = streakUpdates(completions, options.disableAfterMs ?? null).map(
      (u) => [u.orgId, u.webhookId, u.succeeded, u.failingSince, u.cutoff, u.gone] satisfies CycleRequest['streaks'][number],
    );
    if (claim === null || claim.limit <= 0) return { owner, at, completions: records, streaks, handBacks, claim: null };
    const { limit, now, excludeWebhooks } = claim;
    return {
      owner,
      at,
      completions: records,
      streaks,
      handBacks,
      claim: {
        now,
        expiresAt: now + claim.leaseMs,
        limit,
        window: Math.max(limit, Math.min(claim.window ?? limit * 4, 1000)),
        excluding: excludeWebhooks.length > 0 ? scanExcluding(excludeWebhooks.length) : null,
        exclude: excludeWebhooks,
        rooms: claim.busyWebhooks.map((id) => [id, claim.perWebhookRoom(id)]),
        defaultRoom: claim.defaultRoom,
        horizonMs: RATE_HORIZON_MS,
        marginMs: RATE_MARGIN_MS,
      },
    };
  }

  return {
    cycle(owner, completions, claim, at, handBacks = []) {
      const message = request(owner, completions, claim, at, handBacks);
      // Holding the main connection keeps this process's other writers off the write lock meanwhile.
      return db.connection().execute(async () => {
        const reply = await current().cycle(message);
        if (claim?.controls && reply.throttled) Object.assign(claim.controls.throttled, reply.throttled);
        const rows = reply.claimed ?? [];
        rows.sort((x, y) => (x.next_attempt_at ?? 0) - (y.next_attempt_at ?? 0) || x.seq - y.seq);
        return rows.map(({ seq: _seq, ...row }) => row);
      });
    },
    // One writer at a time on SQLite: a finished head always sees the deliveries committed before it.
    promoteStalledHeads: async () => 0,
    nextDueAt,
    async close() {
      const t = thread;
      thread = null;
      await t?.close();
    },
  };
}
