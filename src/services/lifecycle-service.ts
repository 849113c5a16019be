import type { FastifyBaseLogger } from 'fastify';
import type { OrganizationRow, OrgState } from '../db/schema.js';
import type { Repositories } from '../db/repositories/index.js';
import type { Store } from '../db/store.js';
import { errors } from '../errors.js';
import { toIso, type Clock } from '../lib/time.js';
import { cancellationMail } from '../mail/lifecycle-mail.js';
import type { Mailer } from '../mail/mailer.js';
import type { Actor } from './actor.js';
import { recordAudit } from './audit.js';
import type { AuthEvents } from './auth-events.js';

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

  return {
    async show(actor: Actor): Promise<OrganizationLifecycle> {
      return toLifecycle(await found(actor.orgId));
    },

    /** `active` → `read_only`, deletion in 30 days. With `ifActive`, an organisation already cancelled is left as it is. */
    async cancel(actor: Actor, options: { ifActive?: boolean; guard?: TransitionGuard } = {}): Promise<LifecycleChange> {
      requireOwner(actor);
      const now = clock.now();
      const result = await store.transaction(async (repos) => {
        const before = await repos.organizations.findById(actor.orgId);
        if (!before) throw errors.notFound('organization');
        if (options.guard && !(await options.guard(repos, before))) return { row: before, changed: false };
        requireLocalBilling(actor, before);
        if (before.state !== 'active') {
          if (options.ifActive) return { row: before, changed: false };
          throw errors.conflict(before.state === 'deleting' ? 'this workspace is being deleted' : 'the subscription is already cancelled');
        }
        const deletionAt = now + GRACE_PERIOD_MS;
        const row = await repos.organizations.setState(actor.orgId, 'active', {
          state: 'read_only',
          cancelled_at: now,
          deletion_at: deletionAt,
          reminded_7d_at: null,
          reminded_1d_at: null,
          updated_at: now,
        });
        if (!row) throw errors.conflict('the subscription changed meanwhile; try again');
        await recordAudit(repos, actor, {
          action: 'subscription.cancelled',
          target: { type: 'organization', id: row.id, label: row.name },
          changes: { state: { old: 'active', new: 'read_only' }, deletion_at: { old: null, new: toIso(deletionAt) } },
          at: now,
        });
        return { row, changed: true };
      });
      if (result.changed) {
        await authEvents.orgChanged(actor.orgId);
        await mailOwners(result.row);
      }
      return { organization: toLifecycle(result.row), changed: result.changed };
    },

    /** `read_only` → `active` within the 30 days; paused runs carry on. With `ifReadOnly`, an active organisation is left as it is. */
    async resume(actor: Actor, options: { ifReadOnly?: boolean; guard?: TransitionGuard } = {}): Promise<LifecycleChange> {
      requireOwner(actor);
      const now = clock.now();
      const result = await store.transaction(async (repos) => {
        const before = await repos.organizations.findById(actor.orgId);
        if (!before) throw errors.notFound('organization');
        if (options.guard && !(await options.guard(repos, before))) return { row: before, changed: false };
        requireLocalBilling(actor, before);
        if (before.state !== 'read_only') {
          if (options.ifReadOnly && before.state === 'active') return { row: before, changed: false };
          throw errors.conflict(before.state === 'deleting' ? 'deletion has begun; the workspace can no longer be resumed' : 'the subscription is not cancelled');
        }
        const row = await repos.organizations.setState(actor.orgId, 'read_only', {
          state: 'active',
          cancelled_at: null,
          deletion_at: null,
          reminded_7d_at: null,
          reminded_1d_at: null,
          updated_at: now,
        });
        if (!row) throw errors.conflict('the subscription changed meanwhile; try again');
        await recordAudit(repos, actor, {
          action: 'subscription.resumed',
          target: { type: 'organization', id: row.id, label: row.name },
          changes: { state: { old: 'read_only', new: 'active' }, deletion_at: { old: toIso(before.deletion_at!), new: null } },
          at: now,
        });
        return { row, changed: true };
      });
      if (result.changed) await authEvents.orgChanged(actor.orgId);
      return { organization: toLifecycle(result.row), changed: result.changed };
    },
  };
}

export type LifecycleService = ReturnType<typeof createLifecycleService>;
