import { sql } from 'kysely';
import type { Database } from './database.js';
import type { AttemptCompletion, ClaimedDelivery, QueueClaimInput } from './repositories/deliveries-repo.js';
import { threadDeliveryQueue } from './sqlite-queue-thread.js';
import type { Store } from './store.js';

/** What the worker asks a claim for: the repository's `claimDueQueueItems` input, and what a queue thread needs to rebuild `perWebhookRoom`. */
export interface QueueClaim extends Omit<QueueClaimInput, 'owner'> {
  /** What `perWebhookRoom` answers for any subscription outside `busyWebhooks`. */
  defaultRoom: number;
  busyWebhooks: readonly string[];
}

/** Where the delivery worker's queue transactions run. */
export interface DeliveryQueue {
  /**
   * One write transaction: records `completions` (as `completeQueueAttempts`), then claims for `claim`
   * (as `claimDueQueueItems`; none when null). All of it commits, or none of it.
   */
  cycle(owner: string, completions: readonly AttemptCompletion[], claim: QueueClaim | null, at: number): Promise<ClaimedDelivery[]>;
  /** The earliest time a pending, unleased delivery (outside `excludeWebhooks`) becomes due; null if none. */
  nextDueAt(now: number, excludeWebhooks: string[]): Promise<number | null>;
  close(): Promise<void>;
}

/** How completions move their subscriptions' failure streaks (CONTRACT 11). */
export interface QueueHealth {
  /** WEBHOOK_DISABLE_AFTER in ms; null or absent: only a 410 Gone disables. */
  disableAfterMs?: number | null;
}

/** The repository in `store.transaction` (PostgreSQL, whose I/O is asynchronous anyway; tests). */
export function storeDeliveryQueue(store: Store, health: QueueHealth = {}): DeliveryQueue {
  const disableAfterMs = health.disableAfterMs ?? null;
  return {
    cycle: (owner, completions, claim, at) =>
      store.transaction(async (repos) => {
        if (completions.length > 0) await repos.deliveries.completeQueueAttempts(owner, [...completions], at, disableAfterMs);
        if (claim === null || claim.limit <= 0) return [];
        const { now, leaseMs, limit, window, excludeWebhooks, perWebhookRoom } = claim;
        return repos.deliveries.claimDueQueueItems({ owner, now, leaseMs, limit, window, excludeWebhooks, perWebhookRoom });
      }),
    nextDueAt: (now, exclude) => store.repos.deliveries.nextQueueDueAt(now, exclude),
    close: async () => {},
  };
}

/** On a SQLite file, the queue thread (sqlite-queue-thread.ts); otherwise the store's transactions. */
export async function openDeliveryQueue(database: Pick<Database, 'db' | 'dialect'>, store: Store, health: QueueHealth = {}): Promise<DeliveryQueue> {
  const fallback = storeDeliveryQueue(store, health);
  if (database.dialect !== 'sqlite') return fallback;
  const { rows } = await sql<{ name: string; file: string }>`pragma database_list`.execute(database.db);
  const file = rows.find((r) => r.name === 'main')?.file;
  // An in-memory database has no file another connection could open.
  if (!file) return fallback;
  return threadDeliveryQueue(database.db, { file, disableAfterMs: health.disableAfterMs ?? null }, fallback.nextDueAt);
}
