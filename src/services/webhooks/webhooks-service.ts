import { endpointShownTo } from './endpoint-visibility.js';
import { requireConfirmed } from '../identity/confirmation.js';
import { errors, fieldError } from '../../errors.js';
import { randomBytes } from 'node:crypto';
import { newId } from '../../lib/ids.js';
import { toIso, type Clock } from '../../lib/time.js';
import type { WebhookOrdering, WebhookRow } from '../../db/schema.js';
import type { Repositories } from '../../db/repositories/index.js';
import type { Store } from '../../db/store.js';
import { assertPublicWebhookUrl, SsrfBlockedError } from '../../lib/ssrf.js';
import { authorize, type Actor } from '../access/actor.js';
import { recordAudit } from '../audit/audit-record.js';
import type { EventType } from '../../schemas/events.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { decodeCursor, pageResult, type PageRequest, type PageResult } from '../shared/pagination.js';
import { requireWritable } from '../access/workspace.js';
import { DEFAULT_PREVIOUS_EXPIRES_IN, MAX_RATE_LIMIT, type Webhook, type CreatedWebhook, type RotatedSecret } from '../../schemas/webhooks.js';

/** CONTRACT 14, on create and PATCH: absent leaves the value as it is (null and `none` by default). */
export interface DeliveryControlInput {
  rate_limit?: number | null | undefined;
  ordering?: WebhookOrdering | undefined;
}

export interface CreateWebhookInput extends DeliveryControlInput {
  url: string;
  events: EventType[];
  secret?: string | undefined;
}

export interface UpdateWebhookInput extends DeliveryControlInput {
  url?: string | undefined;
  events?: EventType[] | undefined;
}

/** The schema bounds these for the API; the dashboard's form and the CLI come through here as well. */
function checkDeliveryControl(input: DeliveryControlInput): void {
  const limit = input.rate_limit;
  if (limit !== undefined && limit !== null && (!Number.isInteger(limit) || limit < 1 || limit > MAX_RATE_LIMIT)) {
    throw fieldError('rate_limit', `must be a whole number from 1 to ${MAX_RATE_LIMIT.toLocaleString('en-US')}, or null for no limit`);
  }
  if (input.ordering !== undefined && input.ordering !== 'none' && input.ordering !== 'fifo') throw fieldError('ordering', 'must be "none" or "fifo"');
}

export interface RotateSecretInput {
  secret?: string | undefined;
  /** Seconds the previous secret keeps signing: 0 to 604,800 (7 days); default 86,400. */
  previous_expires_in?: number | undefined;
}

const isoOrNull = (ms: number | null) => (ms === null ? null : toIso(Number(ms)));

export function toWebhook(row: WebhookRow, now: number): Webhook {
  const previousExpires = row.secret_previous !== null && row.secret_previous_expires_at !== null && Number(row.secret_previous_expires_at) > now ? row.secret_previous_expires_at : null;
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as EventType[],
    active: row.status === 'active',
    status: row.status,
    created_at: toIso(row.created_at),
    failing_since: isoOrNull(row.failing_since),
    disabled_at: isoOrNull(row.disabled_at),
    disabled_reason: row.disabled_reason,
    previous_secret_expires_at: isoOrNull(previousExpires),
    rate_limit: row.rate_limit === null ? null : Number(row.rate_limit),
    ordering: row.ordering,
  };
}

/** A new signing secret: `whsec_` + 32 random bytes in standard, padded base64 (CONTRACT 6). */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * A chosen secret that starts with `whsec_` is keyed by its base64-decoded part (CONTRACT 7), so that part
 * must be base64 (standard or url-safe alphabet), or no Standard Webhooks library could verify with it.
 */
function checkChosenSecret(secret: string): void {
  // The API's schema says the same; the CLI reaches the service without it.
  if (secret.length < 16 || secret.length > 256 || !/^[\x20-\x7E]*$/.test(secret)) throw fieldError('secret', 'must be 16 to 256 printable ASCII characters');
  if (!secret.startsWith('whsec_')) return;
  const encoded = secret.slice('whsec_'.length);
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded) || Buffer.from(encoded, 'base64').length === 0) {
    throw fieldError('secret', 'starting with whsec_, must continue with base64 (or choose a secret without that prefix)');
  }
}

/** The organisation's subscription, or a 404: every service that works under a subscription starts here. */
export async function requireWebhook(repos: Repositories, orgId: string, webhookId: string): Promise<WebhookRow> {
  const row = await repos.webhooks.findById(orgId, webhookId);
  if (!row) throw errors.notFound('webhook');
  return row;
}

/** The subscription, or a 404; a disabled one is a 409 (nothing is sent to it until it is enabled). */
export async function requireActiveWebhook(repos: Repositories, orgId: string, webhookId: string): Promise<WebhookRow> {
  const row = await requireWebhook(repos, orgId, webhookId);
  if (row.status !== 'active') throw errors.conflict('the subscription is disabled: enable it first, then replay');
  return row;
}

/** Whitespace and control characters are refused rather than silently stripped by the URL parser. */
function hasSpaceOrControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code <= 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/** The URL rules of CONTRACT section 6 that the body schema cannot express. */
function checkUrl(raw: string, allowPrivate: boolean): void {
  if (raw.length === 0 || raw.length > 2048) throw fieldError('url', 'must be 1 to 2,048 characters');
  if (hasSpaceOrControl(raw)) throw fieldError('url', 'must not contain spaces or control characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw fieldError('url', 'must be an absolute https:// URL');
  }
  if (url.protocol !== 'https:' || !/^https:\/\//i.test(raw)) throw fieldError('url', 'must be an absolute https:// URL');
  // The authority as written, so an empty user-info (`https://@host`) is refused too.
  const authority = raw.slice('https://'.length).split(/[/\\?#]/)[0]!;
  if (url.username !== '' || url.password !== '' || authority.includes('@')) {
    throw fieldError('url', 'must not contain user-info (user:password@)');
  }
  try {
    assertPublicWebhookUrl(url, allowPrivate);
  } catch (error) {
    if (error instanceof SsrfBlockedError) {
      throw fieldError('url', `must point to a public address; ${error.target} is ${error.reason}`);
    }
    throw error;
  }
}

export interface WebhooksServiceDeps {
  store: Store;
  clock: Clock;
  allowPrivateNetworks: boolean;
  /** Seals secrets for storage (WEBHOOK_SECRETS_KEY); without a key they are stored as given. */
  secrets: SecretBox;
  /** The example `data` of each event (the OpenAPI document's), sent by test events. */
  eventExamples: Readonly<Record<EventType, Record<string, unknown>>>;
}

/** Duplicates are dropped, keeping the order in which names were first given. */
const uniqueEvents = (events: readonly EventType[]) => [...new Set(events)];

export function createWebhooksService({ store, clock, allowPrivateNetworks, secrets, eventExamples }: WebhooksServiceDeps) {
  const view = (row: WebhookRow) => toWebhook(row, clock.now());
  const shownTo = (actor: Actor, webhook: Webhook): Webhook => {
    const url = endpointShownTo(actor, webhook.url);
    return url === webhook.url ? webhook : { ...webhook, url };
  };

  /**
   * The checks every change shares, in the contract's order (CONTRACT 1): role, then read-only, then the
   * input's own rules (`validate`), then the 404.
   */
  async function changeable(actor: Actor, webhookId: string, validate?: () => void): Promise<WebhookRow> {
    authorize(actor, 'webhooks', 'update');
    await requireWritable(store.repos, actor);
    validate?.();
    return requireWebhook(store.repos, actor.orgId, webhookId);
  }

  return {
    /** The organisation of a subscription, for the operator's CLI when it is given only the id. */
    async organizationOf(webhookId: string): Promise<string> {
      const orgId = await store.repos.webhooks.lookupOrgForCli(webhookId);
      if (!orgId) throw errors.notFound('webhook');
      return orgId;
    },

    async list(actor: Actor, page: PageRequest): Promise<PageResult<Webhook>> {
      authorize(actor, 'webhooks', 'read');
      const before = decodeCursor(page.cursor);
      const rows = await store.repos.webhooks.list(actor.orgId, page.limit, before);
      return pageResult(rows, (row) => shownTo(actor, view(row)));
    },

    /** Subscriptions failing or disabled, for the overview's warning (at most 20, longest-failing first). */
    async unhealthy(actor: Actor): Promise<Webhook[]> {
      authorize(actor, 'webhooks', 'read');
      return (await store.repos.webhooks.listUnhealthy(actor.orgId, 20)).map((row) => shownTo(actor, view(row)));
    },

    /** One subscription of the actor's organisation (never its secret); another organisation's is a 404. */
    async get(actor: Actor, webhookId: string): Promise<Webhook> {
      authorize(actor, 'webhooks', 'read');
      return shownTo(actor, view(await requireWebhook(store.repos, actor.orgId, webhookId)));
    },

    async create(actor: Actor, input: CreateWebhookInput): Promise<CreatedWebhook> {
      authorize(actor, 'webhooks', 'create');
      await requireWritable(store.repos, actor);
      checkUrl(input.url, allowPrivateNetworks);
      if (input.secret !== undefined) checkChosenSecret(input.secret);
      checkDeliveryControl(input);
      const secret = input.secret ?? generateSecret();
      const events = uniqueEvents(input.events);
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        const inserted = await repos.webhooks.insert({
          id: newId('wh'),
          org_id: actor.orgId,
          url: input.url,
          events: JSON.stringify(events),
          secret: secrets.seal(secret),
          created_at: now,
          rate_limit: input.rate_limit ?? null,
          ordering: input.ordering ?? 'none',
        });
        // The secret is never audited; that one was chosen (or generated) is.
        await recordAudit(repos, actor, {
          action: 'webhook.created',
          target: { type: 'webhook', id: inserted.id, label: inserted.url },
          changes: {
            url: { old: null, new: input.url },
            events: { old: null, new: events },
            secret: { old: null, new: input.secret ? 'given' : 'generated' },
            ...(inserted.rate_limit !== null ? { rate_limit: { old: null, new: inserted.rate_limit } } : {}),
            ...(inserted.ordering !== 'none' ? { ordering: { old: null, new: inserted.ordering } } : {}),
          },
          at: now,
        });
        return inserted;
      });
      const { active, status, created_at, ...rest } = view(row);
      return { ...rest, secret, active, status, created_at };
    },

    /**
     * PATCH: a new URL (the create rules, SSRF checks included) and/or a new event list. The worker reads the
     * URL when it claims a delivery, so waiting and later attempts go to the new one.
     */
    async update(actor: Actor, webhookId: string, input: UpdateWebhookInput): Promise<Webhook> {
      const existing = await changeable(actor, webhookId, () => {
        if (input.url !== undefined) checkUrl(input.url, allowPrivateNetworks);
        checkDeliveryControl(input);
      });
      const changes: { url?: string; events?: string; rate_limit?: number | null; ordering?: WebhookOrdering } = {};
      const audit: Record<string, { old: unknown; new: unknown }> = {};
      if (input.url !== undefined && input.url !== existing.url) {
        changes.url = input.url;
        audit.url = { old: existing.url, new: input.url };
      }
      if (input.events !== undefined) {
        const events = uniqueEvents(input.events);
        const before = JSON.parse(existing.events) as EventType[];
        if (JSON.stringify(events) !== JSON.stringify(before)) {
          changes.events = JSON.stringify(events);
          audit.events = { old: before, new: events };
        }
      }
      if (input.rate_limit !== undefined && input.rate_limit !== existing.rate_limit) {
        changes.rate_limit = input.rate_limit;
        audit.rate_limit = { old: existing.rate_limit, new: input.rate_limit };
      }
      if (input.ordering !== undefined && input.ordering !== existing.ordering) {
        changes.ordering = input.ordering;
        audit.ordering = { old: existing.ordering, new: input.ordering };
      }
      // Nothing to change answers the object as it is, with no audit row (an idempotent PATCH).
      if (Object.keys(changes).length === 0) return view(existing);
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        // Ordering turned off: the deliveries waiting their turn become due at once, as any others. Turned
        // on, it orders the deliveries of events from then on (those already waiting go out as queued).
        // Deliveries before the subscription, in the order a worker recording an attempt locks them.
        if (changes.ordering === 'none') await repos.deliveryQueue.releaseOrder(actor.orgId, webhookId, now);
        const updated = await repos.webhooks.update(actor.orgId, webhookId, { ...changes, updated_at: now });
        if (!updated) throw errors.notFound('webhook');
        await recordAudit(repos, actor, { action: 'webhook.updated', target: { type: 'webhook', id: webhookId, label: updated.url }, changes: audit, at: now });
        return updated;
      });
      return view(row);
    },

    /**
     * A new signing secret (given, or generated); the one it replaces keeps signing for `previous_expires_in`
     * seconds. A rotation inside an earlier window ends that window's older secret at once: at most two sign.
     */
    async rotateSecret(actor: Actor, webhookId: string, input: RotateSecretInput): Promise<RotatedSecret> {
      await changeable(actor, webhookId, () => {
        if (input.secret !== undefined) checkChosenSecret(input.secret);
      });
      requireConfirmed(actor, clock.now());
      const seconds = input.previous_expires_in ?? DEFAULT_PREVIOUS_EXPIRES_IN;
      const secret = input.secret ?? generateSecret();
      const now = clock.now();
      const expiresAt = now + seconds * 1000;
      await store.transaction(async (repos) => {
        const current = await repos.webhooks.findById(actor.orgId, webhookId);
        if (!current) throw errors.notFound('webhook');
        await repos.webhooks.update(actor.orgId, webhookId, {
          secret: secrets.seal(secret),
          // The stored form moves as is: no need to open it.
          secret_previous: seconds > 0 ? current.secret : null,
          secret_previous_expires_at: seconds > 0 ? expiresAt : null,
          updated_at: now,
        });
        await recordAudit(repos, actor, {
          action: 'webhook.secret_rotated',
          target: { type: 'webhook', id: webhookId, label: current.url },
          changes: { secret: { old: 'previous', new: input.secret ? 'given' : 'generated' }, previous_expires_at: { old: null, new: toIso(expiresAt) } },
          at: now,
        });
      });
      return { secret, previous_expires_at: toIso(expiresAt) };
    },

    /**
     * One delivery of `event` (default the subscription's first) with the OpenAPI example's data, sent once
     * with `X-Service-Test: true`: never retried, not counted for health, shown in the history as a test.
     */
    async sendTest(actor: Actor, webhookId: string, input: { event?: EventType | undefined }): Promise<{ delivery_id: string }> {
      const row = await changeable(actor, webhookId);
      const listening = JSON.parse(row.events) as EventType[];
      const event = input.event ?? listening[0]!;
      if (!listening.includes(event)) throw fieldError('event', `must be one of this subscription's events: ${listening.join(', ')}`);
      if (row.status !== 'active') throw errors.conflict('the subscription is disabled: enable it before sending a test event');
      const now = clock.now();
      const deliveryId = newId('dlv');
      const body = JSON.stringify({ event, timestamp: toIso(now), data: eventExamples[event] });
      await store.transaction(async (repos) => {
        await repos.events.insertTestEvent({ id: newId('evt'), org_id: actor.orgId, type: event, body, occurred_at: now }, deliveryId, webhookId);
        await recordAudit(repos, actor, { action: 'webhook.test_sent', target: { type: 'webhook', id: webhookId, label: row.url }, changes: { event: { old: null, new: event } }, at: now });
      });
      return { delivery_id: deliveryId };
    },

    /**
     * A disabled subscription becomes active again, its failure streak forgotten. Its deliveries cancelled
     * while disabled are sent by a replay of failed deliveries. Enabling an active one changes nothing.
     */
    async enable(actor: Actor, webhookId: string): Promise<Webhook> {
      const existing = await changeable(actor, webhookId);
      if (existing.status === 'active') return view(existing);
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        const enabled = await repos.webhooks.enable(actor.orgId, webhookId, now);
        if (!enabled) return (await repos.webhooks.findById(actor.orgId, webhookId)) ?? null;
        await recordAudit(repos, actor, {
          action: 'webhook.enabled',
          target: { type: 'webhook', id: webhookId, label: enabled.url },
          changes: { status: { old: 'disabled', new: 'active' } },
          at: now,
        });
        return enabled;
      });
      if (!row) throw errors.notFound('webhook');
      return view(row);
    },

    /**
     * Removes the subscription and cancels its pending deliveries together: no attempt starts after.
     * Allowed while the workspace is read-only (DASHBOARD 10): stopping deliveries is no change to the data.
     * Returns the subscription as it was, for the door to say which one it deleted.
     */
    async remove(actor: Actor, webhookId: string): Promise<Webhook> {
      authorize(actor, 'webhooks', 'delete');
      const { orgId } = actor;
      const now = clock.now();
      return store.transaction(async (repos) => {
        const existing = await repos.webhooks.findById(orgId, webhookId);
        if (!existing) throw errors.notFound('webhook');
        // Deliveries first, then the subscription: the order in which a worker recording an attempt locks them
        // (the delivery, then the subscription's streak); the other order deadlocked on PostgreSQL (a 500). The
        // DELETE then waits for any event still being recorded for this subscription (it holds the row FOR
        // SHARE), so its deliveries, committed meanwhile, are cancelled by the second pass.
        await repos.events.cancelPendingForWebhook(orgId, webhookId, now, 'subscription_deleted');
        if (!(await repos.webhooks.delete(orgId, webhookId))) throw errors.notFound('webhook');
        await repos.events.cancelPendingForWebhook(orgId, webhookId, now, 'subscription_deleted');
        await recordAudit(repos, actor, { action: 'webhook.deleted', target: { type: 'webhook', id: webhookId, label: existing.url }, at: now });
        return view(existing);
      });
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;

