#!/usr/bin/env node
// Sign-in CPU (issues 33 and 41) against a local OpenID provider (oidc-provider over HTTPS, in a CHILD process so
// its CPU is not ours). Per round, for each build: a single sign-on callback (state look-up, code exchange with
// PKCE, the ID token's signature against the JWKS, userinfo, identity, session), a password sign-in (one scrypt, the
// same session and audit rows), and a wrong-password sign-in for an address with one account and for an address
// with accounts in three organisations (security review F7), each timed with process.cpuUsage around app.inject.
// With --vs DIR, the build in DIR (a checkout of another release with dist/ built and node_modules linked, e.g.
// `git archive <commit> | tar -x -C /tmp/prev`) runs in this same process, interleaved round by round, so both
// builds meet the same machine load; the ratios are this build's over DIR's.
//   npm run build && node bench/sso-bench.mjs [--rounds 40] [--vs /tmp/prev]
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, URLSearchParams } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, fetch } from 'undici';
import { builtModule } from './built.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

if (process.argv[2] === '--provider') {
  // The child: the provider on a free port; prints its issuer, then serves until killed.
  const [, , , certFile, keyFile, redirectUri] = process.argv;
  const https = await import('node:https');
  const { default: Provider } = await import('oidc-provider');
  const server = https.createServer({ cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `https://localhost:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [{ client_id: 'bench', client_secret: 'bench secret', redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_post' }],
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['bench cookie key'] },
    features: { devInteractions: { enabled: true } },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id, email: `${id}@bench-sso.test`, email_verified: true, name: id }) }),
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  });
  server.on('request', provider.callback());
  console.log(JSON.stringify({ issuer }));
  await new Promise(() => {});
}

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '40' }, vs: { type: 'string' } } });
const ROUNDS = Number(args.rounds);
const WARMUP = 3;
const PASSWORD = 'bench password long enough';
const BASE = 'http://ws.bench';

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-bench-'));
const certFile = path.join(tmp, 'cert.pem');
const keyFile = path.join(tmp, 'key.pem');
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'pipe' });
const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--provider', certFile, keyFile, `${BASE}/dashboard/sso/callback`], { stdio: ['ignore', 'pipe', 'ignore'] });
const issuer = await new Promise((resolve, reject) => {
  child.stdout.once('data', (data) => resolve(JSON.parse(String(data).split('\n')[0]).issuer));
  child.once('exit', (code) => reject(new Error(`the provider exited (${code})`)));
});
const dispatcher = new Agent({ connect: { ca: fs.readFileSync(certFile) } });

/** The provider's part, as a browser: authorization URL → login form → back to our callback URL. */
async function atProvider(authorizationUrl, login) {
  const jar = new Map();
  const go = async (url, body) => {
    const res = await fetch(url, { method: body ? 'POST' : 'GET', redirect: 'manual', dispatcher, headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) }, body: body?.toString() });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    return res;
  };
  let url = authorizationUrl;
  for (;;) {
    const res = await go(url);
    const location = res.headers.get('location');
    if (location) {
      const next = new URL(location, url);
      if (next.origin !== issuer) return next;
      url = next.href;
      continue;
    }
    const action = /<form[^>]*action="([^"]+)"/.exec(await res.text())[1];
    const posted = await go(new URL(action, url).href, new URLSearchParams({ prompt: 'login', login, password: 'x' }));
    url = new URL(posted.headers.get('location'), url).href;
  }
}

const csrfOf = (html) => /name="_csrf" value="([^"]+)"/.exec(html)[1];

/** One build: its own dist, database and app, set up with the same people. */
async function openBuild(root, label) {
  const dist = path.join(root, 'dist');
  const dataDir = fs.mkdtempSync(path.join(tmp, `${label}-`));
  const { loadConfig } = await import(`${dist}/config.js`);
  const { createContainer } = await import(`${dist}/container.js`);
  const { cliActor } = await builtModule(dist, 'actor');
  const { buildApp } = await builtModule(dist, 'app');
  const { hashPassword } = await import(`${dist}/lib/crypto.js`);
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: BASE, SSO_ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_PER_MINUTE: '100000000' });
  const container = await createContainer(config, { migrate: true, outboundCa: fs.readFileSync(certFile, 'utf8') });
  const app = await buildApp(container);
  await app.ready();
  const { services, store, database } = container;
  const created = await services.admin.createOrganization({ name: 'Bench SSO', ownerEmail: 'owner@bench-sso.test', ownerName: 'Owner' });
  const orgId = created.organization.id;
  await services.sso.saveConnection(cliActor(orgId), { issuer, clientId: 'bench', clientSecret: 'bench secret', jit: true, defaultRole: 'member' });
  const now = Date.now();
  await database.db.insertInto('sso_domains').values({ id: 'dom_bench', org_id: orgId, domain: 'bench-sso.test', token: 't', created_at: now, verified_at: now, last_checked_at: now, missing_since: null }).execute();
  const total = ROUNDS + WARMUP;
  for (let i = 0; i < total; i++) {
    const user = await services.admin.addUser({ orgId, email: `person${i}@bench-sso.test`, role: 'member', name: `Person ${i}` });
    await store.repos.users.update(orgId, user.id, { password_hash: await hashPassword(PASSWORD) });
  }
  // Addresses for the wrong-password sign-ins, each used once (the limits allow 5 failures per address): one
  // account each, or accounts in three organisations, their passwords set by the service's own links.
  const others = [];
  for (let k = 0; k < 3; k++) others.push((await services.admin.createOrganization({ name: `Other ${k}`, ownerEmail: `owner${k}@other.test` })).organization.id);
  const setPassword = async (org, email) => {
    const user = await services.admin.addUser({ orgId: org, email, role: 'member', name: 'Someone' });
    const link = await services.accounts.issuePasswordLink(cliActor(org), user.id, 'setup');
    await services.accounts.setPassword(link.url.split('/').at(-1), PASSWORD, { source: 'dashboard', ip: null, userAgent: null, requestId: null });
  };
  for (let i = 0; i < total; i++) {
    await setPassword(others[0], `single${i}@wrong.test`);
    for (const org of others) await setPassword(org, `multi${i}@wrong.test`);
  }

  /** Cookie jar + `app.inject`, like the tests' DashboardClient, from its own client address. */
  function browser(remoteAddress = '127.0.0.1') {
    const jar = new Map();
    return async (method, url, form) => {
      const headers = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
      let payload;
      if (form) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        payload = new URLSearchParams(form).toString();
      }
      const res = await app.inject({ method, url, headers, payload, remoteAddress });
      for (const line of [res.headers['set-cookie'] ?? []].flat()) {
        const [pair] = line.split(';');
        const eq = pair.indexOf('=');
        jar.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      return res;
    };
  }
  return {
    label,
    browser,
    async close() {
      await app.close();
      await container.close();
    },
  };
}

async function measure(fn) {
  const cpu = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const res = await fn();
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  const used = process.cpuUsage(cpu);
  return { res, cpu: (used.user + used.system) / 1000, wall };
}

const OPS = ['sso callback, first (links)', 'sso callback, returning', 'password sign-in', 'wrong password, 1 account', 'wrong password, 3 organisations'];

async function round(build, i, results) {
  const take = (op, m, status) => {
    if (m.res.statusCode !== status) throw new Error(`${build.label} ${op} answered ${m.res.statusCode}: ${m.res.body.slice(0, 300)}`);
    if (i >= WARMUP) results[op].push(m.cpu);
  };
  // The first single sign-on links the person (and mails the owners and them); the second finds the link.
  for (const [n, op] of ['sso callback, first (links)', 'sso callback, returning'].entries()) {
    // Each from its own address: 60 round trips a minute may start from one.
    const b = build.browser(`10.8.${n}.${i % 250}`);
    const start = await b('GET', '/dashboard/login/sso');
    const page = await b('POST', '/dashboard/login/sso', { _csrf: csrfOf(start.body), email: `person${i}@bench-sso.test` });
    const back = await atProvider(/content="0;url=([^"]+)"/.exec(page.body)[1].replaceAll('&amp;', '&'), `person${i}`);
    take(op, await measure(() => b('GET', back.pathname + back.search)), 303);
  }

  const p = build.browser();
  const login = await p('GET', '/dashboard/login');
  take('password sign-in', await measure(() => p('POST', '/dashboard/login', { _csrf: csrfOf(login.body), email: `person${i}@bench-sso.test`, password: PASSWORD })), 303);

  for (const [op, email] of [['wrong password, 1 account', `single${i}@wrong.test`], ['wrong password, 3 organisations', `multi${i}@wrong.test`]]) {
    const w = build.browser(`10.9.${Math.floor(i / 200)}.${i % 200}`);
    const form = await w('GET', '/dashboard/login');
    take(op, await measure(() => w('POST', '/dashboard/login', { _csrf: csrfOf(form.body), email, password: 'not the password' })), 401);
  }
}

const builds = [await openBuild(ROOT, 'this build')];
if (args.vs) builds.push(await openBuild(path.resolve(args.vs), path.basename(args.vs)));
const results = new Map(builds.map((b) => [b, Object.fromEntries(OPS.map((op) => [op, []]))]));
for (let i = 0; i < ROUNDS + WARMUP; i++) {
  // Alternate which build goes first, so neither always meets the other's leftovers.
  const order = i % 2 === 0 ? builds : [...builds].reverse();
  for (const build of order) await round(build, i, results.get(build));
}

const f = (ms) => `${ms.toFixed(2)} ms`;
console.log(`CPU per request, median of ${ROUNDS} rounds (after ${WARMUP} warm-up), ${builds.map((b) => b.label).join(' vs ')}, interleaved`);
for (const op of OPS) {
  const mine = median(results.get(builds[0])[op]);
  const line = [`${op.padEnd(34)} ${f(mine).padStart(10)}`];
  if (builds[1]) {
    const theirs = median(results.get(builds[1])[op]);
    line.push(`${f(theirs).padStart(10)}  ratio ${(mine / theirs).toFixed(2)}`);
  }
  console.log(line.join('  '));
}
const [first] = builds;
const r = (op) => median(results.get(first)[op]);
console.log(`this build: returning callback / password sign-in ${(r('sso callback, returning') / r('password sign-in')).toFixed(2)}; 3 organisations / 1 account ${(r('wrong password, 3 organisations') / r('wrong password, 1 account')).toFixed(2)}`);
if (builds[1]) {
  const o = (op) => median(results.get(builds[1])[op]);
  console.log(`${builds[1].label}: 3 organisations / 1 account ${(o('wrong password, 3 organisations') / o('wrong password, 1 account')).toFixed(2)}`);
}

for (const build of builds) await build.close();
await dispatcher.close();
child.kill();
fs.rmSync(tmp, { recursive: true, force: true });
