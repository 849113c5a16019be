import { isDatabaseUnavailable } from '../../db/availability.js';
import type { Store } from '../../db/store.js';
import { DAY_MS, type Clock } from '../../lib/time.js';
import type { Actor } from '../access/actor.js';

/** How often each process writes its counts; a crash loses at most this much of them. */
export const USAGE_FLUSH_INTERVAL_MS = 30_000;
/** The overview's "Requests per day" window. */
export const REQUEST_DAYS = 30;

export interface DailyRequests {
  /** UTC day, 'YYYY-MM-DD'. */
  day: string;
  count: number;
}

export interface UsageServiceDeps {
  store: Store;
  clock: Clock;
  /** A flush that could not write (logged by the container); the counts are kept or dropped as documented. */
  onFlushError?: (err: unknown) => void;
  /** Timer period; 0 starts no timer (tests call `flush()`). */
  flushIntervalMs?: number;
}

const isoDay = (epochDay: number) => new Date(epochDay * DAY_MS).toISOString().slice(0, 10);

/**
 * API requests per organisation and UTC day. The request path only adds one to an in-memory counter;
 * every 30 seconds (and at close) each process adds what it counted to `request_counts`, one upsert per
 * organisation and day, so the figures of several API processes sum up in the table. Reads add the
 * process's own counts not yet written. Flushes and reads take turns, so a count is never seen twice
 * or not at all by this process (docs/decisions.md, "Dashboard overview").
 */
export function createUsageService({ store, clock, onFlushError, flushIntervalMs = USAGE_FLUSH_INTERVAL_MS }: UsageServiceDeps) {
  /** Epoch day → organisation → requests counted and not yet written. */
  let pending = new Map<number, Map<string, number>>();
  // The current day's map, so a request costs one division and two map operations.
  let currentDay = NaN;
  let current: Map<string, number> | undefined;
  let turn: Promise<unknown> = Promise.resolve();

  function dayMap(day: number): Map<string, number> {
    let orgs = pending.get(day);
    if (!orgs) {
      orgs = new Map();
      pending.set(day, orgs);
    }
    return orgs;
  }

  function add(day: number, orgId: string, n: number): void {
    const orgs = dayMap(day);
    orgs.set(orgId, (orgs.get(orgId) ?? 0) + n);
  }

  /** Runs `work` after every flush or read already queued, so they never interleave. */
  function inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = turn.then(work);
    turn = run.catch(() => undefined);
    return run;
  }

  async function writePending(): Promise<void> {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    currentDay = NaN;
    current = undefined;
    let unavailable: unknown = null;
    for (const [day, orgs] of batch) {
      const dayText = isoDay(day);
      for (const [orgId, n] of orgs) {
        // The database is away: keep this and the rest for the next flush rather than try each in vain.
        if (unavailable !== null) {
          add(day, orgId, n);
          continue;
        }
        try {
          await store.repos.requestCounts.add(orgId, dayText, n);
        } catch (err) {
          if (isDatabaseUnavailable(err)) {
            unavailable = err;
            add(day, orgId, n);
          } else {
            // Refused for good (the organisation was deleted meanwhile): retrying would fail the same way.
            onFlushError?.(err);
          }
        }
      }
    }
    if (unavailable !== null) onFlushError?.(unavailable);
  }

  function flush(): Promise<void> {
    return inTurn(writePending);
  }

  const timer = flushIntervalMs > 0 ? setInterval(() => void flush().catch((err: unknown) => onFlushError?.(err)), flushIntervalMs) : null;
  timer?.unref();

  return {
    /**
     * One API request of the organisation, now. Called on the request path for every request with a valid
     * key that the rate limiter let through: memory only.
     */
    count(orgId: string): void {
      const day = Math.floor(clock.now() / DAY_MS);
      if (day !== currentDay || current === undefined) {
        currentDay = day;
        current = dayMap(day);
      }
      current.set(orgId, (current.get(orgId) ?? 0) + 1);
    },

    /** Adds the counts so far to the table; a failure keeps them for the next flush while the database is away. */
    flush,

    /** The actor's organisation's requests on each of the last `days` UTC days, today last, zeros included. */
    async dailyRequests(actor: Actor, days = REQUEST_DAYS): Promise<DailyRequests[]> {
      const today = Math.floor(clock.now() / DAY_MS);
      const first = today - Math.max(1, Math.min(Math.floor(days), 366)) + 1;
      return inTurn(async () => {
        const stored = await store.repos.requestCounts.range(actor.orgId, isoDay(first), isoDay(today));
        const byDay = new Map(stored.map((r) => [r.day, r.count]));
        const result: DailyRequests[] = [];
        for (let d = first; d <= today; d++) {
          const day = isoDay(d);
          result.push({ day, count: (byDay.get(day) ?? 0) + (pending.get(d)?.get(actor.orgId) ?? 0) });
        }
        return result;
      });
    },

    /** Stops the timer and writes what is left (shutdown: before the database closes). */
    async close(): Promise<void> {
      if (timer) clearInterval(timer);
      await flush();
    },
  };
}

export type UsageService = ReturnType<typeof createUsageService>;
