#!/usr/bin/env node
// `npm run bench:data` (issue 21): `workspace backup` under write load, and `workspace copy-to-postgres`, at size.
// Build first: `npm run build` (the bench runs bin/workspace).
//
// 1. A fresh DATA_DIR with one organisation holding --projects projects and --attempts delivery attempts (over
//    attempts/1000 deliveries), inserted with bulk SQL.
// 2. `workspace serve` on it; --writers concurrent clients create projects through the API without pause. Alternating
//    --rounds times: a window with no backup, then `workspace backup FILE` run while they write. Writes acknowledged per
//    second in each backup's run is divided by the rate in the window before it, which lasts as long (the ratio: 1.0 is
//    "writes did not notice"). Backup seconds are the command's own report.
// 3. serve stops; `workspace copy-to-postgres` into a fresh database on --pg-url: rows per second overall and for the
//    two big tables, and the process's peak RSS (its report; also read from /proc while it runs) over its RSS at start.
//
// Options: --projects N (100000)  --attempts N (1000000)  --writers N (8)  --rounds N (3)
//          --pg-url URL (default postgres://postgres@127.0.0.1:5432/postgres)  --keep
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'package.json'));
const Database = require('better-sqlite3');
const pg = require('pg');
const BIN = path.join(root, 'bin/workspace');

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, arg, i, all) => {
    if (arg.startsWith('--')) acc.push([arg.slice(2), all[i + 1] && !all[i + 1].startsWith('--') ? all[i + 1] : 'true']);
    return acc;
  }, []),
);
const PROJECTS = Number(args.projects ?? 100_000);
const ATTEMPTS = Number(args.attempts ?? 1_000_000);
const WRITERS = Number(args.writers ?? 8);
const ROUNDS = Number(args.rounds ?? 3);
const PG_URL = args['pg-url'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-data-bench-'));
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL')), DATA_DIR: path.join(dir, 'data'), METRICS_PORT: 'off', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '10000000' };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function cli(argv) {
  return JSON.parse(execFileSync(process.execPath, [BIN, ...argv, '--json'], { env, maxBuffer: 1 << 26 }).toString());
}

function seed() {
  const started = performance.now();
  const org = cli(['org', 'create', '--name', 'Bench', '--owner-email', 'owner@bench.example']);
  const raw = new Database(path.join(env.DATA_DIR, 'workspace.db'));
  const headers = JSON.stringify({ 'content-type': 'application/json', 'user-agent': 'WorkspaceService-Webhooks/1.0', 'x-service-event': 'project.created', 'x-service-signature': `sha256=${'ab'.repeat(32)}` });
  const id = org.organization.id;
  // Recent times: the retention job would otherwise prune the attempts while the bench runs.
  const now = Date.now();
  raw.exec('begin');
  raw.prepare(`with recursive n(i) as (select 0 union all select i + 1 from n where i < ?) insert into projects (id, org_id, name, description, status, created_at, updated_at) select printf('prj_%08d', i), ?, printf('Project %d', i), 'Made for the benchmark', 'active', ? - i, ? - i from n`).run(PROJECTS - 1, id, now, now);
  raw.prepare(`with recursive n(i) as (select 0 union all select i + 1 from n where i < ?) insert into deliveries (id, org_id, event_id, webhook_id, event_type, status, attempt_count, failure_count, created_at, updated_at) select printf('dlv_%05d', i), ?, printf('evt_%05d', i), 'wh_bench', 'project.created', 'delivered', 1000, 0, ? - i, ? - i from n`).run(Math.ceil(ATTEMPTS / 1000) - 1, id, now, now);
  raw.prepare(`with recursive n(i) as (select 0 union all select i + 1 from n where i < ?) insert into delivery_attempts (id, org_id, delivery_id, attempt_number, trigger, started_at, duration_ms, request_headers, response_status, response_headers, response_body, error, outcome) select printf('att_%08d', i), ?, printf('dlv_%05d', i / 1000), i % 1000 + 1, 'automatic', ? - i, 40 + i % 50, ?, 200, '{"content-type":"text/plain"}', 'ok', null, 'success' from n`).run(ATTEMPTS - 1, id, now, headers);
  raw.exec('commit');
  raw.close();
  const bytes = fs.statSync(path.join(env.DATA_DIR, 'workspace.db')).size;
  console.log(`seeded ${PROJECTS} projects, ${ATTEMPTS} attempts (${(bytes / 1048576).toFixed(0)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return org.api_key.key;
}

function startServe() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'serve'], { env: { ...env, PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      buf += chunk;
      for (const line of buf.split('\n')) {
        try {
          const entry = JSON.parse(line);
          if (entry.msg?.startsWith('ready')) resolve({ child, address: entry.address });
        } catch {
          // A partial line; the rest comes with the next chunk.
        }
      }
      buf = buf.slice(buf.lastIndexOf('\n') + 1);
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
}

function runBackup(file) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'backup', file, '--json'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`backup exited ${code}`))));
  });
}

async function backupUnderLoad(key) {
  const server = await startServe();
  let acked = 0;
  let running = true;
  const writers = Array.from({ length: WRITERS }, async (_, w) => {
    for (let i = 0; running; i++) {
      const res = await fetch(`${server.address}/v1/projects`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `w${w}-${i}` }),
      });
      await res.arrayBuffer();
      if (res.status === 201) acked++;
    }
  });
  await new Promise((r) => setTimeout(r, 5000)); // warm-up: JIT and caches
  const ratios = [];
  const seconds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const file = path.join(dir, `backup-${round}.db`);
    const b0 = acked;
    const t0 = performance.now();
    const report = await runBackup(file);
    const during = (acked - b0) / ((performance.now() - t0) / 1000);
    const windowMs = performance.now() - t0;
    const a0 = acked;
    const t1 = performance.now();
    await new Promise((r) => setTimeout(r, windowMs));
    const without = (acked - a0) / ((performance.now() - t1) / 1000);
    ratios.push(during / without);
    seconds.push(report.seconds);
    console.log(`round ${round + 1}: backup ${report.seconds} s (${(report.bytes / 1048576).toFixed(0)} MB, ${report.rows} rows); writes/s during ${during.toFixed(0)}, without ${without.toFixed(0)}, ratio ${(during / without).toFixed(2)}`);
    fs.rmSync(file);
  }
  running = false;
  await Promise.all(writers);
  server.child.kill('SIGTERM');
  await new Promise((r) => server.child.on('exit', r));
  console.log(`backup: median ${median(seconds)} s; write throughput during backup / without: median ${median(ratios).toFixed(2)} (${WRITERS} writers)`);
}

async function copy() {
  const name = `bench_copy_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  try {
    const child = spawn(process.execPath, [BIN, 'copy-to-postgres', url.toString(), '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
    child.stderr.setEncoding('utf8').on('data', () => {});
    let hwm = 0;
    const sampler = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) hwm = Math.max(hwm, Number(m[1]) * 1024);
      } catch {
        // The process has just exited.
      }
    }, 100);
    const code = await new Promise((r) => child.on('exit', r));
    clearInterval(sampler);
    if (code !== 0) throw new Error(`copy-to-postgres exited ${code}`);
    const report = JSON.parse(out);
    const t = (name) => report.tables.find((x) => x.table === name);
    const mb = (b) => (b / 1048576).toFixed(0);
    console.log(`copy: ${report.rows} rows in ${report.seconds} s = ${report.rows_per_second} rows/s; projects ${Math.round(t('projects').rows / t('projects').seconds)} rows/s, delivery_attempts ${Math.round(t('delivery_attempts').rows / t('delivery_attempts').seconds)} rows/s`);
    console.log(`copy: peak RSS ${mb(report.memory.peak_rss_bytes)} MB (VmHWM sampled ${mb(hwm)} MB), ${mb(report.memory.peak_rss_bytes - report.memory.rss_start_bytes)} MB above its RSS at start (${mb(report.memory.rss_start_bytes)} MB)`);
  } finally {
    if (!args.keep) await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

try {
  const key = seed();
  await backupUnderLoad(key);
  await copy();
} finally {
  if (!args.keep) fs.rmSync(dir, { recursive: true, force: true });
}
