#!/usr/bin/env node
// SCIM latency at the rate identity providers drive (issue 44; Entra asks for 25 requests a second per tenant):
// `GET /scim/v2/Users?filter=userName eq "…"` and `PATCH /Users/{id}` with `active` (suspend, then reactivate),
// sent open-loop at --rate requests a second for --seconds against a real `serve` process, on SQLite and on
// PostgreSQL, with --users members provisioned first. Prints p50, p99 and max per request kind, and the same for
// GET /healthz sent in the same schedule: the baseline of the machine and the HTTP stack, so the figures can be
// read as ratios on a noisy machine. Each PATCH suspends a member (keys revoked, sessions ended, every cache told).
//   npm run build && node bench/scim-bench.mjs [--rate 25] [--seconds 30] [--users 2000] [--only sqlite|postgres]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freshPgDatabase } from './pg-database.mjs';
import { cli, startServe } from './serve-process.mjs';

const { values: args } = parseArgs({
  options: { rate: { type: 'string', default: '25' }, seconds: { type: 'string', default: '30' }, users: { type: 'string', default: '2000' }, only: { type: 'string' } },
});
const RATE = Number(args.rate);
const SECONDS = Number(args.seconds);
const USERS = Number(args.users);
const PG_ADMIN = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';


const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const summary = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const r = (x) => Math.round(x * 10) / 10;
  return { n: sorted.length, p50: r(quantile(sorted, 0.5)), p99: r(quantile(sorted, 0.99)), max: r(sorted[sorted.length - 1]) };
};

async function run(dialect) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'scim-bench-'));
  const pg = dialect === 'postgres' ? await freshPgDatabase(PG_ADMIN, `scim_bench_${Date.now().toString(36)}`) : null;
  const env = { DATA_DIR: dataDir, ...(pg ? { DATABASE_URL: pg.url } : {}) };
  const org = cli(env, 'org', 'create', '--name', 'Bench', '--owner-email', 'owner@bench.example');
  const { token } = cli(env, 'org', 'scim-token', 'create', org.organization.id, '--name', 'Bench');
  const serve = await startServe(env);
  const base = serve.address;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' };
  try {
    // Provisioned in parallel batches below the 100 a second limit.
    const ids = [];
    for (let i = 0; i < USERS; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(50, USERS - i) }, async (_, j) => {
          const res = await fetch(`${base}/scim/v2/Users`, { method: 'POST', headers, body: JSON.stringify({ schemas: [USER_SCHEMA], userName: `member${i + j}@bench.example`, externalId: `ext-${i + j}` }) });
          if (res.status !== 201) throw new Error(`provisioning answered ${res.status}: ${await res.text()}`);
          return (await res.json()).id;
        }),
      );
      ids.push(...batch);
      await new Promise((resolve) => setTimeout(resolve, 550));
    }
    const times = { lookup: [], patch: [], healthz: [] };
    const statuses = new Map();
    const suspended = new Set();
    const total = RATE * SECONDS;
    const started = performance.now();
    const pending = [];
    for (let n = 0; n < total; n++) {
      const due = started + (n * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const index = Math.floor(Math.random() * ids.length);
      const kind = n % 2 === 0 ? 'lookup' : 'patch';
      const request =
        kind === 'lookup'
          ? fetch(`${base}/scim/v2/Users?filter=${encodeURIComponent(`userName eq "MEMBER${index}@bench.example"`)}`, { headers })
          : (() => {
              const active = suspended.has(ids[index]);
              if (active) suspended.delete(ids[index]);
              else suspended.add(ids[index]);
              return fetch(`${base}/scim/v2/Users/${ids[index]}`, { method: 'PATCH', headers, body: JSON.stringify({ schemas: [PATCH_SCHEMA], Operations: [{ op: 'Replace', path: 'active', value: active ? 'True' : 'False' }] }) });
            })();
      const sentAt = performance.now();
      pending.push(
        request.then(async (res) => {
          await res.arrayBuffer();
          times[kind].push(performance.now() - sentAt);
          statuses.set(`${kind} ${res.status}`, (statuses.get(`${kind} ${res.status}`) ?? 0) + 1);
        }),
      );
      // The baseline in the same schedule: the HTTP stack and the machine, no SCIM work.
      const baseAt = performance.now();
      pending.push(fetch(`${base}/healthz`).then(async (res) => (await res.arrayBuffer(), times.healthz.push(performance.now() - baseAt))));
    }
    await Promise.all(pending);
    const result = { dialect, users: USERS, rate: RATE, seconds: SECONDS, statuses: Object.fromEntries(statuses), lookup: summary(times.lookup), patch: summary(times.patch), healthz: summary(times.healthz) };
    result.ratios = { lookup_p99_over_healthz_p99: Math.round((result.lookup.p99 / result.healthz.p99) * 10) / 10, patch_p99_over_healthz_p99: Math.round((result.patch.p99 / result.healthz.p99) * 10) / 10 };
    console.log(JSON.stringify(result));
  } finally {
    serve.child.kill('SIGTERM');
    await new Promise((resolve) => serve.child.once('exit', resolve));
    await pg?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

for (const dialect of ['sqlite', 'postgres']) if (!args.only || args.only === dialect) await run(dialect);
