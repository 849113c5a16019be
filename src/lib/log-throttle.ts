/**
 * Lets a failure that repeats on every request be logged loudly without flooding the log: `shouldLog`
 * says yes at most once per interval per topic, and reports how many were held back since the last one.
 */
export interface LogThrottle {
  /** null: stay quiet; a number: log now, mentioning this many suppressed repeats. */
  shouldLog(topic: string): number | null;
  reset(topic: string): void;
}

export function createLogThrottle(intervalMs = 10_000, now: () => number = () => performance.now()): LogThrottle {
  const last = new Map<string, { at: number; suppressed: number }>();
  return {
    shouldLog(topic) {
      const t = now();
      const entry = last.get(topic);
      if (entry && t - entry.at < intervalMs) {
        entry.suppressed++;
        return null;
      }
      last.set(topic, { at: t, suppressed: 0 });
      return entry?.suppressed ?? 0;
    },
    reset(topic) {
      last.delete(topic);
    },
  };
}
