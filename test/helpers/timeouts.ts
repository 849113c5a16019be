/**
 * Timeouts for tests that start processes (CLI runs, servers, containers), sized to what they do. The
 * default (30 s, vitest.config.ts) suits tests that stay in the test process; a Node.js process costs about
 * one second of CPU to start and load the service, and on a 2-core machine at load 10 five times as long,
 * so a test that starts a dozen of them needs a budget that grows with the count.
 */
export const PROCESS_START_BUDGET_MS = 8_000;

/** The timeout of a test that starts `processes` processes one after another (never below the default). */
export function processTimeout(processes: number): number {
  return Math.max(30_000, processes * PROCESS_START_BUDGET_MS);
}
