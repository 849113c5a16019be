#!/usr/bin/env node
// A/B of the dashboard's pages: loads two builds of the service in this process (each on its own seeded SQLite
// database: 40 members with 10 invited, 30 projects, a workflow with 3 steps and a finished run, 200 audit
// rows), signs in a session on each, then alternates short rounds of `app.inject` GETs of each page so machine
// noise hits both. Reports median µs of CPU per page view for each build and the ratio.
//   node bench/dashboard-bench.mjs <base-root> <candidate-root> [rounds=8] [ms=500]
// A root is a checkout with dist/ built (e.g. `git worktree add /tmp/base <commit>`, node_modules linked, `npx tsc -p tsconfig.build.json`).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const [baseRoot, candRoot, roundsText = '8', msText = '500'] = process.argv.slice(2);
if (!baseRoot || !candRoot) {
  console.error('usage: node bench/dashboard-bench.mjs <base-root> <candidate-root> [rounds] [ms]');
  process.exit(2);
}

async function load(root, label) {
  const dist = path.resolve(root, 'dist');
  const { loadConfig } = await import(`${dist}/config.js`);
  const { createContainer } = await import(`${dist}/container.js`);
  const { cliActor } = await import(`${dist}/services/actor.js`);
  const { buildApp } = await import(`${dist}/http/app.js`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `dash-ab-${label}-`));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000000' });
  const container = await createContainer(config, { migrate: true });
  const app = await buildApp({ ...container, config, logger: container.logger });
  await app.ready();
  const { services, store } = container;
  const created = await services.admin.createOrganization({ name: 'Dashboard AB', ownerEmail: 'owner@ab.example', ownerName: 'Owner' });
  const orgId = created.organization.id;
  const actor = cliActor(orgId);
  for (let i = 0; i < 30; i++) await services.admin.addUser({ orgId, email: `member${i}@ab.example`, role: i % 3 ? 'member' : 'admin', name: `Member ${i}` });
  for (let i = 0; i < 10; i++) await services.users.invite(actor, { email: `invited${i}@ab.example`, role: 'viewer' });
  let projectId;
  for (let i = 0; i < 30; i++) projectId = (await services.projects.create(actor, { name: `Project ${i}` })).id;
  const workflow = await services.workflows.create(actor, projectId, {
    name: 'Release',
    steps: [{ type: 'wait', duration: '1s' }, { type: 'wait', duration: '1s' }, { type: 'wait', duration: '1s' }],
  });
  const run = await services.workflows.startRun(actor, workflow.id);
  for (let i = 0; i < 200; i++) await services.projects.update(actor, projectId, { description: `Edit ${i}` });
  const owner = await store.repos.users.findById(orgId, created.owner.id);
  const session = await store.transaction((repos) => services.sessions.start(repos, owner, { source: 'dashboard', ip: '127.0.0.1', userAgent: 'bench', requestId: null }));
  const headers = { cookie: `ws_session=${session.token}` };
  const pages = {
    overview: '/dashboard',
    projects: '/dashboard/projects',
    project: `/dashboard/projects/${projectId}`,
    workflow: `/dashboard/projects/${projectId}/workflows/${workflow.id}`,
    run: `/dashboard/runs/${run.id}`,
    members: '/dashboard/members',
    'audit log': '/dashboard/audit-log',
  };
  for (const url of Object.values(pages)) {
    const res = await app.inject({ method: 'GET', url, headers });
    if (res.statusCode !== 200) throw new Error(`${label} ${url}: ${res.statusCode}`);
  }
  return { label, app, container, dataDir, headers, pages };
}

async function round(build, url, ms) {
  const until = performance.now() + ms;
  const cpu = process.cpuUsage();
  let n = 0;
  while (performance.now() < until) {
    await build.app.inject({ method: 'GET', url, headers: build.headers });
    n++;
  }
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / n;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

const base = await load(baseRoot, 'base');
const cand = await load(candRoot, 'candidate');
const rounds = Number(roundsText);
const ms = Number(msText);
console.log(`| page | base µs | candidate µs | candidate / base |`);
console.log(`|---|---:|---:|---:|`);
for (const name of Object.keys(base.pages)) {
  const times = { base: [], candidate: [] };
  for (let i = 0; i < rounds; i++) {
    for (const build of i % 2 ? [cand, base] : [base, cand]) times[build.label].push(await round(build, build.pages[name], ms));
  }
  const b = median(times.base);
  const c = median(times.candidate);
  console.log(`| ${name} | ${b.toFixed(0)} | ${c.toFixed(0)} | ${(c / b).toFixed(2)}x |`);
}
for (const build of [base, cand]) {
  await build.app.close();
  await build.container.close();
  fs.rmSync(build.dataDir, { recursive: true, force: true });
}
