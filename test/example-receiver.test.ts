import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request, Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../src/services/events.js';
import { startDeliveryHarness, waitFor, type DeliveryHarness } from './helpers/https-receiver.js';
import { cliActor } from '../src/services/actor.js';

const RECEIVER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../examples/receiver.mjs');
const SECRET = 'example-secret-0123456789';

describe('examples/receiver.mjs against the worker (sqlite)', () => {
  let harness: DeliveryHarness;
  let child: ChildProcess;
  let url: string;

  beforeAll(async () => {
    harness = await startDeliveryHarness('sqlite', {});
    child = spawn(process.execPath, [RECEIVER], {
      env: { ...process.env, WEBHOOK_SECRET: SECRET, PORT: '0', TLS_KEY: harness.cert.keyFile, TLS_CERT: harness.cert.certFile },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    url = await new Promise<string>((resolve) => {
      child.stdout!.setEncoding('utf8').on('data', (line: string) => {
        const port = /listening on (\d+)/.exec(line)?.[1];
        if (port) resolve(`https://127.0.0.1:${port}/webhooks`);
      });
    });
  });
  afterAll(async () => {
    child?.kill();
    await harness?.close();
  });

  it('accepts a signed delivery, acknowledges a replay of the same event as a duplicate, refuses a bad signature', async () => {
    const { env } = harness;
    const org = await env.createOrg();
    const hook = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url, events: ['workflow.completed'], secret: SECRET } });
    expect(hook.status).toBe(201);
    const { store, clock, waker } = env.container;
    const event = await store.transaction((repos) =>
      recordEvent(repos, { orgId: org.id, type: 'workflow.completed', data: { workflow_id: 'wf_1', project_id: 'proj_1', status: 'succeeded' }, occurredAt: clock.now() }),
    );
    waker.wake();
    const [delivery] = await store.repos.events.listDeliveriesForEvent(org.id, event.id);
    await waitFor('delivered', async () => (await store.repos.deliveries.findById(org.id, delivery!.id))?.status === 'delivered');
    await env.container.services.deliveries.replay(cliActor(org.id), hook.body.id, delivery!.id);
    const attempts = await waitFor('the replay recorded', async () => {
      const a = await store.repos.deliveries.listAttempts(org.id, delivery!.id);
      return a.length === 2 ? a : null;
    });
    expect(attempts.map((a) => [a.response_status, a.response_body])).toEqual([[204, ''], [200, 'duplicate']]);

    const agent = new Agent({ connect: { ca: harness.cert.cert } });
    const forged = await request(url, { method: 'POST', body: '{"event":"x"}', headers: { 'x-service-signature': 'a'.repeat(64), 'x-service-event-id': 'evt_forged' }, dispatcher: agent });
    expect(forged.statusCode).toBe(401);
    await forged.body.dump();
    await agent.close();
  });
});
