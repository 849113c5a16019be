import { errors } from '../errors.js';
import { toIso, type Clock } from '../lib/time.js';
import type { DeliveryAttemptRow, DeliveryRow, DeliveryStatus } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { authorize, type Actor } from './actor.js';
import { recordAudit } from './audit.js';
import type { DeliveryWaker, EventType } from './events.js';
import { decodeCursor, pageResult, type PageRequest, type PageResult } from './pagination.js';

export interface Delivery {
  id: string;
  event_id: string;
  event_type: EventType;
  webhook_id: string;
  status: DeliveryStatus;
  /** Attempts made so far (automatic and replayed). */
  attempts: number;
  /** When the next attempt is due (pending deliveries only). */
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryAttempt {
  id: string;
  attempt_number: number;
  trigger: 'automatic' | 'replay';
  outcome: 'success' | 'failure';
  started_at: string;
  duration_ms: number;
  request_headers: Record<string, string>;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  /** The first 64 KiB of the response body. */
  response_body: string | null;
  error: string | null;
}

export interface DeliveryDetail extends Delivery {
  /** The exact body sent on every attempt. */
  payload: string;
  attempt_history: DeliveryAttempt[];
}

export function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type as EventType,
    webhook_id: row.webhook_id,
    status: row.status,
    attempts: row.attempt_count,
    next_attempt_at: row.status === 'pending' && row.next_attempt_at !== null ? toIso(row.next_attempt_at) : null,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function toAttempt(row: DeliveryAttemptRow): DeliveryAttempt {
  return {
    id: row.id,
    attempt_number: row.attempt_number,
    trigger: row.trigger === 'replay' ? 'replay' : 'automatic',
    outcome: row.outcome === 'success' ? 'success' : 'failure',
    started_at: toIso(row.started_at),
    duration_ms: row.duration_ms,
    request_headers: JSON.parse(row.request_headers) as Record<string, string>,
    response_status: row.response_status,
    response_headers: row.response_headers === null ? null : (JSON.parse(row.response_headers) as Record<string, string>),
    response_body: row.response_body,
    error: row.error,
  };
}

export interface DeliveriesServiceDeps {
  store: Store;
  clock: Clock;
  waker: DeliveryWaker;
}

/**
 * Delivery history and replay for one organisation's subscriptions. A replay is a new attempt of the same
 * delivery (same event id, same body bytes), made by the worker outside the automatic schedule: success
 * marks the delivery delivered (also a permanently failed one), failure leaves it failed with no retries.
 */
export function createDeliveriesService({ store, clock, waker }: DeliveriesServiceDeps) {
  async function requireWebhook(orgId: string, webhookId: string): Promise<void> {
    if (!(await store.repos.webhooks.findById(orgId, webhookId))) throw errors.notFound('webhook');
  }

  async function requireDelivery(orgId: string, webhookId: string | null, deliveryId: string): Promise<DeliveryRow> {
    const row = await store.repos.deliveries.findById(orgId, deliveryId);
    if (!row || (webhookId !== null && row.webhook_id !== webhookId)) throw errors.notFound('delivery');
    return row;
  }

  return {
    async list(
      orgId: string,
      webhookId: string,
      page: PageRequest & { status?: DeliveryStatus | undefined },
    ): Promise<PageResult<Delivery>> {
      const before = decodeCursor(page.cursor);
      await requireWebhook(orgId, webhookId);
      const rows = await store.repos.deliveries.listForWebhook(orgId, webhookId, page.limit, before, page.status ?? null);
      return pageResult(rows, toDelivery);
    },

    /** `webhookId` null: any subscription of the organisation (the CLI addresses deliveries by id alone). */
    async get(orgId: string, webhookId: string | null, deliveryId: string): Promise<DeliveryDetail> {
      if (webhookId !== null) await requireWebhook(orgId, webhookId);
      const row = await requireDelivery(orgId, webhookId, deliveryId);
      const [attempts, event] = await Promise.all([
        store.repos.deliveries.listAttempts(orgId, deliveryId),
        store.repos.events.findEvent(orgId, row.event_id),
      ]);
      return { ...toDelivery(row), payload: event?.body ?? '', attempt_history: attempts.map(toAttempt) };
    },

    /** Queues one replay attempt; 409 while the delivery is still pending or was cancelled. */
    async replay(actor: Actor, webhookId: string | null, deliveryId: string): Promise<Delivery> {
      authorize(actor, 'webhooks', 'create');
      const { orgId } = actor;
      if (webhookId !== null) await requireWebhook(orgId, webhookId);
      const row = await requireDelivery(orgId, webhookId, deliveryId);
      if (!(await store.repos.webhooks.findById(orgId, row.webhook_id))) {
        throw errors.conflict('the subscription of this delivery was deleted; it cannot be replayed');
      }
      const now = clock.now();
      const queued = await store.transaction(async (repos) => {
        const done = await repos.deliveries.requestReplay(orgId, deliveryId, now);
        if (done) {
          await recordAudit(repos, actor, {
            action: 'delivery.replayed',
            target: { type: 'delivery', id: deliveryId, label: row.event_type },
            changes: { status: { old: row.status, new: 'pending' } },
            at: now,
          });
        }
        return done;
      });
      if (!queued) {
        const current = await requireDelivery(orgId, webhookId, deliveryId);
        throw current.status === 'pending'
          ? errors.conflict('this delivery is already queued; it will be attempted without a replay')
          : errors.conflict(`a ${current.status} delivery cannot be replayed`);
      }
      waker.wake();
      return toDelivery(await requireDelivery(orgId, webhookId, deliveryId));
    },

    /** Queues a replay of every failed delivery of the subscription created at or after `since`. */
    async replayFailed(actor: Actor, webhookId: string, since: number): Promise<{ replayed: number }> {
      authorize(actor, 'webhooks', 'create');
      const { orgId } = actor;
      await requireWebhook(orgId, webhookId);
      const now = clock.now();
      const replayed = await store.transaction(async (repos) => {
        const count = await repos.deliveries.requestReplayOfFailed(orgId, webhookId, since, now);
        if (count > 0) {
          await recordAudit(repos, actor, {
            action: 'delivery.replayed',
            target: { type: 'webhook', id: webhookId },
            changes: { failed_since: { old: null, new: toIso(since) }, replayed: { old: null, new: count } },
            at: now,
          });
        }
        return count;
      });
      if (replayed > 0) waker.wake();
      return { replayed };
    },
  };
}

export type DeliveriesService = ReturnType<typeof createDeliveriesService>;
