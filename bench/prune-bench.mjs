#!/usr/bin/env node
// `npm run bench:prune`: does retention pruning stall the API's writes? (issue 31; build first: `npm run build`)
//
// One database is seeded with --rows delivered deliveries (one attempt each) finished ten days ago, then
// `./bin/workspace serve` runs on it twice, in alternation, --runs times each:
//   baseline  WEBHOOK_DELIVERED_RETENTION=3650d: nothing is due, so the worker prunes nothing;
//   pruning   the default 7d: every seeded row is due, and the worker starts pruning 5 s after start.
// In each run an open-loop client sends POST /v1/projects at --rate per second for --seconds, starting once
// pruning has begun (6 s after ready), and the p50 and p99 of the answers are taken. The figure is the median
// over runs of pruning p99 / baseline p99 (target: at most 2). Between runs the pruned rows are put back
// (the pruning run deletes some of them), so each pruning run starts with --rows due.
//
// Options: --rows N (1000000), --rate N (100), --seconds S (20), --runs N (2), --dialect sqlite|postgres,
//          --root DIR (the built tree to measure; another release's, to compare its pruning).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { Agent, request } from 'undici';
import pg from 'pg';
import { freshPgDatabase } from './pg-database.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => (a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1] && !all[i + 1].startsWith('--') ? all[i + 1] : 'true']] : pairs), []),
);
const rows = Number(args.rows ?? 1_000_000);
const rate = Number(args.rate ?? 100);
const seconds = Number(args.seconds ?? 20);
const runs = Number(args.runs ?? 2);
const dialect = args.dialect ?? 'sqlite';
const root = path.resolve(args.root ?? path.join(here, '..'));
const bin = path.join(root, 'bin/workspace');
const TEN_DAYS = 10 * 86_400_000;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-prune-bench-'));
const pgDb = dialect === 'postgres' ? await freshPgDatabase(process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', `prune_bench_${process.pid}`) : null;
const baseEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'info', METRICS_PORT: 'off', PORT: '0', RATE_LIMIT_PER_MINUTE: '10000000', ...(pgDb ? { DATABASE_URL: pgDb.url } : {}) };

function cli(argv) {
  return JSON.parse(execFileSync(process.execPath, [bin, ...argv, '--json'], { env: baseEnv, encoding: 'utf8' }));
}

const created = cli(['org', 'create', '--name', 'Prune bench', '--owner-email', 'prune@example.com']);
const key = created.api_key.key;
const orgId = created.organization.id;

/** Seeds `n` delivered deliveries and their attempts, finished ten days ago, as one set of ids (dlv_bench_<i>). */
async function seed(n) {
  const old = Date.now() - TEN_DAYS;
  const started = performance.now();
  if (pgDb) {
    const client = new pg.Client({ connectionString: pgDb.url });
    await client.connect();
    await client.query(`insert into webhooks (id, org_id, url, events, secret, created_at) values ('wh_bench', $1, 'https://hooks.example.com/bench', '["workflow.failed"]', 'whsec_benchbenchbenchbench', $2) on conflict do nothing`, [orgId, old]);
    await client.query(`insert into events (id, org_id, type, body, occurred_at) values ('evt_bench', $1, 'project.created', '{}', $2) on conflict do nothing`, [orgId, old]);
    await client.query(
      `insert into deliveries (id, org_id, event_id, webhook_id, event_type, status, attempt_count, failure_count, created_at, updated_at)
       select 'dlv_bench_' || i, $1, 'evt_bench', 'wh_bench', 'project.created', 'delivered', 1, 0, $2, $2 from generate_series(1, $3) as i
       on conflict (id) do nothing`,
      [orgId, old, n],
    );
    await client.query(
      `insert into delivery_attempts (id, org_id, delivery_id, attempt_number, trigger, started_at, duration_ms, request_headers, response_status, outcome)
       select 'att_bench_' || i, $1, 'dlv_bench_' || i, 1, 'automatic', $2, 12, '{}', 200, 'success' from generate_series(1, $3) as i
       where not exists (select 1 from delivery_attempts a where a.id = 'att_bench_' || i)`,
      [orgId, old, n],
    );
    // Settled before measuring: otherwise autovacuum and the checkpoint of the seed's WAL run during the
    // runs and slow every statement (p99 of creates 150-450 ms, batches of 100 at 80 ms instead of 6).
    await client.query('vacuum analyze deliveries');
    await client.query('vacuum analyze delivery_attempts');
    await client.query('checkpoint');
    await client.end();
  } else {
    const Database = createRequire(path.join(root, 'package.json'))('better-sqlite3');
    const db = new Database(path.join(dataDir, 'workspace.db'));
    db.pragma('journal_mode = WAL');
    db.prepare(`insert or ignore into webhooks (id, org_id, url, events, secret, created_at) values ('wh_bench', ?, 'https://hooks.example.com/bench', '["workflow.failed"]', 'whsec_benchbenchbenchbench', ?)`).run(orgId, old);
    db.prepare(`insert or ignore into events (id, org_id, type, body, occurred_at) values ('evt_bench', ?, 'project.created', '{}', ?)`).run(orgId, old);
    db.prepare(
      `with recursive n(i) as (select 1 union all select i + 1 from n where i < ?)
       insert or ignore into deliveries (id, org_id, event_id, webhook_id, event_type, status, attempt_count, failure_count, created_at, updated_at)
       select 'dlv_bench_' || i, ?, 'evt_bench', 'wh_bench', 'project.created', 'delivered', 1, 0, ?, ? from n`,
    ).run(n, orgId, old, old);
    db.prepare(
      `with recursive n(i) as (select 1 union all select i + 1 from n where i < ?)
       insert or ignore into delivery_attempts (id, org_id, delivery_id, attempt_number, trigger, started_at, duration_ms, request_headers, response_status, outcome)
       select 'att_bench_' || i, ?, 'dlv_bench_' || i, 1, 'automatic', ?, 12, '{}', 200, 'success' from n`,
    ).run(n, orgId, old);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
  }
  return performance.now() - started;
}

/** How many seeded deliveries are left. */
async function remaining() {
  if (pgDb) {
    const client = new pg.Client({ connectionString: pgDb.url });
    await client.connect();
    const { rows: [row] } = await client.query(`select count(*)::int as n from deliveries where id like 'dlv_bench_%'`);
    await client.end();
    return row.n;
  }
  const Database = createRequire(path.join(root, 'package.json'))('better-sqlite3');
  const db = new Database(path.join(dataDir, 'workspace.db'), { readonly: true });
  const n = db.prepare(`select count(*) as n from deliveries where id like 'dlv_bench_%'`).get().n;
  db.close();
  return n;
}

function startServe(env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'serve'], { env: { ...baseEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const lines = out.split('\n');
      out = lines.pop();
      for (const line of lines) {
        let entry;
        try {
          entry = JSON.parse(line);
        } catch {
          continue;
        }
        if (entry.msg?.startsWith('ready')) resolve({ child, address: entry.address });
      }
    });
    child.stderr.on('data', (d) => process.stderr.write(d));
    child.on('exit', (code) => reject(new Error(`serve exited (${code}) before it was ready`)));
  });
}

const stop = (child) => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGTERM'))));

/** Open loop: one POST every 1/rate s whatever the answers do; the latency of each, in ms. */
async function load(address) {
  const agent = new Agent({ connections: 64 });
  const latencies = [];
  const pending = [];
  const interval = 1000 / rate;
  const start = performance.now();
  let errors = 0;
  for (let i = 0; i < rate * seconds; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      request(`${address}/v1/projects`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `P ${i}` }),
      }).then(
        async (res) => {
          await res.body.dump();
          if (res.statusCode !== 201) errors++;
          // From when it was due, so a stalled client or server cannot hide the wait (no coordinated omission).
          latencies.push(performance.now() - due);
        },
        () => errors++,
      ),
    );
  }
  await Promise.all(pending);
  await agent.close();
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { p50: at(0.5), p99: at(0.99), max: latencies.at(-1), errors };
}

async function run(kind) {
  const serve = await startServe(kind === 'baseline' ? { WEBHOOK_DELIVERED_RETENTION: '3650d' } : {});
  // The worker's first prune runs 5 s after start.
  await new Promise((r) => setTimeout(r, 6000));
  const result = await load(serve.address);
  await stop(serve.child);
  return { kind, ...result, pruned: rows - (await remaining()) };
}

const fmt = (ms) => `${ms.toFixed(1)} ms`;
try {
  console.log(`seeding ${rows.toLocaleString('en-US')} delivered deliveries due for pruning (${dialect})...`);
  console.log(`  seeded in ${((await seed(rows)) / 1000).toFixed(1)} s`);
  const ratios = [];
  for (let i = 0; i < runs; i++) {
    const base = await run('baseline');
    const pruning = await run('pruning');
    ratios.push(pruning.p99 / base.p99);
    for (const r of [base, pruning]) {
      console.log(`  ${r.kind.padEnd(8)} p50 ${fmt(r.p50)}  p99 ${fmt(r.p99)}  max ${fmt(r.max)}  errors ${r.errors}  rows pruned ${r.pruned.toLocaleString('en-US')}`);
    }
    const back = await seed(rows);
    console.log(`  pruned rows put back in ${(back / 1000).toFixed(1)} s`);
  }
  ratios.sort((a, b) => a - b);
  console.log(`p99 with ${rows.toLocaleString('en-US')} rows due / p99 with none, median of ${runs}: ${ratios[Math.floor(ratios.length / 2)].toFixed(2)} (${ratios.map((r) => r.toFixed(2)).join(', ')}; target at most 2)`);
} finally {
  await pgDb?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
