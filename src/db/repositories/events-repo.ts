import { sql, type Compilable, type RawBuilder } from 'kysely';
import type { DeliveryRow, EventRow } from '../schema.js';
import type { Executor, RepoContext } from './executor.js';
import { prepared, readQuery } from './prepared.js';
import { eventVisibleTo } from './project-visibility.js';

// Every create, update and delete records one (compiled once: prepared.ts).
const insertEventRow = prepared(7, (db, id: string, orgId: string, type: string, body: string, occurredAt: number, traceParent: string | null, projectId: string | null) =>
  db.insertInto('events').values({ id, org_id: orgId, type, body, occurred_at: occurredAt, trace_parent: traceParent, project_id: projectId }),
);

/** An event as written: the columns with defaults (`test`, `restricted`) are the database's. */
type NewEvent = Omit<EventRow, 'seq' | 'test' | 'restricted'>;

const raw = <R>(db: Executor, query: RawBuilder<R>): Compilable<R> => ({ compile: () => query.compile(db) });

// A disabled subscription (CONTRACT 11) gets its delivery all the same, kept as cancelled with the reason, so
// that replaying failed deliveries after enabling it sends the events it missed. Literals: one SQL text.
const deliveryStatus = sql`case when w_status = 'active' then 'pending' else 'cancelled' end`;
const cancelReason = sql`case when w_status = 'active' then null else 'subscription_disabled' end`;
// An ordered subscription's delivery (CONTRACT 14) waits with no due time while an earlier one is pending:
// only the head of the order is in the queue's scan, and finishing it promotes the next (delivery-queue-repo).
// The literals match deliveries_fifo_idx's predicate, so the check is one probe of that index.
const nextAttempt = (at: RawBuilder<unknown>, webhookId: RawBuilder<unknown>) =>
  sql`case when w_status <> 'active' then null when w_ordering = 'fifo' and exists (select 1 from deliveries x where x.webhook_id = ${webhookId} and x.status = 'pending' and x.fifo = 1) then null else ${at} end`;
const fifoFlag = sql`case when w_ordering = 'fifo' then 1 else 0 end`;

/**
 * PostgreSQL: the event, the subscriptions listening to its type and their pending deliveries in one
 * statement (one round trip). The subscriptions are share-locked (FOR SHARE) as before: a concurrent
 * delete of one waits for this transaction's commit and then cancels the deliveries it made, and one
 * whose delete committed first is skipped, so no pending delivery outlives its subscription. Only the
 * listening rows are locked (the others get nothing, so their deletes need not wait). Delivery ids come
 * from the caller (newId, as every id); a subscription past the ids given is returned in `overflow`.
 */
const recordPostgres = prepared(
  8,
  (db, id: string, orgId: string, type: string, body: string, occurredAt: number, deliveryIds: string[], traceParent: string | null, projectId: string | null) =>
    raw(
      db,
      sql<{ matched: number; overflow: string[] | null }>`with inserted_event as (
  insert into events (id, org_id, type, body, occurred_at, trace_parent, project_id) values (${id}, ${orgId}, ${type}, ${body}, ${occurredAt}, ${traceParent}, ${projectId})
), listening as (
  select id, seq, status, ordering from webhooks where org_id = ${orgId} and events::jsonb ? ${type} for share
), numbered as (
  select id, status as w_status, ordering as w_ordering, row_number() over (order by seq)::int as n from listening
), ids as (
  select cast(${deliveryIds} as text[]) as a
), fan_out as (
  insert into deliveries (id, org_id, event_id, webhook_id, event_type, status, attempt_count, failure_count, next_attempt_at, created_at, updated_at, cancel_reason, fifo)
  select ids.a[n], ${orgId}, ${id}, numbered.id, ${type}, ${deliveryStatus}, 0, 0, ${nextAttempt(sql`cast(${occurredAt} as bigint)`, sql`numbered.id`)}, cast(${occurredAt} as bigint), cast(${occurredAt} as bigint), ${cancelReason}, ${fifoFlag}
  from numbered, ids where n <= cardinality(ids.a) order by n
)
select count(*) as matched, array_agg(numbered.id order by n) filter (where n > cardinality(ids.a)) as overflow from numbered, ids`,
    ),
);

/**
 * SQLite (no data-modifying CTEs): the event is one statement, the deliveries of the listening
 * subscriptions another, `INSERT ... SELECT` with the ids given as a JSON array. The transaction holds
 * SQLite's write lock, so the subscriptions cannot change in between.
 */
const listeningSqlite = (db: Executor, orgId: string, type: string) =>
  sql`select id, status as w_status, ordering as w_ordering, row_number() over (order by seq) as n from webhooks
  where org_id = ${orgId} and exists (select 1 from json_each(webhooks.events) where json_each.value = ${type})`;
const fanOutSqlite = prepared(
  5,
  (db, orgId: string, eventId: string, type: string, occurredAt: number, deliveryIds: string) =>
    raw(
      db,
      sql<{ webhook_id: string }>`insert into deliveries (id, org_id, event_id, webhook_id, event_type, status, attempt_count, failure_count, next_attempt_at, created_at, updated_at, cancel_reason, fifo)
select json_extract(${deliveryIds}, '$[' || (n - 1) || ']'), ${orgId}, ${eventId}, listening.id, ${type}, ${deliveryStatus}, 0, 0, ${nextAttempt(sql`${occurredAt}`, sql`listening.id`)}, ${occurredAt}, ${occurredAt}, ${cancelReason}, ${fifoFlag}
from (${listeningSqlite(db, orgId, type)}) as listening where n <= json_array_length(${deliveryIds}) order by n
returning webhook_id`,
    ),
);
const listeningAfterSqlite = prepared(3, (db, orgId: string, type: string, after: number) =>
  raw(db, sql<{ id: string }>`select id from (${listeningSqlite(db, orgId, type)}) as listening where n > ${after} order by n`),
);

/**
 * How many subscriptions listened to the type last time, per organisation and type: that many delivery
 * ids are generated up front (an id costs about a microsecond, and most organisations have none). Only a
 * guess: more listeners than ids cost one more statement, never a missing delivery.
 */
const listenerHints = new Map<string, number>();
const MAX_HINTS = 10_000;

function hintKey(orgId: string, type: string): string {
  return `${orgId}\u0000${type}`;
}

function remember(key: string, listeners: number): void {
  if (listenerHints.get(key) === listeners) return;
  if (listenerHints.size >= MAX_HINTS) listenerHints.clear();
  listenerHints.set(key, listeners);
}

type NewDelivery = Omit<DeliveryRow, 'seq' | 'replay_requested_at' | 'fifo'> & { fifo?: number };

export function eventsRepository(ctx: RepoContext) {
  const { db } = ctx;

  function pendingDelivery(event: NewEvent, deliveryId: string, webhookId: string, active: boolean): NewDelivery {
    return {
      id: deliveryId,
      org_id: event.org_id,
      event_id: event.id,
      webhook_id: webhookId,
      event_type: event.type,
      status: active ? 'pending' : 'cancelled',
      attempt_count: 0,
      failure_count: 0,
      next_attempt_at: active ? event.occurred_at : null,
      lease_owner: null,
      lease_expires_at: null,
      last_status_code: null,
      last_error: null,
      created_at: event.occurred_at,
      updated_at: event.occurred_at,
      test: 0,
      cancel_reason: active ? null : 'subscription_disabled',
    };
  }

  /** Subscriptions beyond the ids generated up front (rare: see listenerHints). */
  async function insertMore(event: NewEvent, webhookIds: string[], newDeliveryId: () => string): Promise<void> {
    if (webhookIds.length === 0) return;
    const rows = await db.selectFrom('webhooks').select(['id', 'status', 'ordering']).where('org_id', '=', event.org_id).where('id', 'in', webhookIds).execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    const ordered = rows.filter((r) => r.ordering === 'fifo').map((r) => r.id);
    const waiting = new Set(
      ordered.length === 0
        ? []
        : (await db.selectFrom('deliveries').select('webhook_id').distinct().where('webhook_id', 'in', ordered).where('status', '=', sql.lit('pending')).where('fifo', '=', sql.lit(1)).execute()).map((r) => r.webhook_id),
    );
    await db
      .insertInto('deliveries')
      .values(
        webhookIds.map((webhookId) => {
          const webhook = byId.get(webhookId);
          const row = pendingDelivery(event, newDeliveryId(), webhookId, (webhook?.status ?? 'active') === 'active');
          if (webhook?.ordering !== 'fifo') return row;
          return { ...row, fifo: 1, next_attempt_at: waiting.has(webhookId) ? null : row.next_attempt_at };
        }),
      )
      .execute();
  }

  return {
    /**
     * The outbox write: the event row and one pending delivery per subscription of the organisation
     * listening to its type at this moment, in subscription order. Returns the number of deliveries.
     * Called inside the caller's transaction, so all of it commits or rolls back with the change. The event
     * keeps the trace context the unit of work began in (store.ts), for its deliveries.
     */
    async insertEvent(input: Omit<NewEvent, 'trace_parent'>, newDeliveryId: () => string): Promise<number> {
      const event: NewEvent = { ...input, trace_parent: ctx.unit?.traceParent ?? null };
      const key = hintKey(event.org_id, event.type);
      const ids = Array.from({ length: (listenerHints.get(key) ?? 0) + (ctx.dialect === 'sqlite' ? 1 : 0) }, newDeliveryId);
      let deliveries: number;
      if (ctx.dialect === 'postgres') {
        const result = await recordPostgres.first(ctx, event.id, event.org_id, event.type, event.body, event.occurred_at, ids, event.trace_parent, event.project_id);
        if (!result) throw new Error('recording an event returned no row');
        deliveries = result.matched;
        await insertMore(event, result.overflow ?? [], newDeliveryId);
      } else {
        await insertEventRow.all(ctx, event.id, event.org_id, event.type, event.body, event.occurred_at, event.trace_parent, event.project_id);
        deliveries = (await fanOutSqlite.all(ctx, event.org_id, event.id, event.type, event.occurred_at, JSON.stringify(ids))).length;
        // One id more than the hint is given, so a full batch means there may be more listeners.
        if (deliveries === ids.length) {
          const more = await listeningAfterSqlite.all(ctx, event.org_id, event.type, ids.length);
          await insertMore(event, more.map((row) => row.id), newDeliveryId);
          deliveries += more.length;
        }
      }
      remember(key, deliveries);
      if (ctx.unit) ctx.unit.workCreated += deliveries;
      return deliveries;
    },

    /**
     * A test event (POST /v1/webhooks/:id/test): its event row and one pending delivery to the one
     * subscription, marked `test`, with no fan-out to the organisation's other subscriptions.
     */
    async insertTestEvent(input: Omit<NewEvent, 'trace_parent' | 'project_id'>, deliveryId: string, webhookId: string): Promise<void> {
      const event: NewEvent = { ...input, trace_parent: ctx.unit?.traceParent ?? null, project_id: null };
      await db.insertInto('events').values({ ...event, test: 1 }).execute();
      await db.insertInto('deliveries').values({ ...pendingDelivery(event, deliveryId, webhookId, true), test: 1 }).execute();
      if (ctx.unit) ctx.unit.workCreated += 1;
    },

    /** An event by id; with a viewer (CONTRACT 15), only one they may see. */
    async findEvent(orgId: string, eventId: string, viewer: string | null = null): Promise<EventRow | undefined> {
      let query = db.selectFrom('events').selectAll().where('org_id', '=', orgId).where('id', '=', eventId);
      if (viewer !== null) query = query.where(eventVisibleTo(viewer));
      return query.executeTakeFirst();
    },

    /** A private project was deleted: its events become the admins' and owners' alone. */
    async restrictProject(orgId: string, projectId: string): Promise<void> {
      await db.updateTable('events').set({ restricted: 1 }).where('org_id', '=', orgId).where('project_id', '=', projectId).execute();
    },

    /**
     * A page of the organisation's events since `since`, newest first, test events left out; `types`
     * narrows to those types (events_org_type_seq_idx for one, events_org_seq_idx otherwise).
     */
    async page(
      orgId: string,
      filter: { since: number; types?: readonly string[] | undefined; viewer?: string | null | undefined },
      limit: number,
      beforeSeq: number | null,
    ): Promise<Pick<EventRow, 'seq' | 'id' | 'type' | 'body' | 'occurred_at'>[]> {
      // `occurred_at + 0`: the retention bound is checked row by row along the seq index, never planned as a
      // range of events_occurred_idx (pruning's index), which would sort every retained event for each page.
      let query = db
        .selectFrom('events')
        .select(['seq', 'id', 'type', 'body', 'occurred_at'])
        .where('org_id', '=', orgId)
        .where('test', '=', 0)
        .where(sql<number>`occurred_at + 0`, '>=', filter.since);
      if (filter.types !== undefined) query = query.where('type', 'in', filter.types);
      if (filter.viewer) query = query.where(eventVisibleTo(filter.viewer));
      if (beforeSeq !== null) query = query.where('seq', '<', beforeSeq);
      return readQuery(ctx, query.orderBy('seq', 'desc').limit(limit));
    },

    async listEvents(orgId: string): Promise<EventRow[]> {
      return db.selectFrom('events').selectAll().where('org_id', '=', orgId).orderBy('seq').execute();
    },

    async listDeliveriesForEvent(orgId: string, eventId: string): Promise<DeliveryRow[]> {
      return db
        .selectFrom('deliveries')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('event_id', '=', eventId)
        .orderBy('seq')
        .execute();
    },

    /** A deleted or disabled subscription's pending deliveries stop at once (a lease held on one is cleared too). */
    async cancelPendingForWebhook(orgId: string, webhookId: string, at: number, reason: 'subscription_deleted' | 'subscription_disabled'): Promise<number> {
      const result = await db
        .updateTable('deliveries')
        .set({ status: 'cancelled', next_attempt_at: null, lease_owner: null, lease_expires_at: null, updated_at: at, cancel_reason: reason })
        .where('org_id', '=', orgId)
        .where('webhook_id', '=', webhookId)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      // An ordered subscription's head lease goes with its deliveries.
      await db.updateTable('webhooks').set({ fifo_head: null, fifo_head_expires_at: null }).where('org_id', '=', orgId).where('id', '=', webhookId).where('fifo_head', 'is not', null).execute();
      return Number(result.numUpdatedRows);
    },
  };
}
