import type { FastifyBaseLogger } from 'fastify';
import type { OrganizationRow, OrgState } from '../../db/schema.js';
import type { Repositories } from '../../db/repositories/index.js';
import type { Store } from '../../db/store.js';
import { errors } from '../../errors.js';
import { toIso, type Clock } from '../../lib/time.js';
import { cancellationMail } from '../../mail/lifecycle-mail.js';
import type { Mailer } from '../../mail/mailer.js';
import type { Actor } from '../access/actor.js';
import { recordAudit } from '../audit/audit-record.js';
import type { AuthEvents } from '../../db/auth-events.js';

/** DASHBOARD 10: a cancelled workspace is deleted 30 days after the cancellation. */
export const GRACE_PERIOD_MS = 30 * 86_400_000;

/** What `org show`, the Billing page and the API of the lifecycle say about an organisation. */
export interface OrganizationLifecycle {
  id: string;
  name: string;
  state: OrgState;
  created_at: string;
  cancelled_at: string | null;
  deletion_at: string | null;
  /** `stripe` when the organisation is linked to a Stripe customer, else `manual` (owner and CLI). */
  billing: 'stripe' | 'manual';
}

export function toLifecycle(row: OrganizationRow): OrganizationLifecycle {
  return {
    id: row.id,
    name: row.name,
    state: row.state,
    created_at: toIso(row.created_at),
    cancelled_at: row.cancelled_at === null ? null : toIso(row.cancelled_at),
    deletion_at: row.deletion_at === null ? null : toIso(row.deletion_at),
    billing: row.stripe_customer_id ? 'stripe' : 'manual',
  };
}

/** The owner rule of DASHBOARD 10: only an owner (or the operator, or Stripe as the system) cancels or resumes. */
export function mayChangeSubscription(actor: Actor): boolean {
  return actor.type !== 'user' || actor.role === 'owner';
}

export function requireOwner(actor: Actor): void {
  if (!mayChangeSubscription(actor)) throw errors.forbidden('only an owner can cancel or resume the subscription');
}

/**
 * An organisation billed through Stripe is cancelled and resumed at Stripe (its customer portal), whose
 * webhook then moves the state here: a cancellation made only on our side would leave Stripe charging,
 * and Stripe's next notice of an active subscription would undo it. The operator (CLI) may still override.
 */
function requireLocalBilling(actor: Actor, row: OrganizationRow): void {
  if (actor.type === 'user' && row.stripe_customer_id) {
    throw errors.conflict('this subscription is billed through Stripe: cancel or resume it on Stripe\'s customer portal ("Manage billing")');
  }
}

export interface LifecycleDeps {
  store: Store;
  clock: Clock;
  authEvents: AuthEvents;
  mailer: Mailer;
  publicBaseUrl: string;
  log: Pick<FastifyBaseLogger, 'error'>;
}

/**
 * Runs first in a transition's transaction with the organisation as read there; false leaves it as it is
 * (`changed: false`). Stripe records its event and checks its order here, so the record and the transition
 * commit or roll back together (src/billing/stripe-billing.ts).
 */
export type TransitionGuard = (repos: Repositories, before: OrganizationRow) => Promise<boolean>;

export interface LifecycleChange {
  organization: OrganizationLifecycle;
  /** False when the organisation was already in the asked state (Stripe's repeated notices). */
  changed: boolean;
}

/**
 * Cancelling and resuming the subscription: the owner (dashboard), the operator (CLI) and Stripe (as the
 * system) drive the same two transitions here. Each is one transaction with its audit row; then every
 * instance drops cached principals of the organisation (their state changed) and, on cancellation, the
 * owners are e-mailed.
 */
export function createLifecycleService(deps: LifecycleDeps) {
  const { store, clock, authEvents, mailer, publicBaseUrl, log } = deps;

  async function found(orgId: string): Promise<OrganizationRow> {
    const row = await store.repos.organizations.findById(orgId);
    if (!row) throw errors.notFound('organization');
    return row;
  }

  async function mailOwners(row: OrganizationRow): Promise<void> {
    const owners = await store.repos.users.findActiveOwners(row.id);
    for (const owner of owners) {
      const message = cancellationMail({
        to: owner.email,
        organizationName: row.name,
        deletionAt: new Date(row.deletion_at!),
        billingUrl: `${publicBaseUrl}/dashboard/billing`,
        exportUrl: `${publicBaseUrl}/dashboard/export`,
      });
      // The cancellation stands whether or not the mail goes out; the reminders follow anyway.
      await mailer.send(message).catch((err: unknown) => log.error({ err: (err as Error).message, org_id: row.id }, 'could not e-mail an owner about the cancellation'));
    }
  }

  /**
   * One move between `from` and `set.state`: the owner rule, then in one transaction the organisation
   * read, the caller's guard, the billing rule, the state check, the update (reminders start afresh) and
   * its audit row; after the commit, every instance drops the organisation's cached principals.
   */
  async function transition(
    actor: Actor,
    guard: TransitionGuard | undefined,
    move: {
      from: OrgState;
      /** The organisation is already where the caller wants it: no change, no error. */
      leaveAsIs: (state: OrgState) => boolean;
      refusal: (state: OrgState) => string;
      set: { state: OrgState; cancelled_at: number | null; deletion_at: number | null };
      action: 'subscription.cancelled' | 'subscription.resumed';
      at: number;
    },
  ): Promise<{ row: OrganizationRow; changed: boolean }> {
    requireOwner(actor);
    const result = await store.transaction(async (repos) => {
      const before = await repos.organizations.findById(actor.orgId);
      if (!before) throw errors.notFound('organization');
      if (guard && !(await guard(repos, before))) return { row: before, changed: false };
      requireLocalBilling(actor, before);
      if (before.state !== move.from) {
        if (move.leaveAsIs(before.state)) return { row: before, changed: false };
        throw errors.conflict(move.refusal(before.state));
      }
      const row = await repos.organizations.setState(actor.orgId, move.from, { ...move.set, reminded_7d_at: null, reminded_1d_at: null, updated_at: move.at });
      if (!row) throw errors.conflict('the subscription changed meanwhile; try again');
      const isoOrNull = (ms: number | null) => (ms === null ? null : toIso(ms));
      await recordAudit(repos, actor, {
        action: move.action,
        target: { type: 'organization', id: row.id, label: row.name },
        changes: { state: { old: before.state, new: row.state }, deletion_at: { old: isoOrNull(before.deletion_at), new: isoOrNull(row.deletion_at) } },
        at: move.at,
      });
      return { row, changed: true };
    });
    if (result.changed) await authEvents.orgChanged(actor.orgId);
    return result;
  }

  return {
    async show(actor: Actor): Promise<OrganizationLifecycle> {
      return toLifecycle(await found(actor.orgId));
    },

    /** `active` → `read_only`, deletion in 30 days. With `ifActive`, an organisation already cancelled is left as it is. */
    async cancel(actor: Actor, options: { ifActive?: boolean; guard?: TransitionGuard } = {}): Promise<LifecycleChange> {
      const now = clock.now();
      const change = await transition(actor, options.guard, {
        from: 'active',
        leaveAsIs: (state) => Boolean(options.ifActive) && state !== 'active',
        refusal: (state) => (state === 'deleting' ? 'this workspace is being deleted' : 'the subscription is already cancelled'),
        set: { state: 'read_only', cancelled_at: now, deletion_at: now + GRACE_PERIOD_MS },
        action: 'subscription.cancelled',
        at: now,
      });
      if (change.changed) await mailOwners(change.row);
      return { organization: toLifecycle(change.row), changed: change.changed };
    },

    /** `read_only` → `active` within the 30 days; paused runs carry on. With `ifReadOnly`, an active organisation is left as it is. */
    async resume(actor: Actor, options: { ifReadOnly?: boolean; guard?: TransitionGuard } = {}): Promise<LifecycleChange> {
      const now = clock.now();
      const change = await transition(actor, options.guard, {
        from: 'read_only',
        leaveAsIs: (state) => Boolean(options.ifReadOnly) && state === 'active',
        refusal: (state) => (state === 'deleting' ? 'deletion has begun; the workspace can no longer be resumed' : 'the subscription is not cancelled'),
        set: { state: 'active', cancelled_at: null, deletion_at: null },
        action: 'subscription.resumed',
        at: now,
      });
      return { organization: toLifecycle(change.row), changed: change.changed };
    },
  };
}

export type LifecycleService = ReturnType<typeof createLifecycleService>;
