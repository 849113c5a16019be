import type { AttemptCompletion, ClaimedDelivery, QueueClaimInput } from './repositories/deliveries-repo.js';

// The delivery queue's contract, apart from its two implementations (delivery-queue.ts over the store,
// sqlite-queue-thread.ts on a thread), so each imports it and neither imports the other's module for it.

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
