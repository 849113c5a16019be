#!/usr/bin/env node
// `npm run bench:client`: what the typed client (`workspace-service/client`) adds to a call, measured
// against plain `fetch` of the same request in the same run. The API runs from dist/ (build first) in its
// own process on SQLite; this process seeds one project and then, in alternating rounds, makes sequential
// calls with plain fetch and with the client (GET by id, POST create). Figures are medians over the rounds:
// µs per call and the client's time as a ratio of plain fetch's, so machine noise hits both sides alike.
//
//   --calls N    calls per side and round (default 2000)
//   --rounds N   alternating rounds (default 5)
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(argv[i + 1]);
};
const calls = option('calls', 2000);
const rounds = option('rounds', 5);

const { loadConfig, createContainer } = await import(path.join(root, 'dist/index.js'));
const { createWorkspaceClient } = await import(path.join(root, 'dist/client/index.js'));

/** A port free right now (the server logs its address only at info, which would log every request too). */
const freePort = () =>
  new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-client-bench-'));
const port = await freePort();
const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', PORT: String(port), METRICS_PORT: 'off', RATE_LIMIT_PER_MINUTE: '100000000' };
const seed = await createContainer(loadConfig(env), { migrate: true });
const { api_key: apiKey } = await seed.services.admin.createOrganization({ name: 'Bench Org', ownerEmail: 'bench@example.com' });
await seed.close();

const child = spawn(process.execPath, [path.join(root, 'bin/workspace'), 'serve'], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
const baseUrl = `http://127.0.0.1:${port}`;
for (let waited = 0; ; waited += 100) {
  const up = await fetch(`${baseUrl}/healthz`).then((res) => res.ok, () => false);
  if (up) break;
  if (waited > 20_000 || child.exitCode !== null) throw new Error('the server did not start');
  await new Promise((resolve) => setTimeout(resolve, 100));
}

const headers = { authorization: `Bearer ${apiKey.key}`, 'content-type': 'application/json' };
const ws = createWorkspaceClient({ baseUrl, apiKey: apiKey.key });
const project = await ws.POST('/v1/projects', { body: { name: 'Bench' } });

const sides = {
  'GET by id': {
    fetch: async () => {
      const res = await fetch(`${baseUrl}/v1/projects/${project.id}`, { headers });
      if (res.status !== 200) throw new Error(`GET ${res.status}`);
      await res.json();
    },
    client: () => ws.GET('/v1/projects/{id}', { params: { path: { id: project.id } } }),
  },
  'POST create': {
    fetch: async () => {
      const res = await fetch(`${baseUrl}/v1/projects`, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': randomUUID() },
        body: JSON.stringify({ name: 'Bench' }),
      });
      if (res.status !== 201) throw new Error(`POST ${res.status}`);
      await res.json();
    },
    client: () => ws.POST('/v1/projects', { body: { name: 'Bench' } }),
  },
};

async function time(call, n) {
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await call();
  return Number(process.hrtime.bigint() - started) / 1000 / n;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
try {
  const results = [];
  for (const [name, side] of Object.entries(sides)) {
    await time(side.fetch, 200); // warm both paths: JIT, keep-alive connections
    await time(side.client, 200);
    const plain = [];
    const client = [];
    for (let round = 0; round < rounds; round++) {
      plain.push(await time(side.fetch, calls));
      client.push(await time(side.client, calls));
    }
    const ratios = plain.map((p, i) => client[i] / p);
    results.push({ name, fetch: median(plain), client: median(client), ratio: median(ratios) });
  }
  console.log(`| call (${calls} sequential, median of ${rounds} rounds) | plain fetch µs | client µs | client / fetch |`);
  console.log('|---|---:|---:|---:|');
  for (const r of results) console.log(`| ${r.name} | ${r.fetch.toFixed(0)} | ${r.client.toFixed(0)} | ${r.ratio.toFixed(3)} |`);
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
