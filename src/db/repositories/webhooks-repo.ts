import type { WebhookRow } from '../schema.js';
import { toPage, type Page, type RepoContext } from './executor.js';

export function webhooksRepository(ctx: RepoContext) {
  const { db } = ctx;
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
