import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request, Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeliveryHarness, waitFor, type DeliveryHarness } from '../helpers/https-receiver.js';
import { cliActor } from '../../src/services/access/actor.js';

const RECEIVER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../examples/receiver.mjs');
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

  it('accepts a signed delivery, acknowledges a replay of the same event as a duplicate, refuses a bad signature or a mismatched event', async () => {
    const { env } = harness;
    const org = await env.createOrg();
    const hook = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url, events: ['project.created'], secret: SECRET } });
    expect(hook.status).toBe(201);
    const project = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Received' } });
    expect(project.status).toBe(201);
    const { store } = env.container;
    const event = await env.container.database.db.selectFrom('events').select('id').where('org_id', '=', org.id).executeTakeFirstOrThrow();
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
    expect(await forged.body.text()).toBe('invalid_signature');
    // Signed with the right secret, but the header names another event than the body.
    const body = '{"event":"project.created","timestamp":"2026-11-22T09:30:00.000Z","data":{}}';
    const signature = createHmac('sha256', SECRET).update(body).digest('hex');
    const mismatched = await request(url, { method: 'POST', body, headers: { 'x-service-signature': signature, 'x-service-event': 'project.deleted', 'x-service-event-id': 'evt_mismatch' }, dispatcher: agent });
    expect(mismatched.statusCode).toBe(400);
    expect(await mismatched.body.text()).toBe('event_mismatch');
    await agent.close();
  });
});
