import type { Updateable } from 'kysely';
import type { NewWebhook, WebhookRow, WebhooksTable } from '../schema.js';
import { SEALED_PREFIX } from '../../lib/secret-box.js';
import { toPage, type Page, type RepoContext } from './executor.js';

/** A subscription the health job has to act on (CONTRACT 11). */
export type HealthDue = Pick<WebhookRow, 'id' | 'org_id' | 'url' | 'status' | 'failing_since' | 'failing_mail_at' | 'disabled_at' | 'disabled_reason' | 'disabled_notified_at'>;

export function webhooksRepository(ctx: RepoContext) {
  const { db } = ctx;
  return {
    async insert(row: NewWebhook): Promise<WebhookRow> {
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

    /** The organisation's failing or disabled subscriptions, longest-failing first (the overview's warning). */
    async listUnhealthy(orgId: string, limit: number): Promise<WebhookRow[]> {
      return db
        .selectFrom('webhooks')
        .selectAll()
        .where('org_id', '=', orgId)
        .where((eb) => eb.or([eb('failing_since', 'is not', null), eb('status', '=', 'disabled')]))
        .orderBy('failing_since')
        .orderBy('seq')
        .limit(limit)
        .execute();
    },

    /** Applies `changes` to the subscription; returns the row after, or undefined when it does not exist. */
    async update(orgId: string, webhookId: string, changes: Updateable<WebhooksTable>): Promise<WebhookRow | undefined> {
      return db.updateTable('webhooks').set(changes).where('org_id', '=', orgId).where('id', '=', webhookId).returningAll().executeTakeFirst();
    },

    /** Brings a disabled subscription back, its streak and notices forgotten; undefined when it was not disabled. */
    async enable(orgId: string, webhookId: string, at: number): Promise<WebhookRow | undefined> {
      return db
        .updateTable('webhooks')
        .set({ status: 'active', failing_since: null, failing_mail_at: null, disabled_at: null, disabled_reason: null, disabled_notified_at: null, updated_at: at, fifo_head: null, fifo_head_expires_at: null })
        .where('org_id', '=', orgId)
        .where('id', '=', webhookId)
        .where('status', '=', 'disabled')
        .returningAll()
        .executeTakeFirst();
    },

    async delete(orgId: string, webhookId: string): Promise<boolean> {
      const result = await db
        .deleteFrom('webhooks')
        .where('org_id', '=', orgId)
        .where('id', '=', webhookId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** The organisation of a subscription id, for CLI commands given only the id. */
    async lookupOrgForCli(webhookId: string): Promise<string | undefined> {
      const row = await db.selectFrom('webhooks').select('org_id').where('id', '=', webhookId).executeTakeFirst();
      return row?.org_id;
    },

    // ---- the health job's cross-organisation operations (read through the partial failing_since index) ----

    /** Disabled ones not yet announced, and active ones failing since `warnBefore` not yet mailed. */
    async healthDueAcrossOrgs(warnBefore: number): Promise<HealthDue[]> {
      return db
        .selectFrom('webhooks')
        .select(['id', 'org_id', 'url', 'status', 'failing_since', 'failing_mail_at', 'disabled_at', 'disabled_reason', 'disabled_notified_at'])
        .where('failing_since', 'is not', null)
        .where((eb) =>
          eb.or([
            eb.and([eb('status', '=', 'disabled'), eb('disabled_notified_at', 'is', null)]),
            eb.and([eb('status', '=', 'active'), eb('failing_mail_at', 'is', null), eb('failing_since', '<=', warnBefore)]),
          ]),
        )
        .orderBy('failing_since')
        .limit(500)
        .execute();
    },

    /** Marks a disabling as announced; false when another process did it first (or it was enabled meanwhile). */
    async claimDisabledNotice(orgId: string, webhookId: string, at: number): Promise<boolean> {
      const result = await db
        .updateTable('webhooks')
        .set({ disabled_notified_at: at })
        .where('org_id', '=', orgId)
        .where('id', '=', webhookId)
        .where('status', '=', 'disabled')
        .where('disabled_notified_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Marks the streak's 24-hour mail as sent; false when it was, or the streak ended meanwhile. */
    async claimFailingNotice(orgId: string, webhookId: string, since: number, at: number): Promise<boolean> {
      const result = await db
        .updateTable('webhooks')
        .set({ failing_mail_at: at })
        .where('org_id', '=', orgId)
        .where('id', '=', webhookId)
        .where('status', '=', 'active')
        .where('failing_since', '=', since)
        .where('failing_mail_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Rotated-out secrets whose window has passed are forgotten (CONTRACT 11). */
    async forgetExpiredPreviousSecretsAcrossOrgs(now: number): Promise<number> {
      const result = await db
        .updateTable('webhooks')
        .set({ secret_previous: null, secret_previous_expires_at: null })
        .where('secret_previous_expires_at', '<=', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** The next moment the health job has work: a 24-hour mark or a previous secret's expiry. */
    async nextHealthDueAcrossOrgs(warnAfterMs: number): Promise<number | null> {
      const warn = await db
        .selectFrom('webhooks')
        .select('failing_since')
        .where('failing_since', 'is not', null)
        .where('status', '=', 'active')
        .where('failing_mail_at', 'is', null)
        .orderBy('failing_since')
        .limit(1)
        .executeTakeFirst();
      const expiry = await db
        .selectFrom('webhooks')
        .select('secret_previous_expires_at')
        .where('secret_previous_expires_at', 'is not', null)
        .orderBy('secret_previous_expires_at')
        .limit(1)
        .executeTakeFirst();
      const times = [warn?.failing_since == null ? null : Number(warn.failing_since) + warnAfterMs, expiry?.secret_previous_expires_at ?? null];
      const due = times.filter((t): t is number => t !== null).map(Number);
      return due.length === 0 ? null : Math.min(...due);
    },

    // ---- start-up: secrets at rest ----

    /**
     * The subscriptions holding a secret not in the current form: not starting with `currentPrefix`, or, with
     * none (no key), sealed ones. A start with nothing to do reads no secret.
     */
    async secretsNotInFormAcrossOrgs(currentPrefix: string | null): Promise<Pick<WebhookRow, 'org_id' | 'id' | 'secret' | 'secret_previous'>[]> {
      return db
        .selectFrom('webhooks')
        .select(['org_id', 'id', 'secret', 'secret_previous'])
        .where((eb) => {
          const stale = (column: 'secret' | 'secret_previous') =>
            currentPrefix === null ? eb(column, 'like', `${SEALED_PREFIX}%`) : eb.and([eb(column, 'is not', null), eb(column, 'not like', `${currentPrefix}%`)]);
          return eb.or([stale('secret'), stale('secret_previous')]);
        })
        .execute();
    },

    /** Replaces a stored secret's form only if it is still `was` (another process may have sealed it first). */
    async resealSecret(orgId: string, webhookId: string, column: 'secret' | 'secret_previous', was: string, sealed: string): Promise<boolean> {
      const result = await db
        .updateTable('webhooks')
        .set({ [column]: sealed })
        .where('org_id', '=', orgId)
        .where('id', '=', webhookId)
        .where(column, '=', was)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
  };
}

