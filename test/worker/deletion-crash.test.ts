import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { DELETION_LEASE_MS } from '../../src/services/lifecycle/deletion-service.js';
import { cliActor } from '../../src/services/access/actor.js';
import { startServe, type ServeProcess } from '../helpers/cli.js';
import { createTestEnv, testDialects, type TestDialect, type TestEnv } from '../helpers/test-env.js';

/**
 * The deletion's durability with real `./bin/workspace worker` processes (the built dist/): a worker
 * killed with SIGKILL in the middle of deleting an organisation, then another worker that finishes it.
 * The test process only seeds and reads the database; every deletion below is a worker's.
 */

const AUDIT_ROWS = 50_000;
const PROJECTS = 2_000;
const BATCH = 50;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000, everyMs = 10): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

const workers: ServeProcess[] = [];
const envs: TestEnv[] = [];

afterEach(async () => {
  for (const worker of workers.splice(0)) {
    if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
    await worker.exited;
  }
  await Promise.all(envs.splice(0).map((env) => env.close()));
});

async function startWorker(env: TestEnv): Promise<ServeProcess> {
  const worker = await startServe(
    {
      DATA_DIR: env.dataDir,
      ...(env.config.databaseUrl ? { DATABASE_URL: env.config.databaseUrl } : {}),
      LOG_LEVEL: 'info',
      DELETION_BATCH_SIZE: String(BATCH),
    },
    'worker',
  );
  workers.push(worker);
  return worker;
}

/** Rows of the organisation in every table with an `org_id`, from the database's catalog. */
async function rowsByTable(env: TestEnv, orgId: string): Promise<Record<string, number>> {
  const { db } = env.container.database;
  const tables =
    env.dialect === 'postgres'
      ? (await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.columns WHERE column_name = 'org_id' AND table_schema = current_schema()`.execute(db)).rows
      : (await sql<{ name: string }>`SELECT m.name AS name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND p.name = 'org_id'`.execute(db)).rows;
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    counts[name] = Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM ${sql.table(name)} WHERE org_id = ${orgId}`.execute(db)).rows[0]!.n);
  }
  return counts;
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** An organisation with many audit rows and projects, written with one statement each. */
async function seed(env: TestEnv, name: string) {
  const org = await env.createOrg(name);
  const { db } = env.container.database;
  const now = Date.now();
  await sql`INSERT INTO audit_log (id, org_id, occurred_at, actor_type, action, source, outcome)
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${AUDIT_ROWS})
    SELECT 'aud_bulk_' || ${org.id} || '_' || i, ${org.id}, CAST(${now} AS BIGINT) + i, 'system', 'project.created', 'system', 'success' FROM n`.execute(db);
  await sql`INSERT INTO projects (id, org_id, name, description, status, created_at, updated_at)
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${PROJECTS})
    SELECT 'prj_bulk_' || ${org.id} || '_' || i, ${org.id}, 'Project ' || i, NULL, 'active', CAST(${now} AS BIGINT), CAST(${now} AS BIGINT) FROM n`.execute(db);
  return org;
}

async function run(dialect: TestDialect) {
  const env = await createTestEnv(dialect);
  envs.push(env);
  const { db } = env.container.database;
  const doomed = await seed(env, 'Doomed');
  const other = await seed(env, 'Other');
  const before = await rowsByTable(env, doomed.id);
  expect(before.audit_log).toBeGreaterThanOrEqual(AUDIT_ROWS);
  const otherBefore = await rowsByTable(env, other.id);

  // Cancelled a month ago: its date has come.
  await env.container.services.lifecycle.cancel(cliActor(doomed.id));
  await db.updateTable('organizations').set({ deletion_at: Date.now() - 1000 }).where('id', '=', doomed.id).execute();
  const cancelled = await db.selectFrom('organizations').selectAll().where('id', '=', doomed.id).executeTakeFirstOrThrow();

  // Worker A begins, and dies by SIGKILL when some rows are gone but most remain.
  const first = await startWorker(env);
  const midway = await until('worker A to be part-way through the deletion', async () => {
    const counts = await rowsByTable(env, doomed.id);
    const left = total(counts);
    return left < total(before) - 5 * BATCH && counts.audit_log! > 0 ? counts : null;
  });
  first.child.kill('SIGKILL');
  await first.exited;
  const killedAt = Date.now();

  const atDeath = await db.selectFrom('organizations').selectAll().where('id', '=', doomed.id).executeTakeFirstOrThrow();
  expect(atDeath.state).toBe('deleting');
  expect(atDeath.lease_owner).not.toBeNull();
  expect(atDeath.deletion_started_at).not.toBeNull();
  const left = await rowsByTable(env, doomed.id);
  expect(total(left)).toBeGreaterThan(0);
  expect(total(left)).toBeLessThanOrEqual(total(midway));
  expect(await db.selectFrom('organization_tombstones').select('id').where('id', '=', doomed.id).executeTakeFirst()).toBeUndefined();
  // Its keys are refused already.
  expect((await env.request('GET', '/v1/projects', { key: doomed.ownerKey })).status).toBe(401);

  // Worker B finishes it: at once on SQLite (one worker: it releases the dead one's lease), after the lease on PostgreSQL.
  const second = await startWorker(env);
  await until('worker B to finish the deletion', async () => !(await db.selectFrom('organizations').select('id').where('id', '=', doomed.id).executeTakeFirst()), 60_000, 50);
  const finishedAfter = Date.now() - killedAt;
  if (dialect === 'postgres') expect(finishedAfter).toBeGreaterThanOrEqual(Number(atDeath.lease_expires_at) - killedAt - 1000);

  expect(Object.entries(await rowsByTable(env, doomed.id)).filter(([, n]) => n > 0)).toEqual([]);
  const tombstone = await db.selectFrom('organization_tombstones').selectAll().where('id', '=', doomed.id).executeTakeFirstOrThrow();
  expect(tombstone).toMatchObject({ id: doomed.id, created_at: cancelled.created_at, cancelled_at: cancelled.cancelled_at, deletion_at: cancelled.deletion_at });
  expect(await rowsByTable(env, other.id)).toEqual(otherBefore);
  expect((await env.request('GET', '/v1/projects', { key: other.ownerKey })).status).toBe(200);

  // B says it resumed a deletion begun before, and how much it removed. Its line reaches this process's pipe
  // after the commit the wait above saw, so it is waited for too (on a loaded machine it may trail by a while).
  type Line = { msg: string; resumed?: boolean; rows?: number; org_id?: string };
  const deletedLine = (l: Line) => l.msg.startsWith('organisation deleted') && l.org_id === doomed.id;
  await until('worker B to log the deletion', async () => second.lines.some((line) => deletedLine(JSON.parse(line) as Line)), 15_000, 20);
  const logged = second.lines.map((line) => JSON.parse(line) as Line);
  expect(logged.find((l) => l.msg === 'organisation deletion started' && l.org_id === doomed.id)).toMatchObject({ resumed: true });
  expect(logged.find(deletedLine)?.rows).toBe(total(left));
  return { left: total(left), before: total(before), finishedAfter };
}

describe.each(testDialects())('organisation deletion across a kill -9 (%s)', (dialect) => {
  it(
    'a worker killed mid-deletion leaves the organisation part-deleted and `deleting`; the next worker finishes it',
    async () => {
      const { left, before, finishedAfter } = await run(dialect);
      console.log(
        `[${dialect}] kill -9 with ${left} of ${before} rows left (batch ${BATCH}); the next worker finished ${finishedAfter} ms after the kill (lease ${DELETION_LEASE_MS} ms)`,
      );
    },
    120_000,
  );
});
