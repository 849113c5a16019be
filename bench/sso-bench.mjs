#!/usr/bin/env node
// Single sign-on round trips (issue 33) against a local OpenID provider (oidc-provider over HTTPS, in a CHILD
// process so its CPU is not ours). Each sign-in: "Sign in with single sign-on" (GET + POST via app.inject), the
// provider's login form (fetch), then the callback, whose CPU (process.cpuUsage) and wall time are measured:
// state look-up, code exchange with PKCE, the ID token's signature against the JWKS, userinfo, identity, session.
// Baseline in the same run: the password sign-in's POST (one scrypt, the same session and audit rows).
//   npm run build && node bench/sso-bench.mjs [sign-ins=50]
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, URLSearchParams } from 'node:url';
import { Agent, fetch } from 'undici';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const N = Number(process.argv[2] ?? 50);
const WARMUP = 5;
const dist = path.join(ROOT, 'dist');

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

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-bench-'));
const certFile = path.join(tmp, 'cert.pem');
const keyFile = path.join(tmp, 'key.pem');
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'pipe' });
const BASE = 'http://ws.bench';
const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--provider', certFile, keyFile, `${BASE}/dashboard/sso/callback`], { stdio: ['ignore', 'pipe', 'ignore'] });
const issuer = await new Promise((resolve, reject) => {
  child.stdout.once('data', (data) => resolve(JSON.parse(String(data).split('\n')[0]).issuer));
  child.once('exit', (code) => reject(new Error(`the provider exited (${code})`)));
});

const { loadConfig } = await import(`${dist}/config.js`);
const { createContainer } = await import(`${dist}/container.js`);
const { cliActor } = await import(`${dist}/services/actor.js`);
const { buildApp } = await import(`${dist}/http/app.js`);
const { hashPassword } = await import(`${dist}/lib/crypto.js`);
const config = loadConfig({ DATA_DIR: tmp, LOG_LEVEL: 'warn', PUBLIC_BASE_URL: BASE, SSO_ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_PER_MINUTE: '100000000' });
const container = await createContainer(config, { migrate: true, outboundCa: fs.readFileSync(certFile, 'utf8') });
const app = await buildApp(container);
await app.ready();
const { services, store, database } = container;
const created = await services.admin.createOrganization({ name: 'Bench SSO', ownerEmail: 'owner@bench-sso.test', ownerName: 'Owner' });
const orgId = created.organization.id;
await services.sso.saveConnection(cliActor(orgId), { issuer, clientId: 'bench', clientSecret: 'bench secret', jit: true, defaultRole: 'member' });
const now = Date.now();
await database.db.insertInto('sso_domains').values({ id: 'dom_bench', org_id: orgId, domain: 'bench-sso.test', token: 't', created_at: now, verified_at: now, last_checked_at: now, missing_since: null }).execute();
const PASSWORD = 'bench password long enough';
for (let i = 0; i < N + WARMUP; i++) {
  const user = await services.admin.addUser({ orgId, email: `person${i}@bench-sso.test`, role: 'member', name: `Person ${i}` });
  await store.repos.users.update(orgId, user.id, { password_hash: await hashPassword(PASSWORD) });
}

const dispatcher = new Agent({ connect: { ca: fs.readFileSync(certFile) } });
/** Cookie jar + `app.inject`, like the tests' DashboardClient. */
function browser() {
  const jar = new Map();
  return {
    jar,
    async inject(method, url, form) {
      const headers = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
      let payload;
      if (form) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        payload = new URLSearchParams(form).toString();
      }
      const res = await app.inject({ method, url, headers, payload });
      for (const line of [res.headers['set-cookie'] ?? []].flat()) {
        const [pair] = line.split(';');
        const eq = pair.indexOf('=');
        jar.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      return res;
    },
  };
}
const csrfOf = (html) => /name="_csrf" value="([^"]+)"/.exec(html)[1];

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

function measure(fn) {
  return async () => {
    const cpu = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const res = await fn();
    const wall = Number(process.hrtime.bigint() - t0) / 1e6;
    const used = process.cpuUsage(cpu);
    return { res, cpu: (used.user + used.system) / 1000, wall };
  };
}

const sso = { cpu: [], wall: [] };
const password = { cpu: [], wall: [] };
for (let i = 0; i < N + WARMUP; i++) {
  const b = browser();
  const start = await b.inject('GET', '/dashboard/login/sso');
  const page = await b.inject('POST', '/dashboard/login/sso', { _csrf: csrfOf(start.body), email: `person${i}@bench-sso.test` });
  const authorizationUrl = /content="0;url=([^"]+)"/.exec(page.body)[1].replaceAll('&amp;', '&');
  const back = await atProvider(authorizationUrl, `person${i}`);
  const callback = await measure(() => b.inject('GET', back.pathname + back.search))();
  if (callback.res.statusCode !== 303) throw new Error(`callback answered ${callback.res.statusCode}: ${callback.res.body.slice(0, 300)}`);

  const p = browser();
  const login = await p.inject('GET', '/dashboard/login');
  const signIn = await measure(() => p.inject('POST', '/dashboard/login', { _csrf: csrfOf(login.body), email: `person${i}@bench-sso.test`, password: PASSWORD }))();
  if (signIn.res.statusCode !== 303) throw new Error(`password sign-in answered ${signIn.res.statusCode}`);
  if (i < WARMUP) continue;
  sso.cpu.push(callback.cpu);
  sso.wall.push(callback.wall);
  password.cpu.push(signIn.cpu);
  password.wall.push(signIn.wall);
}

const f = (ms) => `${ms.toFixed(2)} ms`;
console.log(`single sign-on callback, median of ${N} (after ${WARMUP} warm-up):  CPU ${f(median(sso.cpu))}  wall ${f(median(sso.wall))}`);
console.log(`password sign-in POST (baseline, same run):          CPU ${f(median(password.cpu))}  wall ${f(median(password.wall))}`);
console.log(`ratio callback / password sign-in:  CPU ${(median(sso.cpu) / median(password.cpu)).toFixed(2)}  wall ${(median(sso.wall) / median(password.wall)).toFixed(2)}`);

await app.close();
await container.close();
await dispatcher.close();
child.kill();
fs.rmSync(tmp, { recursive: true, force: true });
