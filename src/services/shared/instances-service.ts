import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { ServiceInstanceRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { newId } from '../../lib/ids.js';
import type { Clock } from '../../lib/time.js';

/** How often a `serve` process says it is alive. */
export const HEARTBEAT_MS = 15_000;
/** A process not heard from for this long is gone (three missed heartbeats). */
export const LIVE_MS = 3 * HEARTBEAT_MS;
/** Rows of processes killed without a goodbye are removed after this long. */
const FORGET_MS = 24 * 60 * 60 * 1000;

export interface InstancePresenceDeps {
  store: Store;
  clock: Clock;
  /** REDIS_URL is set: sign-in and two-step attempts are counted in Redis, shared with every instance. */
  sharedLimits: boolean;
  log: Pick<FastifyBaseLogger, 'warn' | 'info'>;
  hostname?: string;
  pid?: number;
}

/**
 * The `serve` processes on one database. Without REDIS_URL each counts sign-in and two-step attempts in its
 * own memory, so N of them allow N times the attempts the limits promise (security review F5). A process that
 * sees another on the same database while either counts alone says so at start, and again whenever a new one
 * appears, as a warning naming the fix. Each process writes one row and refreshes it every 15 seconds.
 */
export function createInstancePresence(deps: InstancePresenceDeps) {
  const { store, clock, sharedLimits, log } = deps;
  const self: ServiceInstanceRow = {
    id: newId('inst'),
    hostname: deps.hostname ?? os.hostname(),
    pid: deps.pid ?? process.pid,
    shared_limits: sharedLimits ? 1 : 0,
    started_at: clock.now(),
    seen_at: clock.now(),
  };
  const told = new Set<string>();
  let timer: NodeJS.Timeout | null = null;

  /** Says it is alive, then looks at the others: the instances it warns about now (new since the last look). */
  async function beat(): Promise<ServiceInstanceRow[]> {
    const now = clock.now();
    await store.repos.instances.upsert({ ...self, seen_at: now });
    const others = (await store.repos.instances.seenSince(now - LIVE_MS)).filter((row) => row.id !== self.id);
    const alone = !sharedLimits || others.some((row) => row.shared_limits === 0);
    const fresh = alone ? others.filter((row) => !told.has(row.id)) : [];
    if (fresh.length > 0) {
      for (const row of fresh) told.add(row.id);
      const alone = [...(sharedLimits ? [] : ['this one']), ...others.filter((row) => row.shared_limits === 0).map((row) => `${row.hostname} pid ${row.pid}`)];
      log.warn(
        { instances: others.length + 1, others: others.map(({ hostname, pid, shared_limits, started_at }) => ({ hostname, pid, redis: shared_limits === 1, started_at })) },
        `${others.length + 1} instances serve this database, and REDIS_URL is not set on ${alone.join(', ')}: sign-in and two-step attempts are counted ` +
          'per instance, so together they allow more failed sign-ins and wrong codes than the limits say. Set REDIS_URL on every instance to share the limits.',
      );
    }
    await store.repos.instances.pruneSeenBefore(now - FORGET_MS);
    return fresh;
  }

  return {
    id: self.id,
    beat,

    /** The first look (before the process says it is ready), then one every 15 seconds. */
    async start(): Promise<void> {
      await beat();
      timer = setInterval(() => {
        beat().catch((err: unknown) => log.warn({ err: (err as Error).message }, 'could not record this instance as alive'));
      }, HEARTBEAT_MS);
      timer.unref();
    },

    /** Stops the heartbeat and removes the row: a stopped process is not counted by the others. */
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = null;
      await store.repos.instances.remove(self.id).catch(() => {});
    },
  };
}

export type InstancePresence = ReturnType<typeof createInstancePresence>;
