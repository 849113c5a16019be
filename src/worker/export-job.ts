import { randomBytes } from 'node:crypto';
import type { Container } from '../container.js';
import type { BackgroundJob } from './lifecycle-job.js';
import { startPolledJob, type PolledJobContext } from '../lib/wake-timer.js';

export interface ExportJobOptions {
  /** Poll fallback for exports requested on another process without a wake reaching this one; default 1 s. */
  pollMs?: number | undefined;
  /** Identifies this process's leases; default random. */
  workerId?: string;
  /** Default EXPORT_LEASE_MS (60 s), renewed every third of it while a build goes on. */
  leaseMs?: number;
  /** How often expired exports are removed; default every 10 minutes. */
  pruneEveryMs?: number;
}

const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * Builds requested exports and removes expired ones, in the worker beside deliveries and runs. Woken when
 * an export is requested (on any process: the store's wake after commit, NOTIFY on PostgreSQL), else by
 * the poll. One build at a time per process; several workers on PostgreSQL build different exports (each
 * claimed under a lease). Stopping ends a build between two pages and puts its export back in the queue;
 * a killed worker's lease expires and the next claimer starts that export again from scratch.
 */
export function startExportJob(container: Container, options: ExportJobOptions = {}): BackgroundJob {
  const { services, store, waker, logger } = container;
  const owner = options.workerId ?? `exp_${randomBytes(8).toString('hex')}`;
  const pollMs = options.pollMs ?? 1000;
  const pruneEveryMs = options.pruneEveryMs ?? PRUNE_EVERY_MS;
  let started = false;
  let prunedAt = -Infinity;

  async function drain(job: PolledJobContext): Promise<void> {
    const buildOptions = { ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}), shouldStop: job.stopped };
    if (!started) {
      started = true;
      if (store.dialect === 'sqlite') {
        const released = await services.exports.releaseAllLeases();
        if (released > 0) logger.warn({ released }, 'export job: queued again the exports a previous process was building');
      }
    }
    while (!job.stopped() && (await services.exports.runNext(owner, buildOptions))) {
      // Yield between exports: other work on this process goes on.
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (!job.stopped() && Date.now() - prunedAt >= pruneEveryMs) {
      prunedAt = Date.now();
      const removed = await services.exports.prune();
      if (removed > 0) logger.info({ removed }, 'export job: removed expired exports');
    }
  }

  return startPolledJob(drain, { pollMs, wakeOn: waker, onError: (err) => logger.error({ err }, 'export job: a pass failed; retrying at the next poll') });
}
