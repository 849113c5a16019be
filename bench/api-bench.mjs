#!/usr/bin/env node
// `npm run bench`: seeds 10,100 projects, then measures with autocannon the API's hot paths against a
// bare node:http server answering a JSON body of the same size as one project (the physical limit of
// this machine), alternating bare and endpoint runs so machine noise hits both. Prints a table with each
// endpoint's ratio to the bare server and writes JSON results under bench/results/.
//
// The API runs from dist/ (build first: `npm run build`) in its own process(es); the bare server too;
// this process only seeds (in-process, through the services, before the server starts) and drives load.
//
// Options (flags or env):
//   --duration S          seconds per measurement (BENCH_DURATION, default 10)
//   --warmup S            warm-up seconds before each measurement (BENCH_WARMUP, default 2)
//   --rounds N            repeat the whole alternating sequence N times; figures are medians (BENCH_ROUNDS, default 1)
//   --server-warmup S     seconds of each read path once after the API starts (default 4; skipped with --warmup 0)
//   --connections N       autocannon connections (BENCH_CONNECTIONS, default 50)
//   --pipelining N        (default 1)
//   --projects N          projects to seed (default 10100: page 100 of limit=100 exists and is full)
//   --database-url URL    PostgreSQL server (BENCH_DATABASE_URL): a fresh database is created there and dropped
//   --instances N         API processes behind autocannon, connections spread over them (default 1)
//   --log-level L         the API's LOG_LEVEL (default warn)
//   --dialects a,b        sqlite, postgres or both (BENCH_DIALECTS; default both, one after the other, unless
//                         --database-url is given, which means postgres only)
//   --only a,b            measure only these endpoints (get,list,post,deep,tasks,events; default all but
//                         tasks and events)
//   --ceiling             also measure bench/fastify-ceiling.mjs: a bare Fastify route with the same SQL
//                         (GET by id, the first page of 100 and, on SQLite, the create's statements in one
//                         commit per request), the ceiling the API's own features sit under; prints each
//                         endpoint "of the ceiling" (median over rounds of adjacent runs' ratios)
//   --compare DIR         also measure another build of the API (DIR/dist, e.g. a `git archive` of the previous
//                         release with `npm ci && npm run build` there, or node_modules linked from here) on the
//                         same database, in the same run: each endpoint's run is followed by the other build's,
//                         and the report gives this build "of the other" (median over rounds)
//   --this DIR            run DIR/dist in this build's seat (seeding still uses this checkout's build): with
//                         --compare naming this checkout, the two builds swap seats, so a gap that follows the
//                         seat rather than the build shows (docs/benchmarks.md, issue 42)
//   --cpu-prof DIR        run the API with node --cpu-prof, profiles written to DIR
//   --node-args "A B"     extra node options for this build's API processes only (with --compare DIR naming this
//                         checkout, an A/B of a runtime flag in one run)
//   --no-bare             skip the bare-server runs (profiling)
//   --member              CONTRACT 15's case (issue 43): every second project seeded private, and every request
//                         made with the key of a member who is no collaborator of any, so the list and GET by
//                         id apply the visibility predicate (GET by id asks for projects the member sees)
//   --keep                keep the SQLite data directory
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { freshPgDatabase } from './pg-database.mjs';
import { builtModule, builtPath } from './built.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');

// ---------------------------------------------------------------- options
function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const [name, inline] = arg.slice(2).split('=', 2);
    if (name === 'keep' || name === 'help' || name === 'no-bare' || name === 'ceiling' || name === 'member') out[name] = true;
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
  duration: num(args.duration ?? process.env.BENCH_DURATION, 10),
  warmup: num(args.warmup ?? process.env.BENCH_WARMUP, 2),
  serverWarmup: num(args['server-warmup'], 4),
  rounds: num(args.rounds ?? process.env.BENCH_ROUNDS, 1),
  connections: num(args.connections ?? process.env.BENCH_CONNECTIONS, 50),
  pipelining: num(args.pipelining, 1),
  projects: num(args.projects, 10_100),
  databaseUrl: args['database-url'] ?? process.env.BENCH_DATABASE_URL ?? null,
  instances: num(args.instances ?? process.env.BENCH_INSTANCES, 1),
  logLevel: args['log-level'] ?? process.env.BENCH_LOG_LEVEL ?? 'warn',
  only: (args.only ?? 'get,list,post,deep').split(',').map((s) => s.trim()),
  /** Tasks are seeded only when they are measured: one per project, assigned to the key's user (a task.assigned each). */
  cpuProf: args['cpu-prof'] ?? null,
  nodeArgs: (args['node-args'] ?? '').split(' ').filter(Boolean),
  keep: Boolean(args.keep),
  bare: !args['no-bare'],
  ceiling: Boolean(args.ceiling),
  member: Boolean(args.member),
  compare: args.compare ? path.resolve(args.compare) : null,
  this: args.this ? path.resolve(args.this) : null,
};
const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const dialects = (args.dialects ?? process.env.BENCH_DIALECTS ?? (opts.databaseUrl ? 'postgres' : 'sqlite,postgres')).split(',').map((d) => d.trim());
if (dialects.some((d) => d !== 'sqlite' && d !== 'postgres')) throw new Error('--dialects takes sqlite, postgres or both');
if (dialects.length > 1) {
  // Both dialects: this script once per dialect, one after the other, then one summary of the targets.
  // Every option but the two each child gets its own value of.
  const own = ['--dialects', '--database-url'];
  const passed = [];
  for (let i = 2; i < process.argv.length; i++) {
    const arg = process.argv[i];
    if (own.includes(arg)) i++;
    else if (!own.some((name) => arg.startsWith(`${name}=`))) passed.push(arg);
  }
  const summary = [];
  let failed = false;
  for (const d of dialects) {
    const extra = d === 'postgres' ? ['--dialects', 'postgres', '--database-url', opts.databaseUrl ?? DEFAULT_PG_URL] : ['--dialects', 'sqlite'];
    console.log(`\n================ ${d} ================`);
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...passed, ...extra], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      process.stdout.write(chunk);
    });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    if (code !== 0) failed = true;
    summary.push(...out.split('\n').filter((l) => /^(PASS|FAIL) /.test(l)).map((l) => `${l.slice(0, 4)}  [${d}] ${l.slice(6)}`));
  }
  console.log('\n================ targets ================');
  for (const line of summary) console.log(line);
  process.exit(failed ? 1 : 0);
}
if (dialects[0] === 'postgres' && !opts.databaseUrl) opts.databaseUrl = DEFAULT_PG_URL;
if (opts.projects < 10_000) throw new Error('--projects must be at least 10000 so page 100 exists');
const RATE_LIMIT = 100_000_000; // raised so the limiter runs on every request but never refuses

try {
  builtPath(path.join(root, 'dist'), 'app');
} catch {
  console.error('dist/ is missing: run `npm run build` first');
  process.exit(1);
}
const { loadConfig } = await import(path.join(root, 'dist/config.js'));
const { createContainer } = await import(path.join(root, 'dist/container.js'));
const { cliActor } = await builtModule(path.join(root, 'dist'), 'actor');

// ---------------------------------------------------------------- processes
const children = new Set();
function startProcess(script, env, nodeArgs = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, script], {
      cwd: root,
      env: { ...process.env, METRICS_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let out = '';
    let err = '';
    const fail = (why) => reject(new Error(`${path.basename(script)} ${why}\n${err}`));
    child.stderr.on('data', (d) => {
      err += d;
      if (err.length > 20_000) err = err.slice(-10_000);
    });
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening (\d+)(?: (\d+))?/.exec(out);
      if (m && !child.port) {
        child.port = Number(m[1]);
        child.extra = m[2] ? Number(m[2]) : null;
        resolve(child);
      }
      if (out.length > 20_000) out = out.slice(-10_000); // the API logs JSON lines at info level
    });
    child.on('exit', (code) => {
      children.delete(child);
      if (!child.port) fail(`exited with ${code} before listening`);
    });
    child.on('error', (e) => fail(e.message));
  });
}
function stopProcess(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', resolve);
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  });
}
async function stopAll() {
  await Promise.all([...children].map(stopProcess));
}
process.on('SIGINT', async () => {
  await stopAll();
  process.exit(130);
});

// ---------------------------------------------------------------- database
const runId = `${new Date().toISOString().replace(/[-:]/g, '').slice(0, 15)}_${randomBytes(3).toString('hex')}`;
let pgDrop = null;
let dataDir = path.join(root, '.bench-tmp', `api-${runId}`);
let databaseUrl = null;
if (opts.databaseUrl) {
  const fresh = await freshPgDatabase(opts.databaseUrl, `ws_bench_${runId.toLowerCase()}`);
  databaseUrl = fresh.url;
  pgDrop = fresh.drop;
}
fs.mkdirSync(dataDir, { recursive: true });
const dialect = databaseUrl ? 'postgres' : 'sqlite';

const serverEnv = {
  DATA_DIR: dataDir,
  DATABASE_URL: databaseUrl ?? '',
  RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
  LOG_LEVEL: opts.logLevel,
  HOST: '127.0.0.1',
  PORT: '0',
  REDIS_URL: '',
};

async function cleanup() {
  await stopAll();
  if (pgDrop) await pgDrop().catch((e) => console.error('could not drop the bench database:', e.message));
  if (!opts.keep) fs.rmSync(dataDir, { recursive: true, force: true });
}

try {
  // ---------------------------------------------------------------- seed
  const seedStarted = Date.now();
  const config = loadConfig({ ...process.env, ...serverEnv, LOG_LEVEL: 'warn' });
  const container = await createContainer(config, { migrate: true });
  const { services } = container;
  const created = await services.admin.createOrganization({ name: 'Bench Org', ownerEmail: 'bench@example.com' });
  const orgId = created.organization.id;
  let apiKey = created.api_key.key;
  if (opts.member) {
    const member = await services.admin.addUser({ orgId, email: 'bench-member@example.com', role: 'member' });
    apiKey = (await services.admin.createKey({ userId: member.id, scope: 'full' })).key;
  }
  // Through the project service, as the API would, a few at a time on PostgreSQL.
  const parallel = dialect === 'postgres' ? 8 : 1;
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < opts.projects) {
        const i = next++;
        await services.projects.create(cliActor(orgId), {
          name: `Seeded project ${i}`,
          description: i % 2 ? `Description of project ${i}` : null,
          ...(opts.member && i % 2 ? { visibility: 'private' } : {}),
        });
      }
    }),
  );
  // GET /v1/tasks?assignee_id=me and GET /v1/events (issue 30): pages of 100 of a full table, like the list's.
  if (opts.only.includes('tasks')) {
    const seedProject = await services.projects.create(cliActor(orgId), { name: 'Tasks' });
    next = 0;
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (next < opts.projects) {
          const i = next++;
          await services.tasks.create(cliActor(orgId), seedProject.id, { title: `Seeded task ${i}`, assignee_id: created.owner.id, due_at: i % 3 ? null : Date.UTC(2027, 0, 1) });
        }
      }),
    );
  }
  // Walk the cursors once: the 100th page's cursor, and ids for GET by id from the middle of the set.
  let cursor;
  const ids = [];
  for (let page = 1; page < 100; page++) {
    const result = await services.projects.list(cliActor(orgId), { limit: 100, cursor });
    // With --member, only projects the member sees (the others would be 404s).
    if (page === 50) ids.push(...result.items.filter((p) => !opts.member || p.visibility !== 'private').map((p) => p.id));
    cursor = result.nextCursor;
  }
  const deepCursor = cursor;
  const deepPage = await services.projects.list(cliActor(orgId), { limit: 100, cursor: deepCursor });
  if (deepPage.items.length !== 100) throw new Error(`page 100 has ${deepPage.items.length} items`);
  await container.close();
  if (databaseUrl) {
    // Fresh statistics, as autovacuum would have gathered on any database that grew to this size: right
    // after the bulk seed the planner still believes the organisation has a few rows and answers the
    // first page with a bitmap scan of all 10,100 rows and a sort (13 ms instead of 0.1 ms).
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query('analyze');
    await client.end();
  }
  const seedSeconds = (Date.now() - seedStarted) / 1000;
  console.log(`seeded ${opts.projects} projects (${dialect}) in ${seedSeconds.toFixed(1)} s`);

  // ---------------------------------------------------------------- servers
  const profArgs = [...opts.nodeArgs, ...(opts.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(opts.cpuProf)}`] : [])];
  const apis = [];
  const thisEnv = opts.this ? { ...serverEnv, BENCH_DIST: path.join(opts.this, 'dist') } : serverEnv;
  for (let i = 0; i < opts.instances; i++) apis.push(await startProcess(path.join(here, 'serve-bench.mjs'), thisEnv, profArgs));
  const apiUrls = apis.map((c) => `http://127.0.0.1:${c.port}`);
  const auth = { authorization: `Bearer ${apiKey}` };

  const probe = await fetch(`${apiUrls[0]}/v1/projects/${ids[0]}`, { headers: auth });
  const projectBody = await probe.text();
  if (probe.status !== 200) throw new Error(`GET by id answered ${probe.status}: ${projectBody}`);
  const projectBytes = Buffer.byteLength(projectBody);
  const bares = [];
  for (let i = 0; i < opts.instances; i++) {
    bares.push(await startProcess(path.join(here, 'bare-server.mjs'), { BARE_BODY_BYTES: String(projectBytes), PORT: '0' }));
  }
  const bareUrls = bares.map((c) => `http://127.0.0.1:${c.port}`);
  const ceiling = opts.ceiling ? await startProcess(path.join(here, 'fastify-ceiling.mjs'), { DATA_DIR: dataDir, DATABASE_URL: databaseUrl ?? '', PORT: '0' }) : null;
  const ceilingUrls = ceiling ? [`http://127.0.0.1:${ceiling.port}`] : [];
  const other = opts.compare ? await startProcess(path.join(here, 'serve-bench.mjs'), { ...serverEnv, BENCH_DIST: path.join(opts.compare, 'dist') }) : null;
  const otherUrls = other ? [`http://127.0.0.1:${other.port}`] : [];
  const baselines = {
    ceiling: ceiling && { urls: ceilingUrls, processes: [ceiling], label: 'ceiling: bare Fastify' },
    other: other && { urls: otherUrls, processes: [other], label: `other build (${path.basename(opts.compare ?? '')})` },
  };
  console.log(`${opts.instances} API process(es) on ${apiUrls.join(', ')}; bare server(s) on ${bareUrls.join(', ')} answering ${bares[0].extra} bytes (a project is ${projectBytes})`);

  // ---------------------------------------------------------------- scenarios
  const postBody = JSON.stringify({ name: 'Bench project', description: 'Created by the benchmark' });
  const scenarios = {
    get: { label: 'GET /v1/projects/:id', requests: ids.map((id) => ({ method: 'GET', path: `/v1/projects/${id}` })) },
    list: { label: 'GET /v1/projects?limit=100', requests: [{ method: 'GET', path: '/v1/projects?limit=100' }] },
    deep: {
      label: 'GET /v1/projects?limit=100 (page 100)',
      requests: [{ method: 'GET', path: `/v1/projects?limit=100&cursor=${encodeURIComponent(deepCursor)}` }],
    },
    tasks: { label: 'GET /v1/tasks?assignee_id=me&limit=100', requests: [{ method: 'GET', path: '/v1/tasks?assignee_id=me&limit=100' }] },
    events: { label: 'GET /v1/events?limit=100', requests: [{ method: 'GET', path: '/v1/events?limit=100' }] },
    post: {
      label: 'POST /v1/projects',
      requests: [{ method: 'POST', path: '/v1/projects', headers: { 'content-type': 'application/json' }, body: postBody }],
    },
  };
  if (ceiling) {
    scenarios['ceiling-get'] = { label: 'ceiling: bare Fastify, GET by id', requests: scenarios.get.requests, baseline: 'ceiling' };
    scenarios['ceiling-list'] = { label: 'ceiling: bare Fastify, list of 100', requests: scenarios.list.requests, baseline: 'ceiling' };
    // The ceiling's create is SQLite only (PostgreSQL would need the API's pipelining to be comparable).
    if (dialect === 'sqlite') scenarios['ceiling-post'] = { label: 'ceiling: bare Fastify, POST (one commit each)', requests: scenarios.post.requests, baseline: 'ceiling' };
  }
  if (other) {
    for (const key of ['get', 'list', 'deep', 'post']) {
      scenarios[`other-${key}`] = { label: `${baselines.other.label}: ${scenarios[key].label}`, requests: scenarios[key].requests, baseline: 'other' };
    }
  }
  // POST last: the rows it adds sit above the first page, not in the way of the deep cursor.
  const order = ['get', 'other-get', 'ceiling-get', 'list', 'other-list', 'ceiling-list', 'deep', 'other-deep', 'tasks', 'events', 'post', 'other-post', 'ceiling-post'].filter(
    (k) => scenarios[k] && opts.only.includes(k.replace(/^(ceiling|other)-/, '')),
  );

  // The bytes of one answer of each list (a page of 100 is heavier the more fields its items carry).
  const pageBytes = {};
  for (const key of ['list', 'tasks', 'events'].filter((k) => opts.only.includes(k))) {
    const res = await fetch(apiUrls[0] + scenarios[key].requests[0].path, { headers: auth });
    pageBytes[key] = Buffer.byteLength(await res.text());
    if (res.status !== 200) throw new Error(`${scenarios[key].label} answered ${res.status}`);
  }

  // CPU time the server processes spend per request (from /proc), steadier than req/s on a shared machine.
  const ticks = (procs) => procs.reduce((sum, c) => {
    try {
      const fields = fs.readFileSync(`/proc/${c.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return sum + Number(fields[11]) + Number(fields[12]);
    } catch {
      return NaN;
    }
  }, 0);
  async function measure(urls, requests, headers, seconds, procs) {
    const before = ticks(procs);
    const result = await autocannon({
      url: urls.length === 1 ? urls[0] : urls,
      connections: opts.connections,
      pipelining: opts.pipelining,
      duration: seconds,
      headers,
      requests,
    });
    return {
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      mean: result.latency.average,
      total: result.requests.total,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      // clock ticks are 10 ms on Linux
      cpuUsPerReq: ((ticks(procs) - before) * 10_000) / Math.max(1, result.requests.total),
    };
  }
  async function run(urls, requests, headers, procs) {
    if (opts.warmup > 0) await measure(urls, requests, headers, opts.warmup, procs);
    return measure(urls, requests, headers, opts.duration, procs);
  }
  const bareRequest = [{ method: 'GET', path: '/' }];

  // A freshly started Node process runs these paths at half speed for several seconds (JIT, heap
  // sizing); production servers are warm, so warm every read path before any measurement.
  if (opts.warmup > 0) {
    process.stdout.write('warming up the API ...\n');
    for (const key of ['get', 'list', 'deep', 'tasks', 'events']) {
      if (key === 'get' || key === 'list' || key === 'deep' || opts.only.includes(key)) await measure(apiUrls, scenarios[key].requests, auth, opts.serverWarmup, apis);
    }
    if (ceiling) for (const key of ['get', 'list']) await measure(ceilingUrls, scenarios[key].requests, auth, opts.serverWarmup, [ceiling]);
    if (other) for (const key of ['get', 'list', 'deep']) await measure(otherUrls, scenarios[key].requests, auth, opts.serverWarmup, [other]);
  }

  // bare, A, bare, B, bare, ... bare: each endpoint is compared with the mean of the bare runs on either
  // side. With --rounds N the whole sequence repeats and each figure is the median over the rounds.
  const runBare = async () => (opts.bare ? await run(bareUrls, bareRequest, {}, bares) : { rps: NaN, p50: NaN, p99: NaN, mean: NaN, cpuUsPerReq: NaN });
  const bareRuns = [];
  const perRound = Object.fromEntries(order.map((key) => [key, []]));
  for (let round = 1; round <= opts.rounds; round++) {
    if (opts.rounds > 1) console.log(`round ${round} of ${opts.rounds}`);
    let before = await runBare();
    bareRuns.push(before);
    for (const key of order) {
      const s = scenarios[key];
      process.stdout.write(`measuring ${s.label} ...`);
      const base = s.baseline ? baselines[s.baseline] : null;
      const r = base ? await run(base.urls, s.requests, auth, base.processes) : await run(apiUrls, s.requests, auth, apis);
      const after = await runBare();
      bareRuns.push(after);
      const bare = (before.rps + after.rps) / 2;
      perRound[key].push({ ...r, bare, ratio: r.rps / bare });
      before = after;
      process.stdout.write(` ${r.rps.toFixed(0)} req/s\n`);
      if (r.non2xx || r.errors || r.timeouts) console.warn(`  WARNING: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
    }
  }

  const mean = (values) => values.reduce((a, v) => a + v, 0) / values.length;
  const medianOf = (runs, field) => median(runs.map((r) => r[field]));
  const rows = [
    {
      key: 'bare',
      label: `bare node:http${opts.instances > 1 ? ` x${opts.instances}` : ''} (${projectBytes} B JSON)`,
      rps: mean(bareRuns.map((r) => r.rps)),
      p50: medianOf(bareRuns, 'p50'),
      p99: medianOf(bareRuns, 'p99'),
      mean: medianOf(bareRuns, 'mean'),
      cpuUsPerReq: medianOf(bareRuns, 'cpuUsPerReq'),
      ratio: 1,
    },
  ];
  for (const key of order) {
    const runs = perRound[key];
    const row = { key, label: scenarios[key].label, rounds: runs };
    for (const field of ['rps', 'p50', 'p99', 'mean', 'cpuUsPerReq', 'bare', 'ratio', 'total', 'non2xx', 'errors', 'timeouts']) row[field] = medianOf(runs, field);
    rows.push(row);
  }

  // ---------------------------------------------------------------- targets
  const targets = [];
  const ratioTarget = (key, min) => {
    const row = rows.find((r) => r.key === key);
    if (row) targets.push({ target: `${row.label} >= ${min * 100}% of bare`, value: `${(row.ratio * 100).toFixed(1)}%`, pass: row.ratio >= min });
  };
  // Issue 11's targets: PostgreSQL pays a network round trip per statement that SQLite does not.
  const goals = dialect === 'postgres' ? { get: 0.35, list: 0.12, post: 0.12 } : { get: 0.5, list: 0.15, post: 0.25 };
  ratioTarget('get', goals.get);
  ratioTarget('post', goals.post);
  ratioTarget('list', goals.list);
  // Against the ceiling, each round compares the two runs made one after the other (the API's, then the bare
  // Fastify route's), so a slow spell of the shared machine hits both; the figure is the median over rounds.
  // Two views: throughput (API req/s over the ceiling's) and CPU (the ceiling's µs per request over the API's).
  // The same for the other build (--compare): above 1 this build is the faster.
  const relative = [];
  for (const baseline of ['ceiling', 'other']) {
    for (const key of ['get', 'list', 'deep', 'post']) {
      const api = perRound[key];
      const top = perRound[`${baseline}-${key}`];
      if (!api?.length || !top?.length) continue;
      const each = api.map((r, i) => ({ throughput: r.rps / top[i].rps, cpu: top[i].cpuUsPerReq / r.cpuUsPerReq }));
      relative.push({ baseline, key, label: scenarios[key].label, throughput: median(each.map((e) => e.throughput)), cpu: median(each.map((e) => e.cpu)), rounds: each });
    }
  }
  // Issue 29: GET by id keeps at least 0.75 of what a bare Fastify route with the same SQL reaches.
  const getOfCeiling = relative.find((c) => c.baseline === 'ceiling' && c.key === 'get');
  if (getOfCeiling) targets.push({ target: 'GET /v1/projects/:id >= 0.75 of the ceiling (req/s, median of rounds)', value: getOfCeiling.throughput.toFixed(2), pass: getOfCeiling.throughput >= 0.75 });
  // Issue 30: a page of 100 tasks (assignee_id=me) and of 100 events, each at least 0.8 of the project list's
  // throughput in the same round (median of the per-round ratios).
  for (const key of ['tasks', 'events']) {
    const mine = perRound[key];
    const lists = perRound.list;
    if (!mine?.length || !lists?.length) continue;
    const ratio = median(mine.map((r, i) => r.rps / lists[i].rps));
    const cpu = median(mine.map((r, i) => lists[i].cpuUsPerReq / r.cpuUsPerReq));
    relative.push({ baseline: 'list', key, label: scenarios[key].label, throughput: ratio, cpu, rounds: mine.map((r, i) => ({ throughput: r.rps / lists[i].rps, cpu: lists[i].cpuUsPerReq / r.cpuUsPerReq })) });
    const bytes = pageBytes[key] && pageBytes.list ? ` (a page is ${pageBytes[key]} bytes, ${(pageBytes[key] / pageBytes.list).toFixed(1)}x the project list's ${pageBytes.list})` : '';
    targets.push({ target: `${scenarios[key].label} >= 0.8 of the project list (req/s, median of rounds)${bytes}`, value: ratio.toFixed(2), pass: ratio >= 0.8 });
  }
  const list = rows.find((r) => r.key === 'list');
  const deep = rows.find((r) => r.key === 'deep');
  if (list && deep) {
    const p50 = deep.p50 / list.p50;
    const meanRatio = deep.mean / list.mean;
    const p99 = deep.p99 / list.p99;
    targets.push({ target: 'page 100 latency <= 1.2x first page (p50)', value: `${p50.toFixed(2)}x`, pass: p50 <= 1.2 });
    targets.push({ target: 'page 100 latency <= 1.2x first page (mean)', value: `${meanRatio.toFixed(2)}x`, pass: meanRatio <= 1.2 });
    targets.push({ target: 'page 100 latency <= 1.2x first page (p99)', value: `${p99.toFixed(2)}x`, pass: p99 <= 1.2 });
  }

  // ---------------------------------------------------------------- report
  const table = [
    ['endpoint', 'req/s', 'p50 ms', 'p99 ms', 'ratio to bare', 'server CPU µs/req'],
    ...rows.map((r) => [
      r.label,
      r.rps.toFixed(0),
      String(r.p50),
      String(r.p99),
      r.key === 'bare' ? '1.00' : `${r.ratio.toFixed(2)} (${(r.ratio * 100).toFixed(1)}%)`,
      r.cpuUsPerReq.toFixed(0),
    ]),
  ];
  const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)));
  const line = (row) => `| ${row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join(' | ')} |`;
  console.log();
  console.log(line(table[0]));
  console.log(`|${widths.map((w, c) => (c === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const row of table.slice(1)) console.log(line(row));
  for (const c of relative) {
    const each = c.rounds.map((r) => `${r.throughput.toFixed(2)}/${r.cpu.toFixed(2)}`).join(', ');
    const of = c.baseline === 'ceiling' ? 'the ceiling' : c.baseline === 'list' ? 'the project list' : baselines.other.label;
    console.log(`of ${of}, ${c.label}: ${c.throughput.toFixed(2)} by req/s, ${c.cpu.toFixed(2)} by CPU per request (rounds, req/s/CPU: ${each})`);
  }
  console.log();
  for (const t of targets) console.log(`${t.pass ? 'PASS' : 'FAIL'}  ${t.target}: ${t.value}`);

  const meta = {
    date: new Date().toISOString(),
    command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
    machine: { nproc: os.availableParallelism(), cpu: os.cpus()[0]?.model, memGiB: +(os.totalmem() / 2 ** 30).toFixed(1), node: process.version, platform: `${os.type()} ${os.release()}` },
    options: { ...opts, databaseUrl: opts.databaseUrl ? '(set)' : null },
    dialect,
    rateLimitPerMinute: RATE_LIMIT,
    seededProjects: opts.projects,
    seedSeconds,
    projectBytes,
    bareRuns,
    rows,
    relative,
    targets,
  };
  fs.mkdirSync(path.join(here, 'results'), { recursive: true });
  const file = path.join(here, 'results', `api-${dialect}-x${opts.instances}-${runId}.json`);
  fs.writeFileSync(file, JSON.stringify(meta, null, 2));
  console.log(`\nresults: ${path.relative(root, file)}`);
} finally {
  await cleanup();
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
