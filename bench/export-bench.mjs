#!/usr/bin/env node
// `npm run bench:export` (issue 10): the data export (DASHBOARD 9) built by a real `./bin/workspace worker`, on SQLite
// and PostgreSQL. Build first: `npm run build` (the bench runs dist/ and bin/).
//
// Per dialect, a fresh database (a temp SQLite directory; a database `bench_export_*` created on the PostgreSQL server
// and dropped at the end) with one organisation holding --projects projects and --audit audit rows, inserted with bulk
// SQL (then ANALYZE on PostgreSQL, as autovacuum would have done on tables that grew over time). Then:
//
// 1. `./bin/workspace worker` is started and left idle for --idle-seconds: its VmHWM (peak RSS, /proc/<pid>/status)
//    then is the idle figure.
// 2. --rounds times: an export is requested through the service (as the dashboard's "Request export" does; the worker
//    is woken by NOTIFY on PostgreSQL, by its 1 s poll on SQLite) and the bench polls the `exports` row until it is
//    ready. Time to ready: from the request to the row's `ready_at` (the build itself: from `started_at`). Throughput:
//    the NDJSON bytes (uncompressed) and the ZIP bytes per second of build. The worker's VmHWM is sampled every 100 ms.
// 3. The last export is downloaded through the service (`openDownload`, the stream the dashboard sends), timed, and
//    opened with yauzl: every entry's CRC and the manifest's counts are checked.
//
// Options:
//   --dialect sqlite|postgres|both (default both)   --projects N (100000)   --audit N (10000)   --rounds N (3)
//   --idle-seconds S (3)   --pg-url URL (BENCH_PG_URL; default postgres://postgres@127.0.0.1:5432/postgres)
//   --root DIR (the checkout whose dist/ and bin/ run; default this one)   --keep (keep the databases)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { builtModule, builtPath } from './built.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const [name, inline] = arg.slice(2).split('=', 2);
    if (['keep', 'help'].includes(name)) out[name] = true;
    else out[name] = inline ?? argv[++i];
  }
  return out;
}

const num = (v, d) => (v === undefined || v === '' ? d : Number(v));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const MB = 1024 * 1024;

function peakKb(pid) {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Every entry of a ZIP in memory: name → bytes, CRC-32 checked. */
function readZip(yauzl, buffer) {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const files = new Map();
      zip.on('error', reject);
      zip.on('end', () => resolve(files));
      zip.on('entry', (entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e) return reject(e);
          const parts = [];
          stream.on('data', (c) => parts.push(c));
          stream.on('end', () => {
            const data = Buffer.concat(parts);
            if (zlib.crc32(data) !== entry.crc32) return reject(new Error(`${entry.fileName}: CRC mismatch`));
            files.set(entry.fileName, data);
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    const text = fs.readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n');
    console.log(text.slice(1, text.findIndex((l) => l.startsWith('import'))).join('\n'));
    return;
  }
  const opts = {
    dialects: { sqlite: ['sqlite'], postgres: ['postgres'], both: ['sqlite', 'postgres'] }[args.dialect ?? 'both'],
    projects: num(args.projects, 100_000),
    audit: num(args.audit, 10_000),
    rounds: num(args.rounds, 3),
    idleSeconds: num(args['idle-seconds'], 3),
    pgUrl: args['pg-url'] ?? process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    root: path.resolve(args.root ?? path.resolve(here, '..')),
    keep: Boolean(args.keep),
  };
  if (!opts.dialects) throw new Error('--dialect must be sqlite, postgres or both');
  const dist = path.join(opts.root, 'dist');
  builtPath(dist, 'exportJob');
  const mod = {
    ...(await import(path.join(dist, 'config.js'))),
    ...(await import(path.join(dist, 'container.js'))),
    ...(await builtModule(dist, 'actor')),
    ...(await import(path.join(dist, 'lib/ids.js'))),
  };
  const requireFromDist = createRequire(path.join(dist, 'index.js'));
  const pg = requireFromDist('pg');
  const yauzl = requireFromDist('yauzl');
  const { CompiledQuery } = requireFromDist('kysely');

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-exportbench-'));
  const started = new Date();
  const machine = `${os.availableParallelism()} × ${os.cpus()[0]?.model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const loadBefore = os.loadavg()[0];
  console.log(`export benchmark: ${machine}, load average ${loadBefore.toFixed(1)}`);
  const results = { started: started.toISOString(), machine, loadBefore, options: { ...opts }, dialects: {} };
  try {
    for (const dialect of opts.dialects) results.dialects[dialect] = await runDialect(dialect);
  } finally {
    if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
  }
  results.finished = new Date().toISOString();
  results.loadAfter = os.loadavg()[0];

  const md = renderMarkdown(results, opts);
  console.log(`\n${md}`);
  fs.mkdirSync(path.join(here, 'results'), { recursive: true });
  const out = path.join(here, 'results', `export-${started.toISOString().replace(/[:.]/g, '-')}.md`);
  fs.writeFileSync(out, `${md}\n\n<details><summary>raw figures</summary>\n\n\`\`\`json\n${JSON.stringify(results, null, 2)}\n\`\`\`\n</details>\n`);
  console.log(`written ${path.relative(process.cwd(), out)}`);

  async function runDialect(dialect) {
    console.log(`\n=== ${dialect} ===`);
    const dataDir = fs.mkdtempSync(path.join(tmp, `${dialect}-`));
    let dbName = null;
    if (dialect === 'postgres') {
      dbName = `bench_export_${randomBytes(5).toString('hex')}`;
      const admin = new pg.Client({ connectionString: opts.pgUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${dbName}`);
      await admin.end();
    }
    const dbUrl = dbName ? Object.assign(new URL(opts.pgUrl), { pathname: `/${dbName}` }).toString() : null;
    const env = { DATA_DIR: dataDir, ...(dbUrl ? { DATABASE_URL: dbUrl } : {}), LOG_LEVEL: 'info' };
    console.log(dbName ? `database ${dbName} on ${new URL(opts.pgUrl).host}` : `SQLite in ${dataDir}`);
    const container = await mod.createContainer(mod.loadConfig({ ...env, LOG_LEVEL: 'warn' }), { migrate: true });
    const { db } = container.database;
    let worker = null;
    try {
      const created = await container.services.admin.createOrganization({ name: 'Bench Export', ownerEmail: 'bench@example.com', ownerName: 'Bench' });
      const orgId = created.organization.id;
      const actor = mod.cliActor(orgId);

      // ---- seed
      const t0 = performance.now();
      const base = Date.UTC(2026, 0, 1);
      const recent = Date.now() - opts.audit - 60_000;
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < opts.projects; i += 1000) {
          const rows = Array.from({ length: Math.min(1000, opts.projects - i) }, (_, j) => {
            const n = i + j;
            return {
              id: mod.newId('proj'),
              org_id: orgId,
              name: `Project ${n}`,
              description: n % 3 === 0 ? null : `Description of project ${n}: what it is for, who works on it, and when it ends.`,
              status: ['active', 'draft', 'archived'][n % 3],
              created_at: base + n,
              updated_at: base + n,
            };
          });
          await trx.insertInto('projects').values(rows).execute();
        }
        for (let i = 0; i < opts.audit; i += 500) {
          const rows = Array.from({ length: Math.min(500, opts.audit - i) }, (_, j) => {
            const n = i + j;
            return {
              id: mod.newId('aud'),
              org_id: orgId,
              // Recent: the worker's housekeeping prunes rows older than AUDIT_RETENTION_DAYS.
              occurred_at: recent + n,
              actor_type: 'user',
              actor_id: created.owner.id,
              actor_label: 'bench@example.com',
              api_key_id: created.api_key.id,
              session_id: null,
              action: 'project.updated',
              target_type: 'project',
              target_id: `proj_${n}`,
              target_label: `Project ${n}`,
              source: 'api',
              ip: '203.0.113.7',
              user_agent: 'bench/1.0',
              request_id: `req_${n}`,
              outcome: 'success',
              changes: JSON.stringify({ status: { old: 'draft', new: 'active' } }),
            };
          });
          await trx.insertInto('audit_log').values(rows).execute();
        }
      });
      if (dialect === 'postgres') await db.executeQuery(CompiledQuery.raw('ANALYZE'));
      const seedSeconds = (performance.now() - t0) / 1000;
      console.log(`seeded ${opts.projects.toLocaleString('en-US')} projects + ${opts.audit.toLocaleString('en-US')} audit rows in ${seedSeconds.toFixed(1)} s`);

      // ---- the worker, idle
      const child = spawn(process.execPath, [path.join(opts.root, 'bin/workspace'), 'worker'], {
        env: { ...process.env, METRICS_PORT: '0', ...env },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      worker = child;
      await new Promise((resolve, reject) => {
        let partial = '';
        child.stdout.setEncoding('utf8').on('data', (chunk) => {
          const lines = (partial + chunk).split('\n');
          partial = lines.pop();
          if (lines.some((l) => l.includes('"ready'))) resolve();
        });
        child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready`)));
      });
      await sleep(opts.idleSeconds * 1000);
      const idleKb = peakKb(child.pid);
      console.log(`worker idle: VmHWM ${(idleKb / 1024).toFixed(1)} MB`);

      // ---- rounds
      let peak = idleKb;
      const sampler = setInterval(() => (peak = Math.max(peak, peakKb(child.pid))), 100);
      const rounds = [];
      let last = null;
      try {
        for (let round = 1; round <= opts.rounds; round++) {
          const requested = await container.services.exports.request(actor);
          const deadline = Date.now() + 600_000;
          let row;
          for (;;) {
            row = await db.selectFrom('exports').selectAll().where('id', '=', requested.id).executeTakeFirstOrThrow();
            if (row.status === 'ready' || row.status === 'failed') break;
            if (Date.now() > deadline) throw new Error(`export still ${row.status} after 10 minutes`);
            await sleep(50);
          }
          if (row.status !== 'ready') throw new Error(`export failed: ${row.error}`);
          const buildSeconds = (row.ready_at - row.started_at) / 1000;
          const r = {
            round,
            toReadySeconds: (row.ready_at - row.created_at) / 1000,
            buildSeconds,
            zipBytes: row.size_bytes,
            zipMBps: row.size_bytes / MB / buildSeconds,
            peakRssMb: peak / 1024,
          };
          rounds.push(r);
          last = row;
          console.log(`round ${round}: ready in ${r.toReadySeconds.toFixed(2)} s (build ${buildSeconds.toFixed(2)} s), ZIP ${(r.zipBytes / MB).toFixed(1)} MB, worker VmHWM so far ${r.peakRssMb.toFixed(1)} MB`);
        }
      } finally {
        clearInterval(sampler);
      }
      peak = Math.max(peak, peakKb(child.pid));

      // ---- download and check the last one
      const t1 = performance.now();
      const file = await container.services.exports.openDownload(actor, last.id);
      const parts = [];
      for await (const part of file.stream) parts.push(part);
      const downloadSeconds = (performance.now() - t1) / 1000;
      const zipBuffer = Buffer.concat(parts);
      if (zipBuffer.length !== last.size_bytes) throw new Error(`downloaded ${zipBuffer.length} of ${last.size_bytes} bytes`);
      const files = await readZip(yauzl, zipBuffer);
      const manifest = JSON.parse(files.get('manifest.json').toString('utf8'));
      if (manifest.counts.projects !== opts.projects) throw new Error(`manifest counts ${manifest.counts.projects} projects`);
      const ndjsonBytes = [...files].filter(([name]) => name.endsWith('.ndjson')).reduce((n, [, data]) => n + data.length, 0);
      const counted = files.get('projects.ndjson').toString('utf8').split('\n').length - 1;
      if (counted !== opts.projects) throw new Error(`projects.ndjson holds ${counted} lines`);
      for (const r of rounds) r.ndjsonMBps = ndjsonBytes / MB / r.buildSeconds;
      console.log(`download: ${(zipBuffer.length / MB).toFixed(1)} MB in ${downloadSeconds.toFixed(2)} s; NDJSON ${(ndjsonBytes / MB).toFixed(1)} MB; manifest counts ${JSON.stringify(manifest.counts)}`);

      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      worker = null;
      return {
        seedSeconds,
        rounds,
        ndjsonBytes,
        zipBytes: last.size_bytes,
        chunks: Math.ceil(last.size_bytes / MB),
        downloadSeconds,
        idleRssMb: idleKb / 1024,
        peakRssMb: peak / 1024,
        counts: manifest.counts,
      };
    } finally {
      if (worker) {
        worker.kill('SIGKILL');
        await new Promise((r) => worker.once('exit', r));
      }
      await container.close();
      if (dbName && !opts.keep) {
        const admin = new pg.Client({ connectionString: opts.pgUrl });
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
        await admin.end();
      } else if (dbName) {
        console.log(`kept database ${dbName}`);
      }
    }
  }
}

function renderMarkdown(results, opts) {
  const names = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
  const ds = Object.keys(results.dialects);
  const f1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');
  const f2 = (n) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
  const k = (n) => n.toLocaleString('en-US');
  const row = (label, fn) => `| ${label} | ${ds.map((d) => fn(results.dialects[d])).join(' | ')} |`;
  const med = (r, key) => median(r.rounds.map((x) => x[key]));
  return [
    `Export benchmark, ${results.started.slice(0, 16).replace('T', ' ')}-${results.finished.slice(11, 16)} UTC; ${results.machine}; load average ${results.loadBefore.toFixed(1)} before, ${results.loadAfter.toFixed(1)} after.`,
    `One organisation with ${k(opts.projects)} projects and ${k(opts.audit)} audit rows; \`./bin/workspace worker\` builds the export; medians of ${opts.rounds} rounds.`,
    '',
    `| measure | ${ds.map((d) => names[d]).join(' | ')} |`,
    `|---|${ds.map(() => '---:').join('|')}|`,
    row('time to ready, s (request → ready)', (r) => f2(med(r, 'toReadySeconds'))),
    row('build, s (claimed → ready)', (r) => f2(med(r, 'buildSeconds'))),
    row('NDJSON MB/s (uncompressed data built)', (r) => f1(med(r, 'ndjsonMBps'))),
    row('ZIP MB/s (stored)', (r) => f2(med(r, 'zipMBps'))),
    row('NDJSON size, MB', (r) => f1(r.ndjsonBytes / MB)),
    row('ZIP size, MB (1 MiB chunks)', (r) => `${f1(r.zipBytes / MB)} (${r.chunks})`),
    row('download through the service, s', (r) => f2(r.downloadSeconds)),
    row('`workspace worker` idle: VmHWM MB', (r) => f1(r.idleRssMb)),
    row(`\`workspace worker\` after ${opts.rounds} exports: VmHWM MB`, (r) => f1(r.peakRssMb)),
    row('**peak above idle, MB**', (r) => `**${f1(r.peakRssMb - r.idleRssMb)}**`),
    row('seeding, s (not part of the export)', (r) => f1(r.seedSeconds)),
  ].join('\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
