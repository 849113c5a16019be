import type { Container } from '../container.js';
import { openDeliveryQueue } from '../db/delivery-queue.js';
import { createDeliveryAgent, type DeliveryAgentOptions } from '../delivery/agent.js';
import { startReplayRunner } from './replay-runner.js';
import { startRunEngine, type RunEngineOptions } from './run-engine.js';
import { createDeliveryWorker, type DeliveryWorkerTuning } from '../delivery/worker.js';
import { startLifecycleJob } from './lifecycle-job.js';
import { startExportJob } from './export-job.js';
import { startWebhookHealthJob } from './health-job.js';

export interface RunningWorker {
  stop(): Promise<void>;
  /** Claims due work at once (tests, and callers that know work was just created elsewhere). */
  kick(): void;
  /** Workflow step transitions this process has made. */
  runsAdvanced(): number;
}

export interface StartDeliveryWorkerOptions extends DeliveryWorkerTuning {
  /** Trusted CA(s) for the receivers, replacing Node's (tests with a self-signed receiver). */
  ca?: DeliveryAgentOptions['ca'];
  /** The webhook health sweep's poll; default the poll interval given, else 10 s. */
  healthPollMs?: number;
  /** The workflow run engine that runs beside the delivery loop. */
  runs?: RunEngineOptions;
}

/**
 * Starts the webhook delivery worker for this process (`serve` runs it beside the API, `worker` alone).
 * On an embedded (SQLite) database only one worker process runs, so leases left by a killed process
 * return to the queue at once; on PostgreSQL other workers may be alive, so they return when they expire.
 */
export async function startDeliveryWorker(container: Container, options: StartDeliveryWorkerOptions = {}): Promise<RunningWorker> {
  const { config, store, logger } = container;
  if (store.dialect === 'sqlite') {
    const released = await store.repos.deliveryQueue.releaseAllQueueLeasesAcrossOrgs();
    if (released > 0) logger.warn({ released }, 'delivery worker: returned deliveries claimed by a previous process to the queue');
    const runsReleased = await container.services.runs.releaseAllLeases();
    if (runsReleased > 0) logger.warn({ released: runsReleased }, 'run engine: returned runs claimed by a previous process to the queue');
  }
  const dispatcher = createDeliveryAgent({
    allowPrivateNetworks: config.webhookAllowPrivateNetworks,
    connectTimeoutMs: config.webhookTimeoutMs,
    ...(options.ca !== undefined ? { ca: options.ca } : {}),
  });
  const queue = await openDeliveryQueue(container.database, store, { disableAfterMs: config.webhookDisableAfterMs });
  const worker = createDeliveryWorker(
    {
      config,
      store,
      clock: container.clock,
      logger,
      waker: container.waker,
      dispatcher,
      queue,
      onAttemptFinished: (outcome) => container.metrics.deliveryAttempt(outcome),
      tracing: container.tracing,
      secrets: container.secretBox,
      housekeeping: [
        { name: 'audit log', run: () => container.services.audit.prune() },
        { name: 'expired sessions', run: () => container.services.sessions.prune() },
        { name: 'unanswered passkey challenges', run: () => container.services.accountSecurity.prune() },
        { name: 'unfinished single sign-on round trips', run: () => container.services.sso.prune() },
        // DASHBOARD 12: verified domains are looked up again daily (a few per pass; each is due once a day).
        { name: 'single sign-on domain re-check', run: async () => {
          await container.services.sso.recheckDomains();
          return 0;
        } },
        { name: 'used and expired password links', run: () => container.services.accounts.prune() },
        // Finished bulk replays stay visible as long as failed history is kept.
        { name: 'finished bulk replays', run: () => container.services.replayJobs.prune(container.clock.now() - config.failedRetentionMs) },
      ],
    },
    options,
  );
  const replays = startReplayRunner({ replayJobs: container.services.replayJobs, waker: container.waker, logger, pollMs: options.pollIntervalMs });
  const runEngine = startRunEngine(
    { runs: container.services.runs, waker: container.waker, logger, clock: container.clock, parallelDefault: store.dialect === 'postgres' ? 8 : 1, tracing: container.tracing },
    { leaseMs: config.workflowLeaseMs, ...(options.pollIntervalMs !== undefined ? { pollMs: options.pollIntervalMs } : {}), ...options.runs },
  );
  const lifecycle = startLifecycleJob(container, { pollMs: options.pollIntervalMs });
  const exports = startExportJob(container, { pollMs: options.pollIntervalMs });
  const health = startWebhookHealthJob(container, { pollMs: options.healthPollMs ?? options.pollIntervalMs });
  logger.info({ concurrency: config.webhookConcurrency, per_subscription: config.webhookPerSubscriptionConcurrency }, 'delivery worker started');
  return {
    kick: () => {
      worker.kick();
      replays.kick();
      runEngine.kick();
      lifecycle.kick();
      exports.kick();
      health.kick();
    },
    runsAdvanced: () => runEngine.advanced(),
    async stop() {
      await health.stop();
      await exports.stop();
      await lifecycle.stop();
      await runEngine.stop();
      await replays.stop();
      await worker.stop();
      await queue.close();
      await dispatcher.close();
    },
  };
}
