#!/usr/bin/env node
// A/B of the application's own cost per request, for tuning on a busy machine: loads two builds of the
// service in this process (each on its own seeded SQLite database), then alternates short rounds of
// `app.inject` on the same scenario so machine noise hits both. Reports µs per request and the gain.
//   node bench/inject-ab.mjs <base-root> <candidate-root> [scenario=get|list|deep|post] [rounds=8] [ms=700]
// A root is a checkout with dist/ built (e.g. a copy of the tree at the previous commit).
import fs from 'node:fs';
import path from 'node:path';
import { builtModule } from './built.mjs';

const [baseRoot, candRoot, scenario = 'get', roundsText = '8', msText = '700'] = process.argv.slice(2);
if (!baseRoot || !candRoot) {
  console.error('usage: node bench/inject-ab.mjs <base-root> <candidate-root> [get|list|deep|post] [rounds] [ms]');
  process.exit(2);
}

async function load(root, label) {
  const dist = path.resolve(root, 'dist');
  const { loadConfig } = await import(`${dist}/config.js`);
  const { createContainer } = await import(`${dist}/container.js`);
  // Builds before the actor model took an organisation id where they now take an actor.
  const actorModule = await builtModule(dist, 'actor').catch(() => null);
  const cliActor = (orgId) => (actorModule ? actorModule.cliActor(orgId) : orgId);
  const { buildApp } = await builtModule(dist, 'app');
  const dataDir = fs.mkdtempSync(path.join(path.resolve(root, '.bench-tmp'), `ab-${label}-`));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000000' });
  const container = await createContainer(config, { migrate: true });
  const app = await buildApp({ ...container, config, logger: container.logger });
  await app.ready();
  const org = await container.services.admin.createOrganization({ name: 'AB', ownerEmail: 'ab@example.com' });
  const orgId = org.organization.id;
  for (let i = 0; i < 10_100; i++) {
    await container.services.projects.create(cliActor(orgId), { name: `Seeded project ${i}`, description: i % 2 ? `Description of project ${i}` : null });
  }
  let cursor;
  let id;
  for (let page = 1; page < 100; page++) {
    const r = await container.services.projects.list(cliActor(orgId), { limit: 100, cursor });
    if (page === 50) id = r.items[0].id;
    cursor = r.nextCursor;
  }
  const headers = { authorization: `Bearer ${org.api_key.key}` };
  const requests = {
    get: { method: 'GET', url: `/v1/projects/${id}`, headers },
    list: { method: 'GET', url: '/v1/projects?limit=100', headers },
    deep: { method: 'GET', url: `/v1/projects?limit=100&cursor=${cursor}`, headers },
    post: { method: 'POST', url: '/v1/projects', headers: { ...headers, 'content-type': 'application/json' }, payload: '{"name":"Bench project","description":"Created by the benchmark"}' },
  };
  return { label, app, container, dataDir, request: requests[scenario] };
}

// Cost is this process's CPU time per request (user + system), steadier than wall time when other
// processes compete for the cores.
async function round(v, ms) {
  const until = performance.now() + ms;
  const cpu = process.cpuUsage();
  let n = 0;
  // 8 requests in flight, as a server under load would have.
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < until) {
        const res = await v.app.inject(v.request);
        if (res.statusCode >= 300) throw new Error(`${v.label}: ${res.statusCode} ${res.body}`);
        n++;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / n;
}

const base = await load(baseRoot, 'base');
const cand = await load(candRoot, 'candidate');
const rounds = Number(roundsText);
const ms = Number(msText);
await round(base, 300);
await round(cand, 300);
const a = [];
const b = [];
for (let i = 0; i < rounds; i++) {
  a.push(await round(base, ms));
  b.push(await round(cand, ms));
}
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const ma = median(a);
const mb = median(b);
console.log(`${scenario}: base ${ma.toFixed(1)} CPU µs/req, candidate ${mb.toFixed(1)} CPU µs/req, ${(((ma - mb) / ma) * 100).toFixed(1)}% less CPU (${(ma / mb).toFixed(2)}x)`);
for (const v of [base, cand]) {
  await v.app.close();
  await v.container.close();
  fs.rmSync(v.dataDir, { recursive: true, force: true });
}
