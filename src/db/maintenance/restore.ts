import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { errors } from '../../errors.js';
import { knownMigrations } from '../database.js';
import {
  fileStamp,
  fsyncDirectory,
  fsyncFile,
  integrityProblems,
  looksLikeSqlite,
  migrateOver,
  openSqliteExclusive,
  statusOver,
} from './sqlite-files.js';

export interface RestoreReport {
  /** The live database, now holding the backup's data. */
  file: string;
  restored_from: string;
  /** Where the database it replaced was kept (null when there was none). */
  replaced: string | null;
  /** Migrations applied to the restored data (a backup made by an older release). */
  migrated: string[];
  seconds: number;
}

function invalid(message: string): never {
  throw errors.refused('invalid_backup', message);
}

/**
 * Checks a backup and brings its schema up to this release, on a private copy beside the live file: the
 * backup itself is never changed, and a refused file leaves nothing behind.
 */
async function preparedCopy(backup: string, staging: string): Promise<string[]> {
  if (!looksLikeSqlite(backup)) invalid(`${backup} is not a SQLite database; restore takes a file written by \`workspace backup\``);
  fs.copyFileSync(backup, staging);
  let raw: BetterSqlite3.Database;
  try {
    raw = new BetterSqlite3(staging, { fileMustExist: true });
  } catch (err) {
    invalid(`${backup} cannot be opened as a database (${(err as Error).message})`);
  }
  try {
    const problems = integrityProblems(raw);
    if (problems) invalid(`${backup} failed PRAGMA integrity_check (${problems}); it is damaged, restore another backup`);
    const status = await statusOver(raw);
    const known = await knownMigrations('sqlite');
    if (status.applied.length === 0) invalid(`${backup} is a SQLite database but not one of this service's (it has no migrations)`);
    if (status.newer.length > 0) {
      invalid(
        `${backup} was written by a newer release (its schema has ${status.newer.join(', ')}, which this release does not know); ` +
          'restore it with that release or a later one',
      );
    }
    // Only a prefix of this release's list is a schema version this release knows how to move forward.
    if (status.applied.some((name, i) => known[i] !== name)) invalid(`${backup} has a schema this release does not know (${status.applied.join(', ')})`);
    const migrated = await migrateOver(raw, status);
    // One self-contained file (no -wal beside it) to move into place; `serve` switches it back to WAL on open.
    raw.pragma('journal_mode = DELETE');
    return migrated;
  } finally {
    raw.close();
  }
}

/**
 * `workspace restore FILE` (CONTRACT 12): replaces the embedded database with a backup. The live database
 * is held with an exclusive lock from the first step to the swap (refused while any process has it open;
 * see `openSqliteExclusive`), and the file it replaced is kept beside it as `workspace.db.before-restore-<time>`.
 */
export async function restoreSqlite(backupFile: string, liveFile: string, now = new Date()): Promise<RestoreReport> {
  const started = performance.now();
  const backup = path.resolve(backupFile);
  const live = path.resolve(liveFile);
  if (!fs.existsSync(backup) || !fs.statSync(backup).isFile()) invalid(`there is no backup file at ${backup}`);
  if (backup === live) invalid(`${backup} is the live database itself`);

  const hasLive = fs.existsSync(live);
  const lock = hasLive ? openSqliteExclusive(live, '`workspace restore`') : null;
  fs.mkdirSync(path.dirname(live), { recursive: true });
  const staging = `${live}.restoring-${process.pid}`;
  let replaced: string | null = null;
  try {
    const migrated = await preparedCopy(backup, staging);
    fsyncFile(staging);
    if (lock) {
      // The replaced database becomes one self-contained file too: its WAL (which may hold the last commits
      // of a process that was killed) is folded in before it is moved.
      lock.pragma('journal_mode = DELETE');
      replaced = `${live}.before-restore-${fileStamp(now)}`;
      fs.renameSync(live, replaced);
      // Whatever SQLite left beside it belongs to the replaced file, not to the one moved in next.
      for (const leftover of [`${live}-wal`, `${live}-shm`]) fs.rmSync(leftover, { force: true });
    }
    fs.renameSync(staging, live);
    fsyncDirectory(live);
    return { file: live, restored_from: backup, replaced, migrated, seconds: Math.round(performance.now() - started) / 1000 };
  } finally {
    fs.rmSync(staging, { force: true });
    lock?.close();
  }
}
