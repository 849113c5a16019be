import type { ServerResponse } from 'node:http';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { testDialects } from '../helpers/test-env.js';
import { cliJson, startServe, type ServeProcess } from '../helpers/cli.js';
import { waitFor } from '../helpers/https-receiver.js';
import { serveFixture, stopServe } from '../helpers/serve-fixture.js';
import { ARRIVAL_JITTER_MS, busiestSecond, inFlightCounter } from '../helpers/receiver-counts.js';

interface Arrival {
  at: number;
  name: string;
  eventId: string;
}

/**
 * CONTRACT 14 across processes, on the built code: `serve` and `worker` (two worker processes) on PostgreSQL,
 * and a kill -9 of the process sending an ordered subscription's head on both dialects (on the embedded
 * database `serve` is the one worker process; it is restarted).
 */
describe.each(testDialects())('delivery control across processes (%s)', (dialect) => {
  const arrivals = new Map<string, Arrival[]>();
  const inFlight = inFlightCounter();
  /** While set, the ordered endpoint holds this request unanswered (the kill happens meanwhile). */
  let holdName: string | null = null;
  const f = serveFixture(dialect, {
    env: { WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms,100ms,100ms', WEBHOOK_TIMEOUT: '1s' },
    routes: (receiver) => {
      const record = (path: string) => (req: { body: Buffer; headers: Record<string, unknown> }, res: ServerResponse) => {
        const name = (JSON.parse(req.body.toString()) as { data: { name: string } }).data.name;
        const list = arrivals.get(path) ?? [];
        arrivals.set(path, list);
        list.push({ at: performance.now(), name, eventId: String(req.headers['x-service-event-id']) });
        if (path !== '/ordered') return void setTimeout(() => res.writeHead(200).end(), 5);
        inFlight.track(res);
        if (name === holdName) return;
        setTimeout(() => res.writeHead(200).end(), 30);
      };
      receiver.on('/limited', record('/limited'));
      receiver.on('/ordered', record('/ordered'));
    },
  });
  const running: ServeProcess[] = [];
  afterAll(async () => {
    for (const p of running) await stopServe(p, 'SIGKILL');
  });

  async function start(command: 'serve' | 'worker'): Promise<ServeProcess> {
    const p = await startServe({ ...f.env, METRICS_PORT: 'off' }, command);
    running.push(p);
    return p;
  }

  let key = '';
  let api: (method: string, path: string, body?: unknown) => Promise<Response>;

  async function setUp(serve: ServeProcess): Promise<void> {
    if (key === '') {
      const created = await cliJson(['org', 'create', '--name', 'Control', '--owner-email', 'control@example.com'], f.env);
      key = created.api_key.key;
    }
    api = (method, path, body) =>
      fetch(`${serve.address}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
  }

  async function createProjects(prefix: string, n: number): Promise<string[]> {
    const names: string[] = [];
    for (let i = 0; i < n; i++) {
      const name = `${prefix}-${String(i).padStart(3, '0')}`;
      expect((await api('POST', '/v1/projects', { name })).status).toBe(201);
      names.push(name);
    }
    return names;
  }

  const firstArrivals = (list: Arrival[]) => {
    const seen = new Set<string>();
    return list.filter((a) => !seen.has(a.eventId) && seen.add(a.eventId)).map((a) => a.name);
  };

  it.runIf(dialect === 'postgres')('rate_limit holds in every one-second window with two worker processes', async () => {
    const serve = await start('serve');
    await start('worker');
    await setUp(serve);
    const hook = await api('POST', '/v1/webhooks', { url: f.receiver.url('/limited'), events: ['project.created'], rate_limit: 8 });
    expect(hook.status).toBe(201);
    const webhookId = ((await hook.json()) as { id: string }).id;
    const names = await createProjects('limited', 40);
    await waitFor('every event delivered', () => firstArrivals(arrivals.get('/limited') ?? []).length === names.length, 30_000);
    const times = arrivals.get('/limited')!.map((a) => a.at);
    // Strictly on the attempts' starts (what the contract counts); on arrival, but for the network's jitter.
    const starts = await waitFor('every attempt recorded', async () => {
      const rows = await query<{ started_at: string }>('select a.started_at from delivery_attempts a join deliveries d on d.id = a.delivery_id where d.webhook_id = $1', [webhookId]);
      return rows.length === names.length ? rows.map((r) => Number(r.started_at)) : null;
    });
    expect(busiestSecond(starts)).toBeLessThanOrEqual(8);
    expect(busiestSecond(times, 1000 - ARRIVAL_JITTER_MS)).toBeLessThanOrEqual(8);
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(4_000);
  }, 60_000);

  it('fifo order holds across a kill -9 of the process sending the head', async () => {
    if (running.length === 0) {
      await start('serve');
      if (dialect === 'postgres') await start('worker');
    }
    const serve = running.find((p) => p.address !== '' && p.child.exitCode === null)!;
    await setUp(serve);
    const hook = await api('POST', '/v1/webhooks', { url: f.receiver.url('/ordered'), events: ['project.created'], ordering: 'fifo' });
    expect(hook.status).toBe(201);
    const webhookId = ((await hook.json()) as { id: string }).id;
    holdName = 'ordered-005';
    const names = await createProjects('ordered', 15);
    await waitFor('the held head on the wire', () => (arrivals.get('/ordered') ?? []).some((a) => a.name === holdName), 20_000);

    // The process holding the head's lease is named in it (wkr_<pid>_…).
    const owner = await leaseOwnerOfHead(webhookId);
    const pid = Number(/^wkr_(\d+)_/.exec(owner)?.[1]);
    const victim = running.find((p) => p.child.pid === pid);
    expect(victim, `a process with pid ${pid}`).toBeDefined();
    victim!.child.kill('SIGKILL');
    expect((await victim!.exited).signal).toBe('SIGKILL');
    holdName = null;
    // On the embedded database the one worker process is serve: it comes back, as after any crash.
    if (dialect === 'sqlite') await start('serve');

    await waitFor('every event delivered', () => firstArrivals(arrivals.get('/ordered') ?? []).length === names.length, 30_000);
    expect(firstArrivals(arrivals.get('/ordered')!)).toEqual(names);
    // The held attempt was sent again (at least once); never were two in flight.
    expect(inFlight.max()).toBe(1);
  }, 60_000);

  /** Rows from the PostgreSQL database the processes share. */
  async function query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<R[]> {
    const client = new pg.Client({ connectionString: f.env.DATABASE_URL });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  /** The lease owner of the delivery on the wire, read from the database the processes share. */
  async function leaseOwnerOfHead(webhookId: string): Promise<string> {
    const read = async (): Promise<string | null> => {
      if (dialect === 'postgres') {
        const rows = await query<{ lease_owner: string }>("select lease_owner from deliveries where webhook_id = $1 and status = 'pending' and lease_owner is not null", [webhookId]);
        return rows[0]?.lease_owner ?? null;
      }
      const { default: Database } = await import('better-sqlite3');
      const { sqliteFilePath } = await import('../../src/db/database.js');
      const db = new Database(sqliteFilePath({ dataDir: f.env.DATA_DIR! }), { readonly: true });
      try {
        const row = db.prepare("select lease_owner from deliveries where webhook_id = ? and status = 'pending' and lease_owner is not null").get(webhookId) as
          | { lease_owner: string }
          | undefined;
        return row?.lease_owner ?? null;
      } finally {
        db.close();
      }
    };
    return waitFor('the head leased', read);
  }
});
