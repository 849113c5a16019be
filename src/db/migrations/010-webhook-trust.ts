import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Webhooks receivers and operators trust (issue 22, CONTRACT 11):
 * - `webhooks.secret_previous` / `secret_previous_expires_at`: a rotated-out secret that still signs until then.
 * - `webhooks.status` ('active' | 'disabled') with `disabled_at`, `disabled_reason` ('failing' | 'gone') and
 *   `disabled_notified_at` (the audit row, the cancellations and the e-mail were done: once per disabling).
 * - `webhooks.failing_since`: start of the first failed attempt since the last success (null: healthy). The
 *   delivery worker writes it with the attempt that starts or ends a streak, so health never scans history;
 *   `failing_mail_at` marks the 24-hour e-mail of the streak as sent.
 * - `deliveries.test` (1: a test event, one attempt, not counted for health) and `deliveries.cancel_reason`
 *   (`subscription_disabled`, `subscription_deleted`).
 * Every column is nullable or has a default: release N-1 keeps running on this schema during a rolling update.
 */
export function webhookTrustMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('webhooks').addColumn('status', 'text', (c) => c.notNull().defaultTo('active')).execute();
      await db.schema.alterTable('webhooks').addColumn('secret_previous', 'text').execute();
      await db.schema.alterTable('webhooks').addColumn('secret_previous_expires_at', 'bigint').execute();
      await db.schema.alterTable('webhooks').addColumn('failing_since', 'bigint').execute();
      await db.schema.alterTable('webhooks').addColumn('failing_mail_at', 'bigint').execute();
      await db.schema.alterTable('webhooks').addColumn('disabled_at', 'bigint').execute();
      await db.schema.alterTable('webhooks').addColumn('disabled_reason', 'text').execute();
      await db.schema.alterTable('webhooks').addColumn('disabled_notified_at', 'bigint').execute();
      await db.schema.alterTable('webhooks').addColumn('updated_at', 'bigint').execute();
      // The health job reads only the subscriptions in a failure streak or holding a previous secret.
      await sql`CREATE INDEX webhooks_failing_idx ON webhooks (failing_since) WHERE failing_since IS NOT NULL`.execute(db);
      await sql`CREATE INDEX webhooks_previous_secret_idx ON webhooks (secret_previous_expires_at) WHERE secret_previous_expires_at IS NOT NULL`.execute(db);
      await db.schema.alterTable('deliveries').addColumn('test', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('deliveries').addColumn('cancel_reason', 'text').execute();
    },
  };
}
