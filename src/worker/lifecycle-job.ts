import { randomBytes } from 'node:crypto';
import type { Container } from '../container.js';
import { startPolledJob, type PolledJobContext } from '../lib/wake-timer.js';
import { DELETION_LEASE_MS } from '../services/lifecycle/deletion-service.js';

export interface BackgroundJob {
  kick(): void;
  stop(): Promise<void>;
}

export interface LifecycleJobOptions {
  /**
   * Poll fallback, for changes another process made (a cancellation, a resume); default 30 s. The job
   * otherwise sleeps until the next reminder point, deletion date or lease end it read from the database.
   */
  pollMs?: number | undefined;
  /** Rows per statement; default the config's DELETION_BATCH_SIZE. */
  batchSize?: number | undefined;
  leaseMs?: number | undefined;
  /** Identifies this process's leases; default random. */
  workerId?: string | undefined;
}

export const LIFECYCLE_POLL_MS = 30_000;

/**
 * Deletion reminders and deletions, in the worker beside deliveries and runs. Each pass sends the
 * reminders that are due, then claims and deletes organisations whose date has come, one at a time,
 * until none is left; it then sleeps until the earliest moment the database names (or the poll). A
 * process killed at any moment leaves a lease that runs out (SQLite's single worker releases it at
 * start), and the next claim carries the deletion on.
 */
export function startLifecycleJob(container: Container, options: LifecycleJobOptions = {}): BackgroundJob {
  const { services, store, clock, logger } = container;
  const deletion = services.deletion;
  const owner = options.workerId ?? `del_${randomBytes(8).toString('hex')}`;
  const pollMs = options.pollMs ?? LIFECYCLE_POLL_MS;
  const batchSize = options.batchSize ?? container.config.deletionBatchSize;
  const leaseMs = options.leaseMs ?? DELETION_LEASE_MS;
  let started = false;

  async function pass(job: PolledJobContext): Promise<void> {
    if (!started) {
      // Only one worker runs on SQLite: a deletion left `deleting` under a lease is a killed process's.
      if (store.dialect === 'sqlite') {
        const released = await deletion.releaseAllLeases();
        if (released > 0) logger.warn({ released }, 'lifecycle job: resuming deletions a previous process had begun');
      }
      started = true;
    }
    await deletion.sendDueReminders();
    await services.apiKeys.sendExpiryNotices();
    await services.connectedApps.sweepExpired();
    while (!job.stopped()) {
      const org = await deletion.claimDue(owner, leaseMs);
      if (!org) break;
      // A deletion under way ends after its current batch and gives its lease back when the job stops.
      await deletion.deleteOrganization(org, owner, { batchSize, leaseMs, shouldStop: job.stopped });
    }
    if (job.stopped()) return;
    const next = await deletion.nextDueAt();
    if (next !== null) job.arm(Math.min(pollMs, Math.max(5, next - clock.now())));
  }

  return startPolledJob(pass, { pollMs, onError: (err) => logger.error({ err }, 'lifecycle job: a pass failed; retrying at the next poll') });
}
