import type { StripeEventsTable } from '../schema.js';
import type { RepoContext } from './executor.js';

/** What became of a Stripe event (docs/lifecycle.md lists them). */
export type StripeEventOutcome =
  | 'applied'
  | 'ignored_no_change'
  | 'ignored_status'
  | 'ignored_stale'
  | 'ignored_other_subscription'
  | 'ignored_deleting'
  | 'ignored_unknown_org'
  | 'ignored_type';

/**
 * Stripe events seen, by Stripe's event id. The id is global (Stripe's, not an organisation's), so the
 * row is written before or without an organisation; `org_id` ties it to one when the event named one.
 */
export function stripeEventsRepository({ db }: RepoContext) {
  return {
    /** Remembers the event; false when its id was seen before (a replay), leaving the first record as it was. */
    async insert(row: StripeEventsTable & { outcome: StripeEventOutcome }): Promise<boolean> {
      const result = await db
        .insertInto('stripe_events')
        .values(row)
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },

    /** The events recorded for an organisation, oldest first (tests and support). */
    async listForOrg(orgId: string): Promise<StripeEventsTable[]> {
      return db.selectFrom('stripe_events').selectAll().where('org_id', '=', orgId).orderBy('received_at').orderBy('id').execute();
    },
  };
}
