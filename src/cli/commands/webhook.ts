import type { Container } from '../../container.js';
import { fieldError } from '../../errors.js';
import { cliActor } from '../../services/access/actor.js';
import { EVENT_TYPES, type EventType } from '../../schemas/events.js';
import { type Webhook, MAX_PREVIOUS_EXPIRES_IN, MAX_RATE_LIMIT } from '../../schemas/webhooks.js';
import type { CommandGroup, CommandInput } from '../command.js';
import { formatFields } from '../output.js';
import { withContainer } from '../runtime.js';

const orgOption = { type: 'string', value: 'ORG', description: 'organisation id (org_...); found from the subscription when omitted' } as const;
const webhookArg = [{ name: 'WEBHOOK_ID', description: 'the subscription id (wh_...)' }];

/** The organisation of a subscription: --org when given, else looked up from the id. */
async function actorFor(c: Container, input: CommandInput) {
  const id = input.args[0]!;
  return cliActor(input.options.org ?? (await c.services.webhooks.organizationOf(id)));
}

function webhookText(w: Webhook): string {
  return formatFields([
    ['Subscription', w.id],
    ['URL', w.url],
    ['Events', w.events.join(', ')],
    ['Status', w.status],
    ['Failing since', w.failing_since],
    ['Disabled at', w.disabled_at],
    ['Disabled because', w.disabled_reason],
    ['Previous secret until', w.previous_secret_expires_at],
    ['Rate limit', w.rate_limit === null ? 'none' : `${w.rate_limit} attempts started per second`],
    ['Ordering', w.ordering === 'fifo' ? 'fifo (one at a time, in commit order)' : 'none'],
    ['Created', w.created_at],
  ]);
}

/** `--events a,b`: names checked here, so a typo is a usage error naming the known ones. */
function parseEvents(text: string): EventType[] {
  const names = text.split(',').map((n) => n.trim()).filter((n) => n !== '');
  const unknown = names.filter((n) => !(EVENT_TYPES as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length > 0) throw fieldError('events', `must be a comma-separated list of ${EVENT_TYPES.join(', ')}`);
  return names as EventType[];
}

/** The subscription extensions of CONTRACT 11 from the command line, through the same service as the API. */
export const webhookGroup: CommandGroup = {
  name: 'webhook',
  summary: 'read, change, rotate, test and enable a webhook subscription',
  commands: [
    {
      name: 'show',
      summary: 'show a subscription (never its secret) and its health',
      positionals: webhookArg,
      options: { org: orgOption },
      async run(input) {
        const webhook = await withContainer(input, async (c) => c.services.webhooks.get(await actorFor(c, input), input.args[0]!));
        return { data: webhook, text: webhookText(webhook) };
      },
    },
    {
      name: 'update',
      summary: "change a subscription's URL, events, rate limit or ordering (the rules of creation apply)",
      details:
        'Waiting retries and later attempts go to the new URL. The secret and the history stay.\n' +
        `--rate-limit: attempts started per second across every worker (1 to ${MAX_RATE_LIMIT}), or none.\n` +
        '--ordering fifo: one attempt at a time, in commit order; none releases the deliveries waiting their turn.',
      positionals: webhookArg,
      options: {
        org: orgOption,
        url: { type: 'string', value: 'URL', description: 'the new https:// endpoint' },
        events: { type: 'string', value: 'EVENTS', description: `comma-separated: ${EVENT_TYPES.join(', ')}` },
        'rate-limit': {
          type: 'string',
          value: 'N|none',
          description: 'attempts started per second, or none for no limit',
          check: (v) => (v === 'none' || /^\d{1,7}$/.test(v) ? null : `must be a whole number from 1 to ${MAX_RATE_LIMIT}, or none`),
        },
        ordering: { type: 'string', value: 'ORDERING', description: 'fifo (in order, one at a time) or none', choices: ['none', 'fifo'] },
      },
      async run(input) {
        const { url, events, ordering } = input.options;
        const rateLimit = input.options['rate-limit'];
        if (url === undefined && events === undefined && rateLimit === undefined && ordering === undefined) {
          throw fieldError('url', 'give at least one of --url, --events, --rate-limit, --ordering');
        }
        const webhook = await withContainer(input, async (c) =>
          c.services.webhooks.update(await actorFor(c, input), input.args[0]!, {
            url,
            events: events === undefined ? undefined : parseEvents(events),
            rate_limit: rateLimit === undefined ? undefined : rateLimit === 'none' ? null : Number(rateLimit),
            ordering: ordering as 'none' | 'fifo' | undefined,
          }),
        );
        return { data: webhook, text: `Updated ${webhook.id}.\n${webhookText(webhook)}` };
      },
    },
    {
      name: 'rotate-secret',
      summary: 'give the subscription a new signing secret; the old one signs beside it for a while',
      details:
        'The new secret is printed once. The previous one keeps signing (a second webhook-signature entry and\n' +
        `X-Service-Signature-Previous) for --previous-expires-in seconds (0 to ${MAX_PREVIOUS_EXPIRES_IN}; default 86400).`,
      positionals: webhookArg,
      options: {
        org: orgOption,
        secret: { type: 'string', value: 'SECRET', description: '16 to 256 printable ASCII characters (default: generated)' },
        'previous-expires-in': {
          type: 'string',
          value: 'SECONDS',
          description: 'how long the previous secret keeps signing',
          check: (v) => (/^\d+$/.test(v) && Number(v) <= MAX_PREVIOUS_EXPIRES_IN ? null : `must be a whole number from 0 to ${MAX_PREVIOUS_EXPIRES_IN}`),
        },
      },
      async run(input) {
        const window = input.options['previous-expires-in'];
        const rotated = await withContainer(input, async (c) =>
          c.services.webhooks.rotateSecret(await actorFor(c, input), input.args[0]!, { secret: input.options.secret, previous_expires_in: window === undefined ? undefined : Number(window) }),
        );
        return { data: rotated, text: `New signing secret (shown once): ${rotated.secret}\nThe previous secret signs until ${rotated.previous_expires_at}.` };
      },
    },
    {
      name: 'test',
      summary: 'send one test event (X-Service-Test: true) to the subscription',
      details: 'The running serve or worker sends it once, never retried; see it with `deliveries show`.',
      positionals: webhookArg,
      options: { org: orgOption, event: { type: 'string', value: 'EVENT', description: "one of the subscription's events (default its first)", choices: EVENT_TYPES } },
      async run(input) {
        const result = await withContainer(input, async (c) => c.services.webhooks.sendTest(await actorFor(c, input), input.args[0]!, { event: input.options.event as EventType | undefined }));
        return { data: result, text: `Test event queued as delivery ${result.delivery_id}.` };
      },
    },
    {
      name: 'enable',
      summary: 'enable a subscription the service disabled',
      details: 'Its deliveries cancelled while disabled are sent by `deliveries replay-failed`.',
      positionals: webhookArg,
      options: { org: orgOption },
      async run(input) {
        const webhook = await withContainer(input, async (c) => c.services.webhooks.enable(await actorFor(c, input), input.args[0]!));
        return { data: webhook, text: `${webhook.id} is ${webhook.status}.` };
      },
    },
  ],
};
