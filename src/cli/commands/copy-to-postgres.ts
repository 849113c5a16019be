import { loadConfig } from '../../config.js';
import type { Command } from '../command.js';
import { writeErr } from '../output.js';

export const copyToPostgresCommand: Command = {
  name: 'copy-to-postgres',
  summary: 'copy every row of the embedded database into an empty PostgreSQL database, then verify',
  positionals: [{ name: 'URL', description: 'the target, postgres://user:password@host:5432/database' }],
  details: [
    'Reads DATA_DIR\'s embedded database (stop serve and worker first: a database in use is refused) and migrates',
    'URL to this release. Rows go in key order and bounded batches inside one transaction, sequences are moved',
    'past them, and every table is verified (row count and a checksum of its ids) before it commits. An',
    'interrupted copy leaves no rows, so running it again starts over. Progress on stderr; with --json the',
    'report: { "tables": [{ "table", "rows", "seconds", "checksum" }], "rows", "seconds", "memory", ... }.',
    'Afterwards: DATABASE_URL=URL workspace serve. There is no way back to SQLite (docs/deployment.md).',
  ].join('\n'),
  async run(input) {
    const config = loadConfig(input.env);
    const [{ sqliteFilePath }, { copyToPostgres }] = await Promise.all([
      import('../../db/database.js'),
      import('../../db/maintenance/copy-to-postgres.js'),
    ]);
    const source = sqliteFilePath({ dataDir: config.dataDir });
    writeErr(`copy-to-postgres: from ${source}`);
    const report = await copyToPostgres(source, input.args[0]!, { progress: (line) => writeErr(`copy-to-postgres: ${line}`) });
    return {
      data: report,
      text:
        `Copied ${report.rows.toLocaleString('en-US')} rows in ${report.tables.length} tables to ${report.target} in ${report.seconds.toFixed(1)} s ` +
        `(${report.rows_per_second.toLocaleString('en-US')} rows/s); every table verified.\n` +
        `Next: stop using DATA_DIR and start with DATABASE_URL=${report.target} workspace serve (and worker).`,
    };
  },
};
