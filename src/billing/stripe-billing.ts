import Stripe from 'stripe';
import type { Config } from '../config.js';
import type { Repositories } from '../db/repositories/index.js';
import type { StripeEventOutcome } from '../db/repositories/stripe-events-repo.js';
import type { OrganizationRow } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { DomainError, errors, type ErrorDetail } from '../errors.js';
import { hasControlCharacter } from '../lib/text.js';
import type { Clock } from '../lib/time.js';
import { systemActor, type Actor } from '../services/access/actor.js';
import { mayChangeSubscription, type LifecycleService, type TransitionGuard } from '../services/lifecycle/lifecycle-service.js';

/** How the Stripe client reaches Stripe's API; tests point it at a local server (ContainerOptions.stripeApi). */
export interface StripeApiOptions {
  host: string;
  port: number;
  protocol: 'http' | 'https';
}

export interface StripeBillingDeps {
  config: NonNullable<Config['stripe']>;
  store: Store;
  clock: Clock;
  lifecycle: LifecycleService;
  api?: StripeApiOptions | undefined;
}

/** What the webhook answers Stripe: every verified event is acknowledged, a replay says so. */
export interface WebhookReceipt {
  received: true;
  duplicate: boolean;
  /** What became of the event (absent for a replay: the first delivery decided). */
  outcome?: StripeEventOutcome;
}

/** A Stripe API call that failed (Stripe unreachable, the key refused, an unknown customer): 502, never a 500. */
export class BillingProviderError extends DomainError {
  constructor(
    message: string,
    /** Stripe's error type, code, status and request id, for the log; no secret is in them. */
    readonly stripe: { type?: string | undefined; code?: string | undefined; statusCode?: number | undefined; requestId?: string | undefined },
  ) {
    super(502, 'billing_provider_error', message);
  }
}

const SUBSCRIPTION_EVENTS = new Set(['customer.subscription.created', 'customer.subscription.updated', 'customer.subscription.deleted']);
/** Subscription statuses that mean the organisation is paid for (DASHBOARD 10: "an active status"). */
const PAID_STATUSES = new Set(['active', 'trialing']);
/** Stripe's ids (evt_…, cus_…, sub_…) and ours (org_…): anything else in an id field is not trusted as one. */
const ID = /^[A-Za-z0-9_-]{1,255}$/;
/** A lost race with a concurrent event of the same organisation is retried at once, this many times. */
const ATTEMPTS = 3;

type Transition = 'cancel' | 'resume' | null;

interface EventFacts {
  id: string;
  type: string;
  /** The event's `created`, in ms (Stripe gives seconds). */
  createdMs: number;
}

interface SubscriptionFacts {
  subscriptionId: string;
  customerId: string | null;
  status: string;
  /** `metadata.org_id`: the organisation the subscription was opened for, when it names one. */
  orgHint: string | null;
}

function invalidSignature(message: string): DomainError {
  return new DomainError(400, 'invalid_signature', message);
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function idOrNull(value: unknown): string | null {
  return typeof value === 'string' && ID.test(value) ? value : null;
}

/** The fields of a signed event this service reads; a signed event without them is refused (400), not a fault. */
function readEvent(event: Record<string, unknown>): EventFacts {
  const problems: ErrorDetail[] = [];
  const id = idOrNull(event.id);
  if (id === null) problems.push({ field: 'id', message: 'must be a Stripe event id' });
  const type = event.type;
  const typeOk = typeof type === 'string' && type.length > 0 && type.length <= 255 && !hasControlCharacter(type);
  if (!typeOk) problems.push({ field: 'type', message: 'must be an event type' });
  const created = event.created;
  const createdOk = typeof created === 'number' && Number.isSafeInteger(created) && created >= 0;
  if (!createdOk) problems.push({ field: 'created', message: 'must be a Unix time in seconds' });
  if (problems.length > 0) throw errors.validation(problems);
  return { id: id!, type: type as string, createdMs: (created as number) * 1000 };
}

function readSubscription(event: Record<string, unknown>): SubscriptionFacts {
  const object = asRecord(asRecord(event.data)?.object);
  const problems: ErrorDetail[] = [];
  const subscriptionId = idOrNull(object?.id);
  if (subscriptionId === null) problems.push({ field: 'data.object.id', message: 'must be a subscription id' });
  const status = object?.status;
  const statusOk = typeof status === 'string' && status.length <= 64 && !hasControlCharacter(status);
  if (!statusOk) problems.push({ field: 'data.object.status', message: 'must be a subscription status' });
  if (problems.length > 0) throw errors.validation(problems);
  // `customer` is an id, or the customer object when the event was expanded.
  const customer = object!.customer;
  const customerId = idOrNull(typeof customer === 'string' ? customer : asRecord(customer)?.id);
  return { subscriptionId: subscriptionId!, customerId, status: status as string, orgHint: idOrNull(asRecord(object!.metadata)?.org_id) };
}

/**
 * What an event does to an organisation, decided on the row as it is now (locked): nothing for an
 * organisation being deleted; nothing for an event older than the last one applied (Stripe does not deliver
 * in order, so a late `updated` cannot undo a `deleted`); nothing for another subscription of the customer
 * unless it is a paid one taking over; else the transition, when the state is not already the one asked.
 */
function decide(org: OrganizationRow, event: EventFacts, sub: SubscriptionFacts, transition: Transition): StripeEventOutcome {
  if (org.state === 'deleting') return 'ignored_deleting';
  if (org.stripe_event_at !== null && event.createdMs < org.stripe_event_at) return 'ignored_stale';
  const otherSubscription = org.stripe_subscription_id !== null && org.stripe_subscription_id !== sub.subscriptionId;
  if (otherSubscription && transition !== 'resume') return 'ignored_other_subscription';
  if (transition === null) return 'ignored_status';
  const from = transition === 'cancel' ? 'active' : 'read_only';
  return org.state === from ? 'applied' : 'ignored_no_change';
}

/** The organisation changed between the lifecycle's read and our lock (PostgreSQL, a concurrent event): try again. */
class ReadTooEarly extends Error {}

/**
 * Stripe drives the subscription when configured (DASHBOARD 10): `POST /billing/stripe/webhook` applies
 * signed subscription events through the lifecycle service (as the system, so the audit rows, e-mails and
 * cache invalidation are the owner's), and owners reach Stripe's customer portal from the Billing page.
 *
 * One transaction per event holds all of it: the event's record (its id is the primary key, so a replay
 * finds it and changes nothing), the order check against the organisation's last applied event, the
 * organisation's Stripe ids, and the transition with its audit row. They commit together or not at all;
 * a failure leaves no record, so Stripe's retry applies the event then.
 */
export function createStripeBilling(deps: StripeBillingDeps) {
  const { config, store, clock, lifecycle, api } = deps;
  const client = new Stripe(config.secretKey, {
    maxNetworkRetries: 1,
    // A person waits on the portal redirect: fail within seconds rather than Stripe's default 80.
    timeout: 15_000,
    telemetry: false,
    appInfo: { name: 'workspace-service' },
    ...(api ? { host: api.host, port: api.port, protocol: api.protocol } : {}),
  });

  /** Records an event that concerns no organisation (another type, or none of ours). */
  async function recordUnlinked(event: EventFacts, outcome: StripeEventOutcome): Promise<WebhookReceipt> {
    const inserted = await store.repos.stripeEvents.insert({
      id: event.id,
      org_id: null,
      type: event.type,
      created: event.createdMs,
      received_at: clock.now(),
      outcome,
    });
    return inserted ? { received: true, duplicate: false, outcome } : { received: true, duplicate: true };
  }

  /** The organisation the subscription was opened for (its metadata), else the one linked to the customer. */
  async function findOrganization(sub: SubscriptionFacts): Promise<string | null> {
    if (sub.orgHint && (await store.repos.organizations.findById(sub.orgHint))) return sub.orgHint;
    if (sub.customerId) return (await store.repos.organizations.findIdByStripeCustomer(sub.customerId)) ?? null;
    return null;
  }

  /** The event's part of the transaction; returns what became of it, or 'duplicate' for a replayed id. */
  async function record(
    repos: Repositories,
    orgId: string,
    before: OrganizationRow,
    event: EventFacts,
    sub: SubscriptionFacts,
    transition: Transition,
  ): Promise<StripeEventOutcome | 'duplicate'> {
    // Events of one organisation are decided one at a time, on the latest committed row (PostgreSQL locks
    // it; SQLite's write transactions are already serial).
    await repos.organizations.lock(orgId);
    const org = (await repos.organizations.findById(orgId)) ?? before;
    const outcome = decide(org, event, sub, transition);
    // A deleting organisation keeps nothing new: the record stays unlinked so deletion leaves no row behind.
    const linked = outcome !== 'ignored_deleting';
    const inserted = await repos.stripeEvents.insert({
      id: event.id,
      org_id: linked ? orgId : null,
      type: event.type,
      created: event.createdMs,
      received_at: clock.now(),
      outcome,
    });
    if (!inserted) return 'duplicate';
    // The lifecycle service decides from the row it read first; it must be the one decided on here.
    if (outcome === 'applied' && org.state !== before.state) throw new ReadTooEarly();
    if (outcome === 'applied' || outcome === 'ignored_no_change' || outcome === 'ignored_status') {
      await repos.organizations.recordStripeEvent(orgId, {
        stripe_customer_id: sub.customerId ?? org.stripe_customer_id,
        stripe_subscription_id: sub.subscriptionId,
        stripe_event_at: event.createdMs,
        updated_at: clock.now(),
      });
    }
    return outcome;
  }

  async function applySubscriptionEvent(event: EventFacts, sub: SubscriptionFacts): Promise<WebhookReceipt> {
    const orgId = await findOrganization(sub);
    if (!orgId) return recordUnlinked(event, 'ignored_unknown_org');
    const transition: Transition =
      event.type === 'customer.subscription.deleted' ? 'cancel' : PAID_STATUSES.has(sub.status) ? 'resume' : null;

    for (let attempt = 1; ; attempt++) {
      let result: StripeEventOutcome | 'duplicate' | null = null;
      const guard: TransitionGuard = async (repos, before) => {
        result = await record(repos, orgId, before, event, sub, transition);
        return result === 'applied';
      };
      try {
        const actor = systemActor(orgId);
        if (transition === 'cancel') await lifecycle.cancel(actor, { ifActive: true, guard });
        else if (transition === 'resume') await lifecycle.resume(actor, { ifReadOnly: true, guard });
        else {
          await store.transaction(async (repos) => {
            const before = await repos.organizations.findById(orgId);
            if (!before) throw errors.notFound('organization');
            await guard(repos, before);
          });
        }
      } catch (err) {
        // Deleted between finding it and the transaction: it is no longer ours.
        if (err instanceof DomainError && err.status === 404) return recordUnlinked(event, 'ignored_unknown_org');
        if (err instanceof ReadTooEarly) {
          if (attempt < ATTEMPTS) continue;
          throw errors.conflict('the organisation changed while the event was applied; retry the delivery');
        }
        throw err;
      }
      const outcome = result as StripeEventOutcome | 'duplicate' | null;
      if (outcome === null) throw errors.internal();
      return outcome === 'duplicate' ? { received: true, duplicate: true } : { received: true, duplicate: false, outcome };
    }
  }

  return {
    /**
     * Verifies a webhook delivery over its raw body (`Stripe-Signature`, the secret, 300 s of tolerance on
     * the services' clock) and applies it. 400 `invalid_signature` when it cannot be verified, and then
     * nothing is read from the body at all.
     */
    async handleWebhook(raw: Buffer, signature: string | string[] | undefined): Promise<WebhookReceipt> {
      if (typeof signature !== 'string' || signature.trim() === '') throw invalidSignature('the Stripe-Signature header is missing');
      let parsed: unknown;
      try {
        parsed = client.webhooks.constructEvent(raw, signature, config.webhookSecret, undefined, undefined, clock.now());
      } catch (err) {
        if (err instanceof Stripe.errors.StripeSignatureVerificationError) {
          throw invalidSignature('the Stripe-Signature header does not match the body and the webhook secret, or is older than 300 seconds');
        }
        // Verified, so the body is Stripe's own; it just is not JSON.
        throw errors.invalidJson('the event is not valid JSON');
      }
      const body = asRecord(parsed);
      if (!body) throw errors.invalidJson('the event must be a JSON object');
      const event = readEvent(body);
      if (!SUBSCRIPTION_EVENTS.has(event.type)) return recordUnlinked(event, 'ignored_type');
      return applySubscriptionEvent(event, readSubscription(body));
    },

    /**
     * A Stripe customer portal session for the organisation's customer, returning to `returnUrl`: its URL.
     * Owners only; 409 when the organisation has no Stripe customer yet; 502 when Stripe refuses or fails.
     */
    async portalUrl(actor: Actor, returnUrl: string): Promise<string> {
      if (!mayChangeSubscription(actor)) throw errors.forbidden('only an owner can manage billing');
      const org = await store.repos.organizations.findById(actor.orgId);
      if (!org) throw errors.notFound('organization');
      if (!org.stripe_customer_id) {
        throw errors.conflict('This organisation is not linked to a Stripe customer yet, so there is no billing portal to open.');
      }
      let url: string;
      try {
        const session = await client.billingPortal.sessions.create({ customer: org.stripe_customer_id, return_url: returnUrl });
        url = session.url;
      } catch (err) {
        if (!(err instanceof Stripe.errors.StripeError)) throw err;
        throw new BillingProviderError('Stripe could not open the billing portal just now. Try again in a few minutes.', {
          type: err.type,
          code: err.code,
          statusCode: err.statusCode,
          requestId: err.requestId,
        });
      }
      // The answer becomes a Location header: only a web address is sent on.
      if (!/^https?:\/\/[^\s]+$/.test(url ?? '')) throw new BillingProviderError('Stripe answered without a portal address. Try again in a few minutes.', {});
      return url;
    },
  };
}

export type StripeBilling = ReturnType<typeof createStripeBilling>;
