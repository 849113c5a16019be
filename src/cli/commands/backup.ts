import { loadConfig, type Config } from '../../config.js';
import { errors } from '../../errors.js';
import type { Command } from '../command.js';

/** The embedded database's file; a PostgreSQL deployment is refused with the tool that does the job there. */
async function embeddedFile(config: Config, postgresTool: string): Promise<string> {
  if (config.databaseUrl) {
    throw errors.refused(
      'not_embedded',
      `DATABASE_URL is set: this deployment runs on PostgreSQL, whose own tools do this (${postgresTool}). ` +
        'This command works on the embedded database in DATA_DIR',
    );
  }
  const { sqliteFilePath } = await import('../../db/database.js');
  return sqliteFilePath({ dataDir: config.dataDir });
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export const backupCommand: Command = {
  name: 'backup',
  summary: 'write a consistent copy of the embedded database to FILE while it serves',
  positionals: [{ name: 'FILE', description: 'where to write the backup (replaced atomically if it exists)' }],
  jsonLine: true,
  details: [
    'Writes are not paused: the copy is one read snapshot, taken with SQLite\'s online backup API. It is written',
    'under a temporary name beside FILE, checked with PRAGMA integrity_check and renamed to FILE when whole.',
    'With --json, one line: { "file", "bytes", "tables", "rows", "seconds" }. On PostgreSQL use pg_dump.',
    'A backup holds key, session and password hashes and the webhook signing secrets: keep it like the database.',
  ].join('\n'),
  async run(input) {
    const source = await embeddedFile(loadConfig(input.env), 'pg_dump, or your provider\'s snapshots');
    const { backupSqlite } = await import('../../db/maintenance/backup.js');
    const report = await backupSqlite(source, input.args[0]!);
    return {
      data: report,
      text: `Backed up ${report.tables} tables, ${report.rows.toLocaleString('en-US')} rows (${megabytes(report.bytes)}) to ${report.file} in ${report.seconds.toFixed(1)} s; integrity check passed.`,
    };
  },
};

export const restoreCommand: Command = {
  name: 'restore',
  summary: 'replace the embedded database with a backup (every process using it must be stopped)',
  positionals: [{ name: 'FILE', description: 'a file written by `workspace backup`' }],
  details: [
    'Refused while any process has the database open (SQLite grants the exclusive lock only when none has).',
    'The file is checked (integrity, a schema this release knows) and migrated if an older release wrote it;',
    'the database it replaces is kept beside it as workspace.db.before-restore-<time>. The file itself is not changed.',
    'With --json: { "file", "restored_from", "replaced", "migrated", "seconds" }.',
  ].join('\n'),
  async run(input) {
    const live = await embeddedFile(loadConfig(input.env), 'pg_restore or psql');
    const { restoreSqlite } = await import('../../db/maintenance/restore.js');
    const report = await restoreSqlite(input.args[0]!, live);
    const lines = [`Restored ${report.restored_from} into ${report.file} in ${report.seconds.toFixed(1)} s.`];
    if (report.replaced) lines.push(`The database it replaced is kept as ${report.replaced}.`);
    if (report.migrated.length) lines.push(`Migrated to this release: ${report.migrated.join(', ')}.`);
    return { data: report, text: lines.join('\n') };
  },
};
