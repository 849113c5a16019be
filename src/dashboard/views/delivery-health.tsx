import type { DeliveryHealth } from '../../services/webhooks/delivery-stats-service.js';
import { BarChart, type ChartSeries } from './charts.js';
import { Table, Time } from './components.js';
import { countOf } from '../../lib/text.js';
import { formatCount, formatShare } from './numbers.js';

const SERIES: readonly ChartSeries[] = [
  { label: 'Delivered', className: 'chart-delivered' },
  { label: 'Failed', className: 'chart-failed', hatched: true },
];

/**
 * The headline in deliveries (review 5, OV2): "100% delivered (3 of 3 deliveries); 18 failed attempts along
 * the way". Deliveries still on their way are named, so a share below 100% is not read as failure.
 */
export function deliveryHealthSummary(health: Pick<DeliveryHealth, 'failed' | 'deliveries'>): string {
  const { deliveries } = health;
  const along = health.failed > 0 ? `; ${countOf(health.failed, 'failed attempt')} along the way` : '';
  if (deliveries.total === 0) return `No deliveries in the last 24 hours${along}`;
  const pending = deliveries.pending > 0 ? `, ${formatCount(deliveries.pending)} on the way` : '';
  return `${formatShare(deliveries.delivered, deliveries.total)} delivered (${formatCount(deliveries.delivered)} of ${countOf(deliveries.total, 'delivery', 'deliveries')}${pending})${along}`;
}

/**
 * The "Deliveries per hour" chart (DASHBOARD 6) with its one-line summary and the table behind it: the
 * overview shows it for every subscription, a subscription's page for that one. `id` keeps the ids of
 * two charts on one page apart.
 */
export function DeliveryHealthChart({ id, health }: { id: string; health: DeliveryHealth }) {
  const summary = deliveryHealthSummary(health);
  const points = health.hours.map((h) => ({
    values: [h.delivered, h.failed],
    // Every six hours (UTC), so the axis reads 00:00, 06:00, 12:00, 18:00.
    tick: Number(h.hour.slice(11, 13)) % 6 === 0 ? h.hour.slice(11, 16) : undefined,
  }));
  return (
    <>
      <p class="chart-summary">{summary}</p>
      <BarChart id={id} label={`Delivery attempts per hour, last 24 hours (UTC), by outcome. ${summary}`} series={SERIES} points={points} />
      <details class="chart-data">
        <summary>Deliveries per hour as a table</summary>
        <Table caption="Deliveries per hour" headers={['Hour (UTC)', 'Delivered', 'Failed', 'Attempts']}>
          {health.hours.map((h) => (
            <tr>
              <td>
                <Time iso={h.hour} absolute />
              </td>
              <td>{formatCount(h.delivered)}</td>
              <td>{formatCount(h.failed)}</td>
              <td>{formatCount(h.delivered + h.failed)}</td>
            </tr>
          ))}
        </Table>
      </details>
    </>
  );
}
