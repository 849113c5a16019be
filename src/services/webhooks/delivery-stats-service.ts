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

export interface DeliveryHealth {
  /** Oldest first, one entry per hour of the window, hours without attempts included as zeros. */
  hours: HourOutcomes[];
  delivered: number;
  failed: number;
  /** Start of the first hour and end of the last (exclusive). */
  from: string;
  to: string;
}

/**
 * Webhook health: delivery attempts per UTC hour by outcome, over the last 24 hours, for the whole
 * organisation (the overview) or one subscription (its page). Attempts, not deliveries: an attempt is a
 * fact that never changes once made, so an hour's bar means what the endpoint answered in that hour,
 * whatever happened to the delivery later (docs/decisions.md, "Dashboard overview"). Read from the hourly
 * roll-up the worker writes with the attempts: at most 24 rows per subscription, whatever the history holds.
 */
export function createDeliveryStatsService({ store, clock }: { store: Store; clock: Clock }) {
  return {
    async hourly(actor: Actor, options: { webhookId?: string | undefined } = {}): Promise<DeliveryHealth> {
      authorize(actor, 'webhooks', 'read');
      const webhookId = options.webhookId ?? null;
      if (webhookId !== null) await requireWebhook(store.repos, actor.orgId, webhookId);
      const lastHour = Math.floor(clock.now() / HOUR_MS);
      const firstHour = lastHour - HEALTH_HOURS + 1;
      const rows = await store.repos.deliveries.hourlyOutcomes(actor.orgId, firstHour, lastHour + 1, webhookId);
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
      return { hours, delivered, failed, from: toIso(firstHour * HOUR_MS), to: toIso((lastHour + 1) * HOUR_MS) };
    },

    /** Each subscription's attempts over the same 24 hours, by outcome (subscriptions without any are absent). */
    async perWebhook(actor: Actor): Promise<Map<string, { delivered: number; failed: number }>> {
      authorize(actor, 'webhooks', 'read');
      const lastHour = Math.floor(clock.now() / HOUR_MS);
      const rows = await store.repos.deliveries.outcomesByWebhook(actor.orgId, lastHour - HEALTH_HOURS + 1, lastHour + 1);
      return new Map(rows.map((r) => [r.webhookId, { delivered: r.delivered, failed: r.failed }]));
    },
  };
}

export type DeliveryStatsService = ReturnType<typeof createDeliveryStatsService>;
