import type { EventRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { toPage } from '../../db/repositories/executor.js';
import { errors, fieldError } from '../../errors.js';
import { toIso, type Clock } from '../../lib/time.js';
import { authorize, type Actor } from '../access/actor.js';
import { projectViewer } from '../access/project-access.js';
import { EVENT_TYPES, type EventType } from '../../schemas/events.js';
import { decodeCursor, encodeCursor, type PageRequest } from '../shared/pagination.js';

export interface EventsServiceDeps {
  store: Store;
  clock: Clock;
  /** EVENT_RETENTION: older events are no longer listed (and are pruned once no delivery needs them). */
  retentionMs: number;
}

/** A page of events, each already serialised (see `eventJson`). */
export interface EventPage {
  items: string[];
  nextCursor: string | null;
}

/**
 * The `data` of a stored envelope, as its bytes stand. The envelope is `JSON.stringify({ event, timestamp,
 * data })` (recordEvent), so `data` is its last member and neither string before it can hold `,"data":`.
 */
function dataText(body: string): string {
  const at = body.indexOf(',"data":');
  if (at < 0 || !body.endsWith('}')) throw new Error('event body is not an envelope');
  return body.slice(at + 8, -1);
}

/**
 * An event as GET /v1/events answers it: `{ id, type, created_at, data }`, with `data` spliced in as the
 * very bytes every delivery of the event sent, never parsed and serialised again (CONTRACT 13).
 */
export function eventJson(row: Pick<EventRow, 'id' | 'type' | 'occurred_at' | 'body'>): string {
  return `{"id":${JSON.stringify(row.id)},"type":${JSON.stringify(row.type)},"created_at":"${toIso(row.occurred_at)}","data":${dataText(row.body)}}`;
}

/** `type=project.created,task.assigned`: each must be one of the six event names. */
export function parseEventTypes(text: string | undefined): EventType[] | undefined {
  if (text === undefined) return undefined;
  const types = text.split(',').map((t) => t.trim());
  const unknown = types.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0 || types.length === 0) throw fieldError('type', `must be one or more of ${EVENT_TYPES.join(', ')}, comma-separated`);
  return [...new Set(types)] as EventType[];
}

/**
 * The organisation's events (CONTRACT 13): every event for EVENT_RETENTION whether or not a subscription
 * listened, for receivers to reconcile after an outage. Any role reads them (a key needs `events`).
 */
export function createEventsService({ store, clock, retentionMs }: EventsServiceDeps) {
  return {
    async list(actor: Actor, filter: { type?: string | undefined }, page: PageRequest): Promise<EventPage> {
      authorize(actor, 'events', 'read');
      const types = parseEventTypes(filter.type);
      const before = decodeCursor(page.cursor);
      const rows = await store.repos.events.page(actor.orgId, { since: clock.now() - retentionMs, types, viewer: projectViewer(actor) }, page.limit + 1, before);
      const { rows: shown, nextSeq } = toPage(rows, page.limit);
      return { items: shown.map(eventJson), nextCursor: nextSeq === null ? null : encodeCursor(nextSeq) };
    },

    async get(actor: Actor, eventId: string): Promise<string> {
      authorize(actor, 'events', 'read');
      const row = await store.repos.events.findEvent(actor.orgId, eventId, projectViewer(actor));
      if (!row || row.test === 1 || row.occurred_at < clock.now() - retentionMs) throw errors.notFound('event');
      return eventJson(row);
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
