import type { FastifyBaseLogger } from 'fastify';
import type { Signal } from '../lib/signal.js';
import { startPolledJob } from '../lib/wake-timer.js';
import type { ReplayJobsService } from '../services/webhooks/replay-jobs-service.js';

export interface ReplayRunner {
  /** Runs batches now (tests; the waker does it otherwise). */
  kick(): void;
  /** Waits for the batch under way, then stops. */
  stop(): Promise<void>;
}

/**
 * Works through bulk replay jobs beside the delivery worker: one batch per transaction until no job has
 * work left, then sleeps until woken (a job was asked for, on any process) or the poll interval passes.
 * Several runners may share a PostgreSQL database: each batch's items are claimed by one of them.
 */
export function startReplayRunner(deps: { replayJobs: ReplayJobsService; waker: Signal; logger: FastifyBaseLogger; pollMs?: number }): ReplayRunner {
  const { replayJobs, waker, logger } = deps;
  return startPolledJob(
    async (job) => {
      while (!job.stopped() && (await replayJobs.runBatch()) > 0) {
        // Yield between batches: other work on this process (and on SQLite, other writers) goes on.
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    { pollMs: deps.pollMs ?? 1000, wakeOn: waker, onError: (err) => logger.error({ err }, 'replay runner: a batch failed; retrying at the next poll') },
  );
}
