import type { Command } from '../command.js';
import { withContainer } from '../runtime.js';

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'apply pending schema migrations',
  details: 'Prints the migrations applied by this run ({ "applied": [...] } with --json); none when the schema is current.',
  async run(input) {
    return withContainer(input, async (_container, applied) => ({
      data: { applied },
      text: applied.length ? `Applied ${applied.length} migration(s):\n${applied.map((m) => `  ${m}`).join('\n')}` : 'Schema is up to date; nothing to apply.',
    }));
  },
};
