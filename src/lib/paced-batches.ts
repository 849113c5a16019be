/** How a retention job walks its rows: the batch size, and when it should stop early (shutdown). */
export interface PacedBatchOptions {
  size: number;
  /** Checked before each batch. */
  stopping?: () => boolean;
  /** The least pause between two batches; default 5 ms. */
  minPauseMs?: number;
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

/**
 * Runs `batch(size)` until it removes fewer than `size` rows, and returns how many it removed in all. After
 * each full batch it pauses as long as the batch took (at least `minPauseMs`), so a backlog of a million rows
 * due takes at most half of the database's time (and of the event loop's, where the driver is synchronous),
 * and the writes queued meanwhile go first: the API's creates stay within 2× of their latency without
 * pruning (docs/benchmarks.md, issue 31).
 */
export async function pacedBatches(batch: (size: number) => Promise<number>, options: PacedBatchOptions): Promise<number> {
  let removed = 0;
  for (;;) {
    if (options.stopping?.()) return removed;
    const started = performance.now();
    const n = await batch(options.size);
    removed += n;
    if (n < options.size) return removed;
    await pause(Math.max(options.minPauseMs ?? 5, performance.now() - started));
  }
}
