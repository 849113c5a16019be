import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Migrator, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { migrationProvider } from '../../src/db/migrations/index.js';
import { createPgDatabase, testDialects } from '../helpers/test-env.js';

/** Migration 007: organisations that existed before the lifecycle are active, with no dates and no Stripe link. */
describe.each(testDialects())('migration 007 makes existing organisations active (%s)', (dialect) => {
  it('keeps every organisation, active, without a deletion date', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-mig007-'));
    const pgDb = dialect === 'postgres' ? await createPgDatabase() : null;
    const database = openDatabase({ databaseUrl: pgDb?.url ?? null, dataDir: dir });
    try {
      const migrator = new Migrator({ db: database.db, provider: migrationProvider(database.dialect) });
      expect((await migrator.migrateTo('006_workflow_runs')).error).toBeUndefined();
      const t = Date.UTC(2026, 10, 20, 10);
      for (const id of ['org_a', 'org_b']) {
        await sql`INSERT INTO organizations (id, name, created_at, updated_at) VALUES (${id}, ${id.toUpperCase()}, ${t}, ${t})`.execute(database.db);
      }

      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      const rows = await database.db.selectFrom('organizations').selectAll().orderBy('id').execute();
      expect(rows.map((o) => [o.id, o.name, o.state, o.cancelled_at, o.deletion_at, o.stripe_customer_id, o.lease_owner])).toEqual([
        ['org_a', 'ORG_A', 'active', null, null, null, null],
        ['org_b', 'ORG_B', 'active', null, null, null, null],
      ]);
      for (const table of ['organization_tombstones', 'stripe_events', 'exports', 'export_chunks'] as const) {
        expect(await database.db.selectFrom(table).selectAll().execute()).toEqual([]);
      }
    } finally {
      await database.close();
      await pgDb?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
