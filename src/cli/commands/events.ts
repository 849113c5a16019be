import { EVENT_TYPES } from '../../schemas/events.js';
import { AS_OPTION, CURSOR_OPTION, LIMIT_OPTION, ORG_OPTION, pageResult, type CommandGroup } from '../command.js';
import { formatTable } from '../output.js';
import { actingAs, withContainer } from '../runtime.js';

export const eventsGroup: CommandGroup = {
  name: 'events',
  summary: "an organisation's events, kept for EVENT_RETENTION (as GET /v1/events)",
  commands: [
    {
      name: 'list',
      summary: "list an organisation's events, newest first, whether or not a subscription listened",
      details: `--type takes one or more of ${EVENT_TYPES.join(', ')}, comma-separated. With --json each event is { id, type, created_at, data }, data byte for byte the webhook body's.`,
      options: {
        org: ORG_OPTION,
        type: { type: 'string', value: 'TYPES', description: 'only events of these types, comma-separated' },
        as: AS_OPTION,
        limit: LIMIT_OPTION,
        cursor: CURSOR_OPTION,
      },
      async run(input) {
        const page = await withContainer(input, async (c) =>
          c.services.events.list(await actingAs(c, input), { type: input.options.type }, { limit: Number(input.options.limit ?? 20), cursor: input.options.cursor }),
        );
        const events = page.items.map((text) => JSON.parse(text) as { id: string; type: string; created_at: string; data: unknown });
        return pageResult({ items: events, nextCursor: page.nextCursor }, formatTable(events, ['id', 'type', 'created_at']));
      },
    },
  ],
};
