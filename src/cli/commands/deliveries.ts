import { parseDuration } from '../../config.js';
import type { Container } from '../../container.js';
import { type HistoryState } from '../../services/webhooks/deliveries-service.js';
import { type DeliveryDetail, HISTORY_STATES } from '../../schemas/deliveries.js';
import { EVENT_TYPES, type EventType } from '../../schemas/events.js';
import { CURSOR_OPTION, LIMIT_OPTION, ORG_OPTION, pageResult, required, UsageError, type CommandGroup, type CommandInput } from '../command.js';
import { formatFields, formatTable } from '../output.js';
import { cliActor } from '../../services/access/actor.js';
import { withContainer } from '../runtime.js';

const orgOption = { type: 'string', value: 'ORG', description: 'organisation id (org_...); found from the delivery when omitted' } as const;

/** The organisation of a delivery: --org when given, else looked up from the id. */
async function orgOf(c: Container, input: CommandInput, deliveryId: string): Promise<string> {
  return input.options.org ?? (await c.services.deliveries.organizationOf(deliveryId));
}

/** `--since` as an ISO 8601 time, or a duration meaning that long ago (e.g. 24h, 7d). */
function parseSince(text: string, now: number): number | null {
  const duration = parseDuration(text);
  if (duration !== null) return now - duration;
  const time = Date.parse(text);
  return /^\d{4}-\d\d-\d\d/.test(text) && Number.isFinite(time) ? time : null;
}

function detailText(d: DeliveryDetail): string {
  const head = formatFields([
    ['Delivery', d.id],
    ['Event', `${d.event_id} (${d.event_type})`],
    ['Webhook', d.webhook_id],
    ['Status', d.status],
    ['Attempts', d.attempts],
    ['Next attempt', d.next_attempt_at],
    ['Last status', d.last_status_code],
    ['Last error', d.last_error],
    ['Created', d.created_at],
  ]);
  const attempts = formatTable(
    d.attempt_history.map((a) => ({ ...a, response_status: a.response_status ?? '-', error: a.error ?? '' })),
    ['attempt_number', 'trigger', 'outcome', 'started_at', 'duration_ms', 'response_status', 'error'],
  );
  return `${head}\n\nPayload\n${d.payload}\n\nAttempts\n${attempts}`;
}

export const deliveriesGroup: CommandGroup = {
  name: 'deliveries',
  summary: 'webhook delivery history and replay',
  commands: [
    {
      name: 'list',
      summary: "list a subscription's deliveries, newest first",
      options: {
        org: ORG_OPTION,
        webhook: { type: 'string', value: 'WEBHOOK', description: 'subscription id (wh_...)', required: true },
        status: { type: 'string', value: 'STATUS', description: 'only deliveries in this state', choices: HISTORY_STATES },
        event: { type: 'string', value: 'EVENT', description: 'only deliveries of this event', choices: EVENT_TYPES },
        limit: LIMIT_OPTION,
        cursor: CURSOR_OPTION,
      },
      async run(input) {
        const page = await withContainer(input, (c) =>
          c.services.deliveries.list(cliActor(required(input, 'org')), required(input, 'webhook'), {
            limit: Number(input.options.limit ?? 20),
            cursor: input.options.cursor,
            filter: { status: input.options.status as HistoryState | undefined, event: input.options.event as EventType | undefined },
          }),
        );
        return pageResult(page, formatTable(page.items, ['id', 'event_type', 'status', 'attempts', 'last_status_code', 'next_attempt_at', 'created_at']));
      },
    },
    {
      name: 'show',
      summary: 'show a delivery with its payload and every attempt',
      positionals: [{ name: 'DELIVERY_ID', description: 'the delivery id (dlv_...)' }],
      options: { org: orgOption },
      async run(input) {
        const id = input.args[0]!;
        const detail = await withContainer(input, async (c) => c.services.deliveries.get(cliActor(await orgOf(c, input, id)), null, id));
        return { data: detail, text: detailText(detail) };
      },
    },
    {
      name: 'replay',
      summary: 'queue one new attempt of a delivered or failed delivery (same event id and body)',
      details:
        'The worker (serve or worker) makes the attempt within its poll interval. Success marks the delivery delivered,\n' +
        'also a permanently failed one; failure leaves it failed, with no automatic retries.',
      positionals: [{ name: 'DELIVERY_ID', description: 'the delivery id (dlv_...)' }],
      options: { org: orgOption },
      async run(input) {
        const id = input.args[0]!;
        const delivery = await withContainer(input, async (c) => c.services.deliveries.replay(cliActor(await orgOf(c, input, id)), null, id));
        return { data: delivery, text: `Queued a replay of ${delivery.id} (event ${delivery.event_id}); it is now ${delivery.status}.` };
      },
    },
    {
      name: 'replay-failed',
      summary: 'replay every failed delivery of a subscription since a time (a bulk replay job)',
      details:
        'TIME is an ISO 8601 time (2026-11-22T09:00:00Z) or a duration meaning that long ago (30m, 24h, 7d);\n' +
        'it selects deliveries by when their event occurred. At most 10,000 (the oldest) per job; the running\n' +
        'server or worker re-queues them in batches, and the job shows its progress on the subscription\'s page.',
      options: {
        org: ORG_OPTION,
        webhook: { type: 'string', value: 'WEBHOOK', description: 'subscription id (wh_...)', required: true },
        since: {
          type: 'string',
          value: 'TIME',
          description: 'replay failures whose event occurred at or after TIME',
          required: true,
          check: (v) => (parseSince(v, Date.now()) === null ? 'must be an ISO 8601 time or a duration such as 24h' : null),
        },
      },
      async run(input) {
        const result = await withContainer(input, (c) => {
          const since = parseSince(required(input, 'since'), c.clock.now());
          if (since === null) throw new UsageError('--since must be an ISO 8601 time or a duration such as 24h', 'deliveries replay-failed');
          return c.services.replayJobs.start(cliActor(required(input, 'org')), required(input, 'webhook'), since);
        });
        const noun = `failed deliver${result.count === 1 ? 'y' : 'ies'}`;
        const more = result.more ? ' More failed deliveries match: run it again for the next ones.' : '';
        return { data: result, text: `Replaying ${result.count} ${noun} (job ${result.id}).${more}` };
      },
    },
  ],
};
