import fs from 'node:fs';
import { CompiledQuery } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { cliActor } from '../../src/services/access/actor.js';
import { startServe, type ServeProcess } from '../helpers/cli.js';
import { createTestEnv, testDialects, type TestEnv } from '../helpers/test-env.js';

/**
 * DASHBOARD 9 / issue 10: an export is built streaming, so the worker's memory stays flat in the size of the
 * data. 100,000 projects are seeded with bulk SQL, a real `./bin/workspace worker` (the built dist/) builds
 * the export, and its peak RSS (VmHWM from /proc) after the build is compared with the same figure when it
 * had started and sat idle: the difference must stay under 100 MB.
 */

const PROJECTS = Number(process.env.EXPORT_MEMORY_PROJECTS ?? 100_000);
const LIMIT_MB = 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** VmHWM (peak resident set) and VmRSS of a process, in MB. */
function memoryOf(pid: number): { peakMb: number; rssMb: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { peakMb: kb('VmHWM') / 1024, rssMb: kb('VmRSS') / 1024 };
}

const envs: TestEnv[] = [];
const workers: ServeProcess[] = [];
afterAll(async () => {
  for (const worker of workers) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
  await Promise.all(envs.map((env) => env.close()));
});

describe.each(testDialects())('export memory (%s)', (dialect) => {
  it(`builds an export of ${grouped(PROJECTS)} projects in a worker process whose peak RSS grows by less than ${LIMIT_MB} MB`, async () => {
    const env = await createTestEnv(dialect);
    envs.push(env);
    const { db } = env.container.database;
    const org = await env.createOrg('Big Co');

    const seedStart = Date.now();
    const base = Date.UTC(2026, 0, 1);
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < PROJECTS; i += 1000) {
        const rows = Array.from({ length: Math.min(1000, PROJECTS - i) }, (_, j) => {
          const n = i + j;
          return {
            id: newId('proj'),
            org_id: org.id,
            name: `Project ${n} — ${'x'.repeat(n % 40)}`,
            description: n % 3 === 0 ? null : `Description of project ${n}, with some text to make the rows realistic.`,
            status: (['active', 'draft', 'archived'] as const)[n % 3]!,
            created_at: base + n,
            updated_at: base + n,
          };
        });
        await trx.insertInto('projects').values(rows).execute();
      }
    });
    // Statistics as autovacuum would have gathered them on a table that grew over time (PostgreSQL).
    await env.container.database.db.executeQuery(CompiledQuery.raw('analyze projects'));
    const seedSeconds = (Date.now() - seedStart) / 1000;

    const worker = await startServe(
      { DATA_DIR: env.dataDir, ...(env.config.databaseUrl ? { DATABASE_URL: env.config.databaseUrl } : {}), LOG_LEVEL: 'info' },
      'worker',
    );
    workers.push(worker);
    const pid = worker.child.pid!;
    await sleep(2000);
    const idle = memoryOf(pid);

    const started = Date.now();
    const requested = await env.container.services.exports.request(cliActor(org.id));
    let peak = idle.peakMb;
    let row;
    for (;;) {
      peak = Math.max(peak, memoryOf(pid).peakMb);
      row = await db.selectFrom('exports').selectAll().where('id', '=', requested.id).executeTakeFirstOrThrow();
      if (row.status === 'ready' || row.status === 'failed') break;
      if (Date.now() - started > 90_000) throw new Error(`export still ${row.status} after 90 s`);
      await sleep(100);
    }
    const seconds = (Date.now() - started) / 1000;
    const after = memoryOf(pid);
    peak = Math.max(peak, after.peakMb);
    expect(row.status).toBe('ready');
    expect(JSON.parse(row.counts!).projects).toBe(PROJECTS);

    const growth = peak - idle.peakMb;
    console.info(
      `[${dialect}] export of ${PROJECTS} projects: seeded in ${seedSeconds.toFixed(1)} s; ready in ${seconds.toFixed(1)} s; ZIP ${(row.size_bytes! / 1048576).toFixed(1)} MB; ` +
        `worker VmHWM idle ${idle.peakMb.toFixed(1)} MB (RSS ${idle.rssMb.toFixed(1)}), after ${peak.toFixed(1)} MB (RSS ${after.rssMb.toFixed(1)}): +${growth.toFixed(1)} MB`,
    );
    expect(growth).toBeLessThan(LIMIT_MB);

    // The file is whole: its chunks add up to the size recorded.
    const chunks = await db.selectFrom('export_chunks').select(['position']).where('export_id', '=', requested.id).orderBy('position').execute();
    expect(chunks.map((c) => c.position)).toEqual(chunks.map((_, i) => i));
    worker.child.kill('SIGTERM');
    await worker.exited;
  }, 180_000);
});

function grouped(n: number): string {
  return n.toLocaleString('en-US');
}
