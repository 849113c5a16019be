import type { DeliveryStatus } from '../schema.js';
import type { RepoContext } from './executor.js';

export interface DeliveryStats {
  byStatus: Partial<Record<DeliveryStatus, number>>;
  /** created_at of the oldest pending delivery, or null when none is pending. */
  oldestPendingCreatedAt: number | null;
}

/**
 * Operational read-outs across all organisations, for /metrics only (never returned to an API caller).
 * Both queries are served by the (status, ...) index on deliveries.
 */
export function metricsRepository({ db }: RepoContext) {
  return {
    async deliveryStats(): Promise<DeliveryStats> {
      const counts = await db
        .selectFrom('deliveries')
        .select(['status', (eb) => eb.fn.countAll<number | string>().as('n')])
        .groupBy('status')
        .execute();
      const oldest = await db
        .selectFrom('deliveries')
        .select((eb) => eb.fn.min<number | null>('created_at').as('oldest'))
        .where('status', '=', 'pending')
        .executeTakeFirst();
      const byStatus: DeliveryStats['byStatus'] = {};
      for (const row of counts) byStatus[row.status] = Number(row.n);
      return { byStatus, oldestPendingCreatedAt: oldest?.oldest == null ? null : Number(oldest.oldest) };
    },
  };
}

export type MetricsRepository = ReturnType<typeof metricsRepository>;
