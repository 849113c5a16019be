/**
 * "Last used" of a credential (an API key, a connected app), noted on the request path: `touch` only checks a
 * map; the write runs after the response is on its way, at most once per `intervalMs` per credential and process.
 * `flush` waits for writes under way (shutdown: before the database closes).
 */
export function createLastUsed(deps: { now: () => number; intervalMs: number; write: (orgId: string, id: string, at: number) => Promise<void>; onError?: (err: unknown) => void }) {
  const { now, intervalMs, write, onError } = deps;
  const lastTouched = new Map<string, number>();
  const writing = new Set<Promise<void>>();
  return {
    touch(orgId: string, id: string): void {
      const at = now();
      const last = lastTouched.get(id);
      if (last !== undefined && at - last < intervalMs) return;
      if (lastTouched.size >= 100_000) lastTouched.clear();
      lastTouched.set(id, at);
      setImmediate(() => {
        const done: Promise<void> = write(orgId, id, at)
          .catch((err: unknown) => onError?.(err))
          .finally(() => writing.delete(done));
        writing.add(done);
      });
    },
    async flush(): Promise<void> {
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all(writing);
    },
  };
}
