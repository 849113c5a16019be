import { sql } from 'kysely';
import type { DeliveryAttemptRow, DeliveryRow, DeliveryStatus } from '../schema.js';
import type { RepoContext } from './executor.js';
import { deliveryVisibleTo } from './project-visibility.js';
import { promoteNextRow } from './delivery-queue-repo.js';

/** A delivery's place in its subscription's history: newest first by creation time, then by insertion. */
export interface HistoryPosition {
  createdAt: number;
  seq: number;
}

/** The history filter's states: the four stored statuses, with pending split into Pending and Retrying. */
export type HistoryState = 'pending' | 'retrying' | 'delivered' | 'failed' | 'cancelled';

export interface HistoryFilter {
  state?: HistoryState | undefined;
  event?: string | undefined;
  /** created_at at or after (ms). */
  from?: number | undefined;
  /** created_at before (ms). */
  to?: number | undefined;
  deliveryId?: string | undefined;
  eventId?: string | undefined;
}

export interface HistoryQuery {
  filter: HistoryFilter;
  limit: number;
  direction: 'older' | 'newer';
  /** Rows strictly older (or newer) than this; null from the newest (or oldest) end. */
  position: HistoryPosition | null;
  /** The most rows of the index one page may examine when a filter is not served by an index. */
  scanLimit: number;
  /** The person whose visibility applies (CONTRACT 15): deliveries of a hidden project's events are left out. */
  viewer?: string | null | undefined;
}

export interface HistoryPage {
  /** Newest first, at most `limit`. */
  rows: DeliveryRow[];
  /** More matching rows lie beyond the page, in the direction asked. */
  more: boolean;
  /** A bounded scan stopped here before it could fill the page: continue from this position. */
  scannedTo: HistoryPosition | null;
}

/**
 * A subscription's deliveries and their attempts as the API, the dashboard and the CLI read them
 * (organisation-scoped), and the replays asked from there.
 */
export function deliveriesRepository(ctx: RepoContext) {
  const { db, dialect } = ctx;

  return {
    async findById(orgId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
      return db.selectFrom('deliveries').selectAll().where('org_id', '=', orgId).where('id', '=', deliveryId).executeTakeFirst();
    },

    /**
     * One page of a subscription's history, newest first by (created_at, seq) or, for `direction: 'newer'`,
     * the page just above `position` (returned newest first too). Filters the history index serves (time
     * range, ids, Failed) cost nothing extra; the others (another status, an event) are applied to at most
     * `scanLimit` rows of the index per page, so no page reads more than that. When a bounded scan ends
     * before the page is full, `scannedTo` is where it stopped: the next page continues from there.
     */
    async historyPage(orgId: string, webhookId: string, query: HistoryQuery): Promise<HistoryPage> {
      const { filter, limit, direction, position, scanLimit } = query;
      const newer = direction === 'newer';
      const order = newer ? 'asc' : 'desc';
      // An event id is found through its own index. On SQLite a unary + keeps the subscription's terms off the
      // history index: without statistics (nothing runs ANALYZE on the embedded database) the planner would
      // rather walk the subscription's whole history in order than sort the one row the event index finds.
      let base =
        filter.eventId !== undefined && dialect === 'sqlite'
          ? db.selectFrom('deliveries').where(sql<string>`+org_id`, '=', orgId).where(sql<string>`+webhook_id`, '=', webhookId)
          : db.selectFrom('deliveries').where('org_id', '=', orgId).where('webhook_id', '=', webhookId);
      if (filter.from !== undefined) base = base.where('created_at', '>=', filter.from);
      if (filter.to !== undefined) base = base.where('created_at', '<', filter.to);
      if (filter.deliveryId !== undefined) base = base.where('id', '=', filter.deliveryId);
      if (filter.eventId !== undefined) base = base.where('event_id', '=', filter.eventId);
      if (query.viewer) base = base.where(deliveryVisibleTo(query.viewer));
      // A literal, not a parameter: only then may SQLite's planner use the partial index on those rows.
      const indexed = filter.state === 'failed' || filter.state === 'cancelled' ? filter.state : null;
      if (indexed !== null) base = base.where('status', '=', sql.lit(indexed));
      if (position !== null) {
        base = base.where((eb) => eb(eb.refTuple('created_at', 'seq'), newer ? '>' : '<', eb.tuple(position.createdAt, position.seq)));
      }
      base = base.orderBy('created_at', order).orderBy('seq', order);

      const extra = filter.event !== undefined || (filter.state !== undefined && indexed === null);
      let rows: DeliveryRow[];
      let scannedTo: HistoryPosition | null = null;
      if (!extra) {
        rows = await base.selectAll().limit(limit + 1).execute();
      } else {
        let matches = db.selectFrom(base.selectAll().limit(scanLimit).as('d')).selectAll();
        if (filter.event !== undefined) matches = matches.where('event_type', '=', filter.event);
        switch (filter.state) {
          case 'delivered':
            matches = matches.where('status', '=', filter.state);
            break;
          case 'pending':
            matches = matches.where('status', '=', 'pending').where((eb) => eb.or([eb('failure_count', '=', 0), eb('replay_requested_at', 'is not', null)]));
            break;
          case 'retrying':
            matches = matches.where('status', '=', 'pending').where('failure_count', '>', 0).where('replay_requested_at', 'is', null);
            break;
          default:
            break;
        }
        rows = await matches.orderBy('created_at', order).orderBy('seq', order).limit(limit + 1).execute();
        if (rows.length <= limit) {
          // Fewer matches than a page: either the history ends within the scan, or the scan stopped early.
          // The row after the scan's last one says which: a history ending exactly there has no next page.
          const [edge, beyond] = await base.select(['created_at', 'seq']).limit(2).offset(scanLimit - 1).execute();
          if (edge && beyond) scannedTo = { createdAt: edge.created_at, seq: edge.seq };
        }
      }
      const more = rows.length > limit;
      if (more) rows = rows.slice(0, limit);
      if (newer) rows.reverse();
      return { rows, more, scannedTo };
    },

    /** When each delivery was last attempted and whether a replay attempt was ever made, for a page of rows. */
    async attemptSummaries(orgId: string, deliveryIds: readonly string[]): Promise<Map<string, { lastAttemptAt: number; replayed: boolean }>> {
      const summaries = new Map<string, { lastAttemptAt: number; replayed: boolean }>();
      if (deliveryIds.length === 0) return summaries;
      const rows = await db
        .selectFrom('delivery_attempts')
        .select((eb) => [
          'delivery_id',
          eb.fn.max('started_at').as('last'),
          eb.fn.max(eb.case().when('trigger', '=', 'replay').then(1).else(0).end()).as('replayed'),
        ])
        .where('org_id', '=', orgId)
        .where('delivery_id', 'in', deliveryIds)
        .groupBy('delivery_id')
        .execute();
      for (const r of rows) summaries.set(r.delivery_id, { lastAttemptAt: Number(r.last), replayed: Number(r.replayed) === 1 });
      return summaries;
    },

    async listAttempts(orgId: string, deliveryId: string): Promise<DeliveryAttemptRow[]> {
      return db
        .selectFrom('delivery_attempts')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('delivery_id', '=', deliveryId)
        .orderBy('seq')
        .execute();
    },

    /**
     * Attempts of the organisation (or of one subscription) per epoch hour in [fromHour, toHour), by
     * outcome, from the hourly roll-up the worker keeps beside the attempts.
     */
    async hourlyOutcomes(orgId: string, fromHour: number, toHour: number, webhookId: string | null): Promise<{ hour: number; delivered: number; failed: number }[]> {
      const rows = await db
        .selectFrom('delivery_hourly')
        .select((eb) => ['hour', eb.fn.sum<number | string>('delivered').as('delivered'), eb.fn.sum<number | string>('failed').as('failed')])
        .where('org_id', '=', orgId)
        .$if(webhookId !== null, (qb) => qb.where('webhook_id', '=', webhookId!))
        .where('hour', '>=', fromHour)
        .where('hour', '<', toHour)
        .groupBy('hour')
        .execute();
      return rows.map((r) => ({ hour: Number(r.hour), delivered: Number(r.delivered), failed: Number(r.failed) }));
    },

    /**
     * The organisation's (or one subscription's) deliveries created at or after `from`, counted by their
     * status now; test events left out, as from the attempts' roll-up. Read from an index alone (migration 021).
     */
    async statusCounts(orgId: string, from: number, webhookId: string | null): Promise<{ webhookId: string; status: DeliveryStatus; count: number }[]> {
      const rows = await db
        .selectFrom('deliveries')
        .select((eb) => ['webhook_id', 'status', eb.fn.countAll<number | string>().as('count')])
        .where('org_id', '=', orgId)
        .$if(webhookId !== null, (qb) => qb.where('webhook_id', '=', webhookId!))
        .where('created_at', '>=', from)
        .where('test', '=', 0)
        .groupBy(['webhook_id', 'status'])
        .execute();
      return rows.map((r) => ({ webhookId: r.webhook_id, status: r.status, count: Number(r.count) }));
    },

    /** Re-queues one finished (delivered, failed, or cancelled while disabled) delivery for a replay attempt; false otherwise. */
    async requestReplay(orgId: string, deliveryId: string, at: number): Promise<boolean> {
      const result = await db
        .updateTable('deliveries')
        // One replay stands outside its subscription's order (CONTRACT 14): it neither waits nor holds others.
        .set({ status: 'pending', next_attempt_at: at, replay_requested_at: at, lease_owner: null, lease_expires_at: null, updated_at: at, cancel_reason: null, fifo: 0 })
        .where('org_id', '=', orgId)
        .where('id', '=', deliveryId)
        .where((eb) => eb.or([eb('status', 'in', ['delivered', 'failed']), eb.and([eb('status', '=', 'cancelled'), eb('cancel_reason', '=', 'subscription_disabled')])]))
        .executeTakeFirst();
      const queued = Number(result.numUpdatedRows) > 0;
      // The store wakes the delivery workers (every process) once this commits.
      if (queued && ctx.unit) ctx.unit.workCreated += 1;
      return queued;
    },

    /**
     * Ids of a subscription's replayable deliveries created at or after `since`, oldest first, at most
     * `limit`: the failed ones, and those cancelled while it was disabled (CONTRACT 11: nothing is lost).
     * Each kind is read from its partial index; test deliveries are not replayed in bulk.
     */
    async failedSince(orgId: string, webhookId: string, since: number, limit: number): Promise<string[]> {
      const read = (status: 'failed' | 'cancelled') =>
        db
          .selectFrom('deliveries')
          .select(['id', 'created_at', 'seq'])
          .where('org_id', '=', orgId)
          .where('webhook_id', '=', webhookId)
          .where('status', '=', sql.lit(status))
          .where('created_at', '>=', since)
          .where('test', '=', 0)
          .$if(status === 'cancelled', (qb) => qb.where('cancel_reason', '=', 'subscription_disabled'))
          .orderBy('created_at')
          .orderBy('seq')
          .limit(limit)
          .execute();
      const rows = [...(await read('failed')), ...(await read('cancelled'))];
      rows.sort((a, b) => a.created_at - b.created_at || a.seq - b.seq);
      return rows.slice(0, limit).map((r) => r.id);
    },

    /** How many deliveries `failedSince` would find, counted in the partial indexes, at most `cap`. */
    async countFailedSince(orgId: string, webhookId: string, since: number, cap: number): Promise<number> {
      const count = async (status: 'failed' | 'cancelled') => {
        const capped = db
          .selectFrom('deliveries')
          .select(sql.lit(1).as('one'))
          .where('org_id', '=', orgId)
          .where('webhook_id', '=', webhookId)
          .where('status', '=', sql.lit(status))
          .where('created_at', '>=', since)
          .where('test', '=', 0)
          .$if(status === 'cancelled', (qb) => qb.where('cancel_reason', '=', 'subscription_disabled'))
          .limit(cap);
        const row = await db.selectFrom(capped.as('f')).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirst();
        return Number(row?.n ?? 0);
      };
      return Math.min(cap, (await count('failed')) + (await count('cancelled')));
    },

    /** Re-queues those of `deliveryIds` that are still replayable (failed, or cancelled while disabled); returns the ids re-queued. */
    async requestReplayOfFailed(orgId: string, deliveryIds: readonly string[], at: number, ordered?: { webhookId: string }): Promise<string[]> {
      if (deliveryIds.length === 0) return [];
      // An ordered subscription's bulk replay rejoins its order, in the original order: the deliveries wait
      // with no due time and the first pending one of the order is promoted, as a finished head would.
      const rows = await db
        .updateTable('deliveries')
        .set({
          status: 'pending',
          next_attempt_at: ordered ? null : at,
          replay_requested_at: at,
          lease_owner: null,
          lease_expires_at: null,
          updated_at: at,
          cancel_reason: null,
          fifo: ordered ? 1 : 0,
        })
        .where('org_id', '=', orgId)
        .where('id', 'in', deliveryIds)
        .$if(ordered !== undefined, (qb) => qb.where('webhook_id', '=', ordered!.webhookId))
        .where((eb) => eb.or([eb('status', '=', 'failed'), eb.and([eb('status', '=', 'cancelled'), eb('cancel_reason', '=', 'subscription_disabled')])]))
        .returning('id')
        .execute();
      // The order's first pending delivery becomes due; a later one already due, or one in flight, yields
      // to it at its claim (the claim's head rule), so the replayed ones go first, in their order.
      if (ordered && rows.length > 0) await promoteNextRow.all(ctx, ordered.webhookId, at);
      if (ctx.unit) ctx.unit.workCreated += rows.length;
      return rows.map((r) => r.id);
    },

    /** The organisation of a delivery id, for CLI commands given only the id. */
    async lookupOrgForCli(deliveryId: string): Promise<string | undefined> {
      const row = await db.selectFrom('deliveries').select('org_id').where('id', '=', deliveryId).executeTakeFirst();
      return row?.org_id;
    },
  };
}
