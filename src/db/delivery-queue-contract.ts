import type { AttemptCompletion, ClaimedDelivery, QueueClaimInput } from './repositories/delivery-queue-repo.js';

/** A claimed delivery the worker gives back unsent (it reached its reserved start too late). */
export interface HandBack {
  id: string;
  webhookId: string;
  fifo: boolean;
}

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
   * (as `claimDueQueueItems`; none when null), after handing back `handBacks`. All of it commits, or none
   * of it. What the claim's controls held back is written into `claim.controls`.
   */
  cycle(owner: string, completions: readonly AttemptCompletion[], claim: QueueClaim | null, at: number, handBacks?: readonly HandBack[]): Promise<ClaimedDelivery[]>;
  /** PostgreSQL's safety net for ordered subscriptions (`promoteStalledHeadsAcrossOrgs`); nothing on SQLite. */
  promoteStalledHeads(now: number): Promise<number>;
  /** The earliest time a pending, unleased delivery (outside `excludeWebhooks`) becomes due; null if none. */
  nextDueAt(now: number, excludeWebhooks: string[]): Promise<number | null>;
  close(): Promise<void>;
}

/** How completions move their subscriptions' failure streaks (CONTRACT 11). */
export interface QueueHealth {
  /** WEBHOOK_DISABLE_AFTER in ms; null or absent: only a 410 Gone disables. */
  disableAfterMs?: number | null;
}
