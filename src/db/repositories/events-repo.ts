import type { DeliveryRow, EventRow } from '../schema.js';
import type { RepoContext } from './executor.js';
import { prepared } from './prepared.js';

// Every create, update and delete records one (compiled once: prepared.ts).
const insertEventRow = prepared(5, (db, id: string, orgId: string, type: string, body: string, occurredAt: number) =>
  db.insertInto('events').values({ id, org_id: orgId, type, body, occurred_at: occurredAt }),
);

export function eventsRepository(ctx: RepoContext) {
  const { db } = ctx;
  return {
    async insertEvent(row: Omit<EventRow, 'seq'>): Promise<void> {
      await insertEventRow.all(ctx, row.id, row.org_id, row.type, row.body, row.occurred_at);
    },

    async insertDeliveries(rows: Omit<DeliveryRow, 'seq' | 'replay_requested_at'>[]): Promise<void> {
      if (rows.length === 0) return;
      await db.insertInto('deliveries').values(rows).execute();
      if (ctx.unit) ctx.unit.workCreated += rows.length;
    },

    async findEvent(orgId: string, eventId: string): Promise<EventRow | undefined> {
      return db.selectFrom('events').selectAll().where('org_id', '=', orgId).where('id', '=', eventId).executeTakeFirst();
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

    /** A deleted subscription's pending deliveries stop at once. */
    async cancelPendingForWebhook(orgId: string, webhookId: string, at: number): Promise<number> {
      const result = await db
        .updateTable('deliveries')
        .set({ status: 'cancelled', next_attempt_at: null, lease_owner: null, lease_expires_at: null, updated_at: at })
        .where('org_id', '=', orgId)
        .where('webhook_id', '=', webhookId)
        .where('status', '=', 'pending')
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}
