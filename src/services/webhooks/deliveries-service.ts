import { errors, fieldError } from '../../errors.js';
import { toIso, type Clock } from '../../lib/time.js';
import type { HistoryFilter, HistoryPosition, HistoryState } from '../../db/repositories/delivery-history-repo.js';
import type { DeliveryAttemptRow, DeliveryRow, WebhookRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { authorize, type Actor } from '../access/actor.js';
import { projectViewer } from '../access/project-access.js';
import { recordAudit } from '../audit/audit-record.js';
import type { EventType } from '../../schemas/events.js';
import { requireActiveWebhook, requireWebhook } from './webhooks-service.js';
import { requireWritable } from '../access/workspace.js';
import type { DeliveryAttempt, Delivery, DeliveryDetail } from '../../schemas/deliveries.js';

export type { HistoryState } from '../../db/repositories/delivery-history-repo.js';


/**
 * At most this many deliveries of the index are examined for one page when a filter is not served by an
 * index (a status other than Failed, an event): the page's cost stays bounded at any size of history.
 */
export const HISTORY_SCAN_LIMIT = 5_000;

export type CancelReason = 'subscription_disabled' | 'subscription_deleted';

/** order: an ordered subscription's earlier deliveries go first; rate_limit: due, and held for a free start. */
export type WaitingReason = 'order' | 'rate_limit';

/** A stored delivery as the filter and the dashboard name its state: pending splits into Pending and Retrying. */
export function historyState(row: Pick<DeliveryRow, 'status' | 'failure_count' | 'replay_requested_at'>): HistoryState {
  if (row.status !== 'pending') return row.status;
  return row.failure_count > 0 && row.replay_requested_at === null ? 'retrying' : 'pending';
}

/** What a delivery's waiting depends on beyond its row: its subscription's rate limit, and the time. */
export interface WaitingContext {
  rateLimited: boolean;
  now: number;
}

function waitingOf(row: DeliveryRow, context: WaitingContext | undefined): WaitingReason | null {
  if (row.status !== 'pending') return null;
  if (row.next_attempt_at === null) return row.fifo === 1 ? 'order' : null;
  const leased = row.lease_expires_at !== null && row.lease_expires_at >= (context?.now ?? 0);
  return context?.rateLimited && !leased && row.next_attempt_at <= context.now ? 'rate_limit' : null;
}

export function toDelivery(row: DeliveryRow, summary?: { lastAttemptAt: number; replayed: boolean }, context?: WaitingContext): Delivery {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type as EventType,
    webhook_id: row.webhook_id,
    status: historyState(row),
    attempts: row.attempt_count,
    next_attempt_at: row.status === 'pending' && row.next_attempt_at !== null ? toIso(row.next_attempt_at) : null,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    last_attempt_at: summary ? toIso(summary.lastAttemptAt) : null,
    replayed: row.replay_requested_at !== null || (summary?.replayed ?? false),
    test: row.test === 1,
    cancel_reason: row.status === 'cancelled' ? (row.cancel_reason === 'subscription_disabled' ? 'subscription_disabled' : 'subscription_deleted') : null,
    waiting: waitingOf(row, context),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function toAttempt(row: DeliveryAttemptRow): DeliveryAttempt {
  return {
    id: row.id,
    attempt_number: row.attempt_number,
    trigger: row.trigger === 'replay' || row.trigger === 'test' ? row.trigger : 'automatic',
    outcome: row.outcome === 'success' ? 'success' : 'failure',
    started_at: toIso(row.started_at),
    duration_ms: row.duration_ms,
    request_headers: JSON.parse(row.request_headers) as Record<string, string>,
    response_status: row.response_status,
    response_headers: row.response_headers === null ? null : (JSON.parse(row.response_headers) as Record<string, string>),
    response_body: row.response_body,
    error: row.error,
    held_reason: row.held_reason === 'order' || row.held_reason === 'rate_limit' ? row.held_reason : null,
    held_ms: row.held_ms === null ? null : Number(row.held_ms),
  };
}

/** What a person or a client filters the history by; every field optional. */
export interface HistoryFilterInput {
  status?: HistoryState | undefined;
  event?: EventType | undefined;
  /** Created at or after (epoch ms). */
  from?: number | undefined;
  /** Created before (epoch ms). */
  to?: number | undefined;
  /** A delivery id (`dlv_…`) or an event id (`evt_…`). */
  id?: string | undefined;
}

export interface HistoryRequest {
  limit: number;
  cursor?: string | undefined;
  filter?: HistoryFilterInput;
}

export interface HistoryResult {
  items: Delivery[];
  /** The next older page; null at the oldest. */
  nextCursor: string | null;
  /** The next newer page; null at the newest. */
  prevCursor: string | null;
  /**
   * Set when a bounded scan ended before the page was full: the creation time down to (or, paging newer,
   * up to) which this page searched. `nextCursor` (or `prevCursor`) continues from there.
   */
  searchedTo: string | null;
}

// Cursors: base64url of `h1:o:<created_at>:<seq>` (older than) or `h1:n:…` (newer than).
function encodeHistoryCursor(direction: 'older' | 'newer', position: HistoryPosition): string {
  return Buffer.from(`h1:${direction === 'older' ? 'o' : 'n'}:${position.createdAt}:${position.seq}`).toString('base64url');
}

function decodeHistoryCursor(cursor: string | undefined): { direction: 'older' | 'newer'; position: HistoryPosition | null } {
  if (cursor === undefined) return { direction: 'older', position: null };
  const text = /^[A-Za-z0-9_-]{1,96}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString() : '';
  // seq 0 is allowed: an empty older page's link back (`seq - 1` of the first delivery ever) names it.
  const match = /^h1:([on]):(0|[1-9]\d{0,15}):(0|[1-9]\d{0,15})$/.exec(text);
  if (!match) throw fieldError('cursor', 'is not a valid cursor; pass next_cursor from a previous page');
  return { direction: match[1] === 'o' ? 'older' : 'newer', position: { createdAt: Number(match[2]), seq: Number(match[3]) } };
}

const position = (row: DeliveryRow): HistoryPosition => ({ createdAt: row.created_at, seq: row.seq });

function toHistoryFilter(input: HistoryFilterInput): HistoryFilter {
  const filter: HistoryFilter = { state: input.status, event: input.event, from: input.from, to: input.to };
  // The date-time format lets through instants no clock names (a leap second, 23:59:60): they parse to NaN.
  if (input.from !== undefined && !Number.isFinite(input.from)) throw fieldError('from', 'must be a valid date-time');
  if (input.to !== undefined && !Number.isFinite(input.to)) throw fieldError('to', 'must be a valid date-time');
  if (input.from !== undefined && input.to !== undefined && input.to <= input.from) throw fieldError('to', 'must be later than from');
  const id = input.id?.trim();
  if (id) {
    if (/^dlv_[0-9a-z]{1,64}$/.test(id)) filter.deliveryId = id;
    else if (/^evt_[0-9a-z]{1,64}$/.test(id)) filter.eventId = id;
    else throw fieldError('id', 'must be a delivery id (dlv_…) or an event id (evt_…)');
  }
  return filter;
}

export interface DeliveriesServiceDeps {
  store: Store;
  clock: Clock;
}

/**
 * Delivery history and replay for one organisation's subscriptions. A replay is a new attempt of the same
 * delivery (same event id, same body bytes), made by the worker outside the automatic schedule: success
 * marks the delivery delivered (also a permanently failed one), failure leaves it failed with no retries.
 */
export function createDeliveriesService({ store, clock }: DeliveriesServiceDeps) {
  async function requireDelivery(orgId: string, webhookId: string | null, deliveryId: string): Promise<DeliveryRow> {
    const row = await store.repos.deliveries.findById(orgId, deliveryId);
    if (!row || (webhookId !== null && row.webhook_id !== webhookId)) throw errors.notFound('delivery');
    return row;
  }

  async function withSummaries(orgId: string, rows: readonly DeliveryRow[], context: WaitingContext): Promise<Delivery[]> {
    const summaries = await store.repos.deliveries.attemptSummaries(orgId, rows.map((r) => r.id));
    return rows.map((row) => toDelivery(row, summaries.get(row.id), context));
  }

  const waitingContext = (webhook: Pick<WebhookRow, 'rate_limit'> | undefined): WaitingContext => ({ rateLimited: webhook?.rate_limit != null, now: clock.now() });

  return {
    /** The organisation of a delivery, for the operator's CLI when it is given only the id. */
    async organizationOf(deliveryId: string): Promise<string> {
      const orgId = await store.repos.deliveries.lookupOrgForCli(deliveryId);
      if (!orgId) throw errors.notFound('delivery');
      return orgId;
    },

    /** One page of a subscription's history, newest first, filtered; cursors lead both ways. */
    async list(actor: Actor, webhookId: string, request: HistoryRequest): Promise<HistoryResult> {
      authorize(actor, 'webhooks', 'read');
      const { orgId } = actor;
      const { direction, position: from } = decodeHistoryCursor(request.cursor);
      const filter = toHistoryFilter(request.filter ?? {});
      const webhook = await requireWebhook(store.repos, orgId, webhookId);
      const page = await store.repos.deliveries.historyPage(orgId, webhookId, {
        filter,
        limit: request.limit,
        direction,
        position: from,
        scanLimit: HISTORY_SCAN_LIMIT,
        viewer: projectViewer(actor),
      });
      const { rows, more, scannedTo } = page;
      const first = rows[0];
      const last = rows[rows.length - 1];
      // Paging older: newer pages exist behind us when we came by a cursor; older ones when the scan says so.
      // Paging newer: the mirror image.
      let nextCursor: string | null = null;
      let prevCursor: string | null = null;
      if (direction === 'older') {
        if (more && last) nextCursor = encodeHistoryCursor('older', position(last));
        else if (scannedTo) nextCursor = encodeHistoryCursor('older', scannedTo);
        if (from !== null) prevCursor = encodeHistoryCursor('newer', first ? position(first) : { createdAt: from.createdAt, seq: from.seq - 1 });
      } else {
        if (more && first) prevCursor = encodeHistoryCursor('newer', position(first));
        else if (scannedTo) prevCursor = encodeHistoryCursor('newer', scannedTo);
        if (from !== null) nextCursor = encodeHistoryCursor('older', last ? position(last) : { createdAt: from.createdAt, seq: from.seq + 1 });
      }
      return { items: await withSummaries(orgId, rows, waitingContext(webhook)), nextCursor, prevCursor, searchedTo: scannedTo ? toIso(scannedTo.createdAt) : null };
    },

    /** `webhookId` null: any subscription of the organisation (the CLI addresses deliveries by id alone). */
    async get(actor: Actor, webhookId: string | null, deliveryId: string): Promise<DeliveryDetail> {
      authorize(actor, 'webhooks', 'read');
      const { orgId } = actor;
      const given = webhookId !== null ? await requireActiveWebhook(store.repos, orgId, webhookId) : undefined;
      const row = await requireDelivery(orgId, webhookId, deliveryId);
      const [attempts, event, webhook] = await Promise.all([
        store.repos.deliveries.listAttempts(orgId, deliveryId),
        store.repos.events.findEvent(orgId, row.event_id),
        given ?? store.repos.webhooks.findById(orgId, row.webhook_id),
      ]);
      // A private project's event is not the viewer's to read, nor is its delivery (CONTRACT 15).
      const viewer = projectViewer(actor);
      if (event && viewer !== null && !(await store.repos.events.findEvent(orgId, row.event_id, viewer))) throw errors.notFound('delivery');
      const last = attempts[attempts.length - 1];
      const summary = last ? { lastAttemptAt: last.started_at, replayed: attempts.some((a) => a.trigger === 'replay') } : undefined;
      return { ...toDelivery(row, summary, waitingContext(webhook)), payload: event?.body ?? '', attempt_history: attempts.map(toAttempt) };
    },

    /** Queues one replay attempt; 409 while the delivery is still pending, was cancelled, or (addressed by id alone) lost its subscription. */
    async replay(actor: Actor, webhookId: string | null, deliveryId: string): Promise<Delivery> {
      authorize(actor, 'webhooks', 'create');
      // A replay is a new attempt the organisation asks for, not a delivery of an event committed before.
      await requireWritable(store.repos, actor);
      const { orgId } = actor;
      // Addressed through a subscription (the API's route), a deleted one is not found, as for reading.
      if (webhookId !== null) await requireActiveWebhook(store.repos, orgId, webhookId);
      const row = await requireDelivery(orgId, webhookId, deliveryId);
      if (webhookId === null && !(await store.repos.webhooks.findById(orgId, row.webhook_id))) {
        throw errors.conflict('the subscription of this delivery was deleted; it cannot be replayed');
      }
      const now = clock.now();
      // The answer is the delivery as this transaction left it: read after the commit, a worker woken by it
      // may already have sent the replay (a 202 saying delivered, with one attempt more).
      const { queued, current } = await store.transaction(async (repos) => {
        const done = await repos.deliveries.requestReplay(orgId, deliveryId, now);
        if (done) {
          await recordAudit(repos, actor, {
            action: 'delivery.replayed',
            target: { type: 'delivery', id: deliveryId, label: row.event_type },
            changes: { status: { old: row.status, new: 'pending' } },
            at: now,
          });
        }
        const after = await repos.deliveries.findById(orgId, deliveryId);
        if (!after) throw errors.notFound('delivery');
        return { queued: done, current: after };
      });
      if (!queued) {
        if (current.status === 'pending') throw errors.conflict('this delivery is still being attempted; it can be replayed once it is delivered or has failed');
        if (current.status === 'cancelled') throw errors.conflict('a cancelled delivery cannot be replayed: its subscription was deleted before it was sent');
        throw errors.conflict(`a ${current.status} delivery cannot be replayed`);
      }
      // A replay stands outside any order and is due now: nothing to say it waits for.
      return (await withSummaries(orgId, [current], { rateLimited: false, now }))[0]!;
    },
  };
}

export type DeliveriesService = ReturnType<typeof createDeliveriesService>;
