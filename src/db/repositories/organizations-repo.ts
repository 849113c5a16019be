import { sql, type Updateable } from 'kysely';
import { projectVisibleTo } from './project-visibility.js';
import type { OrganizationRow, OrganizationsTable, OrgState, Workspace } from '../schema.js';
import type { RepoContext } from './executor.js';

export function organizationsRepository(ctx: RepoContext) {
  const { db, dialect } = ctx;
  return {
    async insert(row: { id: string; name: string; created_at: number }): Promise<void> {
      await db.insertInto('organizations').values({ ...row, updated_at: row.created_at }).execute();
    },

    async findById(orgId: string): Promise<OrganizationRow | undefined> {
      return db.selectFrom('organizations').selectAll().where('id', '=', orgId).executeTakeFirst();
    },

    /** Since when every member must have a second factor (DASHBOARD 11), or null for no requirement. */
    /** The owner's provisioning and key settings (CONTRACT 16). */
    async setSettings(orgId: string, changes: Partial<Pick<OrganizationRow, 'scim_default_role' | 'max_key_lifetime_days' | 'members_may_connect_apps' | 'agents_may_delete'>>): Promise<void> {
      await db.updateTable('organizations').set(changes).where('id', '=', orgId).execute();
    },

    async setTwoStepRequired(orgId: string, since: number | null): Promise<void> {
      await db.updateTable('organizations').set({ two_step_required_at: since }).where('id', '=', orgId).execute();
    },

    /** Moves the organisation between lifecycle states; only from `from` (a concurrent change loses). */
    async setState(
      orgId: string,
      from: OrgState,
      change: Pick<Updateable<OrganizationsTable>, 'state' | 'cancelled_at' | 'deletion_at' | 'reminded_7d_at' | 'reminded_1d_at' | 'updated_at'>,
    ): Promise<OrganizationRow | undefined> {
      const row = await db.updateTable('organizations').set(change).where('id', '=', orgId).where('state', '=', from).returningAll().executeTakeFirst();
      // Resuming makes the organisation's paused runs due again: wake the engine after the commit.
      if (row && change.state === 'active' && ctx.unit) ctx.unit.workCreated += 1;
      return row;
    },

    /**
     * The organisation a Stripe customer belongs to, for events whose subscription names no organisation.
     * Across organisations by nature: the customer id is all the event carries.
     */
    async findIdByStripeCustomer(customerId: string): Promise<string | undefined> {
      const row = await db.selectFrom('organizations').select('id').where('stripe_customer_id', '=', customerId).orderBy('seq').executeTakeFirst();
      return row?.id;
    },

    /** Links the organisation to its Stripe customer and subscription, and remembers the time of the event applied. */
    async recordStripeEvent(
      orgId: string,
      change: Pick<Updateable<OrganizationsTable>, 'stripe_customer_id' | 'stripe_subscription_id' | 'stripe_event_at' | 'updated_at'>,
    ): Promise<void> {
      await db.updateTable('organizations').set(change).where('id', '=', orgId).execute();
    },

    /** The lifecycle state alone (operators' writes check it in their transaction). */
    async workspace(orgId: string): Promise<Workspace | undefined> {
      const row = await db.selectFrom('organizations').select(['state', 'deletion_at']).where('id', '=', orgId).executeTakeFirst();
      return row && { state: row.state, deletionAt: row.deletion_at };
    },

    /**
     * The organisation, held against a concurrent change of its row until the transaction ends (PostgreSQL:
     * a shared lock, so readers do not wait for each other, only for a writer such as the deletion's claim;
     * SQLite write transactions already hold the database lock).
     */
    async findForShare(orgId: string): Promise<OrganizationRow | undefined> {
      let query = db.selectFrom('organizations').selectAll().where('id', '=', orgId);
      if (dialect === 'postgres') query = query.forShare();
      return query.executeTakeFirst();
    },

    /**
     * Serialises writers of one organisation for rules that read then write (the last-owner guard).
     * PostgreSQL locks the organisation row; SQLite write transactions already hold the database lock.
     */
    async lock(orgId: string): Promise<void> {
      if (dialect === 'postgres') {
        await sql`select id from organizations where id = ${orgId} for update`.execute(db);
      }
    },

    /** The overview's figures, one round trip. */
    /** The overview's counts; with a viewer (CONTRACT 15), only the projects they may see are counted. */
    async counts(orgId: string, viewer: string | null = null): Promise<{ projects: number; members: number; webhooks: number }> {
      const count = (table: 'projects' | 'users' | 'webhooks') =>
        db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId);
      const projects = viewer === null ? count('projects') : count('projects').where(projectVisibleTo(viewer));
      const row = await db
        .selectNoFrom(() => [projects.as('projects'), count('users').as('members'), count('webhooks').as('webhooks')])
        .executeTakeFirstOrThrow();
      return { projects: Number(row.projects), members: Number(row.members), webhooks: Number(row.webhooks) };
    },
  };
}
