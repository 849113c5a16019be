import type { DirectSqlite } from './executor.js';

/**
 * SQLite's change check for the principal cache (migration 008), on the read-only connection and
 * synchronous, as it runs before every authenticated request. Across organisations by nature: one counter
 * covers the whole database.
 */
export interface AuthChangesRepository {
  /**
   * `PRAGMA data_version` of the read connection: it moves whenever any other connection (this process's
   * writer, the CLI, another process on the file) has committed since the last call, and reads no table.
   */
  dataVersion(): number;
  /** The counter the triggers bump on every change that affects authentication. */
  version(): number;
  /** True when nothing has committed to the file since the previous call (DirectSqlite.unchangedSinceLastAsked). */
  unchangedSinceLastAsked(): boolean;
}

export function authChangesRepository(direct: DirectSqlite): AuthChangesRepository {
  function single(sqlText: string, column: string): number {
    const rows = direct.read(sqlText, []) as Record<string, unknown>[] | undefined;
    const value = rows?.[0]?.[column];
    if (typeof value !== 'number') throw new Error(`${sqlText} returned no number`);
    return value;
  }
  return {
    dataVersion: () => single('PRAGMA data_version', 'data_version'),
    version: () => single('SELECT version FROM auth_changes WHERE id = 1', 'version'),
    unchangedSinceLastAsked: () => direct.unchangedSinceLastAsked(),
  };
}
