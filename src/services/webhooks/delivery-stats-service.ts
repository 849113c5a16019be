import type { DeliveryStatus } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { HOUR_MS, toIso, type Clock } from '../../lib/time.js';
import { authorize, type Actor } from '../access/actor.js';
import { requireWebhook } from './webhooks-service.js';

/** The chart's window: the current UTC hour and the 23 before it. */
export const HEALTH_HOURS = 24;

/** One UTC hour of delivery attempts. */
export interface HourOutcomes {
  /** Start of the hour, ISO 8601. */
  hour: string;
  /** Attempts answered with a 2xx in time. */
  delivered: number;
  /** Attempts that failed: another status, a timeout, a refused or broken connection, a blocked address. */
  failed: number;
}

/** Deliveries created in the window, by their status now (a delivery replayed until it succeeded is delivered). */
export interface DeliveryCounts {
  delivered: number;
  /** Failed for good: retries used up. */
  failed: number;
  /** Waiting for a first attempt or a retry. */
  pending: number;
  cancelled: number;
  total: number;
}

export interface DeliveryHealth {
  /** Oldest first, one entry per hour of the window, hours without attempts included as zeros. */
  hours: HourOutcomes[];
  /** Attempts in the window, by outcome. */
  delivered: number;
  failed: number;
  /** The window's deliveries: what the headline figure counts (review 5, OV2). */
  deliveries: DeliveryCounts;
  /** Start of the first hour and end of the last (exclusive). */
  from: string;
  to: string;
}

const emptyCounts = (): DeliveryCounts => ({ delivered: 0, failed: 0, pending: 0, cancelled: 0, total: 0 });

function addCount(counts: DeliveryCounts, status: DeliveryStatus, n: number): void {
  counts[status] += n;
  counts.total += n;
}

/**
 * Webhook health over the last 24 hours, for the whole organisation (the overview) or one subscription (its
 * page). The chart draws attempts per UTC hour: an attempt is a fact that never changes once made, so an
 * hour's bar means what the endpoint answered in that hour (docs/decisions.md, "Dashboard overview"); they come
 * from the hourly roll-up the worker writes with the attempts. The headline counts deliveries by their status
 * now (issue 46): after a fixed endpoint and a replay, every delivery reads delivered, as its row in the table does.
 */
export function createDeliveryStatsService({ store, clock }: { store: Store; clock: Clock }) {
  return {
    async hourly(actor: Actor, options: { webhookId?: string | undefined } = {}): Promise<DeliveryHealth> {
      authorize(actor, 'webhooks', 'read');
      const webhookId = options.webhookId ?? null;
      if (webhookId !== null) await requireWebhook(store.repos, actor.orgId, webhookId);
      const lastHour = Math.floor(clock.now() / HOUR_MS);
      const firstHour = lastHour - HEALTH_HOURS + 1;
      const [rows, statuses] = await Promise.all([
        store.repos.deliveries.hourlyOutcomes(actor.orgId, firstHour, lastHour + 1, webhookId),
        store.repos.deliveries.statusCounts(actor.orgId, firstHour * HOUR_MS, webhookId),
      ]);
      const deliveries = emptyCounts();
      for (const row of statuses) addCount(deliveries, row.status, row.count);
      const hours: HourOutcomes[] = [];
      for (let h = firstHour; h <= lastHour; h++) hours.push({ hour: toIso(h * HOUR_MS), delivered: 0, failed: 0 });
      let delivered = 0;
      let failed = 0;
      for (const row of rows) {
        const bucket = hours[row.hour - firstHour];
        if (!bucket) continue;
        bucket.delivered += row.delivered;
        bucket.failed += row.failed;
        delivered += row.delivered;
        failed += row.failed;
      }
      return { hours, delivered, failed, deliveries, from: toIso(firstHour * HOUR_MS), to: toIso((lastHour + 1) * HOUR_MS) };
    },

    /** Each subscription's deliveries created over the same 24 hours, by status (subscriptions without any are absent). */
    async perWebhook(actor: Actor): Promise<Map<string, DeliveryCounts>> {
      authorize(actor, 'webhooks', 'read');
      const lastHour = Math.floor(clock.now() / HOUR_MS);
      const byWebhook = new Map<string, DeliveryCounts>();
      for (const row of await store.repos.deliveries.statusCounts(actor.orgId, (lastHour - HEALTH_HOURS + 1) * HOUR_MS, null)) {
        let counts = byWebhook.get(row.webhookId);
        if (!counts) byWebhook.set(row.webhookId, (counts = emptyCounts()));
        addCount(counts, row.status, row.count);
      }
      return byWebhook;
    },
  };
}

export type DeliveryStatsService = ReturnType<typeof createDeliveryStatsService>;
