import type { DeliveryRow, EventRow } from '../schema.js';
import type { RepoContext } from './executor.js';

export function eventsRepository({ db }: RepoContext) {
  return {
    async insertEvent(row: Omit<EventRow, 'seq'>): Promise<void> {
      await db.insertInto('events').values(row).execute();
    },

    async insertDeliveries(rows: Omit<DeliveryRow, 'seq' | 'replay_requested_at'>[]): Promise<void> {
      if (rows.length === 0) return;
      await db.insertInto('deliveries').values(rows).execute();
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
