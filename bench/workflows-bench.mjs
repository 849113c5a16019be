#!/usr/bin/env node
// `npm run bench:workflows` (issue 9): the workflow run engine against the webhook delivery worker it runs beside,
// on SQLite and PostgreSQL, in one run. Build first: `npm run build` (the bench runs dist/).
//
// Per dialect, two fresh databases ("parked" and "empty": temp SQLite directories; databases `bench_workflows_*`
// created on the PostgreSQL server and dropped at the end), each with one organisation, one project, two webhook
// subscriptions to `project.created` and one workflow [Wait 1s, Wait 1s, Task assigned to the owner]:
//
// 1. Deliveries (the baseline): --deliveries pending deliveries (half as many events × 2 subscriptions) to a local
//    HTTPS receiver (its own process, self-signed certificate), drained by `startDeliveryWorker` (dist/, in this
//    process, with `ca`): deliveries per second, from the worker's start to the receiver's last request.
// 2. Transitions: runs of the workflow inserted as `startRun` would (queued, due now; straight into the tables for
//    speed, without its audit row), then `startDeliveryWorker` advances them until every run waits for a person
//    on its Task step. A run takes 3 advances (each one `runs.advance` transaction: start + first Wait; Wait elapsed
//    + second Wait; Wait elapsed + Task created with its audit row and `task.assigned` event) and 5 step changes
//    (counted from workflow_run_steps: pending→waiting, waiting→completed). Advances per second from the worker's
//    start to the last advance (the engine's `runsAdvanced()` counter, checked against the tables); each advance
//    call is timed, and stretches over 50 ms with no advance in flight are reported as idle (Waits not yet due).
//    a. --runs runs at once on the "parked" database (default 10,000: 30,000 advances); they end parked on their
//       Task (waiting for a person: out of the due index, `wake_at IS NULL`).
//    b. --advancing runs (default 2,000) on the "empty" database and on the "parked" one, alternately (the order
//       flips every round), --rounds times; each round's runs are deleted after it.
//    Each delivery round (1) runs on the "parked" database just before its round of (b).
// 3. Ratio: advances per second ÷ deliveries per second (medians of the rounds). CPU time per advance and per
//    delivery (this process; on PostgreSQL also the server backends of the bench's database, from /proc) is
//    reported too: on a shared machine it moves less than the rates.
// 4. Memory: `./bin/workspace worker` as a child process: idle on the "empty" database and on the "parked" one
//    (--runs parked runs, nothing due) for --idle-seconds, then on the "parked" one with --advancing queued runs +
//    --deliveries pending deliveries until all are done; VmHWM (peak RSS) from /proc/<pid>/status.
//
// Options:
//   --dialect sqlite|postgres|both  (default both); --sqlite and --pg are short for one dialect
//   --runs N (10000)  --advancing N (2000)  --deliveries N (5000)  --rounds N (3)
//   --batch-size N  --parallel N    run engine options (default: the engine's: 100; 1 lane on SQLite, 8 on PG)
//   --idle-seconds S (5)  --skip-memory
//   --pg-url URL                    PostgreSQL server (BENCH_PG_URL; default postgres://postgres@127.0.0.1:5432/postgres)
//   --root DIR                      the checkout whose dist/ and bin/ run (default this one), for a before/after
//   --keep                          keep the databases and print where they are
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { builtModule, builtPath } from './built.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------- receiver (child process mode), as webhooks-bench
if (process.argv[2] === '--receiver') {
  const [key, cert] = [fs.readFileSync(process.argv[3]), fs.readFileSync(process.argv[4])];
  let count = 0;
  let first = 0;
  let last = 0;
  const server = https.createServer({ key, cert, keepAlive: true, keepAliveTimeout: 30_000 }, (req, res) => {
    req.resume();
    req.on('end', () => {
      const now = Date.now();
      count++;
      if (!first) first = now;
      last = now;
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', (msg) => {
    if (msg === 'reset') {
      count = 0;
      first = last = 0;
      process.send({ reset: true });
    } else if (msg === 'stats') {
      process.send({ count, first, last });
    } else if (msg === 'exit') {
      process.exit(0);
    }
  });
}

// ---------------------------------------------------------------- helpers
function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const [name, inline] = arg.slice(2).split('=', 2);
    if (['keep', 'help', 'skip-memory', 'pg', 'sqlite'].includes(name)) out[name] = true;
    else out[name] = inline ?? argv[++i];
  }
  return out;
}

const num = (v, d) => (v === undefined || v === '' ? d : Number(v));
const median = (xs) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU of a process in ms (0 once it has gone). */
function procCpuMs(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
  } catch {
    return 0;
  }
}

function ask(child, msg) {
  return new Promise((resolve) => {
    child.once('message', resolve);
    child.send(msg);
  });
}

async function waitForCount(receiver, n, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await ask(receiver, 'stats');
    if (s.count >= n || Date.now() > deadline) return s;
    await sleep(50);
  }
}

// ---------------------------------------------------------------- main
async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    const text = fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
    console.log(text.slice(1, text.findIndex((l) => l.startsWith('import'))).join('\n'));
    return;
  }
  const opts = {
    dialects:
      args.pg && !args.sqlite
        ? ['postgres']
        : args.sqlite && !args.pg
          ? ['sqlite']
          : { sqlite: ['sqlite'], postgres: ['postgres'], both: ['sqlite', 'postgres'] }[args.dialect ?? 'both'],
    runs: num(args.runs, 10_000),
    advancing: num(args.advancing, 2000),
    deliveries: num(args.deliveries, 5000),
    rounds: num(args.rounds, 3),
    batchSize: args['batch-size'] === undefined ? undefined : Number(args['batch-size']),
    parallel: args.parallel === undefined ? undefined : Number(args.parallel),
    idleSeconds: num(args['idle-seconds'], 5),
    skipMemory: Boolean(args['skip-memory']),
    pgUrl: args['pg-url'] ?? process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    root: path.resolve(args.root ?? path.resolve(here, '..')),
    keep: Boolean(args.keep),
  };
  if (!opts.dialects) throw new Error('--dialect must be sqlite, postgres or both');
  const dist = path.join(opts.root, 'dist');
  builtPath(dist, 'runEngine');
  const mod = {
    ...(await import(path.join(dist, 'config.js'))),
    ...(await import(path.join(dist, 'container.js'))),
    ...(await builtModule(dist, 'actor')),
    ...(await builtModule(dist, 'worker')),
    ...(await builtModule(dist, 'events')),
    ...(await import(path.join(dist, 'lib/ids.js'))),
  };
  const requireFromDist = createRequire(path.join(dist, 'index.js'));
  const pg = requireFromDist('pg');
  const { sql } = await import('kysely');
  const engineOptions = {
    ...(opts.batchSize !== undefined ? { batchSize: opts.batchSize } : {}),
    ...(opts.parallel !== undefined ? { parallel: opts.parallel } : {}),
  };

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-wfbench-'));
  const keyFile = path.join(tmp, 'key.pem');
  const certFile = path.join(tmp, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'pipe' });
  const ca = fs.readFileSync(certFile, 'utf8');
  const receiver = spawn(process.execPath, [fileURLToPath(import.meta.url), '--receiver', keyFile, certFile], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise((resolve) => receiver.once('message', resolve));
  const url = `https://127.0.0.1:${port}/hook`;

  const started = new Date();
  const machine = `${os.availableParallelism()} × ${os.cpus()[0]?.model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const loadBefore = os.loadavg()[0];
  console.log(`workflows benchmark: ${machine}, load average ${loadBefore.toFixed(1)}`);
  const results = { started: started.toISOString(), machine, loadBefore, options: { ...opts }, dialects: {} };
  try {
    for (const dialect of opts.dialects) results.dialects[dialect] = await runDialect(dialect);
  } finally {
    receiver.send('exit');
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  results.finished = new Date().toISOString();
  results.loadAfter = os.loadavg()[0];

  const md = renderMarkdown(results, opts);
  console.log(`\n${md}`);
  fs.mkdirSync(path.join(here, 'results'), { recursive: true });
  const out = path.join(here, 'results', `workflows-${started.toISOString().replace(/[:.]/g, '-')}.md`);
  fs.writeFileSync(out, `${md}\n\n<details><summary>raw figures</summary>\n\n\`\`\`json\n${JSON.stringify(results, null, 2)}\n\`\`\`\n</details>\n`);
  console.log(`written ${path.relative(process.cwd(), out)}`);

  // ---------------------------------------------------------------- one database with its fixtures
  async function openBench(dialect, name) {
    const dataDir = fs.mkdtempSync(path.join(tmp, `${dialect}-${name}-`));
    let dbName = null;
    if (dialect === 'postgres') {
      dbName = `bench_workflows_${randomBytes(5).toString('hex')}`;
      const admin = new pg.Client({ connectionString: opts.pgUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${dbName}`);
      await admin.end();
    }
    const dbUrl = dbName ? Object.assign(new URL(opts.pgUrl), { pathname: `/${dbName}` }).toString() : null;
    const env = {
      DATA_DIR: dataDir,
      ...(dbUrl ? { DATABASE_URL: dbUrl } : {}),
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_CONCURRENCY: '64',
      WEBHOOK_PER_SUBSCRIPTION_CONCURRENCY: '64',
      // The bench inserts its runs itself, but a `startRun` beside them must not be refused by the default cap.
      WORKFLOW_MAX_ACTIVE_RUNS: '10000000',
    };
    console.log(`${dialect} "${name}": ${dbName ? `database ${dbName} on ${new URL(opts.pgUrl).host}` : `SQLite in ${dataDir}`}`);
    const container = await mod.createContainer(mod.loadConfig(env), { migrate: true });
    const { db } = container.database;

    const created = await container.services.admin.createOrganization({ name: 'Bench', ownerEmail: 'bench@example.com', ownerName: 'Bench' });
    const orgId = created.organization.id;
    const actor = mod.cliActor(orgId);
    for (let i = 0; i < 2; i++) {
      await container.services.webhooks.create(actor, { url: `${url}?sub=${i}`, events: ['project.created'], secret: `bench-secret-${i}-0123456789` });
    }
    const project = await container.services.projects.create(actor, { name: 'Bench project' });
    const workflow = await container.services.workflows.create(actor, project.id, {
      name: 'Bench workflow',
      steps: [
        { type: 'wait', duration: '1s' },
        { type: 'wait', duration: '1s' },
        { type: 'task', title: 'Review', assignee_id: created.owner.id, due_in: '1d' },
      ],
    });
    const workflowRow = await container.store.repos.workflows.findById(orgId, workflow.id);
    const stepDefs = JSON.parse(workflowRow.steps);

    // Every advance is timed where the engine calls it (the engine looks the method up on this object).
    const runsService = container.services.runs;
    const advanceOriginal = runsService.advance;
    let probe = null;
    runsService.advance = async (owner, key) => {
      const t0 = performance.now();
      if (probe) {
        if (probe.inFlight === 0 && t0 - probe.lastAt > 50) probe.idleMs += t0 - probe.lastAt;
        probe.inFlight++;
      }
      const ok = await advanceOriginal(owner, key);
      const t1 = performance.now();
      if (probe) {
        probe.inFlight--;
        if (ok) probe.latencies.push(t1 - t0);
        probe.lastAt = t1;
      }
      return ok;
    };
    let wakes = 0;
    container.waker.subscribe(() => wakes++);

    /** CPU of the server backends serving this database (PostgreSQL), or 0. */
    const serverCpu = async () => {
      if (!dbName) return { ms: 0 };
      const admin = new pg.Client({ connectionString: opts.pgUrl });
      await admin.connect();
      const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [dbName]);
      await admin.end();
      return { ms: rows.reduce((s, r) => s + procCpuMs(r.pid), 0), pids: new Set(rows.map((r) => r.pid)) };
    };
    /** Both CPU figures over `work`: this process, and the backends alive at its end (new ones counted from 0). */
    const measureCpu = async (work) => {
      const before = await serverCpu();
      const byPid = new Map([...(before.pids ?? [])].map((pid) => [pid, procCpuMs(pid)]));
      const cpu0 = process.cpuUsage();
      const value = await work();
      const cpu = process.cpuUsage(cpu0);
      const after = await serverCpu();
      const serverMs = [...(after.pids ?? [])].reduce((s, pid) => s + procCpuMs(pid) - (byPid.get(pid) ?? 0), 0);
      return { value, processMs: (cpu.user + cpu.system) / 1000, serverMs };
    };

    const seedRuns = async (n) => {
      const ids = [];
      const now = Date.now();
      for (let done = 0; done < n; done += 500) {
        const runs = [];
        const steps = [];
        for (let i = done; i < Math.min(n, done + 500); i++) {
          const id = mod.newId('run');
          ids.push(id);
          // What `workflows.startRun` inserts (src/services/workflows/workflows-service.ts).
          runs.push({
            id,
            org_id: orgId,
            project_id: project.id,
            workflow_id: workflow.id,
            workflow_name: workflowRow.name,
            workflow_version: workflowRow.version,
            status: 'queued',
            current_step: 0,
            step_count: stepDefs.length,
            started_by: null,
            started_by_label: 'cli',
            error: null,
            error_code: null,
            created_at: now,
            started_at: null,
            finished_at: null,
            wake_at: now,
            lease_owner: null,
            lease_expires_at: null,
            updated_at: now,
          });
          stepDefs.forEach((s, position) =>
            steps.push({
              org_id: orgId,
              run_id: id,
              position,
              step_id: s.id,
              kind: s.kind,
              title: s.title,
              assignee_id: s.assignee_id,
              due_in_ms: s.due_in_ms,
              duration_ms: s.duration_ms,
              status: 'pending',
              outcome: null,
              task_id: null,
              started_at: null,
              finished_at: null,
            }),
          );
        }
        await db.transaction().execute(async (trx) => {
          await trx.insertInto('workflow_runs').values(runs).execute();
          await trx.insertInto('workflow_run_steps').values(steps).execute();
        });
      }
      return ids;
    };
    const deleteRuns = async (ids) => {
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        await db.transaction().execute(async (trx) => {
          await trx.deleteFrom('tasks').where('run_id', 'in', chunk).execute();
          await trx.deleteFrom('workflow_run_steps').where('run_id', 'in', chunk).execute();
          await trx.deleteFrom('workflow_runs').where('id', 'in', chunk).execute();
        });
      }
    };
    const seedEvents = async (n) => {
      for (let done = 0; done < n; done += 500) {
        await container.store.transaction(async (repos) => {
          for (let i = done; i < Math.min(n, done + 500); i++) {
            await mod.recordEvent(repos, { orgId, type: 'project.created', data: { project_id: `proj_bench${i}`, name: `P${i}`, status: 'active' }, occurredAt: Date.now() });
          }
        });
      }
    };
    // What autovacuum does after this many inserts and deletes; without statistics PostgreSQL may misplan the claim.
    const analyze = async () => {
      if (dialect === 'postgres') await container.database.pgPool.query('VACUUM ANALYZE');
    };
    /** Step changes so far: each waiting or completed step left pending once; each completed one then left waiting. */
    const stepChanges = async () => {
      const rows = await db.selectFrom('workflow_run_steps').select((eb) => ['status', eb.fn.countAll().as('n')]).groupBy('status').execute();
      const by = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
      return 2 * (by.completed ?? 0) + (by.waiting ?? 0);
    };
    const runStates = async () => {
      const parked = await db
        .selectFrom('workflow_runs')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('wake_at', 'is', null)
        .where('status', '=', 'waiting')
        .where('current_step', '=', 2)
        .executeTakeFirst();
      const due = await db.selectFrom('workflow_runs').select((eb) => eb.fn.countAll().as('n')).where('wake_at', 'is not', null).executeTakeFirst();
      return { parked: Number(parked.n), due: Number(due.n) };
    };

    /** The plan of the engine's due scan (the claim's inner SELECT, as runs-repo writes it) with runs due. */
    const claimPlan = async () => {
      const now = Date.now();
      const scan = sql`SELECT seq FROM workflow_runs WHERE wake_at <= ${now} AND (lease_expires_at IS NULL OR lease_expires_at <= ${now}) ORDER BY wake_at LIMIT 100`;
      const { rows } = dbName ? await sql`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${scan}`.execute(db) : await sql`EXPLAIN QUERY PLAN ${scan}`.execute(db);
      return rows.map((r) => r['QUERY PLAN'] ?? r.detail);
    };

    const deliveryRound = async (label) => {
      await ask(receiver, 'reset');
      await seedEvents(opts.deliveries / 2);
      await analyze();
      const t0 = Date.now();
      const { value: drained, processMs, serverMs } = await measureCpu(async () => {
        const worker = await mod.startDeliveryWorker(container, { ca, runs: engineOptions });
        const stats = await waitForCount(receiver, opts.deliveries, 300_000);
        await worker.stop();
        return stats;
      });
      if (drained.count < opts.deliveries) throw new Error(`only ${drained.count} of ${opts.deliveries} deliveries arrived`);
      const seconds = (drained.last - t0) / 1000;
      const r = {
        deliveries: drained.count,
        seconds: +seconds.toFixed(2),
        perSecond: Math.round(drained.count / seconds),
        cpuUsPerDelivery: Math.round((processMs * 1000) / drained.count),
        serverCpuUsPerDelivery: Math.round((serverMs * 1000) / drained.count),
      };
      console.log(`${label}: ${r.deliveries} deliveries in ${r.seconds} s = ${r.perSecond}/s; CPU ${r.cpuUsPerDelivery} µs/delivery${dbName ? ` + server ${r.serverCpuUsPerDelivery} µs` : ''}`);
      return r;
    };

    const transitionRound = async (n, label, { plan = false } = {}) => {
      const ids = await seedRuns(n);
      await analyze();
      const claimScan = plan ? await claimPlan() : undefined;
      if (claimScan) console.log(`due scan with ${n} runs due:\n  ${claimScan.join('\n  ')}`);
      const before = await stepChanges();
      const stateBefore = await runStates();
      const expected = 3 * n;
      wakes = 0;
      let t0 = 0;
      const { value, processMs, serverMs } = await measureCpu(async () => {
        t0 = performance.now();
        probe = { latencies: [], lastAt: t0, idleMs: 0, inFlight: 0 };
        const worker = await mod.startDeliveryWorker(container, { ca, runs: engineOptions });
        const deadline = Date.now() + 900_000;
        while (worker.runsAdvanced() < expected && Date.now() < deadline) await sleep(10);
        const advances = worker.runsAdvanced();
        await worker.stop();
        return advances;
      });
      const advances = value;
      const seconds = (probe.lastAt - t0) / 1000;
      const { latencies, idleMs } = probe;
      probe = null;
      const changes = (await stepChanges()) - before;
      const state = await runStates();
      if (advances !== expected || state.parked - stateBefore.parked !== n || state.due !== 0) {
        throw new Error(`${label}: expected ${expected} advances and ${n} more runs parked; got ${advances} and ${state.parked - stateBefore.parked} (${state.due} still due)`);
      }
      latencies.sort((a, b) => a - b);
      const r = {
        runs: n,
        parkedBefore: stateBefore.parked,
        advances,
        stepChanges: changes,
        seconds: +seconds.toFixed(2),
        idleSeconds: +(idleMs / 1000).toFixed(2),
        advancesPerSecond: Math.round(advances / seconds),
        stepChangesPerSecond: Math.round(changes / seconds),
        advanceMeanMs: +(latencies.reduce((a, b) => a + b, 0) / latencies.length).toFixed(2),
        advanceP50ms: +pct(latencies, 50).toFixed(2),
        advanceP99ms: +pct(latencies, 99).toFixed(2),
        cpuUsPerAdvance: Math.round((processMs * 1000) / advances),
        serverCpuUsPerAdvance: Math.round((serverMs * 1000) / advances),
        wakes,
        ...(claimScan ? { claimScan } : {}),
      };
      console.log(
        `${label}: ${n} runs (${r.parkedBefore} parked), ${advances} advances / ${changes} step changes in ${r.seconds} s (idle ${r.idleSeconds} s) = ` +
          `${r.advancesPerSecond} advances/s, ${r.stepChangesPerSecond} step changes/s; advance mean ${r.advanceMeanMs} p50 ${r.advanceP50ms} p99 ${r.advanceP99ms} ms; ` +
          `CPU ${r.cpuUsPerAdvance} µs/advance${dbName ? ` + server ${r.serverCpuUsPerAdvance} µs` : ''}; ${wakes} wakes`,
      );
      return { r, ids };
    };

    /** `./bin/workspace worker` on this database until `until()` resolves: peak RSS (VmHWM). */
    const workerProcess = async (label, until) => {
      const child = spawn(process.execPath, [path.join(opts.root, 'bin/workspace'), 'worker'], {
        env: { ...process.env, METRICS_PORT: '0', ...env, NODE_EXTRA_CA_CERTS: certFile },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      let peakKb = 0;
      const sample = () => {
        try {
          const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
          peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
        } catch {
          // The process has exited between samples.
        }
      };
      const sampler = setInterval(sample, 100);
      const t0 = Date.now();
      await until();
      const seconds = (Date.now() - t0) / 1000;
      sample();
      clearInterval(sampler);
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      const m = { seconds: +seconds.toFixed(1), peakRssMb: Math.round(peakKb / 1024) };
      console.log(`workspace worker, ${label}: ${m.seconds} s, VmHWM ${m.peakRssMb} MB`);
      return m;
    };

    return {
      name,
      dbName,
      dataDir,
      seedRuns,
      deleteRuns,
      seedEvents,
      analyze,
      runStates,
      deliveryRound,
      transitionRound,
      workerProcess,
      async close() {
        await container.close();
        if (opts.keep) console.log(`kept: ${dbName ? `database ${dbName}` : dataDir}`);
        else if (dbName) {
          const admin = new pg.Client({ connectionString: opts.pgUrl });
          await admin.connect();
          await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
          await admin.end();
        }
      },
    };
  }

  // ---------------------------------------------------------------- one dialect
  async function runDialect(dialect) {
    console.log(`\n=== ${dialect} ===`);
    const out = { deliveries: [], advancingEmpty: [], advancingParked: [] };
    const benches = [];
    try {
      const parked = await openBench(dialect, 'parked');
      benches.push(parked);
      const empty = await openBench(dialect, 'empty');
      benches.push(empty);

      // Warm-up, not recorded: JIT, connections, TLS sessions, statement caches.
      await parked.deliveryRound('warm-up');
      for (const b of [parked, empty]) await b.deleteRuns((await b.transitionRound(Math.min(500, opts.advancing), `warm-up "${b.name}"`)).ids);

      out.bulk = (await parked.transitionRound(opts.runs, `${opts.runs} runs at once`)).r;
      for (let round = 1; round <= opts.rounds; round++) {
        out.deliveries.push(await parked.deliveryRound(`round ${round}, deliveries`));
        const order = round % 2 ? [empty, parked] : [parked, empty];
        for (const b of order) {
          const { r, ids } = await b.transitionRound(opts.advancing, `round ${round}, ${b === parked ? `${opts.runs} parked` : 'nothing parked'}`, { plan: round === 1 });
          (b === parked ? out.advancingParked : out.advancingEmpty).push(r);
          await b.deleteRuns(ids);
        }
      }

      if (!opts.skipMemory) {
        const parkedRuns = (await parked.runStates()).parked;
        const idleEmpty = await empty.workerProcess('idle, no runs', () => sleep(opts.idleSeconds * 1000));
        const idleParked = await parked.workerProcess(`idle, ${parkedRuns} parked runs`, () => sleep(opts.idleSeconds * 1000));
        await ask(receiver, 'reset');
        const ids = await parked.seedRuns(opts.advancing);
        await parked.seedEvents(opts.deliveries / 2);
        await parked.analyze();
        const busy = await parked.workerProcess(`${parkedRuns} parked + ${opts.advancing} runs + ${opts.deliveries} deliveries`, async () => {
          const deadline = Date.now() + 900_000;
          for (;;) {
            const s = await ask(receiver, 'stats');
            const state = await parked.runStates();
            if ((s.count >= opts.deliveries && state.parked >= parkedRuns + opts.advancing && state.due === 0) || Date.now() > deadline) break;
            await sleep(100);
          }
        });
        const delivered = (await ask(receiver, 'stats')).count;
        const state = await parked.runStates();
        if (delivered < opts.deliveries || state.parked < parkedRuns + opts.advancing) throw new Error(`workspace worker: ${delivered} delivered, ${state.parked - parkedRuns} runs parked`);
        out.memory = { parked: parkedRuns, idleEmpty, idleParked, busy };
        await parked.deleteRuns(ids);
      }
      return out;
    } finally {
      for (const b of benches) await b.close();
    }
  }
}

// ---------------------------------------------------------------- the table
function renderMarkdown(results, opts) {
  const names = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
  const ds = Object.keys(results.dialects);
  const fmt = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
  const f2 = (n) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
  const k = (n) => n.toLocaleString('en-US');
  const row = (label, fn) => `| ${label} | ${ds.map((d) => fn(results.dialects[d])).join(' | ')} |`;
  const med = (rs, key) => median(rs.map((r) => r[key]));
  const cpu = (r, proc, server) => `${fmt(r[proc])}${r[server] ? ` + ${fmt(r[server])}` : ''}`;
  const medCpu = (rs, proc, server) => cpu({ [proc]: med(rs, proc), [server]: med(rs, server) }, proc, server);
  const dps = (r) => med(r.deliveries, 'perSecond');
  const lines = [
    `Workflow engine benchmark, ${results.started.slice(0, 16).replace('T', ' ')}-${results.finished.slice(11, 16)} UTC; ${results.machine}; load average ${results.loadBefore.toFixed(1)} before, ${results.loadAfter.toFixed(1)} after.`,
    `Engine: batch size ${opts.batchSize ?? '100 (default)'}, lanes ${opts.parallel ?? '1 on SQLite, 8 on PostgreSQL (defaults)'}. Workflow [Wait 1s, Wait 1s, Task]: 3 advances (transactions) and 5 step changes per run. ` +
      `Medians of ${opts.rounds} rounds. CPU: this process (worker) + PostgreSQL backends, µs.`,
    '',
    `| measure | ${ds.map((d) => names[d]).join(' | ')} |`,
    `|---|${ds.map(() => '---:').join('|')}|`,
    row(`webhook deliveries/s (${k(opts.deliveries)} pending)`, (r) => fmt(dps(r))),
    row(`CPU per delivery`, (r) => medCpu(r.deliveries, 'cpuUsPerDelivery', 'serverCpuUsPerDelivery')),
    row(`${k(opts.runs)} runs at once: advances/s (${k(opts.runs * 3)} advances)`, (r) => fmt(r.bulk.advancesPerSecond)),
    row(`${k(opts.runs)} runs at once: step changes/s`, (r) => fmt(r.bulk.stepChangesPerSecond)),
    row(`${k(opts.runs)} runs at once: time s (idle s)`, (r) => `${r.bulk.seconds} (${r.bulk.idleSeconds})`),
    row(`${k(opts.runs)} runs at once: advance mean / p50 / p99 ms`, (r) => `${f2(r.bulk.advanceMeanMs)} / ${f2(r.bulk.advanceP50ms)} / ${f2(r.bulk.advanceP99ms)}`),
    row(`${k(opts.runs)} runs at once: CPU per advance`, (r) => cpu(r.bulk, 'cpuUsPerAdvance', 'serverCpuUsPerAdvance')),
    row(`**advances/s ÷ deliveries/s** (${k(opts.runs)} runs)`, (r) => `**${f2(r.bulk.advancesPerSecond / dps(r))}**`),
    row(`${k(opts.advancing)} runs, nothing parked: advances/s`, (r) => fmt(med(r.advancingEmpty, 'advancesPerSecond'))),
    row(`${k(opts.advancing)} runs, ${k(opts.runs)} parked on a Task: advances/s`, (r) => fmt(med(r.advancingParked, 'advancesPerSecond'))),
    row(`parked ÷ nothing parked (advances/s; CPU per advance)`, (r) =>
      `${f2(med(r.advancingParked, 'advancesPerSecond') / med(r.advancingEmpty, 'advancesPerSecond'))}; ${f2(med(r.advancingParked, 'cpuUsPerAdvance') / med(r.advancingEmpty, 'cpuUsPerAdvance'))}`,
    ),
    row(`${k(opts.advancing)} runs, ${k(opts.runs)} parked: advance p50 / p99 ms`, (r) => `${f2(med(r.advancingParked, 'advanceP50ms'))} / ${f2(med(r.advancingParked, 'advanceP99ms'))}`),
    row(`${k(opts.advancing)} runs, ${k(opts.runs)} parked: CPU per advance`, (r) => medCpu(r.advancingParked, 'cpuUsPerAdvance', 'serverCpuUsPerAdvance')),
    row(`advances/s ÷ deliveries/s (${k(opts.advancing)} runs, ${k(opts.runs)} parked)`, (r) => f2(med(r.advancingParked, 'advancesPerSecond') / dps(r))),
  ];
  if (ds.every((d) => results.dialects[d].memory)) {
    lines.push(
      row('`workspace worker` idle, no runs: VmHWM MB', (r) => fmt(r.memory.idleEmpty.peakRssMb)),
      row(`\`workspace worker\` idle, ${k(opts.runs)} parked runs: VmHWM MB`, (r) => fmt(r.memory.idleParked.peakRssMb)),
      row(`\`workspace worker\`, ${k(opts.runs)} parked + ${k(opts.advancing)} runs + ${k(opts.deliveries)} deliveries: VmHWM MB (time s)`, (r) => `${fmt(r.memory.busy.peakRssMb)} (${r.memory.busy.seconds})`),
    );
  }
  lines.push('', 'Every round (advances/s, or deliveries/s):', '');
  const plans = [];
  for (const d of ds) {
    const r = results.dialects[d];
    lines.push(
      `- ${names[d]}: nothing parked ${r.advancingEmpty.map((x) => fmt(x.advancesPerSecond)).join(', ')}; ${k(opts.runs)} parked ${r.advancingParked.map((x) => fmt(x.advancesPerSecond)).join(', ')}; ` +
        `deliveries ${r.deliveries.map((x) => fmt(x.perSecond)).join(', ')}; wakes in the ${k(opts.runs)}-run phase ${fmt(r.bulk.wakes)}`,
    );
    for (const [which, rs] of [['nothing parked', r.advancingEmpty], [`${k(opts.runs)} parked`, r.advancingParked]]) {
      if (rs[0]?.claimScan) plans.push(`${names[d]}, ${k(opts.advancing)} runs due, ${which}:`, '', ...rs[0].claimScan.map((l) => `    ${l}`), '');
    }
  }
  if (plans.length > 0) lines.push('', "The engine's due scan (the claim's inner SELECT):", '', ...plans);
  return lines.join('\n');
}

if (process.argv[2] !== '--receiver') {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
