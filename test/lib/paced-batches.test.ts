import { describe, expect, it } from 'vitest';
import { pacedBatches } from '../../src/lib/paced-batches.js';

describe('pacedBatches', () => {
  it('runs batches until one comes back short, and pauses after each full one as long as it took', async () => {
    const rows = 1050;
    let left = rows;
    const calls: { at: number; took: number }[] = [];
    const removed = await pacedBatches(
      async (size) => {
        const at = performance.now();
        // Each batch busies the database for 20 ms.
        await new Promise((r) => setTimeout(r, 20));
        const n = Math.min(size, left);
        left -= n;
        calls.push({ at, took: performance.now() - at });
        return n;
      },
      { size: 300 },
    );
    expect(removed).toBe(rows);
    expect(calls).toHaveLength(4);
    // Between two batches, a pause at least as long as the batch before it: at most half the time is pruning.
    for (let i = 1; i < calls.length; i++) expect(calls[i]!.at - calls[i - 1]!.at).toBeGreaterThanOrEqual(2 * calls[i - 1]!.took - 2);
  });

  it('stops before the next batch once asked to, and a short first batch is the end', async () => {
    let batches = 0;
    let stop = false;
    const removed = await pacedBatches(
      async (size) => {
        batches++;
        if (batches === 2) stop = true;
        return size;
      },
      { size: 10, stopping: () => stop, minPauseMs: 1 },
    );
    expect({ removed, batches }).toEqual({ removed: 20, batches: 2 });
    expect(await pacedBatches(async () => 3, { size: 10 })).toBe(3);
  });
});
