import { sql } from 'kysely';
import type { Database } from './database.js';
import type { DeliveryQueue, QueueHealth } from './delivery-queue-contract.js';
import { threadDeliveryQueue } from './sqlite-queue-thread.js';
import type { Store } from './store.js';

export type { DeliveryQueue, HandBack, QueueClaim, QueueHealth } from './delivery-queue-contract.js';

/** The repository in `store.transaction` (PostgreSQL, whose I/O is asynchronous anyway; tests). */
export function storeDeliveryQueue(store: Store, health: QueueHealth = {}): DeliveryQueue {
  const disableAfterMs = health.disableAfterMs ?? null;
  return {
    cycle: (owner, completions, claim, at, handBacks = []) =>
      store.transaction(async (repos) => {
        if (completions.length > 0) await repos.deliveryQueue.completeQueueAttempts(owner, [...completions], at, disableAfterMs);
        if (handBacks.length > 0) await repos.deliveryQueue.handBack(handBacks, owner);
        if (claim === null || claim.limit <= 0) return [];
        const { now, leaseMs, limit, window, excludeWebhooks, perWebhookRoom, controls } = claim;
        return repos.deliveryQueue.claimDueQueueItems({ owner, now, leaseMs, limit, window, excludeWebhooks, perWebhookRoom, controls });
      }),
    promoteStalledHeads: (now) => (store.dialect === 'postgres' ? store.transaction((repos) => repos.deliveryQueue.promoteStalledHeadsAcrossOrgs(now)) : Promise.resolve(0)),
    nextDueAt: (now, exclude) => store.repos.deliveryQueue.nextQueueDueAt(now, exclude),
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
