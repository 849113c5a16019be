export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests still allowed in the current window after this one. */
  remaining: number;
  /** Whole seconds until a slot frees (at least 1); meaningful when not allowed. */
  retryAfterSeconds: number;
}

/**
 * An exact rolling-window limiter. `hit` counts the request only when it is allowed, so refused
 * requests never extend a client's wait. Implementations: in-process (one instance) and Redis (shared).
 */
export interface RateLimiter {
  hit(bucket: string, limit: number, windowMs: number): Promise<RateLimitDecision>;
  /**
   * `hit` answered at once, for a limiter that keeps its counts in this process; absent on one that must ask
   * elsewhere (Redis). The request path uses it to stay synchronous when it can.
   */
  hitNow?(bucket: string, limit: number, windowMs: number): RateLimitDecision;
  /**
   * Takes back one recorded hit (the newest) of the bucket: for an attempt counted before its work was
   * done, so parallel attempts cannot all pass, that then turned out not to count (a sign-in that
   * succeeded, where only failures are limited). Entries are alike, so which one goes does not matter.
   */
  undo(bucket: string): Promise<void>;
  close(): Promise<void>;
}
