import { loadConfig } from '../../config.js';
import type { Command } from '../command.js';
import { EXIT_FAILURE, EXIT_OK, writeJson, writeOut } from '../output.js';
import { withContainer } from '../runtime.js';

/** `migrate --check`: where the schema stands, without opening a container or writing anything. */
async function checkSchema(env: NodeJS.ProcessEnv, json: boolean): Promise<number> {
  const config = loadConfig(env);
  const { openDatabase, schemaStatus, missingSqliteStatus } = await import('../../db/database.js');
  const options = { databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 };
  let status = await missingSqliteStatus(options);
  if (!status) {
    const database = openDatabase(options);
    try {
      status = await schemaStatus(database);
    } finally {
      await database.close();
    }
  }
  const current = status.pending.length === 0;
  if (json) {
    writeJson({ current, pending: status.pending, applied: status.applied, newer: status.newer });
  } else if (current) {
    writeOut(
      `Schema is up to date (${status.applied.length} migration(s) applied).` +
        (status.newer.length ? `\nApplied by a newer release: ${status.newer.join(', ')}` : ''),
    );
  } else {
    writeOut(`${status.pending.length} migration(s) pending; run \`workspace migrate\`:\n${status.pending.map((m) => `  ${m}`).join('\n')}`);
  }
  return current ? EXIT_OK : EXIT_FAILURE;
}

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'apply pending schema migrations (--check: only report them)',
  details: [
    'Prints the migrations applied by this run ({ "applied": [...] } with --json); none when the schema is current.',
    'With --check nothing is changed: exit 0 when the schema is current, 1 listing the pending migrations',
    '({ "current", "pending", "applied", "newer" } with --json).',
  ].join('\n'),
  options: {
    check: { type: 'boolean', description: 'report pending migrations and exit 1 if there are any; change nothing' },
  },
  async run(input) {
    if (input.flags.check) return checkSchema(input.env, input.json);
    return withContainer(input, async (_container, applied) => ({
      data: { applied },
      text: applied.length ? `Applied ${applied.length} migration(s):\n${applied.map((m) => `  ${m}`).join('\n')}` : 'Schema is up to date; nothing to apply.',
    }));
  },
};
