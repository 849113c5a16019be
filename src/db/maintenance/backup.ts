import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { errors } from '../../errors.js';
import { countRows, fsyncDirectory, fsyncFile, integrityProblems, requireDatabaseFile } from './sqlite-files.js';

export interface BackupReport {
  file: string;
  bytes: number;
  tables: number;
  rows: number;
  seconds: number;
}

/** What SQLite keeps beside a WAL database; a backup must not land on any of them. */
function liveFiles(source: string): string[] {
  return [source, `${source}-wal`, `${source}-shm`, `${source}-journal`];
}

/**
 * `workspace backup FILE` (CONTRACT 12): a consistent copy of the embedded database while it serves.
 *
 * SQLite's online backup API copies the pages of one read snapshot. It runs as one step (all pages at
 * once) because a stepped backup restarts whenever another process commits between steps, and under
 * steady writes would never finish. In WAL mode that read snapshot blocks no writer: `serve` goes on
 * committing to the WAL while the copy is made (the WAL just cannot be checkpointed past it meanwhile).
 *
 * The copy is written under a temporary name beside FILE, switched to the rollback journal so it is one
 * self-contained file, checked with `PRAGMA integrity_check`, flushed, and only then renamed to FILE: a
 * FILE that exists is always a whole, checked backup.
 */
export async function backupSqlite(source: string, target: string): Promise<BackupReport> {
  const started = performance.now();
  const file = path.resolve(target);
  requireDatabaseFile(source);
  if (liveFiles(path.resolve(source)).includes(file)) {
    throw errors.refused('invalid_target', `${file} is the live database itself; write the backup to another file`);
  }
  if (!fs.existsSync(path.dirname(file))) throw errors.refused('invalid_target', `the directory ${path.dirname(file)} does not exist`);
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) throw errors.refused('invalid_target', `${file} is a directory; name the backup file`);

  const partial = `${file}.partial-${process.pid}`;
  const db = new BetterSqlite3(source, { fileMustExist: true, timeout: 5000 });
  try {
    await db.backup(partial, { progress: () => 0x7fffffff });
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw err;
  } finally {
    db.close();
  }

  let counts: { tables: number; rows: number };
  try {
    const copy = new BetterSqlite3(partial, { fileMustExist: true });
    try {
      copy.pragma('journal_mode = DELETE');
      const problems = integrityProblems(copy);
      if (problems) throw new Error(`the copy failed PRAGMA integrity_check (${problems}); the database itself may be damaged`);
      counts = countRows(copy);
    } finally {
      copy.close();
    }
    fsyncFile(partial);
    fs.renameSync(partial, file);
    fsyncDirectory(file);
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw err;
  }
  return {
    file,
    bytes: fs.statSync(file).size,
    tables: counts.tables,
    rows: counts.rows,
    seconds: Math.round(performance.now() - started) / 1000,
  };
}
