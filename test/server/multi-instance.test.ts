import fs from 'node:fs';
import https from 'node:https';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, runCli, startServe, type ServeProcess } from '../helpers/cli.js';
import { makeSelfSignedCertificate, type TestCertificate } from '../helpers/https-receiver.js';
import { deleteRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix, waitFor } from '../helpers/redis.js';
import { createPgDatabase } from '../helpers/test-env.js';

const LIMIT = 30;
const EVENTS = 60;
const WEBHOOK_TIMEOUT_MS = 4000;

interface Arrival {
  path: string;
  deliveryId: string;
  eventId: string;
  /** The process that sent it (found from the connection's source port). */
  pid: number | null;
  at: number;
  res: ServerResponse;
}

/** Which of `pids` owns the TCP socket bound locally to `port` (Linux /proc). */
function pidOfLocalPort(port: number, pids: number[]): number | null {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!fs.existsSync(table)) continue;
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[1]?.endsWith(`:${hex}`)) inodes.add(cols[9]!);
    }
  }
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode && inodes.has(inode)) return pid;
      } catch {
        // the fd closed meanwhile
      }
    }
  }
  return null;
}

async function http(base: string, method: string, path: string, key: string | null, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/**
 * Two `serve` and two `worker` processes (the built CLI) on one fresh PostgreSQL database and one Redis:
 * the deployment the scale-out issue describes. PostgreSQL and Redis only: SQLite is single-host.
 */
describe('many instances on one PostgreSQL and Redis', () => {
  const prefix = uniqueRedisPrefix();
  let database: Awaited<ReturnType<typeof createPgDatabase>>;
  let cert: TestCertificate;
  let receiver: https.Server;
  let origin: string;
  const arrivals: Arrival[] = [];
  /** Per path: hold the response (the test answers it later) instead of answering 200 at once. */
  const holding = new Set<string>();
  let env: Record<string, string>;
  const processes: ServeProcess[] = [];
  let apiA: string;
  let apiB: string;
  let org: { organization: { id: string }; owner: { id: string }; api_key: { key: string } };
  let db: pg.Client;

  beforeAll(async () => {
    database = await createPgDatabase();
    cert = makeSelfSignedCertificate();
    receiver = https.createServer({ key: cert.key, cert: cert.cert }, (req, res) => {
      req.resume();
      req.on('end', () => {
        const path = (req.url ?? '').split('?')[0]!;
        const arrival: Arrival = {
          path,
          deliveryId: String(req.headers['x-service-delivery-id']),
          eventId: String(req.headers['x-service-event-id']),
          pid: pidOfLocalPort(req.socket.remotePort!, processes.map((p) => p.child.pid!)),
          at: Date.now(),
          res,
        };
        arrivals.push(arrival);
        if (!holding.has(path)) res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    origin = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

    env = {
      DATABASE_URL: database.url,
      DATABASE_POOL_SIZE: '5',
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_PER_MINUTE: String(LIMIT),
      NODE_EXTRA_CA_CERTS: cert.certFile,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_TIMEOUT: `${WEBHOOK_TIMEOUT_MS}ms`,
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s',
      // startServe waits for the 'ready' line, logged at info.
      LOG_LEVEL: 'info',
      DATA_DIR: fs.mkdtempSync('/tmp/ws-multi-'),
    };
    // All four start at once: the migration lock lets exactly one of them migrate.
    // Each is recorded as soon as it is ready, so afterAll kills whatever started even if another did not.
    const start = (command: string) => startServe(env, command).then((p) => (processes.push(p), p));
    const started = await Promise.all([start('serve'), start('serve'), start('worker'), start('worker')]);
    apiA = started[0]!.address;
    apiB = started[1]!.address;
    org = await cliJson(['org', 'create', '--name', 'Multi', '--owner-email', 'owner@example.com'], env);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
  }, 120_000);

  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await db?.end();
    for (const a of arrivals) if (!a.res.writableEnded) a.res.destroy();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
    await database?.drop();
    await deleteRedisPrefix(prefix);
    if (env?.DATA_DIR) fs.rmSync(env.DATA_DIR, { recursive: true, force: true });
    if (cert) fs.rmSync(cert.dir, { recursive: true, force: true });
  });

  async function memberKey(role: string, scope = 'full'): Promise<{ userId: string; keyId: string; key: string }> {
    const n = Math.random().toString(36).slice(2, 8);
    const user = await cliJson(['user', 'add', '--org', org.organization.id, '--email', `${role}-${n}@example.com`, '--role', role], env);
    const key = await cliJson(['key', 'create', '--user', user.id, '--scope', scope], env);
    return { userId: user.id, keyId: key.id, key: key.key };
  }

  it('one rate limit per key, shared by both API instances', async () => {
    const { key } = await memberKey('viewer', 'read');
    const seen: { status: number; remaining: string | null }[] = [];
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await http(i % 2 ? apiB : apiA, 'GET', '/v1/projects', key);
      seen.push({ status: res.status, remaining: res.headers.get('x-ratelimit-remaining') });
    }
    expect(seen.slice(0, LIMIT).every((s) => s.status === 200)).toBe(true);
    expect(seen.slice(0, LIMIT).map((s) => Number(s.remaining))).toEqual(Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i));
    expect(seen.slice(LIMIT).map((s) => s.status)).toEqual([429, 429]);
    const refused = await http(apiA, 'GET', '/v1/projects', key);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('a key revoked with the CLI is refused by both APIs on the next request', async () => {
    const member = await memberKey('member');
    for (const api of [apiA, apiB, apiA, apiB]) expect((await http(api, 'GET', '/v1/projects', member.key)).status).toBe(200);
    const revoked = await runCli(['key', 'revoke', member.keyId, '--json'], env);
    expect(revoked.code).toBe(0);
    for (const api of [apiB, apiA]) {
      const res = await http(api, 'POST', '/v1/projects', member.key, { name: 'after revoke' });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('unauthorized');
    }
  });

  it("a role change through one API applies on the other at once", async () => {
    const member = await memberKey('admin');
    for (const api of [apiA, apiB]) expect((await http(api, 'POST', '/v1/projects', member.key, { name: `as admin ${api}` })).status).toBe(201);
    const changed = await http(apiA, 'PUT', `/v1/users/${member.userId}`, org.api_key.key, { role: 'viewer' });
    expect(changed.status).toBe(200);
    for (const api of [apiB, apiA]) {
      const res = await http(api, 'POST', '/v1/projects', member.key, { name: 'as viewer' });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
    }
    const { rows } = await db.query(`select count(*)::int as n from projects where name = 'as viewer'`);
    expect(rows[0].n).toBe(0);
  });

  it('each of many events reaches a healthy receiver exactly once', async () => {
    const hook = await http(apiA, 'POST', '/v1/webhooks', org.api_key.key, { url: `${origin}/healthy`, events: ['project.created'] });
    expect(hook.status).toBe(201);
    const writers = await Promise.all([memberKey('member'), memberKey('member'), memberKey('member')]);
    const created: string[] = [];
    await Promise.all(
      writers.map(async (w, wi) => {
        for (let i = 0; i < EVENTS / writers.length; i++) {
          const res = await http(i % 2 ? apiB : apiA, 'POST', '/v1/projects', w.key, { name: `event ${wi}-${i}` });
          expect(res.status).toBe(201);
          created.push(res.body.id);
        }
      }),
    );
    expect(created).toHaveLength(EVENTS);
    const healthy = () => arrivals.filter((a) => a.path === '/healthy');
    await waitFor(async () => {
      const { rows } = await db.query(`select count(*)::int as n from deliveries where webhook_id = $1 and status = 'delivered'`, [hook.body.id]);
      return rows[0].n === EVENTS;
    }, 'every delivery to be delivered', 60_000);
    // Settle: a duplicate would arrive within an attempt's time.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const ids = healthy().map((a) => a.deliveryId);
    expect(ids).toHaveLength(EVENTS);
    expect(new Set(ids).size).toBe(EVENTS);
    const { rows } = await db.query(`select attempt_count from deliveries where webhook_id = $1`, [hook.body.id]);
    expect(rows.every((r: { attempt_count: number }) => r.attempt_count === 1)).toBe(true);
    // The work was shared: more than one process sent deliveries.
    expect(new Set(healthy().map((a) => a.pid)).size).toBeGreaterThan(1);
  }, 120_000);

  it('cursors from one instance continue on the other', async () => {
    const { key } = await memberKey('viewer', 'read');
    const seen: string[] = [];
    let cursor: string | null = null;
    let page = 0;
    do {
      const api = page++ % 2 ? apiB : apiA;
      const res: { status: number; body: { data: { id: string }[]; next_cursor: string | null } } = await http(
        api,
        'GET',
        `/v1/projects?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        key,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((p) => p.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(page).toBeGreaterThan(2);
    const { rows } = await db.query(`select id from projects where org_id = $1 order by seq desc`, [org.organization.id]);
    expect(seen).toEqual(rows.map((r: { id: string }) => r.id));
  });

  it('a worker killed with SIGKILL mid-attempt: another worker completes its deliveries once the lease expires', async () => {
    holding.add('/stuck');
    const hook = await http(apiA, 'POST', '/v1/webhooks', org.api_key.key, { url: `${origin}/stuck`, events: ['project.created'] });
    expect(hook.status).toBe(201);
    // Only the new subscription should receive these: keep /healthy out of the count by looking at /stuck.
    for (let i = 0; i < 3; i++) expect((await http(apiB, 'POST', '/v1/projects', org.api_key.key, { name: `stuck ${i}` })).status).toBe(201);
    const stuck = () => arrivals.filter((a) => a.path === '/stuck');
    await waitFor(() => stuck().length >= 1, 'a held attempt');
    // The victim is the process holding a delivery's lease now, read from the database (lease owners are
    // `wkr_<pid>_…`), not whoever sent first: on a loaded machine the first attempt may already have timed out
    // (4 s) and its retry gone to another process before the test gets here.
    type Held = { id: string; lease_owner: string; lease_expires_at: string };
    let held: Held[] = [];
    await waitFor(async () => {
      const { rows } = await db.query(`select id, lease_owner, lease_expires_at from deliveries where webhook_id = $1 and lease_owner is not null`, [hook.body.id]);
      // On the wire from the very process that holds the lease.
      held = (rows as Held[]).filter((r) => stuck().some((a) => a.deliveryId === r.id && !a.res.writableEnded && r.lease_owner.startsWith(`wkr_${a.pid}_`)));
      return held.length > 0;
    }, 'a delivery in flight under a lease');
    const pid = Number(/^wkr_(\d+)_/.exec(held[0]!.lease_owner)?.[1]);
    const killed = processes.find((p) => p.child.pid === pid)!;
    expect(killed, `a process with pid ${pid}`).toBeDefined();
    const leased = held.filter((r) => r.lease_owner.startsWith(`wkr_${pid}_`));
    killed.child.kill('SIGKILL');
    await killed.exited;
    const killedAt = Date.now();
    // Attempts held by the survivors are answered now; from here on /stuck is healthy.
    holding.delete('/stuck');
    for (const a of stuck()) if (a.pid !== pid && !a.res.writableEnded) a.res.writeHead(200).end('ok');

    await waitFor(async () => {
      const { rows } = await db.query(`select count(*)::int as n from deliveries where webhook_id = $1 and status = 'delivered'`, [hook.body.id]);
      return rows[0].n === 3;
    }, 'the orphaned deliveries to be completed by another worker', 60_000);

    for (const row of leased) {
      // The dead process had it on the wire; another completed it once, and not before the lease ran out.
      expect(stuck().some((a) => a.deliveryId === row.id && a.pid === pid)).toBe(true);
      const retried = stuck().filter((a) => a.deliveryId === row.id && a.pid !== pid && a.at >= killedAt);
      expect(retried).toHaveLength(1);
      expect(retried[0]!.at).toBeGreaterThanOrEqual(Number(row.lease_expires_at));
    }
    const { rows: final } = await db.query(`select status, lease_owner from deliveries where webhook_id = $1`, [hook.body.id]);
    expect(final.every((r: { status: string; lease_owner: string | null }) => r.status === 'delivered' && r.lease_owner === null)).toBe(true);
    // The survivors still serve: the other API answers.
    const survivor = [apiA, apiB].find((api) => !killed.address || api !== killed.address)!;
    expect((await http(survivor, 'GET', '/readyz', null)).status).toBe(200);
  }, 120_000);

  it('SIGTERM mid-attempt: the process finishes the attempt, records it, leaves no lease and exits 0', async () => {
    holding.add('/drain');
    // The SIGKILL above may have taken either API: use one that is alive.
    const alive = processes.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
    const api = alive.find((p) => p.address)!.address;
    const hook = await http(api, 'POST', '/v1/webhooks', org.api_key.key, { url: `${origin}/drain`, events: ['project.created'] });
    expect(hook.status).toBe(201);
    expect((await http(api, 'POST', '/v1/projects', org.api_key.key, { name: 'drain me' })).status).toBe(201);
    const drain = () => arrivals.filter((a) => a.path === '/drain');
    await waitFor(() => drain().length === 1, 'the attempt to arrive');
    const held = drain()[0]!;
    const target = processes.find((p) => p.child.pid === held.pid)!;
    expect(target).toBeDefined();
    target.child.kill('SIGTERM');
    // The process is draining, not gone: answer the attempt it is waiting on.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.child.exitCode).toBeNull();
    held.res.writeHead(200).end('ok');
    expect(await target.exited).toEqual({ code: 0, signal: null });
    const { rows } = await db.query(`select status, attempt_count, lease_owner from deliveries where id = $1`, [held.deliveryId]);
    expect(rows[0]).toEqual({ status: 'delivered', attempt_count: 1, lease_owner: null });
    expect(drain()).toHaveLength(1);
    holding.delete('/drain');
  }, 60_000);
});
