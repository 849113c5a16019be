#!/usr/bin/env node
// Apps and AI agents (issue 45), two figures:
// 1. A read tool call over MCP (`tools/call get_project`, one POST /mcp with a session id, as an agent sends it after
//    `initialize`) against the same read through the API (`GET /v1/projects/:id`), in the same run against one real
//    `serve` process: req/s and server CPU per request, rounds alternating the two so drift hits both. Target: MCP
//    at least 0.5 of the API's throughput. Each MCP call also writes its audit row (CONTRACT 17); the API read does not.
// 2. The token endpoint's CPU per call (in process, the app built from dist): the code exchange and a refresh,
//    beside GET /v1/projects/:id with a key as the baseline of the same run.
//   npm run build && node bench/agents-bench.mjs [--seconds 8] [--rounds 3] [--connections 20] [--only sqlite|postgres] [--calls 300]
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL, URLSearchParams } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { freshPgDatabase } from './pg-database.mjs';
import { cli, startServe } from './serve-process.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, 'dist');
const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '20' },
    calls: { type: 'string', default: '300' },
    only: { type: 'string' },
  },
});
const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
const CONNECTIONS = Number(args.connections);
const CALLS = Number(args.calls);
const PG_ADMIN = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';


const ticks = (pid) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
};

async function measure(pid, options) {
  const before = ticks(pid);
  const result = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { rps: result.requests.average, p99: result.latency.p99, cpuUs: ((ticks(pid) - before) * 10_000) / Math.max(1, result.requests.total) };
}

const geomean = (values) => Math.exp(values.reduce((s, v) => s + Math.log(v), 0) / values.length);
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

async function throughput(dialect) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agents-bench-'));
  const pg = dialect === 'postgres' ? await freshPgDatabase(PG_ADMIN, `agents_bench_${Date.now().toString(36)}`) : null;
  // A limit no run reaches: the figure is the read path's, not the limiter's refusals.
  const env = { DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '100000000', METRICS_PORT: 'off', ...(pg ? { DATABASE_URL: pg.url } : {}) };
  const org = cli(env, 'org', 'create', '--name', 'Bench', '--owner-email', 'owner@bench.example');
  const key = org.api_key.key;
  const serve = await startServe(env);
  const base = serve.address;
  try {
    const auth = { authorization: `Bearer ${key}` };
    const project = await (await fetch(`${base}/v1/projects`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Apollo', description: 'The bench project' }) })).json();
    const mcpHeaders = { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    // One session per connection, as each agent has its own: initialize, then calls on that session.
    const sessions = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      const init = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: mcpHeaders,
        body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }),
      });
      sessions.push(init.headers.get('mcp-session-id'));
    }
    const session = sessions[0];
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_project', arguments: { project_id: project.id } } };
    const check = await (await fetch(`${base}/mcp`, { method: 'POST', headers: { ...mcpHeaders, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify(call) })).json();
    if (!check.result || check.result.isError) throw new Error(`the tool call failed: ${JSON.stringify(check)}`);

    const api = () => measure(serve.child.pid, { url: `${base}/v1/projects/${project.id}`, headers: auth });
    const mcp = () => {
      let next = 0;
      return measure(serve.child.pid, {
        url: `${base}/mcp`,
        method: 'POST',
        headers: { ...mcpHeaders, 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify(call),
        setupClient: (client) => client.setHeaders({ ...mcpHeaders, 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': sessions[next++ % sessions.length] }),
      });
    };
    // Warm both paths (JIT, caches) before anything counts.
    await api();
    await mcp();
    const rows = [];
    for (let i = 0; i < ROUNDS; i++) {
      const [a, m] = i % 2 === 0 ? [await api(), await mcp()] : [await mcp(), await api()].reverse();
      rows.push({ api: a, mcp: m });
      console.log(`  ${dialect} round ${i + 1}: API ${Math.round(a.rps)} req/s (${Math.round(a.cpuUs)} µs CPU), MCP ${Math.round(m.rps)} req/s (${Math.round(m.cpuUs)} µs CPU)`);
    }
    return {
      dialect,
      apiRps: round(geomean(rows.map((r) => r.api.rps)), 0),
      mcpRps: round(geomean(rows.map((r) => r.mcp.rps)), 0),
      ratio: round(geomean(rows.map((r) => r.mcp.rps / r.api.rps))),
      apiCpuUs: round(geomean(rows.map((r) => r.api.cpuUs)), 0),
      mcpCpuUs: round(geomean(rows.map((r) => r.mcp.cpuUs)), 0),
      apiP99: round(geomean(rows.map((r) => r.api.p99)), 1),
      mcpP99: round(geomean(rows.map((r) => r.mcp.p99)), 1),
    };
  } finally {
    serve.child.kill('SIGTERM');
    await new Promise((resolve) => serve.child.once('exit', resolve));
    await pg?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A cookie jar over `app.inject`: the person's browser through authorize, consent and back. */
function browser(app, sessionCookie) {
  const jar = new Map([sessionCookie]);
  const send = async (method, url, payload) => {
    const res = await app.inject({
      method,
      url,
      remoteAddress: `10.200.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`,
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(payload ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      payload,
    });
    for (const line of [res.headers['set-cookie'] ?? []].flat()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return res;
  };
  return { send };
}

async function tokenEndpoint(dialect) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agents-bench-tokens-'));
  const pg = dialect === 'postgres' ? await freshPgDatabase(PG_ADMIN, `agents_tokens_${Date.now().toString(36)}`) : null;
  const { loadConfig } = await import(pathToFileURL(path.join(DIST, 'config.js')).href);
  const { createContainer } = await import(pathToFileURL(path.join(DIST, 'container.js')).href);
  const { buildApp } = await import(pathToFileURL(path.join(DIST, 'app.js')).href);
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '100000000', ...(pg ? { DATABASE_URL: pg.url } : {}) });
  const container = await createContainer(config, { migrate: true });
  const app = await buildApp(container);
  await app.ready();
  try {
    const created = await container.services.admin.createOrganization({ name: 'Bench', ownerEmail: 'owner@bench.example', ownerName: 'Owner' });
    const owner = await container.store.repos.users.findById(created.organization.id, created.owner.id);
    const started = await container.store.transaction((repos) => container.services.sessions.start(repos, owner, { source: 'dashboard', ip: '127.0.0.1', userAgent: 'bench', requestId: null }, 'password'));
    const redirectUri = 'http://127.0.0.1:8976/callback';
    const registered = await app.inject({ method: 'POST', url: '/oauth/register', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ client_name: 'Bench', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }) });
    const clientId = JSON.parse(registered.body).client_id;
    const project = await app.inject({ method: 'POST', url: '/v1/projects', headers: { authorization: `Bearer ${created.api_key.key}`, 'content-type': 'application/json' }, payload: '{"name":"Apollo"}' });
    const projectId = JSON.parse(project.body).id;

    async function code() {
      const verifier = randomBytes(32).toString('base64url');
      const query = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'read', state: 's', resource: `${config.publicBaseUrl}/mcp`, code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' });
      const b = browser(app, ['ws_session', started.token]);
      let res = await b.send('GET', `/oauth/authorize?${query}`);
      const consent = await b.send('GET', new URL(res.headers.location, config.publicBaseUrl).pathname);
      const uid = /action="\/dashboard\/authorize\/([^"]+)"/.exec(consent.body)[1];
      const csrf = /name="_csrf" value="([^"]+)"/.exec(consent.body)[1];
      res = await b.send('POST', `/dashboard/authorize/${uid}`, new URLSearchParams({ _csrf: csrf, decision: 'allow' }).toString());
      res = await b.send('GET', new URL(res.headers.location, config.publicBaseUrl).pathname);
      return { code: new URL(res.headers.location).searchParams.get('code'), verifier };
    }
    // Each call from its own address: the per-address limit of /oauth/* (300 a minute) is not what is measured.
    let address = 0;
    const from = () => `10.${(address >> 16) & 255}.${(address >> 8) & 255}.${address++ & 255}`;
    const form = (fields) => ({ method: 'POST', url: '/oauth/token', remoteAddress: from(), headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ client_id: clientId, ...fields }).toString() });
    const cpu = async (n, one) => {
      const before = process.cpuUsage();
      for (let i = 0; i < n; i++) await one(i);
      const used = process.cpuUsage(before);
      return (used.user + used.system) / n;
    };

    // Warm every path once.
    const warm = await code();
    const warmTokens = JSON.parse((await app.inject(form({ grant_type: 'authorization_code', code: warm.code, redirect_uri: redirectUri, code_verifier: warm.verifier }))).body);
    await app.inject(form({ grant_type: 'refresh_token', refresh_token: warmTokens.refresh_token }));

    // Each code is exchanged as soon as it is issued, and its refresh token used once, as an app does; only the
    // token endpoint's calls are timed (a new consent replaces the app's earlier grant, so codes cannot wait).
    let exchangeCpu = 0;
    let refreshCpu = 0;
    for (let i = 0; i < CALLS; i++) {
      const { code: value, verifier } = await code();
      let before = process.cpuUsage();
      const res = await app.inject(form({ grant_type: 'authorization_code', code: value, redirect_uri: redirectUri, code_verifier: verifier }));
      let used = process.cpuUsage(before);
      exchangeCpu += used.user + used.system;
      if (res.statusCode !== 200) throw new Error(`exchange answered ${res.statusCode}: ${res.body}`);
      before = process.cpuUsage();
      const again = await app.inject(form({ grant_type: 'refresh_token', refresh_token: JSON.parse(res.body).refresh_token }));
      used = process.cpuUsage(before);
      refreshCpu += used.user + used.system;
      if (again.statusCode !== 200) throw new Error(`refresh answered ${again.statusCode}: ${again.body}`);
    }
    const exchangeUs = exchangeCpu / CALLS;
    const refreshUs = refreshCpu / CALLS;
    const getUs = await cpu(CALLS, async () => {
      const res = await app.inject({ method: 'GET', url: `/v1/projects/${projectId}`, headers: { authorization: `Bearer ${created.api_key.key}` } });
      if (res.statusCode !== 200) throw new Error(`GET answered ${res.statusCode}`);
    });
    return { dialect, exchangeUs: Math.round(exchangeUs), refreshUs: Math.round(refreshUs), getUs: Math.round(getUs), exchangeVsGet: round(exchangeUs / getUs, 1), refreshVsGet: round(refreshUs / getUs, 1) };
  } finally {
    await app.close();
    await container.close();
    await pg?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const dialects = args.only ? [args.only] : ['sqlite', 'postgres'];
const results = [];
for (const dialect of dialects) {
  console.log(`${dialect}: MCP read tool against GET /v1/projects/:id, ${ROUNDS} rounds of ${SECONDS} s, ${CONNECTIONS} connections`);
  const t = await throughput(dialect);
  console.log(`${dialect}: token endpoint, ${CALLS} code exchanges and ${CALLS} refreshes in process`);
  const k = await tokenEndpoint(dialect);
  results.push({ ...t, ...k });
}
console.log('\n| dialect | API GET req/s | MCP get_project req/s | MCP / API | CPU µs per request API / MCP | p99 ms API / MCP | code exchange CPU µs | refresh CPU µs | GET by id CPU µs (in process) |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(`| ${r.dialect} | ${r.apiRps} | ${r.mcpRps} | **${r.ratio}** | ${r.apiCpuUs} / ${r.mcpCpuUs} | ${r.apiP99} / ${r.mcpP99} | ${r.exchangeUs} (${r.exchangeVsGet}×) | ${r.refreshUs} (${r.refreshVsGet}×) | ${r.getUs} |`);
}
