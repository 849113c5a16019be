import type { Container } from '../container.js';
import type { BackgroundJob } from './lifecycle-job.js';
import { startPolledJob } from '../lib/wake-timer.js';

export interface HealthJobOptions {
  /** How often it looks for disablings to announce; default 10 s (it also wakes at the next 24-hour mark or secret expiry). */
  pollMs?: number | undefined;
}

export const HEALTH_POLL_MS = 10_000;

/**
 * The webhook health sweep (services/webhooks/webhook-health-service.ts) in the worker, beside deliveries: every poll,
 * and at the next moment the database names. Reads only subscriptions in a failure streak or holding a
 * previous secret (partial indexes), so an idle sweep costs three index probes.
 */
export function startWebhookHealthJob(container: Container, options: HealthJobOptions = {}): BackgroundJob {
  const { services, clock, logger } = container;
  const pollMs = options.pollMs ?? HEALTH_POLL_MS;
  return startPolledJob(
    async (job) => {
      const result = await services.webhookHealth.sweep();
      if (result.disabled + result.warned + result.forgotten > 0) logger.info(result, 'webhook health: sweep');
      if (job.stopped()) return;
      const next = await services.webhookHealth.nextDueAt();
      if (next !== null) job.arm(Math.min(pollMs, Math.max(5, next - clock.now())));
    },
    { pollMs, onError: (err) => logger.error({ err }, 'webhook health: a sweep failed; retrying at the next poll') },
  );
}
