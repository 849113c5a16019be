import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Migrator, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { migrationProvider } from '../../src/db/migrations/index.js';
import { createPgDatabase, testDialects } from '../helpers/test-env.js';

/** Migration 006 keeps the CLI stand-in's workflows and tasks: every row survives with the new columns filled. */
describe.each(testDialects())('migration 006 keeps stand-in workflows and tasks (%s)', (dialect) => {
  it('adds steps, version, status and kind without losing a row', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-mig006-'));
    const pgDb = dialect === 'postgres' ? await createPgDatabase() : null;
    const database = openDatabase({ databaseUrl: pgDb?.url ?? null, dataDir: dir });
    try {
      const migrator = new Migrator({ db: database.db, provider: migrationProvider(database.dialect) });
      expect((await migrator.migrateTo('005_delivery_history')).error).toBeUndefined();
      const t = Date.UTC(2026, 10, 20, 10);
      await sql`INSERT INTO organizations (id, name, created_at, updated_at) VALUES ('org_a', 'A', ${t}, ${t})`.execute(database.db);
      await sql`INSERT INTO projects (id, org_id, name, description, status, created_at, updated_at) VALUES ('proj_a', 'org_a', 'P', NULL, 'active', ${t}, ${t})`.execute(database.db);
      for (const [id, status] of [['wf_1', 'completed'], ['wf_2', 'failed'], ['wf_3', 'pending']]) {
        await sql`INSERT INTO workflows (id, org_id, project_id, name, status, created_at, updated_at) VALUES (${id}, 'org_a', 'proj_a', ${`Flow ${id}`}, ${status}, ${t}, ${t})`.execute(database.db);
      }
      await sql`INSERT INTO tasks (id, org_id, project_id, workflow_id, title, assignee_id, created_at, updated_at) VALUES ('task_1', 'org_a', 'proj_a', 'wf_1', 'Review', 'user_x', ${t}, ${t})`.execute(database.db);
      await sql`INSERT INTO tasks (id, org_id, project_id, workflow_id, title, assignee_id, created_at, updated_at) VALUES ('task_2', 'org_a', 'proj_a', NULL, 'Loose', NULL, ${t}, ${t})`.execute(database.db);

      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      const workflows = await database.db.selectFrom('workflows').selectAll().orderBy('id').execute();
      expect(workflows.map((w) => [w.id, w.name, w.steps, Number(w.version), w.description])).toEqual([
        ['wf_1', 'Flow wf_1', '[]', 1, null],
        ['wf_2', 'Flow wf_2', '[]', 1, null],
        ['wf_3', 'Flow wf_3', '[]', 1, null],
      ]);
      const tasks = await database.db.selectFrom('tasks').selectAll().orderBy('id').execute();
      expect(tasks.map((x) => [x.id, x.title, x.workflow_id, x.assignee_id, x.status, x.kind, x.run_id, x.decision])).toEqual([
        ['task_1', 'Review', 'wf_1', 'user_x', 'open', 'todo', null, null],
        ['task_2', 'Loose', null, null, 'open', 'todo', null, null],
      ]);
      expect(await database.db.selectFrom('workflow_runs').selectAll().execute()).toEqual([]);
    } finally {
      await database.close();
      await pgDb?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
