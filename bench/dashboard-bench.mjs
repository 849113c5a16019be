#!/usr/bin/env node
// A/B of the dashboard's pages. Each measurement is a child process that loads ONE build (on its own seeded
// SQLite database: 40 members with 10 invited, 30 projects, a workflow with 3 steps and a finished run, 200 audit
// rows, 12 open tasks of the owner's, a subscription and an export), signs in a session, warms one page, and
// times `app.inject` GETs of it (µs of CPU per page view).
// Children of the two builds alternate, so machine noise hits both; medians over the rounds are compared.
// One build and one page per process: two builds in one process share node_modules, and the second one loaded
// ran up to 2x slower whichever it was (V8 sees two sets of callers at the same library call sites); several
// pages in one process moved each other's figures by up to 30% in either direction. Pages only the candidate
// has (issue 32's sign-in security pages) are timed on it alone. Last, the sign-in itself (the form's POST for a
// user without a second factor: one scrypt, a session row, an audit row).
//   node bench/dashboard-bench.mjs <base-root> <candidate-root> [rounds=4] [ms=500]   (about 8 minutes)
//   BENCH_PAGES='overview,audit log' node bench/dashboard-bench.mjs …   (those pages only)
// A root is a checkout with dist/ built (e.g. `git archive <commit> | tar -x -C /tmp/base`, node_modules linked,
// `npx tsc -p tsconfig.build.json`).
import { execFileSync } from 'node:child_process';
import { URLSearchParams } from 'node:url';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtModule } from './built.mjs';

const single = process.argv[2] === '--single';
const [baseRoot, candRoot, roundsText = '4', msText = '500'] = process.argv.slice(single ? 3 : 2);
if (!baseRoot || (!single && !candRoot)) {
  console.error('usage: node bench/dashboard-bench.mjs <base-root> <candidate-root> [rounds] [ms]');
  process.exit(2);
}

async function load(root, label) {
  const dist = path.resolve(root, 'dist');
  const { loadConfig } = await import(`${dist}/config.js`);
  const { createContainer } = await import(`${dist}/container.js`);
  const { cliActor } = await builtModule(dist, 'actor');
  const { buildApp } = await builtModule(dist, 'app');
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
  // Issue 34's pages: the owner's open tasks (some overdue), a subscription, an export.
  for (let i = 0; i < 12; i++) {
    const task = await services.tasks.create(actor, projectId, { title: `Task ${i}`, due_at: i % 3 ? Date.now() + (i - 4) * 86_400_000 : undefined });
    await services.tasks.assign(actor, task.id, created.owner.id);
  }
  await services.webhooks.create(actor, { url: 'https://hooks.ab.example/webhooks/workspace', events: ['project.created', 'task.assigned'] });
  await services.exports.request(actor);
  const owner = await store.repos.users.findById(orgId, created.owner.id);
  const context = { source: 'dashboard', ip: '127.0.0.1', userAgent: 'bench', requestId: null };
  // The method argument is new in issue 32; an older build ignores it.
  const session = await store.transaction((repos) => services.sessions.start(repos, owner, context, 'password'));
  const headers = { cookie: `ws_session=${session.token}` };
  const signedIn = (url) => ({ url, headers });
  const pages = {
    overview: signedIn('/dashboard'),
    projects: signedIn('/dashboard/projects'),
    project: signedIn(`/dashboard/projects/${projectId}`),
    workflow: signedIn(`/dashboard/projects/${projectId}/workflows/${workflow.id}`),
    run: signedIn(`/dashboard/runs/${run.id}`),
    members: signedIn('/dashboard/members'),
    'audit log': signedIn('/dashboard/audit-log'),
    account: signedIn('/dashboard/account'),
    'my tasks': signedIn('/dashboard/tasks'),
    'api keys': signedIn('/dashboard/api-keys'),
    webhooks: signedIn('/dashboard/webhooks'),
    export: signedIn('/dashboard/export'),
    billing: signedIn('/dashboard/billing'),
    'sign-in': { url: '/dashboard/login', headers: {} },
  };
  if (services.accountSecurity) {
    pages.security = signedIn('/dashboard/account/security');
    pages['org security settings'] = signedIn('/dashboard/settings/security');
    // A member with an authenticator app and a passkey, between the password and the code.
    const twoStep = await services.admin.addUser({ orgId, email: 'twostep@ab.example', role: 'member', name: 'Two Step' });
    const now = Date.now();
    await container.database.db.insertInto('totp_factors').values({ org_id: orgId, user_id: twoStep.id, secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', last_step: null, created_at: now, enabled_at: now }).execute();
    const row = await store.repos.users.findById(orgId, twoStep.id);
    const pending = await store.transaction((repos) => services.sessions.start(repos, row, context, 'password'));
    pages['two-step'] = { url: '/dashboard/login/two-step', headers: { cookie: `ws_session=${pending.token}` } };
  }
  for (const page of Object.values(pages)) {
    const res = await app.inject({ method: 'GET', url: page.url, headers: page.headers });
    if (res.statusCode !== 200) throw new Error(`${label} ${page.url}: ${res.statusCode}`);
  }
  // The sign-in form's POST: a member without a second factor, with the CSRF token of the sign-in page.
  const signer = await services.admin.addUser({ orgId, email: 'signer@ab.example', role: 'member', name: 'Signer' });
  const { hashPassword } = await import(`${dist}/lib/crypto.js`);
  await store.repos.users.update(orgId, signer.id, { password_hash: await hashPassword('bench sign-in password') });
  const login = await app.inject({ method: 'GET', url: '/dashboard/login' });
  const csrfCookie = [login.headers['set-cookie']].flat().find((c) => c.startsWith('ws_csrf='))?.split(';')[0];
  const csrf = /name="_csrf" value="([^"]+)"/.exec(login.body)[1];
  const signIn = {
    method: 'POST',
    url: '/dashboard/login',
    headers: { cookie: csrfCookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: csrf, email: 'signer@ab.example', password: 'bench sign-in password' }).toString(),
  };
  const first = await app.inject(signIn);
  if (first.statusCode !== 303 || first.headers.location !== '/dashboard') throw new Error(`${label} sign-in: ${first.statusCode} ${first.headers.location}`);
  return { label, app, container, dataDir, pages, signIn };
}

async function round(build, request, ms) {
  const until = performance.now() + ms;
  const cpu = process.cpuUsage();
  let n = 0;
  while (performance.now() < until) {
    await build.app.inject(request);
    n++;
  }
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / n;
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

const ms = Number(msText);
const SIGN_IN = 'sign-in POST (no second factor)';
const PAGES = ['overview', 'projects', 'project', 'workflow', 'run', 'members', 'audit log', 'account', 'my tasks', 'api keys', 'webhooks', 'export', 'billing', 'sign-in', 'security', 'org security settings', 'two-step', SIGN_IN];

if (single) {
  // A child: one build, every page once for `ms`, then the sign-in; µs per view as JSON on stdout.
  const build = await load(baseRoot, 'one');
  const result = {};
  // BENCH_PAGE=<name>: that page alone (the driver's way; also for a profile with --cpu-prof).
  const only = process.env.BENCH_PAGE;
  if (only) build.pages = build.pages[only] ? { [only]: build.pages[only] } : {};
  // Warm every page first: the JIT's work is not a page view's cost.
  for (const page of Object.values(build.pages)) await round(build, { method: 'GET', url: page.url, headers: page.headers }, 150);
  for (const [name, page] of Object.entries(build.pages)) result[name] = await round(build, { method: 'GET', url: page.url, headers: page.headers }, ms);
  if (!only || only === SIGN_IN) {
    await round(build, build.signIn, 300);
    result[SIGN_IN] = await round(build, build.signIn, Math.max(ms, 1000));
  }
  await build.app.close();
  await build.container.close();
  fs.rmSync(build.dataDir, { recursive: true, force: true });
  process.stdout.write(JSON.stringify(result));
  process.exit(0);
}

const script = new URL(import.meta.url).pathname;
const child = (root, page) =>
  JSON.parse(execFileSync(process.execPath, [script, '--single', root, '1', String(ms)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BENCH_PAGE: page } }));
const times = { base: {}, candidate: {} };
// BENCH_PAGES=overview,audit log: only those pages (more rounds for a noisy one in the same time).
const chosen = process.env.BENCH_PAGES ? process.env.BENCH_PAGES.split(',') : PAGES;
const rounds = Number(roundsText);
for (let i = 0; i < rounds; i++) {
  for (const page of chosen) {
    const order = i % 2 ? [['candidate', candRoot], ['base', baseRoot]] : [['base', baseRoot], ['candidate', candRoot]];
    for (const [label, root] of order) {
      for (const [name, us] of Object.entries(child(root, page))) (times[label][name] ??= []).push(us);
    }
  }
}
console.log(`| page | base µs | candidate µs | candidate / base |`);
console.log(`|---|---:|---:|---:|`);
for (const name of PAGES.filter((p) => times.candidate[p])) {
  const c = median(times.candidate[name]);
  if (!times.base[name]) {
    console.log(`| ${name} | — | ${c.toFixed(0)} | new |`);
    continue;
  }
  const b = median(times.base[name]);
  console.log(`| ${name} | ${b.toFixed(0)} | ${c.toFixed(0)} | ${(c / b).toFixed(2)}x |`);
}
