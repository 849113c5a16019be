#!/usr/bin/env node
// `npm run bench:history` (issue 8): the delivery history, its filters, the "Deliveries per hour" chart and the
// bulk replay count with 1,000,000 attempts stored, against the same reads on a subscription with 100.
//
// 1. Seed: two organisations on a fresh database (a temp SQLite file, or a database `bench_history_<random>` created
//    on the PostgreSQL server and dropped at the end). Organisations and subscriptions are made through the
//    services; their history goes straight into the tables, in time order and interleaved as the worker would
//    have written it: "small" 50 deliveries / 100 attempts, "large" 200,000 deliveries / 1,000,000 attempts over
//    the last 30 days (8 % of them in the last 24 h; most delivered after a few failed attempts, 6 % failed,
//    retrying and pending in the last hours, 0.1 % cancelled, 0.5 % delivered by a replay), one event row per
//    delivery with its payload. Multi-row INSERTs, one transaction per 2,000 deliveries (~14,000 rows; PostgreSQL:
//    INSERT ... SELECT FROM unnest of column arrays); then the hourly roll-up from the attempts with one GROUP BY
//    (as migration 005 does), then ANALYZE (PostgreSQL: VACUUM ANALYZE, what autovacuum would have done after a
//    million inserts).
// 2. Time: every case runs in this process, small and large alternately, `--warmup` untimed then
//    `--iterations` timed rounds: the API through `app.inject` (no network), the chart and the replay count
//    through the services, the dashboard pages through `app.inject` with a session cookie if those pages
//    answer 200. Prints median and p95 ms, the ratio large/small of the medians and the target (p95 of the
//    large one under 50 ms, ratio at most 2x).
// 3. Plans: the statements the service runs for the main reads on the large subscription, captured as they
//    are executed, with EXPLAIN QUERY PLAN (SQLite) / EXPLAIN (ANALYZE, BUFFERS) (PostgreSQL); full scans and
//    sorts are flagged. SQLite's plans are also made on a copy without statistics, and those that differ printed.
//
// Runs dist/ (build first: `npm run build`). Writes the figures to bench/results/history-<dialect>-<time>.json.
//   --dialect sqlite|postgres|both   (default both)
//   --iterations N                   timed rounds per case (default 200; a case stops after 20 s once it has 30)
//   --warmup N                       untimed rounds per case first (default 20)
//   --deliveries N --attempts N      the large subscription (default 200000 and 1000000)
//   --pg-url URL                     PostgreSQL server (BENCH_PG_URL; default postgres://postgres@127.0.0.1:5432/postgres)
//   --root DIR                       the checkout whose dist/ runs (default this one): a copy at another commit for a before/after
//   --sqlite-no-analyze              time SQLite without statistics, as the service leaves an embedded database
//                                    (it never runs ANALYZE there); the plans without statistics are printed either way
//   --keep                           keep the databases, and print where they are
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { builtModule } from './built.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------- options
function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const [name, inline] = arg.slice(2).split('=', 2);
    if (name === 'keep' || name === 'help' || name === 'sqlite-no-analyze') out[name] = true;
    else out[name] = inline ?? argv[++i];
  }
  return out;
}
const args = parseArgs(process.argv.slice(2));
if (args.help) {
  const text = fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
  console.log(text.slice(1, text.findIndex((l) => l.startsWith('import'))).join('\n'));
  process.exit(0);
}
const num = (v, d) => (v === undefined || v === '' ? d : Number(v));
const opts = {
  dialects: { sqlite: ['sqlite'], postgres: ['postgres'], both: ['sqlite', 'postgres'] }[args.dialect ?? 'both'],
  iterations: num(args.iterations, 200),
  warmup: num(args.warmup, 20),
  deliveries: num(args.deliveries, 200_000),
  attempts: num(args.attempts, 1_000_000),
  pgUrl: args['pg-url'] ?? process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  root: path.resolve(args.root ?? path.resolve(here, '..')),
  keep: Boolean(args.keep),
  sqliteNoAnalyze: Boolean(args['sqlite-no-analyze']),
};
if (!opts.dialects) throw new Error('--dialect must be sqlite, postgres or both');
const dist = path.join(opts.root, 'dist');
const { loadConfig } = await import(path.join(dist, 'config.js'));
const { createContainer } = await import(path.join(dist, 'container.js'));
const { buildApp } = await builtModule(dist, 'app');
const { cliActor } = await builtModule(dist, 'actor');
const { newId } = await import(path.join(dist, 'lib/ids.js'));
const { EVENT_TYPES } = await builtModule(dist, 'events');
const { USER_AGENT } = await import(path.join(dist, 'delivery/sender.js'));
// The very module instances dist/ uses, so the statements it runs can be captured for the plans.
const requireFromDist = createRequire(path.join(dist, 'index.js'));
const BetterSqlite3 = requireFromDist('better-sqlite3');
const pg = requireFromDist('pg');

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
// Cumulative start of each automatic attempt under the default WEBHOOK_RETRY_SCHEDULE (30s,2m,10m,30m,2h).
const OFFSETS = [0, 30_000, 150_000, 750_000, 2_550_000, 9_750_000];
const STATE = { delivered: 0, failed: 1, retrying: 2, pending: 3, cancelled: 4, replayed: 5 };
const RARE_EVENT = 'workflow.failed';
// Share of each event type among the deliveries: the rare one is what the "Event" filter is timed with.
const EVENT_MIX = [
  ['project.created', 0.4],
  ['project.updated', 0.35],
  ['task.assigned', 0.15],
  ['workflow.completed', 0.0895],
  ['project.deleted', 0.01],
  [RARE_EVENT, 0.0005],
];
if (EVENT_MIX.some(([t]) => !EVENT_TYPES.includes(t))) throw new Error('EVENT_MIX names an event type the build does not know');
const FAILURES = [
  { status: 503, error: 'HTTP 503', body: 'Service Unavailable', duration: 40 },
  { status: 500, error: 'HTTP 500', body: '{"error":"internal"}', duration: 120 },
  { status: null, error: 'timeout: no response status within 10000 ms', body: null, duration: 10_000 },
  { status: null, error: 'ECONNREFUSED: connect ECONNREFUSED 203.0.113.7:443', body: null, duration: 3 },
  { status: 302, error: 'redirect not followed: HTTP 302', body: '', duration: 25 },
  { status: 429, error: 'HTTP 429', body: 'Too Many Requests', duration: 15 },
];

// ---------------------------------------------------------------- the history to seed
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** When each delivery was created, its state, attempt count and event type: compact arrays, oldest first. */
function planHistory({ deliveries: n, attempts: total, now, rng }) {
  const created = new Float64Array(n);
  const recent = Math.round(n * 0.08);
  for (let i = 0; i < n; i++) created[i] = Math.floor(i < recent ? now - 60_000 - rng() * (DAY - 60_000) : now - DAY - rng() * 29 * DAY);
  created.sort();
  const state = new Uint8Array(n);
  const count = new Uint8Array(n);
  const eventType = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    let r = rng();
    let t = 0;
    while (t < EVENT_MIX.length - 1 && r >= EVENT_MIX[t][1]) r -= EVENT_MIX[t++][1];
    eventType[i] = t;
  }
  const pick = (howMany, lo, hi, as) => {
    // Random distinct still-delivered indexes in [lo, hi); the newest ones when the range is too small.
    let left = howMany;
    const free = [];
    for (let i = lo; i < hi; i++) if (state[i] === STATE.delivered) free.push(i);
    if (free.length <= left) {
      for (const i of free) state[i] = as;
      left -= free.length;
      for (let i = lo - 1; i >= 0 && left > 0; i--) {
        if (state[i] === STATE.delivered) {
          state[i] = as;
          left--;
        }
      }
      return;
    }
    for (let k = 0; k < left; k++) {
      const j = k + Math.floor(rng() * (free.length - k));
      [free[k], free[j]] = [free[j], free[k]];
      state[free[k]] = as;
    }
  };
  const firstAfter = (t) => {
    let i = n;
    while (i > 0 && created[i - 1] >= t) i--;
    return i;
  };
  const nPending = Math.max(1, Math.round(n * 0.001));
  for (let i = n - nPending; i < n; i++) state[i] = STATE.pending;
  pick(Math.max(1, Math.round(n * 0.0025)), firstAfter(now - 3 * HOUR), n, STATE.retrying);
  const finished = firstAfter(now - 3 * HOUR);
  pick(Math.max(1, Math.round(n * 0.06)), 0, finished, STATE.failed);
  pick(Math.max(1, Math.round(n * 0.001)), 0, finished, STATE.cancelled);
  pick(Math.round(n * 0.005), 0, firstAfter(now - DAY), STATE.replayed);
  let fixed = 0;
  let retrying = 0;
  let nDelivered = 0;
  for (let i = 0; i < n; i++) {
    const c = [0, 6, 1 + (retrying % 5), 0, 1, 7][state[i]];
    if (state[i] === STATE.retrying) retrying++;
    if (state[i] === STATE.delivered) {
      nDelivered++;
    } else {
      count[i] = c;
      fixed += c;
    }
  }
  // The delivered ones take the rest of the attempts, spread evenly: n-1 failures, then the success.
  const rest = total - fixed;
  if (nDelivered === 0 || rest < nDelivered || rest > nDelivered * 6) throw new Error(`cannot spread ${rest} attempts over ${nDelivered} delivered deliveries (1 to 6 each)`);
  const base = Math.floor(rest / nDelivered);
  const extra = rest % nDelivered;
  for (let i = 0, rank = 0; i < n; i++) {
    if (state[i] !== STATE.delivered) continue;
    count[i] = base + Math.floor(((rank + 1) * extra) / nDelivered) - Math.floor((rank * extra) / nDelivered);
    rank++;
  }
  return { n, created, state, count, eventType };
}

const sigPool = randomBytes(1 << 16);
const signature = (seconds, k) => `t=${seconds},v1=${sigPool.toString('hex', (k * 97) % ((1 << 16) - 32), ((k * 97) % ((1 << 16) - 32)) + 32)}`;

/** The rows of one delivery: its event, the delivery and its attempts, as the worker leaves them. */
function deliveryRows(sub, i, now, rng, k) {
  const { orgId, webhookId, plan } = sub;
  const createdAt = plan.created[i];
  const state = plan.state[i];
  const a = plan.count[i];
  const type = EVENT_MIX[plan.eventType[i]][0];
  const eventId = newId('evt');
  const deliveryId = newId('dlv');
  const iso = new Date(createdAt).toISOString();
  const body = JSON.stringify({
    event: type,
    timestamp: iso,
    data: { id: newId('proj'), name: `Seeded item ${k}`, description: 'Written by the history benchmark', status: 'active', created_at: iso },
  });
  const event = [eventId, orgId, type, body, createdAt];
  // Attempt start times: the retry schedule, squeezed for the newest deliveries so none lies in the future.
  const automatic = Math.min(a, 6);
  const lastOffset = OFFSETS[automatic - 1] ?? 0;
  const scale = automatic > 0 && createdAt + lastOffset > now - 5_000 ? Math.max(0, now - 5_000 - createdAt) / Math.max(1, lastOffset) : 1;
  const attempts = [];
  let last = null;
  let failures = 0;
  let replayAt = null;
  for (let j = 0; j < a; j++) {
    const replay = state === STATE.replayed && j === 6;
    const startedAt = replay
      ? (replayAt = Math.min(now - 60_000, createdAt + OFFSETS[5] + HOUR + Math.floor(rng() * DAY)))
      : createdAt + Math.floor(OFFSETS[j] * scale) + (j > 0 ? Math.floor(rng() * 1000) : 0);
    const success = (state === STATE.delivered && j === a - 1) || replay;
    const failure = success ? null : FAILURES[Math.floor(rng() * FAILURES.length)];
    if (!success) failures++;
    const status = success ? 200 : failure.status;
    const requestHeaders = JSON.stringify({
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-service-event': type,
      'x-service-event-id': eventId,
      'x-service-delivery-id': deliveryId,
      'x-service-delivery-attempt': String(j + 1),
      'x-service-signature': signature(Math.floor(startedAt / 1000), k * 8 + j),
    });
    const responseBody = success ? '{"ok":true}' : failure.body;
    const responseHeaders =
      status === null
        ? null
        : JSON.stringify({
            'content-type': success ? 'application/json' : 'text/plain',
            'content-length': String(Buffer.byteLength(responseBody ?? '')),
            date: new Date(startedAt).toUTCString(),
            ...(status === 302 ? { location: 'https://login.example.com/' } : {}),
          });
    const duration = success ? 40 + Math.floor(rng() * 300) : failure.duration;
    attempts.push([newId('att'), orgId, deliveryId, j + 1, replay ? 'replay' : 'automatic', startedAt, duration, requestHeaders, status, responseHeaders, responseBody, success ? null : failure.error, success ? 'success' : 'failure']);
    last = { startedAt, duration, status, error: success ? null : failure.error };
  }
  const status = ['delivered', 'failed', 'pending', 'pending', 'cancelled', 'delivered'][state];
  const nextAttemptAt = state === STATE.pending ? createdAt : state === STATE.retrying ? Math.max(createdAt + OFFSETS[a], now + 60_000) : null;
  const delivery = [
    deliveryId,
    orgId,
    eventId,
    webhookId,
    type,
    status,
    a,
    failures,
    nextAttemptAt,
    last ? last.status : null,
    last ? last.error : null,
    createdAt,
    last ? Math.min(now, last.startedAt + last.duration) : createdAt,
    replayAt,
  ];
  return { event, delivery, attempts };
}

const TABLES = {
  events: { columns: ['id', 'org_id', 'type', 'body', 'occurred_at'], pgTypes: ['text', 'text', 'text', 'text', 'bigint'] },
  deliveries: {
    columns: ['id', 'org_id', 'event_id', 'webhook_id', 'event_type', 'status', 'attempt_count', 'failure_count', 'next_attempt_at', 'last_status_code', 'last_error', 'created_at', 'updated_at', 'replay_requested_at'],
    pgTypes: ['text', 'text', 'text', 'text', 'text', 'text', 'int', 'int', 'bigint', 'int', 'text', 'bigint', 'bigint', 'bigint'],
  },
  delivery_attempts: {
    columns: ['id', 'org_id', 'delivery_id', 'attempt_number', 'trigger', 'started_at', 'duration_ms', 'request_headers', 'response_status', 'response_headers', 'response_body', 'error', 'outcome'],
    pgTypes: ['text', 'text', 'text', 'int', 'text', 'bigint', 'int', 'text', 'int', 'text', 'text', 'text', 'text'],
  },
};

// The migration 005 backfill, over everything seeded.
const ROLLUP_SQL = `
  INSERT INTO delivery_hourly (org_id, webhook_id, hour, delivered, failed)
  SELECT a.org_id, d.webhook_id, a.started_at / ${HOUR},
         SUM(CASE WHEN a.outcome = 'success' THEN 1 ELSE 0 END),
         SUM(CASE WHEN a.outcome = 'success' THEN 0 ELSE 1 END)
  FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
  GROUP BY a.org_id, d.webhook_id, a.started_at / ${HOUR}`;

/** Writes rows in batches: SQLite multi-row INSERTs inside one transaction per chunk. */
function sqliteSink(file) {
  const db = new BetterSqlite3(file);
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  const statements = new Map();
  const ROWS = 200;
  const statement = (table, rows) => {
    const key = `${table}:${rows}`;
    let stmt = statements.get(key);
    if (!stmt) {
      const { columns } = TABLES[table];
      const one = `(${columns.map(() => '?').join(',')})`;
      stmt = db.prepare(`INSERT INTO ${table} (${columns.join(',')}) VALUES ${Array(rows).fill(one).join(',')}`);
      statements.set(key, stmt);
    }
    return stmt;
  };
  const write = db.transaction((chunk) => {
    for (const [table, rows] of Object.entries(chunk)) {
      for (let i = 0; i < rows.length; i += ROWS) {
        const part = rows.slice(i, i + ROWS);
        statement(table, part.length).run(part.flat());
      }
    }
  });
  return {
    async write(chunk) {
      write(chunk);
    },
    async exec(sql) {
      db.exec(sql);
    },
    async analyze() {
      if (!opts.sqliteNoAnalyze) db.exec('ANALYZE');
      db.pragma('wal_checkpoint(TRUNCATE)');
    },
    async close() {
      db.close();
    },
  };
}

/** Writes rows in batches: one INSERT ... SELECT FROM unnest(column arrays) per table and chunk, in one transaction. */
async function postgresSink(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('SET synchronous_commit = off');
  return {
    async write(chunk) {
      await client.query('BEGIN');
      for (const [table, rows] of Object.entries(chunk)) {
        const { columns, pgTypes } = TABLES[table];
        const arrays = columns.map((_, c) => rows.map((r) => r[c]));
        const unnest = pgTypes.map((t, c) => `$${c + 1}::${t}[]`).join(', ');
        await client.query(`INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${unnest})`, arrays);
      }
      await client.query('COMMIT');
    },
    async exec(sql) {
      await client.query(sql);
    },
    async analyze() {
      await client.query('VACUUM (ANALYZE)');
    },
    async close() {
      await client.end();
    },
  };
}

async function seedHistory(sink, subs, now) {
  const rng = mulberry32(8);
  // Both subscriptions' deliveries in one time order, as they were created.
  const order = [];
  for (const [s, sub] of subs.entries()) for (let i = 0; i < sub.plan.n; i++) order.push([sub.plan.created[i], s, i]);
  order.sort((x, y) => x[0] - y[0]);
  const CHUNK = 2_000;
  let attempts = 0;
  for (let c = 0; c < order.length; c += CHUNK) {
    const chunk = { events: [], deliveries: [], delivery_attempts: [] };
    for (let k = c; k < Math.min(order.length, c + CHUNK); k++) {
      const [, s, i] = order[k];
      const rows = deliveryRows(subs[s], i, now, rng, k);
      chunk.events.push(rows.event);
      chunk.deliveries.push(rows.delivery);
      chunk.delivery_attempts.push(...rows.attempts);
    }
    attempts += chunk.delivery_attempts.length;
    await sink.write(chunk);
    if ((c / CHUNK) % 20 === 19) process.stdout.write(`  ${c + CHUNK} deliveries, ${attempts} attempts\n`);
  }
  return attempts;
}

// ---------------------------------------------------------------- statements the service runs, and their plans
const capture = { on: false, statements: [] };
{
  const probe = new BetterSqlite3(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('select 1'));
  probe.close();
  for (const method of ['all', 'get', 'iterate', 'run']) {
    const original = proto[method];
    proto[method] = function (...params) {
      if (capture.on) capture.statements.push({ sql: this.source, params: params.length === 1 && Array.isArray(params[0]) ? params[0] : params });
      return original.apply(this, params);
    };
  }
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (...params) {
    if (capture.on) {
      const [config, values] = params;
      if (typeof config === 'string') capture.statements.push({ sql: config, params: Array.isArray(values) ? values : [] });
      else if (config && typeof config.text === 'string') capture.statements.push({ sql: config.text, params: config.values ?? (Array.isArray(values) ? values : []) });
    }
    return query.apply(this, params);
  };
}

async function captured(fn) {
  capture.statements = [];
  capture.on = true;
  try {
    await fn();
  } finally {
    capture.on = false;
  }
  // Only the reads of the history tables; the subscription lookup is one row by its unique id.
  return capture.statements.filter((s) => /\b(deliveries|delivery_attempts|delivery_hourly|events)\b/.test(s.sql));
}

const TABLE_NAMES = new Set(['deliveries', 'delivery_attempts', 'delivery_hourly', 'events', 'webhooks']);

function sqlitePlan(db, { sql, params }) {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params);
  const depth = new Map([[0, -1]]);
  const lines = [];
  const flags = [];
  for (const r of rows) {
    const d = (depth.get(r.parent) ?? -1) + 1;
    depth.set(r.id, d);
    lines.push(`${'  '.repeat(d)}${r.detail}`);
    const scan = /^SCAN (\w+)(?: USING (?:COVERING )?INDEX (\w+))?/.exec(r.detail);
    if (scan && TABLE_NAMES.has(scan[1])) flags.push(scan[2] ? `full index scan of ${scan[1]} (${scan[2]})` : `full table scan of ${scan[1]}`);
    if (/USE TEMP B-TREE/.test(r.detail)) flags.push(`temp B-tree: ${r.detail}`);
  }
  return { lines, flags };
}

async function postgresPlan(client, { sql, params }) {
  const result = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
  const lines = result.rows.map((r) => r['QUERY PLAN']);
  const flags = [];
  for (const line of lines) {
    const seq = /Seq Scan on (\w+)/.exec(line);
    if (seq && TABLE_NAMES.has(seq[1])) flags.push(`full table scan: ${line.trim()}`);
    if (/^\s*(->\s+)?(Incremental )?Sort\s+\(/.test(line)) flags.push(`sort: ${line.trim()}`);
  }
  return { lines, flags };
}

// ---------------------------------------------------------------- measurement
const quantile = (values, q) => {
  const s = [...values].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

async function timeCase(run, { iterations, warmup }) {
  for (let i = 0; i < warmup; i++) {
    await run.small();
    await run.large();
  }
  const small = [];
  const large = [];
  const stopAt = performance.now() + 20_000;
  for (let i = 0; i < iterations; i++) {
    // Alternating which goes first, so neither always runs right after the other's garbage.
    for (const side of i % 2 ? ['large', 'small'] : ['small', 'large']) {
      const t = performance.now();
      await run[side]();
      (side === 'small' ? small : large).push(performance.now() - t);
    }
    if (i >= 30 && performance.now() > stopAt) break;
  }
  return {
    n: small.length,
    small: { median: quantile(small, 0.5), p95: quantile(small, 0.95) },
    large: { median: quantile(large, 0.5), p95: quantile(large, 0.95) },
  };
}

function pgDatabaseUrl(name) {
  const url = new URL(opts.pgUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function runDialect(dialect) {
  const runId = `${new Date().toISOString().replace(/[-:]/g, '').slice(0, 15)}_${randomBytes(3).toString('hex')}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-history-'));
  let dbName = null;
  if (dialect === 'postgres') {
    dbName = `bench_history_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: opts.pgUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    await admin.end();
  }
  const env = {
    DATA_DIR: dataDir,
    ...(dbName ? { DATABASE_URL: pgDatabaseUrl(dbName) } : {}),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000000',
    // History kept 30 days whatever its state (the default keeps delivered ones 7); no worker runs here anyway.
    WEBHOOK_DELIVERED_RETENTION: '30d',
  };
  const config = loadConfig(env);
  let app = null;
  let container = null;
  let explainer = null;
  try {
    console.log(`\n=== ${dialect}: ${dbName ? `database ${dbName} on ${new URL(opts.pgUrl).host}` : `SQLite in ${dataDir}`} ===`);
    // ------------------------------------------------------------ seed
    const seedStarted = performance.now();
    container = await createContainer(config, { migrate: true });
    const orgs = {};
    for (const [name, size] of [
      ['small', { deliveries: 50, attempts: 100 }],
      ['large', { deliveries: opts.deliveries, attempts: opts.attempts }],
    ]) {
      const created = await container.services.admin.createOrganization({ name: `History ${name}`, ownerEmail: `owner-${name}@example.com`, ownerName: `Owner ${name}` });
      const orgId = created.organization.id;
      const webhook = await container.services.webhooks.create(cliActor(orgId), { url: `https://hooks.example.com/${name}`, events: [...EVENT_TYPES] });
      orgs[name] = { name, orgId, ownerId: created.owner.id, key: created.api_key.key, webhookId: webhook.id, size };
    }
    await container.close();
    container = null;
    const now = Date.now();
    const planRng = mulberry32(1);
    const subs = Object.values(orgs).map((o) => ({ ...o, plan: planHistory({ ...o.size, now, rng: planRng }) }));
    const sink = dialect === 'sqlite' ? sqliteSink(path.join(dataDir, 'workspace.db')) : await postgresSink(env.DATABASE_URL);
    let analyzeSeconds;
    let rollupSeconds;
    let attemptsWritten;
    try {
      attemptsWritten = await seedHistory(sink, subs, now);
      // The subscriptions existed before their history.
      await sink.exec(`UPDATE webhooks SET created_at = ${now - 31 * DAY}`);
      let t = performance.now();
      await sink.exec(ROLLUP_SQL);
      rollupSeconds = (performance.now() - t) / 1000;
      t = performance.now();
      await sink.analyze();
      analyzeSeconds = (performance.now() - t) / 1000;
    } finally {
      await sink.close();
    }
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const deliveriesWritten = subs.reduce((s, sub) => s + sub.plan.n, 0);
    console.log(
      `seeded ${deliveriesWritten} deliveries, ${attemptsWritten} attempts, ${deliveriesWritten} events in ${seedSeconds.toFixed(1)} s ` +
        `(of which hourly roll-up ${rollupSeconds.toFixed(1)} s, ${dialect === 'postgres' ? 'VACUUM ANALYZE' : opts.sqliteNoAnalyze ? 'no ANALYZE' : 'ANALYZE'} ${analyzeSeconds.toFixed(1)} s)`,
    );
    if (dialect === 'sqlite') {
      const bytes = fs.readdirSync(dataDir).reduce((s, f) => s + fs.statSync(path.join(dataDir, f)).size, 0);
      console.log(`database file: ${(bytes / 2 ** 20).toFixed(0)} MiB`);
    }

    // ------------------------------------------------------------ the app over the seeded database
    container = await createContainer(config, { migrate: true });
    app = await buildApp(container);
    await app.ready();
    const { services, store, database } = container;
    const db = database.db;
    const sessionCookie = config.publicBaseUrl.startsWith('https:') ? '__Host-ws_session' : 'ws_session';
    for (const o of Object.values(orgs)) {
      const counts = await db
        .selectFrom('deliveries')
        .select(['status', (eb) => eb.fn.countAll().as('n')])
        .where('org_id', '=', o.orgId)
        .groupBy('status')
        .execute();
      const attempts = await db.selectFrom('delivery_attempts').select((eb) => eb.fn.countAll().as('n')).where('org_id', '=', o.orgId).executeTakeFirstOrThrow();
      o.counts = Object.fromEntries(counts.map((r) => [r.status, Number(r.n)]));
      o.attempts = Number(attempts.n);
      // A delivery made about a week ago (the "Event or delivery ID" filter), and one with many attempts (its page).
      const weekAgo = await db
        .selectFrom('deliveries')
        .select(['id', 'event_id', 'created_at'])
        .where('org_id', '=', o.orgId)
        .where('webhook_id', '=', o.webhookId)
        .where('created_at', '<=', now - 7 * DAY)
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      const anyOne = await db.selectFrom('deliveries').select(['id', 'event_id', 'created_at']).where('org_id', '=', o.orgId).orderBy('created_at').limit(1).executeTakeFirstOrThrow();
      o.eventId = (weekAgo ?? anyOne).event_id;
      o.deliveryId = (weekAgo ?? anyOne).id;
      // The UTC hour of that delivery: a one-hour window about a week ago that is not empty on either side.
      o.windowFrom = Math.floor((weekAgo ?? anyOne).created_at / HOUR) * HOUR;
      const detail = await db
        .selectFrom('deliveries')
        .select('id')
        .where('org_id', '=', o.orgId)
        .where('status', '=', 'failed')
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirstOrThrow();
      o.detailId = detail.id;
      o.actor = cliActor(o.orgId);
      o.auth = { authorization: `Bearer ${o.key}` };
      // Page 50 (limit 25) by following next_cursor, or the last page when there are fewer.
      let cursor = null;
      let pages = 1;
      for (; pages < 50; pages++) {
        const res = await app.inject({ method: 'GET', url: `/v1/webhooks/${o.webhookId}/deliveries?limit=25${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, headers: o.auth });
        if (res.statusCode !== 200) throw new Error(`history page ${pages}: ${res.statusCode} ${res.body.slice(0, 300)}`);
        const next = JSON.parse(res.body).next_cursor;
        if (!next) break;
        cursor = next;
      }
      o.deepCursor = cursor;
      o.deepPage = cursor ? pages : 1;
      const user = await store.repos.users.findById(o.orgId, o.ownerId);
      const session = await store.transaction((repos) => services.sessions.start(repos, user, { source: 'dashboard', ip: '127.0.0.1', userAgent: 'history-bench', requestId: null }));
      o.cookie = { cookie: `${sessionCookie}=${session.token}` };
      console.log(
        `${o.name}: ${Object.entries(o.counts)
          .map(([s, n]) => `${n} ${s}`)
          .join(', ')}; ${o.attempts} attempts; deep page = page ${o.deepPage}`,
      );
    }

    const windowQuery = (o) => `from=${encodeURIComponent(new Date(o.windowFrom).toISOString())}&to=${encodeURIComponent(new Date(o.windowFrom + HOUR).toISOString())}`;
    const inject = async (url, headers) => {
      const res = await app.inject({ method: 'GET', url, headers });
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      return res;
    };
    const history = (query) => (o) => () => inject(`/v1/webhooks/${o.webhookId}/deliveries?limit=25${query(o)}`, o.auth);
    const cases = [
      { key: 'a', label: 'history first page (limit=25)', run: history(() => ''), filter: () => ({}) },
      { key: 'b', label: 'history page 50 (small: its last, page 2)', run: history((o) => (o.deepCursor ? `&cursor=${encodeURIComponent(o.deepCursor)}` : '')) },
      { key: 'c', label: 'status=failed', run: history(() => '&status=failed'), filter: () => ({ status: 'failed' }) },
      { key: 'd', label: 'status=cancelled (bounded scan)', run: history(() => '&status=cancelled'), filter: () => ({ status: 'cancelled' }) },
      { key: 'e', label: `event=${RARE_EVENT} (rare; bounded scan)`, run: history(() => `&event=${RARE_EVENT}`), filter: () => ({ event: RARE_EVENT }) },
      {
        key: 'f',
        label: 'from/to: one hour about a week ago',
        run: history((o) => `&${windowQuery(o)}`),
        filter: (o) => ({ from: o.windowFrom, to: o.windowFrom + HOUR }),
      },
      { key: 'g', label: 'id=<event id> (a week ago)', run: history((o) => `&id=${o.eventId}`), filter: (o) => ({ id: o.eventId }) },
      { key: 'g2', label: 'one delivery with its attempts (API)', run: (o) => () => inject(`/v1/webhooks/${o.webhookId}/deliveries/${o.detailId}`, o.auth) },
      { key: 'h1', label: 'chart: subscription, 24 h (service)', run: (o) => () => services.deliveryStats.hourly(o.actor, { webhookId: o.webhookId }) },
      { key: 'h2', label: 'chart: organisation, 24 h (service)', run: (o) => () => services.deliveryStats.hourly(o.actor) },
      { key: 'i1', label: 'bulk replay count, since 24 h ago (service)', run: (o) => () => services.replayJobs.preview(o.actor, o.webhookId, now - DAY) },
      { key: 'i2', label: 'bulk replay count, since 30 days ago (service)', run: (o) => () => services.replayJobs.preview(o.actor, o.webhookId, now - 31 * DAY) },
    ];
    // The dashboard's pages, if they are built in this checkout.
    const pageProbe = await app.inject({ method: 'GET', url: `/dashboard/webhooks/${orgs.large.webhookId}`, headers: orgs.large.cookie });
    const detailProbe = await app.inject({ method: 'GET', url: `/dashboard/webhooks/${orgs.large.webhookId}/deliveries/${orgs.large.detailId}`, headers: orgs.large.cookie });
    const skipped = [];
    if (pageProbe.statusCode === 200) cases.push({ key: 'j1', label: 'dashboard: subscription page', run: (o) => () => inject(`/dashboard/webhooks/${o.webhookId}`, o.cookie) });
    else skipped.push(`(j1) GET /dashboard/webhooks/:id answered ${pageProbe.statusCode}: not measured`);
    if (detailProbe.statusCode === 200) {
      cases.push({ key: 'j2', label: 'dashboard: delivery page', run: (o) => () => inject(`/dashboard/webhooks/${o.webhookId}/deliveries/${o.detailId}`, o.cookie) });
    } else skipped.push(`(j2) GET /dashboard/webhooks/:id/deliveries/:dlv answered ${detailProbe.statusCode}: not measured`);
    for (const s of skipped) console.log(s);

    // What the bounded scans and filters return on the large subscription (so the figures can be read).
    for (const c of cases.filter((c) => c.filter)) {
      const page = await services.deliveries.list(orgs.large.actor, orgs.large.webhookId, { limit: 25, filter: c.filter(orgs.large) });
      c.returned = `${page.items.length} items${page.nextCursor ? ', next' : ''}${page.searchedTo ? `, searched back to ${page.searchedTo}` : ''}`;
    }

    // ------------------------------------------------------------ timing
    const loadBefore = os.loadavg()[0];
    const results = [];
    for (const c of cases) {
      process.stdout.write(`timing (${c.key}) ${c.label} ...`);
      const r = await timeCase({ small: c.run(orgs.small), large: c.run(orgs.large) }, opts);
      const ratio = r.large.median / r.small.median;
      const pass = r.large.p95 < 50 && ratio <= 2;
      results.push({ key: c.key, label: c.label, returned: c.returned ?? null, ...r, ratio, pass });
      process.stdout.write(` large ${r.large.median.toFixed(2)} ms\n`);
    }
    const loadAfter = os.loadavg()[0];

    // ------------------------------------------------------------ plans (large subscription)
    const L = orgs.large;
    const planCases = [
      ['(a) history first page', () => services.deliveries.list(L.actor, L.webhookId, { limit: 25 })],
      ['(b) history page 50', () => services.deliveries.list(L.actor, L.webhookId, { limit: 25, cursor: L.deepCursor })],
      ['(c) status=failed', () => services.deliveries.list(L.actor, L.webhookId, { limit: 25, filter: { status: 'failed' } })],
      ['(d) status=cancelled', () => services.deliveries.list(L.actor, L.webhookId, { limit: 25, filter: { status: 'cancelled' } })],
      ['(e) rare event', () => services.deliveries.list(L.actor, L.webhookId, { limit: 25, filter: { event: RARE_EVENT } })],
      ['(f) one hour about a week ago', () => services.deliveries.list(L.actor, L.webhookId, { limit: 25, filter: { from: L.windowFrom, to: L.windowFrom + HOUR } })],
      ['(g) id=<event id>', () => services.deliveries.list(L.actor, L.webhookId, { limit: 25, filter: { id: L.eventId } })],
      ['(g) id=<delivery id>', () => services.deliveries.list(L.actor, L.webhookId, { limit: 25, filter: { id: L.deliveryId } })],
      ['(h1) chart, subscription', () => services.deliveryStats.hourly(L.actor, { webhookId: L.webhookId })],
      ['(h2) chart, organisation', () => services.deliveryStats.hourly(L.actor)],
      ['(i2) bulk replay count, 30 days', () => services.replayJobs.preview(L.actor, L.webhookId, now - 31 * DAY)],
    ];
    for (const c of cases.filter((c) => c.key.startsWith('j'))) planCases.push([`(${c.key}) ${c.label}`, c.run(L)]);
    explainer = dialect === 'sqlite' ? new BetterSqlite3(path.join(dataDir, 'workspace.db'), { readonly: true }) : new pg.Client({ connectionString: env.DATABASE_URL });
    if (dialect === 'postgres') await explainer.connect();
    const plans = [];
    console.log(`\n--- ${dialect}: plans of the statements each read runs (large subscription) ---`);
    for (const [label, fn] of planCases) {
      const statements = await captured(fn);
      for (const s of statements) {
        const plan = dialect === 'sqlite' ? sqlitePlan(explainer, s) : await postgresPlan(explainer, s);
        plans.push({ case: label, sql: s.sql, params: s.params, ...plan });
        console.log(`\n${label}:\n  ${s.sql.replace(/\s+/g, ' ')}`);
        for (const line of plan.lines) console.log(`    ${line}`);
        for (const f of plan.flags) console.log(`    !! ${f}`);
      }
    }

    // The service never runs ANALYZE on SQLite: the same statements as an embedded database without
    // statistics would plan them (a copy of the file with sqlite_stat1/4 emptied), where they differ.
    const noStats = [];
    if (dialect === 'sqlite' && !opts.sqliteNoAnalyze) {
      const copy = path.join(dataDir, 'no-stats.db');
      fs.copyFileSync(path.join(dataDir, 'workspace.db'), copy);
      if (fs.existsSync(path.join(dataDir, 'workspace.db-wal'))) fs.copyFileSync(path.join(dataDir, 'workspace.db-wal'), `${copy}-wal`);
      const writer = new BetterSqlite3(copy);
      for (const t of ['sqlite_stat1', 'sqlite_stat4']) if (writer.prepare('SELECT 1 FROM sqlite_master WHERE name = ?').get(t)) writer.exec(`DELETE FROM ${t}`);
      writer.close();
      const bare = new BetterSqlite3(copy, { readonly: true });
      try {
        for (const p of plans) {
          const plan = sqlitePlan(bare, p);
          if (plan.lines.join('\n') !== p.lines.join('\n')) noStats.push({ case: p.case, sql: p.sql, ...plan });
        }
      } finally {
        bare.close();
        for (const f of [copy, `${copy}-wal`, `${copy}-shm`]) fs.rmSync(f, { force: true });
      }
      console.log(noStats.length === 0 ? '\nwithout statistics (no ANALYZE): the same plans' : '\nwithout statistics (no ANALYZE), plans that differ:');
      for (const p of noStats) {
        console.log(`\n${p.case}:\n  ${p.sql.replace(/\s+/g, ' ')}`);
        for (const line of p.lines) console.log(`    ${line}`);
        for (const f of p.flags) console.log(`    !! ${f}`);
      }
    }

    // ------------------------------------------------------------ report
    const fmt = (v) => (v >= 10 ? v.toFixed(1) : v.toFixed(2));
    const table = [
      ['case', 'small ms median (p95)', 'large ms median (p95)', 'large/small', 'target'],
      ...results.map((r) => [
        `(${r.key}) ${r.label}`,
        `${fmt(r.small.median)} (${fmt(r.small.p95)})`,
        `${fmt(r.large.median)} (${fmt(r.large.p95)})`,
        `${r.ratio.toFixed(2)}x`,
        r.pass ? 'yes' : `NO${r.large.p95 >= 50 ? ' (>= 50 ms)' : ''}${r.ratio > 2 ? ' (ratio > 2)' : ''}`,
      ]),
    ];
    const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)));
    const line = (row) => `| ${row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join(' | ')} |`;
    const statistics = dialect === 'sqlite' && opts.sqliteNoAnalyze ? ', without statistics' : '';
    console.log(`\n--- ${dialect}${statistics}: server time per request, ${results[0]?.n ?? 0} timed rounds per case (load average ${loadBefore.toFixed(1)} -> ${loadAfter.toFixed(1)}) ---`);
    console.log(line(table[0]));
    console.log(`|${widths.map((w, c) => (c === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
    for (const row of table.slice(1)) console.log(line(row));
    console.log('\nwhat each filtered page returned on the large subscription:');
    for (const r of results.filter((r) => r.returned)) console.log(`  (${r.key}) ${r.returned}`);
    const flagged = plans.filter((p) => p.flags.length > 0);
    console.log(flagged.length === 0 ? '\nplans: no full scan or sort on the large subscription' : '\nplans flagged:');
    for (const p of flagged) for (const f of p.flags) console.log(`  ${p.case}: ${f}`);
    for (const s of skipped) console.log(s);

    const file = path.join(here, 'results', `history-${dialect}-${runId}.json`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(
      file,
      JSON.stringify(
        {
          date: new Date().toISOString(),
          command: `node bench/history-bench.mjs ${process.argv.slice(2).join(' ')}`.trim(),
          machine: { nproc: os.availableParallelism(), cpu: os.cpus()[0]?.model, memGiB: +(os.totalmem() / 2 ** 30).toFixed(1), node: process.version, loadBefore, loadAfter },
          dialect,
          statistics: !(dialect === 'sqlite' && opts.sqliteNoAnalyze),
          root: opts.root,
          seeded: Object.fromEntries(Object.values(orgs).map((o) => [o.name, { deliveries: o.counts, attempts: o.attempts }])),
          seedSeconds,
          rollupSeconds,
          analyzeSeconds,
          results,
          plans,
          plansWithoutStatistics: noStats,
          skipped,
        },
        null,
        2,
      ),
    );
    console.log(`\nresults: ${path.relative(process.cwd(), file)}`);
    return { dialect, results, flagged, skipped };
  } finally {
    if (explainer) await (dialect === 'sqlite' ? explainer.close() : explainer.end());
    if (app) await app.close();
    if (container) await container.close();
    if (dbName) fs.rmSync(dataDir, { recursive: true, force: true });
    if (opts.keep) console.log(`kept: ${dbName ? `database ${dbName}` : dataDir}`);
    else {
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (dbName) {
        const admin = new pg.Client({ connectionString: opts.pgUrl });
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
        await admin.end();
      }
    }
  }
}

console.log(`history benchmark: ${os.availableParallelism()} CPUs (${os.cpus()[0]?.model}), Node ${process.version}, load average ${os.loadavg()[0].toFixed(1)}`);
for (const dialect of opts.dialects) await runDialect(dialect);
