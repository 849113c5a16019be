import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Delivery control (issue 31, CONTRACT 14). Per subscription: `rate_limit` (attempts started per second)
 * with `rate_tat`, the rate limiter's next free start in microseconds (GCRA's theoretical arrival time),
 * reserved by the claim that takes a slot; `ordering` and the subscription's head lease (`fifo_head`, until
 * `fifo_head_expires_at`): at most one of an ordered subscription's deliveries is in flight, whichever
 * worker holds it. Per delivery: `fifo` (1: in its subscription's order; replays and tests are 0), and its
 * place in that order is `seq`. Only the head of an ordered subscription has a due time; the others wait
 * with none, so the queue's scan never walks a blocked backlog. Per attempt: how long and why it was held.
 * Columns with defaults and one partial index: release N-1 reads and writes the same rows.
 */
export function deliveryControlMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('webhooks').addColumn('rate_limit', 'integer').execute();
      await db.schema.alterTable('webhooks').addColumn('ordering', 'text', (c) => c.notNull().defaultTo('none')).execute();
      await db.schema.alterTable('webhooks').addColumn('rate_tat', 'bigint').execute();
      await db.schema.alterTable('webhooks').addColumn('fifo_head', 'text').execute();
      await db.schema.alterTable('webhooks').addColumn('fifo_head_expires_at', 'bigint').execute();
      await db.schema.alterTable('deliveries').addColumn('fifo', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('delivery_attempts').addColumn('held_reason', 'text').execute();
      await db.schema.alterTable('delivery_attempts').addColumn('held_ms', 'bigint').execute();
      // An ordered subscription's waiting deliveries in order: the head, and the next one to promote.
      await sql`CREATE INDEX deliveries_fifo_idx ON deliveries (webhook_id, seq) WHERE status = 'pending' AND fifo = 1`.execute(db);
    },
  };
}
