import type { Clock } from '../lib/time.js';
import type { RateLimitDecision, RateLimiter } from './rate-limiter.js';

/**
 * A sliding log per bucket: the times of accepted requests in a growable ring buffer, oldest first.
 * Expired entries fall off the head; a request is allowed while fewer than `limit` remain. Memory is
 * one number per accepted request inside the window, and every operation is amortised O(1).
 */
export class SlidingLog {
  private buf: Float64Array;
  private head = 0;
  size = 0;

  constructor(capacity: number) {
    this.buf = new Float64Array(capacity);
  }

  prune(cutoff: number): void {
    while (this.size > 0 && this.buf[this.head]! <= cutoff) {
      this.head = (this.head + 1) % this.buf.length;
      this.size--;
    }
  }

  oldest(): number {
    return this.buf[this.head]!;
  }

  newest(): number {
    return this.buf[(this.head + this.size - 1) % this.buf.length]!;
  }

  /** Drops the newest entry. */
  pop(): void {
    if (this.size > 0) this.size--;
  }

  push(time: number): void {
    if (this.size === this.buf.length) this.grow();
    this.buf[(this.head + this.size) % this.buf.length] = time;
    this.size++;
  }

  private grow(): void {
    const next = new Float64Array(this.buf.length * 2);
    for (let i = 0; i < this.size; i++) next[i] = this.buf[(this.head + i) % this.buf.length]!;
    this.buf = next;
    this.head = 0;
  }
}

export function createMemoryRateLimiter(clock: Clock, sweepEveryMs = 60_000): RateLimiter {
  const logs = new Map<string, SlidingLog>();
  let longestWindow = 0;

  // Drop buckets that have been idle for a whole window so memory follows active clients only.
  const sweep = setInterval(() => {
    const cutoff = clock.now() - longestWindow;
    for (const [bucket, log] of logs) if (log.size === 0 || log.newest() <= cutoff) logs.delete(bucket);
  }, sweepEveryMs);
  sweep.unref();

  /** The refusal when the (pruned) log is full, or null when one more request fits. */
  function refusal(log: SlidingLog, limit: number, windowMs: number, now: number): RateLimitDecision | null {
    if (log.size < limit) return null;
    const retryAfterMs = log.oldest() + windowMs - now;
    return { allowed: false, limit, remaining: 0, retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) };
  }

  function hitNow(bucket: string, limit: number, windowMs: number): RateLimitDecision {
    longestWindow = Math.max(longestWindow, windowMs);
    const now = clock.now();
    let log = logs.get(bucket);
    if (!log) {
      log = new SlidingLog(Math.min(limit, 64));
      logs.set(bucket, log);
    }
    log.prune(now - windowMs);
    const refused = refusal(log, limit, windowMs, now);
    if (refused) return refused;
    log.push(now);
    return { allowed: true, limit, remaining: limit - log.size, retryAfterSeconds: 0 };
  }

  return {
    hitNow,
    async hit(bucket, limit, windowMs): Promise<RateLimitDecision> {
      return hitNow(bucket, limit, windowMs);
    },
    async undo(bucket) {
      logs.get(bucket)?.pop();
    },
    async close() {
      clearInterval(sweep);
      logs.clear();
    },
  };
}
