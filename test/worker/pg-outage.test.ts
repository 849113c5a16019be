import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, type ApiResponse, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { createPrivatePg, type PrivatePg } from '../helpers/private-pg.js';
import { makeSelfSignedCertificate, startHttpsReceiver, type HttpsReceiver, type TestCertificate } from '../helpers/https-receiver.js';
import { startDeliveryWorker, type RunningWorker } from '../../src/worker/index.js';
import fs from 'node:fs';
import { waitFor } from '../helpers/redis.js';

/**
 * PostgreSQL going away under traffic, on a private cluster this test starts and stops (never the
 * machine's server). PostgreSQL-only by nature, so it does not loop over dialects.
 */
describe('PostgreSQL outage under traffic', () => {
  let server: PrivatePg;
  let env: TestEnv;
  let org: TestOrg;
  let cert: TestCertificate;
  let receiver: HttpsReceiver;
  let worker: RunningWorker;

  beforeAll(async () => {
    server = await createPrivatePg();
    await server.start();
    const admin = new pg.Client({ connectionString: server.adminUrl });
    await admin.connect();
    await admin.query('create database workspace');
    await admin.end();
    env = await createTestEnv('postgres', { env: { DATABASE_URL: server.adminUrl.replace(/\/postgres$/, '/workspace'), DATABASE_POOL_SIZE: '4' } });
    org = await env.createOrg();
    // A delivery worker in the same process, delivering to a healthy receiver through the outage.
    cert = makeSelfSignedCertificate();
    receiver = await startHttpsReceiver(cert);
    worker = await startDeliveryWorker(env.container, { ca: cert.cert, pollIntervalMs: 200 });
    const hook = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: receiver.url('/hook'), events: ['project.created'] } });
    expect(hook.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    await worker?.stop();
    await receiver?.close();
    if (cert) fs.rmSync(cert.dir, { recursive: true, force: true });
    await env?.close();
    await server?.destroy();
  });

  it('serving connections carry a statement timeout and an idle-in-transaction timeout', async () => {
    const { rows } = await env.container.database.pgPool!.query<{ st: string; it: string }>(
      "select current_setting('statement_timeout') as st, current_setting('idle_in_transaction_session_timeout') as it",
    );
    expect(rows[0]).toEqual({ st: '30s', it: '1min' });
  });

  it('answers 503 service_unavailable at once while the database is down, recovers by itself, and loses no acknowledged write', async () => {
    const acknowledged: string[] = [];
    const outcomes: { status: number; code?: string; ms: number; phase: string }[] = [];
    let phase = 'before';
    let stop = false;
    let counter = 0;

    async function writer(): Promise<void> {
      while (!stop) {
        const started = performance.now();
        let res: ApiResponse;
        try {
          res = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: `p${++counter}` } });
        } catch (err) {
          outcomes.push({ status: -1, code: String(err), ms: performance.now() - started, phase });
          continue;
        }
        outcomes.push({ status: res.status, code: res.body?.error?.code, ms: performance.now() - started, phase });
        if (res.status === 201) acknowledged.push(res.body.id as string);
        else await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }

    const writers = Array.from({ length: 4 }, () => writer());
    await waitFor(() => acknowledged.length >= 20, 'writes before the outage');

    phase = 'down';
    await server.stop('immediate');
    const failuresDuringOutage = () => outcomes.filter((o) => o.phase === 'down' && o.status === 503).length;
    await waitFor(() => failuresDuringOutage() >= 20, '503s during the outage', 30_000);
    const ready = await env.request('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.database).toBe('unavailable');

    phase = 'restarting';
    await server.start();
    phase = 'after';
    const ackedBeforeRecovery = acknowledged.length;
    await waitFor(() => acknowledged.length >= ackedBeforeRecovery + 20, 'writes after the database returned', 30_000);
    stop = true;
    await Promise.all(writers);

    // Nothing but success or 503 service_unavailable: no 500, no thrown request.
    const unexpected = outcomes.filter((o) => o.status !== 201 && !(o.status === 503 && o.code === 'service_unavailable'));
    expect(unexpected).toEqual([]);
    // "Quickly": a request during the outage never waits anywhere near a hang; the bound is the pool's
    // 2 s connection timeout plus slack, far below the suite's 30 s test timeout.
    const slowest = Math.max(...outcomes.filter((o) => o.status === 503).map((o) => o.ms));
    expect(slowest).toBeLessThan(5000);

    expect((await env.request('GET', '/readyz')).status).toBe(200);

    // Every write acknowledged with 201 is there, before and after the outage.
    const stored = new Set<string>();
    let cursor: string | null = null;
    do {
      const page: ApiResponse = await env.request('GET', `/v1/projects?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { key: org.ownerKey });
      expect(page.status).toBe(200);
      for (const p of page.body.data as { id: string }[]) stored.add(p.id);
      cursor = page.body.next_cursor as string | null;
    } while (cursor);
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    expect(acknowledged.length).toBeGreaterThanOrEqual(40);

    // The worker recovered by itself too: every acknowledged project's event reaches the receiver.
    const delivered = () => new Set(receiver.at('/hook').map((r) => (JSON.parse(r.body.toString()) as { data: { project_id: string } }).data.project_id));
    await waitFor(() => acknowledged.every((id) => delivered().has(id)), 'every acknowledged event to be delivered', 60_000);
  }, 120_000);
});
