import { errors, fieldError } from '../errors.js';
import { newId, randomToken } from '../lib/ids.js';
import { toIso, type Clock } from '../lib/time.js';
import type { WebhookRow } from '../db/schema.js';
import type { Repositories } from '../db/repositories/index.js';
import type { Store } from '../db/store.js';
import { assertPublicWebhookUrl, SsrfBlockedError } from '../delivery/ssrf.js';
import { authorize, type Actor } from './actor.js';
import { recordAudit } from './audit.js';
import type { EventType } from './events.js';
import { decodeCursor, pageResult, type PageRequest, type PageResult } from './pagination.js';
import { requireWritable } from './workspace.js';

export interface Webhook {
  id: string;
  url: string;
  events: EventType[];
  active: true;
  status: 'active';
  created_at: string;
}

/** Only the creation response carries the secret. */
export type CreatedWebhook = Webhook & { secret: string };

export interface CreateWebhookInput {
  url: string;
  events: EventType[];
  secret?: string | undefined;
}

export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as EventType[],
    active: true,
    status: 'active',
    created_at: toIso(row.created_at),
  };
}

/** The organisation's subscription, or a 404: every service that works under a subscription starts here. */
export async function requireWebhook(repos: Repositories, orgId: string, webhookId: string): Promise<WebhookRow> {
  const row = await repos.webhooks.findById(orgId, webhookId);
  if (!row) throw errors.notFound('webhook');
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
}

export function createWebhooksService({ store, clock, allowPrivateNetworks }: WebhooksServiceDeps) {
  return {
    async list(orgId: string, page: PageRequest): Promise<PageResult<Webhook>> {
      const before = decodeCursor(page.cursor);
      const rows = await store.repos.webhooks.list(orgId, page.limit, before);
      return pageResult(rows, toWebhook);
    },

    /** One subscription of the actor's organisation (never its secret); another organisation's is a 404. */
    async get(actor: Actor, webhookId: string): Promise<Webhook> {
      authorize(actor, 'webhooks', 'read');
      return toWebhook(await requireWebhook(store.repos, actor.orgId, webhookId));
    },

    async create(actor: Actor, input: CreateWebhookInput): Promise<CreatedWebhook> {
      authorize(actor, 'webhooks', 'create');
      await requireWritable(store.repos, actor);
      checkUrl(input.url, allowPrivateNetworks);
      const secret = input.secret ?? `whsec_${randomToken(32)}`;
      // Duplicates are dropped, keeping the order in which names were first given.
      const events = [...new Set(input.events)];
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        const inserted = await repos.webhooks.insert({
          id: newId('wh'),
          org_id: actor.orgId,
          url: input.url,
          events: JSON.stringify(events),
          secret,
          created_at: now,
        });
        // The secret is never audited; that one was chosen (or generated) is.
        await recordAudit(repos, actor, {
          action: 'webhook.created',
          target: { type: 'webhook', id: inserted.id, label: inserted.url },
          changes: { url: { old: null, new: input.url }, events: { old: null, new: events }, secret: { old: null, new: input.secret ? 'given' : 'generated' } },
          at: now,
        });
        return inserted;
      });
      const { active, status, created_at, ...rest } = toWebhook(row);
      return { ...rest, secret, active, status, created_at };
    },

    /**
     * Removes the subscription and cancels its pending deliveries together: no attempt starts after.
     * Allowed while the workspace is read-only (DASHBOARD 10): stopping deliveries is no change to the data.
     */
    async remove(actor: Actor, webhookId: string): Promise<void> {
      authorize(actor, 'webhooks', 'delete');
      const { orgId } = actor;
      const now = clock.now();
      await store.transaction(async (repos) => {
        const existing = await repos.webhooks.findById(orgId, webhookId);
        const deleted = existing && (await repos.webhooks.delete(orgId, webhookId));
        if (!existing || !deleted) throw errors.notFound('webhook');
        await repos.events.cancelPendingForWebhook(orgId, webhookId, now);
        await recordAudit(repos, actor, { action: 'webhook.deleted', target: { type: 'webhook', id: webhookId, label: existing.url }, at: now });
      });
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
