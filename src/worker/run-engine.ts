import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Signal } from '../lib/signal.js';
import { startPolledJob, type PolledJobContext } from '../lib/wake-timer.js';
import type { Clock } from '../lib/time.js';
import type { RunsService } from '../services/workflows/runs-service.js';
import { noTracing, type Tracing } from '../tracing/tracing.js';

export interface RunEngineOptions {
  /** Identifies this process's leases; default random. */
  workerId?: string;
  /** How long a claim is held before another worker may take the run; default 30 s. */
  leaseMs?: number;
  /** Runs leased per claim; default 100. */
  batchSize?: number;
  /** Runs advanced at once (each in its own transaction); default 8 on PostgreSQL, 1 on SQLite (one writer). */
  parallel?: number;
  /** Poll fallback for work created elsewhere; default 1 s. */
  pollMs?: number;
}

export interface RunEngine {
  kick(): void;
  stop(): Promise<void>;
  /** Step transitions made by this process (benchmarks, tests). */
  advanced(): number;
}

/**
 * Advances workflow runs beside the delivery worker (`serve`, or `worker` alone). It leases due runs in
 * batches, advances each in its own transaction (only while the lease is still its own), then sleeps
 * until woken (a run was started or a task finished, on any process), until the earliest Wait timer
 * in the database falls due, or for the poll interval. Nothing lives only in memory: a process killed at
 * any moment leaves leases that expire, and the next worker carries on.
 */
export function startRunEngine(
  deps: { runs: RunsService; waker: Signal; logger: FastifyBaseLogger; clock: Clock; parallelDefault: number; tracing?: Tracing },
  options: RunEngineOptions = {},
): RunEngine {
  const { runs, waker, logger, clock } = deps;
  const tracing = deps.tracing ?? noTracing;
  const owner = options.workerId ?? `run_${randomBytes(8).toString('hex')}`;
  const leaseMs = options.leaseMs ?? 30_000;
  const batchSize = options.batchSize ?? 100;
  const parallel = Math.max(1, options.parallel ?? deps.parallelDefault);
  const pollMs = options.pollMs ?? 1000;
  let advanced = 0;

  async function advanceAll(job: PolledJobContext, keys: { org_id: string; id: string }[]): Promise<void> {
    let next = 0;
    const lane = async () => {
      while (!job.stopped() && next < keys.length) {
        const key = keys[next++]!;
        try {
          // A span per step transition (tracing on): its queries, and the events it records, belong to it.
          const moved = await tracing.span('workflow run step', { attributes: { 'workflow.run.id': key.id, 'workspace.organization_id': key.org_id } }, async (span) => {
            const done = await runs.advance(owner, key);
            span.setAttributes({ 'workflow.run.advanced': done });
            return done;
          });
          if (moved) advanced += 1;
        } catch (err) {
          // The lease stays: the run is tried again when it expires.
          logger.error({ err, run_id: key.id }, 'run engine: advancing a run failed; it is retried after its lease');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, keys.length) }, lane));
  }

  async function drain(job: PolledJobContext): Promise<void> {
    for (;;) {
      if (job.stopped()) return;
      const keys = await runs.claimDue(owner, leaseMs, batchSize);
      if (keys.length === 0) break;
      await advanceAll(job, keys);
      // Yield between batches: other work on this process goes on.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const due = await runs.nextDueAt();
    if (due !== null) job.arm(Math.min(pollMs, Math.max(5, due - clock.now())));
  }

  const job = startPolledJob(drain, { pollMs, wakeOn: waker, onError: (err) => logger.error({ err }, 'run engine: a claim failed; retrying at the next poll') });
  return { kick: job.kick, stop: job.stop, advanced: () => advanced };
}
