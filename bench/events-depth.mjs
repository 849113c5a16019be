#!/usr/bin/env node
// `npm run bench:events`: GET /v1/events with a million events (issue 30). Seeds 1,000,000 events of one
// organisation in bulk, walks the list once to the 1,000th page of 100, then measures with autocannon the first
// page against page 1,000, alternating them round after round on the same server, and prints page 1,000 as a
// ratio of page 1 (req/s and latency). A keyset walk makes the cost of a page flat: the target is 0.8 or better.
//
// Options: --database-url URL (PostgreSQL; a fresh database is created and dropped), --events N (default
// 1000000), --rounds N (default 3), --duration S (default 5), --connections N (default 50).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { freshPgDatabase } from './pg-database.mjs';
import { builtModule } from './built.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : fallback;
};
const opts = {
  databaseUrl: arg('database-url', null),
  events: Number(arg('events', 1_000_000)),
  rounds: Number(arg('rounds', 3)),
  duration: Number(arg('duration', 5)),
  connections: Number(arg('connections', 50)),
};
const { loadConfig } = await import(path.join(root, 'dist/config.js'));
const { createContainer } = await import(path.join(root, 'dist/container.js'));
const { cliActor } = await builtModule(path.join(root, 'dist'), 'actor');

const runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const dataDir = path.join(root, '.bench-tmp', `events-${runId}`);
fs.mkdirSync(dataDir, { recursive: true });
let databaseUrl = '';
let drop = async () => {};
if (opts.databaseUrl) {
  const fresh = await freshPgDatabase(opts.databaseUrl, `ws_bench_events_${runId}`);
  databaseUrl = fresh.url;
  drop = fresh.drop;
}
const env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', RATE_LIMIT_PER_MINUTE: '100000000', REDIS_URL: '' };
let server = null;

try {
  const started = Date.now();
  const container = await createContainer(loadConfig({ ...process.env, ...env }), { migrate: true });
  const org = await container.services.admin.createOrganization({ name: 'Events Bench', ownerEmail: 'events@example.com' });
  const orgId = org.organization.id;
  const { db } = container.database;
  const now = Date.now();
  // One statement: the ids and bodies are made by the database (recordEvent's envelope, a small data object).
  const body = (i) => sql`'{"event":"project.updated","timestamp":"' || ${new Date(now).toISOString()} || '","data":{"project_id":"proj_bench","n":' || ${i} || '}}'`;
  if (databaseUrl) {
    await sql`insert into events (id, org_id, type, body, occurred_at) select 'evt_bench' || i, ${orgId}, 'project.updated', ${body(sql`i`)}, ${now} from generate_series(1, ${opts.events}) as i`.execute(db);
    await sql`analyze events`.execute(db);
  } else {
    await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${opts.events}) insert into events (id, org_id, type, body, occurred_at) select 'evt_bench' || i, ${orgId}, 'project.updated', ${body(sql`i`)}, ${now} from n`.execute(db);
  }
  // The cursor of page 1,000, found as a client would: following next_cursor.
  let cursor;
  for (let page = 1; page < 1000; page++) cursor = (await container.services.events.list(cliActor(orgId), {}, { limit: 100, cursor })).nextCursor;
  const key = org.api_key.key;
  await container.close();
  console.log(`seeded ${opts.events} events (${databaseUrl ? 'postgres' : 'sqlite'}) in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  server = spawn(process.execPath, [path.join(here, 'serve-bench.mjs')], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    server.on('exit', (code) => reject(new Error(`serve-bench exited with ${code}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${key}` };
  const pages = { first: '/v1/events?limit=100', deep: `/v1/events?limit=100&cursor=${encodeURIComponent(cursor)}` };
  for (const p of Object.values(pages)) {
    const res = await fetch(url + p, { headers });
    const json = await res.json();
    if (res.status !== 200 || json.data.length !== 100) throw new Error(`${p} answered ${res.status} with ${json.data?.length} events`);
  }
  const measure = async (p, seconds) => {
    const r = await autocannon({ url: url + p, connections: opts.connections, duration: seconds, headers });
    return { rps: r.requests.average, p50: r.latency.p50, mean: r.latency.average };
  };
  for (const p of Object.values(pages)) await measure(p, 2); // warm both paths
  const rounds = [];
  for (let round = 1; round <= opts.rounds; round++) {
    const first = await measure(pages.first, opts.duration);
    const deep = await measure(pages.deep, opts.duration);
    rounds.push({ first, deep, ratio: deep.rps / first.rps, latency: deep.mean / first.mean });
    console.log(`round ${round}: page 1 ${first.rps.toFixed(0)} req/s (mean ${first.mean.toFixed(2)} ms), page 1,000 ${deep.rps.toFixed(0)} req/s (mean ${deep.mean.toFixed(2)} ms)`);
  }
  const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  const ratio = median(rounds.map((r) => r.ratio));
  const latency = median(rounds.map((r) => r.latency));
  console.log(`\npage 1,000 of page 1: ${ratio.toFixed(2)} by req/s, ${latency.toFixed(2)}x mean latency (median of ${opts.rounds} rounds)`);
  console.log(`${ratio >= 0.8 ? 'PASS' : 'FAIL'}  page 1,000 >= 0.8 of page 1 (req/s)`);
} finally {
  server?.kill('SIGTERM');
  await drop().catch((e) => console.error('could not drop the bench database:', e.message));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
