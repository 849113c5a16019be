import type { WebhookRow } from '../schema.js';
import { toPage, type Page, type RepoContext } from './executor.js';
import { prepared } from './prepared.js';

// The outbox reads these on every create, update and delete (compiled once: prepared.ts).
const listAllSubscriptions = prepared(1, (db, orgId: string) =>
  db.selectFrom('webhooks').select(['id', 'events']).where('org_id', '=', orgId).orderBy('seq'),
);
const listAllSubscriptionsForShare = prepared(1, (db, orgId: string) =>
  db.selectFrom('webhooks').select(['id', 'events']).where('org_id', '=', orgId).orderBy('seq').forShare(),
);

export function webhooksRepository(ctx: RepoContext) {
  const { db, dialect } = ctx;
  return {
    async insert(row: Omit<WebhookRow, 'seq'>): Promise<WebhookRow> {
      return db.insertInto('webhooks').values(row).returningAll().executeTakeFirstOrThrow();
    },

    async findById(orgId: string, webhookId: string): Promise<WebhookRow | undefined> {
      return db
        .selectFrom('webhooks')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('id', '=', webhookId)
        .executeTakeFirst();
    },

    async list(orgId: string, limit: number, beforeSeq: number | null): Promise<Page<WebhookRow>> {
      let query = db.selectFrom('webhooks').selectAll().where('org_id', '=', orgId);
      if (beforeSeq !== null) query = query.where('seq', '<', beforeSeq);
      const rows = await query.orderBy('seq', 'desc').limit(limit + 1).execute();
      return toPage(rows, limit);
    },

    /**
     * Every subscription of the organisation; the outbox filters by event name. On PostgreSQL the rows
     * are share-locked, so a concurrent delete waits for the event's commit and then cancels the
     * deliveries it made (no pending delivery outlives its subscription); SQLite serialises writers.
     */
    async listAll(orgId: string): Promise<Pick<WebhookRow, 'id' | 'events'>[]> {
      return (dialect === 'postgres' ? listAllSubscriptionsForShare : listAllSubscriptions).all(ctx, orgId);
    },

    async delete(orgId: string, webhookId: string): Promise<boolean> {
      const result = await db
        .deleteFrom('webhooks')
        .where('org_id', '=', orgId)
        .where('id', '=', webhookId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
