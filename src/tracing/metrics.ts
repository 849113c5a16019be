import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { DeliveryStats } from '../db/repositories/metrics-repo.js';
import type { DeliveryStatus } from '../db/schema.js';
import { registerRequestMetrics } from './request-metrics.js';

/** What one finished attempt led to: delivered, a retry scheduled, or given up (failed). */
export type AttemptOutcome = 'delivered' | 'retry_scheduled' | 'failed';

export interface Metrics {
  readonly registry: Registry;
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void;
  /**
   * For the delivery worker: call once per finished attempt (after its result is stored). Counts are
   * per process; the cluster-wide picture is the `workspace_deliveries` gauges, read from the database.
   */
  deliveryAttempt(outcome: AttemptOutcome): void;
  /** Prometheus text exposition. */
  render(): Promise<string>;
}

const STATUSES: DeliveryStatus[] = ['pending', 'delivered', 'failed', 'cancelled'];

export interface MetricsOptions {
  /** Read once per scrape; any instance reports the whole cluster's queue. */
  deliveryStats: () => Promise<DeliveryStats>;
  now: () => number;
  onCollectError?: (err: unknown) => void;
}

/** One registry per container, so several containers in one process (tests) never share series. */
export function createMetrics({ deliveryStats, now, onCollectError }: MetricsOptions): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'workspace_' });

  const requests = registerRequestMetrics(registry);
  const attempts = new Counter({
    name: 'workspace_delivery_attempts_total',
    help: 'Webhook delivery attempts finished by this process, by outcome.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });

  // The database gauges of one scrape share one read (render starts a fresh one).
  let current: Promise<DeliveryStats | null> | null = null;
  function stats(): Promise<DeliveryStats | null> {
    current ??= deliveryStats().catch((err: unknown) => {
      onCollectError?.(err);
      return null;
    });
    return current;
  }

  new Gauge({
    name: 'workspace_deliveries',
    help: 'Webhook deliveries in the database, by status (all organisations).',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      const s = await stats();
      // A database outage leaves the previous values rather than failing the whole scrape.
      if (s) for (const status of STATUSES) this.set({ status }, s.byStatus[status] ?? 0);
    },
  });
  new Gauge({
    name: 'workspace_deliveries_pending',
    help: 'Webhook deliveries waiting for a successful attempt (all organisations).',
    registers: [registry],
    async collect() {
      const s = await stats();
      if (s) this.set(s.byStatus.pending ?? 0);
    },
  });
  new Gauge({
    name: 'workspace_deliveries_oldest_pending_age_seconds',
    help: 'Age of the oldest pending webhook delivery, 0 when none is pending.',
    registers: [registry],
    async collect() {
      const s = await stats();
      if (s) this.set(s.oldestPendingCreatedAt === null ? 0 : Math.max(0, (now() - s.oldestPendingCreatedAt) / 1000));
    },
  });

  for (const outcome of ['delivered', 'retry_scheduled', 'failed'] as const) attempts.inc({ outcome }, 0);

  return {
    registry,
    observeRequest(method, route, statusCode, seconds) {
      requests.observe(method, route, statusCode, seconds);
    },
    deliveryAttempt(outcome) {
      attempts.inc({ outcome });
    },
    render() {
      current = null;
      return registry.metrics();
    },
  };
}
