import { CompiledQuery, type ControlledTransaction, type Kysely, type Transaction } from 'kysely';
import type { UnitOfWork } from './repositories/executor.js';
import type { DB } from './schema.js';

/**
 * SQLite group commit: units of work that arrive while a write transaction is open share it, and one
 * COMMIT (one set of WAL frames for the pages they all touched) makes all of them durable.
 *
 * SQLite has one writer and better-sqlite3 answers synchronously, so units already ran one after another
 * on the single write connection; what they did not share was the commit. Here a batch opens with
 * BEGIN IMMEDIATE (another process waits on busy_timeout, as before), then runs the waiting units in
 * turn, each inside its own SAVEPOINT (the first of a batch directly in the transaction, which then holds
 * nothing else: see `inTransaction`):
 * - a unit that throws is rolled back to its savepoint and its caller gets the error at once; the units
 *   before and after it in the batch are not affected (a failing first unit rolls the transaction back
 *   whole, and the units after it start a new one);
 * - a unit that returns is released into the batch, but its caller is answered only once the COMMIT
 *   holding its writes has returned (a response only after its commit, so kill -9 cannot lose it);
 * - when the queue is empty, the batch waits one turn of the event loop (setImmediate), so requests the
 *   same turn read from their sockets join it, then commits;
 * - a batch takes at most `maxUnits` units and no new unit once it has been open `maxOpenMs`, so one
 *   batch cannot hold the write lock (and the units at its head) indefinitely;
 * - if the transaction is lost (COMMIT fails, or an error made SQLite roll the whole transaction back),
 *   every unit of the batch fails: none of their writes is there;
 * - workers are woken once per batch, after its commit, when one of its units created work for them.
 * Units of work must not call `run` (store.transaction) themselves: the inner call would wait for the
 * batch its caller holds open. Such a call is refused with NestedTransactionError when it can be seen
 * (the caller's async stack passes through a running unit), instead of hanging.
 * The read-only connection sees a batch's writes only after its commit, like any other transaction's.
 */
export interface GroupCommit {
  /** Runs `work` in the next batch; resolves after the commit that holds its writes. */
  run<T>(work: (trx: Transaction<DB>) => Promise<T>, unit?: UnitOfWork, waker?: Waker): Promise<T>;
  /** Counters, for tests and diagnosis. */
  readonly stats: Readonly<GroupCommitStats>;
  /** Refuses new units, then waits for the queued ones and the open batch to finish. */
  close(): Promise<void>;
}

export interface Waker {
  wake(): void;
}

export interface GroupCommitStats {
  /** Transactions committed. */
  commits: number;
  /** Units whose writes were committed. */
  committedUnits: number;
  /** Units that threw and were rolled back alone. */
  failedUnits: number;
  /** Batches lost as a whole (BEGIN or COMMIT failed, or SQLite rolled the transaction back). */
  failedBatches: number;
  /** The most units one commit held. */
  largestBatch: number;
}

export interface GroupCommitOptions {
  /** Units per batch at most (default 64). */
  maxUnits?: number;
  /** A batch takes no new unit after it has been open this long, in ms (default 10). */
  maxOpenMs?: number;
  /**
   * Runs a statement without parameters synchronously on the write connection, for the savepoint
   * statements: they run while the batch holds that connection, and through Kysely each would cost a
   * chain of promises for a statement SQLite answers in a microsecond. Without it they go through Kysely.
   */
  exec?: (sql: string) => void;
  /**
   * Whether the write connection is inside a transaction (better-sqlite3's `inTransaction`). With it the
   * first unit of a batch runs without a savepoint (if it fails, the transaction holds nothing else and
   * is rolled back whole), which spares a batch of one the savepoint's cost.
   */
  inTransaction?: () => boolean;
}

/** A caller that got this lost its writes because another part of its batch failed; `cause` says why. */
export class GroupCommitFailed extends Error {
  readonly code: unknown;
  constructor(cause: unknown) {
    super(`the shared transaction failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'GroupCommitFailed';
    // SQLITE_BUSY and the like keep their meaning (503) for the units that lose their writes with it.
    this.code = (cause as { code?: unknown } | null)?.code;
  }
}

/** A unit of work called `store.transaction` itself: it would wait for the batch that waits for it. */
export class NestedTransactionError extends Error {
  constructor() {
    super('store.transaction was called inside a unit of work on SQLite: use the repositories the unit was given');
    this.name = 'NestedTransactionError';
  }
}

interface Pending {
  work: (trx: Transaction<DB>) => Promise<unknown>;
  unit: UnitOfWork | undefined;
  waker: Waker | undefined;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

interface Done {
  p: Pending;
  value: unknown;
}

interface Lost {
  error: unknown;
}

/** The batch's only unit failed and the transaction was rolled back whole: nothing to commit. */
const ENDED = Symbol('ended');

const SAVEPOINT = CompiledQuery.raw('savepoint grouped_unit');
const RELEASE = CompiledQuery.raw('release grouped_unit');
const ROLLBACK_TO = CompiledQuery.raw('rollback to grouped_unit');
const ROLLBACK_AND_RELEASE = [ROLLBACK_TO, RELEASE];

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * True when the caller's async stack passes through `runGroupedUnit`, i.e. a unit awaits this call.
 * Only checked while a unit is in flight (otherwise no unit can be the caller), which for SQLite's
 * synchronous driver is rare outside nesting; async stack traces follow `await` chains.
 */
const probe: { stack?: unknown } = {};
const findUnitFrame = (_error: Error, frames: NodeJS.CallSite[]): boolean => frames.some((frame) => frame.getFunctionName() === 'runGroupedUnit');

function calledFromUnit(): boolean {
  // The frames are scanned as V8 hands them over, never formatted into a string: under concurrent writes a
  // unit is nearly always in flight, so this runs on most calls (5 µs instead of 14 µs at 30 frames).
  const { stackTraceLimit, prepareStackTrace } = Error;
  Error.stackTraceLimit = 100;
  Error.prepareStackTrace = findUnitFrame;
  try {
    Error.captureStackTrace(probe, calledFromUnit);
    return probe.stack === true;
  } finally {
    probe.stack = undefined;
    Error.stackTraceLimit = stackTraceLimit;
    Error.prepareStackTrace = prepareStackTrace;
  }
}

export function createGroupCommit(db: Kysely<DB>, options: GroupCommitOptions = {}): GroupCommit {
  const maxUnits = options.maxUnits ?? 64;
  const maxOpenMs = options.maxOpenMs ?? 10;
  const stats: GroupCommitStats = { commits: 0, committedUnits: 0, failedUnits: 0, failedBatches: 0, largestBatch: 0 };
  const queue: Pending[] = [];
  let draining: Promise<void> | null = null;
  let inFlight = 0;
  let closed = false;

  async function statements(trx: ControlledTransaction<DB>, ...queries: CompiledQuery[]): Promise<void> {
    for (const query of queries) {
      if (options.exec) options.exec(query.sql);
      else await trx.executeQuery(query);
    }
  }

  async function drain(): Promise<void> {
    while (queue.length > 0) await batch();
    // Checked and cleared in one synchronous step: a unit queued from here on starts a new drain.
    draining = null;
  }

  /**
   * Runs one unit in its savepoint (the first of a batch directly in the transaction, when the connection
   * can tell whether it still is in one); what ended the whole transaction, if anything did.
   */
  async function runGroupedUnit(trx: ControlledTransaction<DB>, p: Pending, done: Done[], first: boolean): Promise<Lost | typeof ENDED | null> {
    const inTransaction = first ? options.inTransaction : undefined;
    if (!inTransaction) {
      try {
        await statements(trx, SAVEPOINT);
      } catch (err) {
        p.reject(err);
        return { error: err };
      }
    }
    let value: unknown;
    inFlight++;
    try {
      value = await p.work(trx);
    } catch (err) {
      inFlight--;
      stats.failedUnits++;
      if (inTransaction) {
        // Nothing else in the transaction: rolled back whole (this releases the connection too).
        await trx.rollback().execute().catch(() => {});
        p.reject(err);
        return ENDED;
      }
      try {
        await statements(trx, ...ROLLBACK_AND_RELEASE);
      } catch {
        // No savepoint left: the error (SQLITE_FULL, IOERR, ...) made SQLite roll back the whole transaction.
        p.reject(err);
        return { error: err };
      }
      // Its writes are undone; it fails alone and at once (it has nothing to wait a commit for).
      p.reject(err);
      return null;
    }
    inFlight--;
    // A unit that swallowed an error that ended the transaction: its writes (and the batch's) are gone.
    if (inTransaction) {
      if (!inTransaction()) {
        const err = new Error('the transaction ended inside the unit of work');
        p.reject(err);
        return { error: err };
      }
    } else {
      try {
        await statements(trx, RELEASE);
      } catch (err) {
        p.reject(err);
        return { error: err };
      }
    }
    done.push({ p, value });
    return null;
  }

  async function batch(): Promise<void> {
    let trx: ControlledTransaction<DB>;
    try {
      trx = await db.startTransaction().execute();
    } catch (err) {
      // BEGIN IMMEDIATE failed (the write lock busy past busy_timeout, the database closed): every unit
      // waiting now would have met the same error alone.
      stats.failedBatches++;
      for (const p of queue.splice(0)) p.reject(err);
      return;
    }
    const openedAt = performance.now();
    const done: Done[] = [];
    let taken = 0;
    let lost: Lost | null = null;
    const open = () => taken < maxUnits && performance.now() - openedAt < maxOpenMs;
    for (;;) {
      if (queue.length === 0 && open()) await nextTurn();
      if (queue.length === 0 || !open()) break;
      const p = queue.shift()!;
      taken++;
      const outcome = await runGroupedUnit(trx, p, done, taken === 1);
      if (outcome === ENDED) return;
      lost = outcome;
      if (lost !== null) break;
    }
    if (lost === null) {
      try {
        await trx.commit().execute();
      } catch (err) {
        lost = { error: err };
      }
    }
    if (lost !== null) {
      // Releases the connection whatever happens; SQLite may have rolled back already.
      await trx.rollback().execute().catch(() => {});
      stats.failedBatches++;
      const failure = new GroupCommitFailed(lost.error);
      for (const { p } of done) p.reject(failure);
      return;
    }
    stats.commits++;
    stats.committedUnits += done.length;
    if (done.length > stats.largestBatch) stats.largestBatch = done.length;
    // Workers are woken once per batch (per waker), never before the commit and never for a failed unit.
    let woken: Set<Waker> | null = null;
    for (const { p } of done) {
      if (!p.waker || !p.unit || p.unit.workCreated === 0 || woken?.has(p.waker)) continue;
      (woken ??= new Set()).add(p.waker);
      try {
        p.waker.wake();
      } catch {
        // The writes are committed whatever a listener does; the workers' own timers find the work later.
      }
    }
    for (const { p, value } of done) p.resolve(value);
  }

  return {
    stats,
    run<T>(work: (trx: Transaction<DB>) => Promise<T>, unit?: UnitOfWork, waker?: Waker): Promise<T> {
      if (inFlight > 0 && calledFromUnit()) return Promise.reject(new NestedTransactionError());
      if (closed) return Promise.reject(new Error('the database is closing: no new transaction'));
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, unit, waker, resolve: resolve as (value: unknown) => void, reject });
        draining ??= drain();
      });
    },
    async close() {
      closed = true;
      await draining;
    },
  };
}
