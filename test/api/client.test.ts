import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Middleware } from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWorkspaceClient,
  isWorkspaceApiError,
  WorkspaceApiError,
  type WorkspaceClient,
  type WorkspaceClientOptions,
  type WorkspaceErrorCode,
} from '../../src/client/index.js';
import { startDeliveryHarness, waitFor, type DeliveryHarness, type HttpsReceiver } from '../helpers/https-receiver.js';
import { latestInvitationToken } from '../helpers/mail-outbox.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { cancelSubscription, orgSnapshot, resumeSubscription } from '../helpers/read-only.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const HOUR = 60 * 60 * 1000;

/** Every operation of the committed document, as `METHOD /path`. */
function documentedOperations(): string[] {
  const doc = JSON.parse(fs.readFileSync(path.join(root, 'docs/openapi.json'), 'utf8')) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths).flatMap(([p, item]) =>
    Object.keys(item)
      .filter((m) => ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'].includes(m))
      .map((m) => `${m.toUpperCase()} ${p}`),
  );
}

/** Runs `call`, expecting it to throw a WorkspaceApiError; returns that error. */
async function apiError(call: Promise<unknown>): Promise<WorkspaceApiError> {
  try {
    await call;
  } catch (error) {
    expect(isWorkspaceApiError(error), String(error)).toBe(true);
    return error as WorkspaceApiError;
  }
  throw new Error('the call succeeded; an error was expected');
}

function expectError(error: WorkspaceApiError, status: number, code: WorkspaceErrorCode): void {
  expect(error).toBeInstanceOf(WorkspaceApiError);
  expect(error).toBeInstanceOf(Error);
  expect({ status: error.status, code: error.code }).toEqual({ status, code });
  expect(error.message.length).toBeGreaterThan(0);
  expect(error.message).not.toMatch(/^HTTP /);
  expect(error.requestId).toEqual(expect.any(String));
  expect(error.headers.get('x-request-id')).toBe(error.requestId);
}

/** A sleep that only records what it was asked to wait (the proxy tests need no real waiting). */
function recordingSleep(): { sleeps: number[]; sleep: (ms: number) => Promise<void> } {
  const sleeps: number[] = [];
  return { sleeps, sleep: async (ms) => void sleeps.push(ms) };
}

type ProxyAction = 'forward' | 'drop-after-response' | 'drop-before' | { respond: string };

interface Proxy {
  url: string;
  /** `METHOD /path?query` of every request that reached the proxy, in order. */
  requests: string[];
  /** The raw head (request line and headers) of each of those requests. */
  heads: string[];
  /** Every chunk the server sent back, forwarded or not. */
  upstream: string[];
  /** The next request matching `method` and `pathname` is handled by `action` (once). */
  once(method: string, pathname: string | RegExp, action: ProxyAction): void;
  close(): Promise<void>;
}

/** A raw HTTP/1.1 response with a body, closing its connection. */
function rawResponse(status: string, headers: Record<string, string>, body: string): string {
  const lines = Object.entries({ ...headers, 'content-length': String(Buffer.byteLength(body)), connection: 'close' }).map(([k, v]) => `${k}: ${v}`);
  return `HTTP/1.1 ${status}\r\n${lines.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * A TCP proxy in front of the service that can, per request, forward it but drop the connection once the
 * server's answer arrives (the work is done, the client never hears), drop it before forwarding, or answer
 * itself like a load balancer. The client's HTTP/1.1 connections send one request at a time, so a chunk
 * starting with a request line starts a request.
 */
async function startProxy(target: URL): Promise<Proxy> {
  const rules: { method: string; pathname: string | RegExp; action: ProxyAction }[] = [];
  const requests: string[] = [];
  const heads: string[] = [];
  const upstreamChunks: string[] = [];
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  const server = net.createServer((client) => {
    track(client);
    const upstream = net.connect(Number(target.port), target.hostname);
    track(upstream);
    let swallow = false;
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      const line = /^([A-Z]+) (\S+) HTTP\/1\.1\r\n/.exec(text);
      if (line) {
        const [, method, url] = line as unknown as [string, string, string];
        requests.push(`${method} ${url}`);
        heads.push(text.split('\r\n\r\n')[0]!);
        const pathname = url.split('?')[0]!;
        const index = rules.findIndex((r) => r.method === method && (typeof r.pathname === 'string' ? r.pathname === pathname : r.pathname.test(pathname)));
        const action = index === -1 ? 'forward' : rules.splice(index, 1)[0]!.action;
        if (action === 'drop-before') return void client.destroy();
        if (typeof action === 'object') {
          client.end(action.respond);
          upstream.destroy();
          return;
        }
        swallow = action === 'drop-after-response';
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      upstreamChunks.push(chunk.toString('latin1'));
      // The server has answered, so the work is committed; the client gets a dead connection instead.
      if (swallow) return void client.destroy();
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    requests,
    heads,
    upstream: upstreamChunks,
    once: (method, pathname, action) => void rules.push({ method, pathname, action }),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A server that accepts connections and closes each as soon as a request arrives, counting them. */
async function startDroppingServer(): Promise<{ url: string; heads: string[]; close(): Promise<void> }> {
  const heads: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.once('data', (chunk: Buffer) => {
      heads.push(chunk.toString('latin1').split('\r\n\r\n')[0]!);
      socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    heads,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const headerOf = (head: string, name: string) => new RegExp(`^${name}: *(.*)$`, 'im').exec(head)?.[1]?.trim();

describe.each(testDialects())('typed client against a real server (%s)', (dialect) => {
  let harness: DeliveryHarness;
  let receiver: HttpsReceiver;
  let env: TestEnv;
  let org: TestOrg;
  let baseUrl: string;
  const called = new Set<string>();
  /** Records each call's operation, as openapi-fetch's middleware sees it. */
  const recorder: Middleware = {
    onRequest({ request, schemaPath }) {
      called.add(`${request.method} ${schemaPath}`);
    },
  };

  function client(apiKey: string | undefined, options: Partial<WorkspaceClientOptions> = {}): WorkspaceClient {
    const ws = createWorkspaceClient({ baseUrl, apiKey, ...options });
    ws.raw.use(recorder);
    return ws;
  }

  beforeAll(async () => {
    harness = await startDeliveryHarness(dialect, { WEBHOOK_RETRY_SCHEDULE: '20ms,20ms,20ms,20ms,20ms' });
    ({ receiver, env } = harness);
    receiver.on('/down', (_req, res) => void res.writeHead(500).end('down'));
    org = await env.createOrg('Client Co');
    baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => harness?.close());

  it('projects: create, read, update, list and delete resolve to the typed bodies', async () => {
    const ws = client(org.ownerKey);
    const created = await ws.POST('/v1/projects', { body: { name: 'Apollo', description: 'to the moon', status: 'draft' } });
    expect(created).toMatchObject({ name: 'Apollo', description: 'to the moon', status: 'draft' });
    expect(created.id).toMatch(/^proj_/);
    expect(created.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const read = await ws.GET('/v1/projects/{id}', { params: { path: { id: created.id } } });
    expect(read).toEqual(created);

    const updated = await ws.PUT('/v1/projects/{id}', { params: { path: { id: created.id } }, body: { status: 'active', description: null } });
    expect(updated).toMatchObject({ id: created.id, name: 'Apollo', status: 'active', description: null });

    const page = await ws.GET('/v1/projects', { params: { query: { limit: 5, status: 'active' } } });
    expect(page.data.map((p) => p.id)).toContain(created.id);
    expect(page.data.find((p) => p.id === created.id)).toEqual({ id: created.id, name: 'Apollo', status: 'active', created_at: created.created_at });
    expect(page.next_cursor).toBeNull();

    // Collaborators (CONTRACT 15): the creator is the manager; PUT adds (201) or changes (200), DELETE removes.
    const member = await org.member('member', 'full');
    const added = await ws.PUT('/v1/projects/{id}/collaborators/{user_id}', { params: { path: { id: created.id, user_id: member.userId } }, body: { role: 'viewer' } });
    expect(added).toMatchObject({ user: { id: member.userId }, role: 'viewer' });
    const changed = await ws.PUT('/v1/projects/{id}/collaborators/{user_id}', { params: { path: { id: created.id, user_id: member.userId } }, body: { role: 'editor' } });
    expect(changed.role).toBe('editor');
    const collaborators = await ws.GET('/v1/projects/{id}/collaborators', { params: { path: { id: created.id }, query: { limit: 10 } } });
    expect(collaborators.data.map((c) => [c.user.id, c.role])).toEqual([
      [member.userId, 'editor'],
      [org.ownerId, 'manager'],
    ]);
    expect(await ws.DELETE('/v1/projects/{id}/collaborators/{user_id}', { params: { path: { id: created.id, user_id: member.userId } } })).toBeUndefined();
    const privateOne = await ws.PUT('/v1/projects/{id}', { params: { path: { id: created.id } }, body: { visibility: 'private' } });
    expect(privateOne.visibility).toBe('private');
    expectError(await apiError(client(member.key).GET('/v1/projects/{id}', { params: { path: { id: created.id } } })), 404, 'not_found');

    expect(await ws.DELETE('/v1/projects/{id}', { params: { path: { id: created.id } } })).toBeUndefined();
    const gone = await apiError(ws.GET('/v1/projects/{id}', { params: { path: { id: created.id } } }));
    expectError(gone, 404, 'not_found');

    // The raw client answers { data, error, response } instead of throwing.
    const raw = await ws.raw.GET('/v1/projects/{id}', { params: { path: { id: created.id } } });
    expect(raw.data).toBeUndefined();
    expect(raw.error?.error.code).toBe('not_found');
    expect(raw.response.status).toBe(404);
  });

  it('users: invite, accept the invitation, read, change the role, list and remove', async () => {
    const ws = client(org.ownerKey);
    const email = 'grace@example.com';
    const invited = await ws.POST('/v1/users', { body: { email, role: 'member' } });
    expect(invited).toMatchObject({ email, role: 'member', status: 'invited', name: null });
    expect(invited.id).toMatch(/^user_/);

    // The invitation link from the e-mail; accepting needs no API key (the token is the credential).
    const token = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email);
    const anonymous = client(undefined);
    const accepted = await anonymous.POST('/invitations/{token}/accept', { params: { path: { token } }, body: { name: 'Grace Hopper', password: 'compilers rule' } });
    expect(accepted).toMatchObject({ id: invited.id, email, name: 'Grace Hopper', role: 'member', status: 'active' });

    expect(await ws.GET('/v1/users/{id}', { params: { path: { id: invited.id } } })).toMatchObject({ id: invited.id, status: 'active', name: 'Grace Hopper' });
    const promoted = await ws.PUT('/v1/users/{id}', { params: { path: { id: invited.id } }, body: { role: 'admin' } });
    expect(promoted).toMatchObject({ id: invited.id, role: 'admin' });

    const users = await ws.GET('/v1/users', { params: { query: { limit: 100 } } });
    expect(users.data.find((u) => u.id === invited.id)).toEqual({ id: invited.id, email, name: 'Grace Hopper', role: 'admin', created_at: invited.created_at });

    expect(await ws.DELETE('/v1/users/{id}', { params: { path: { id: invited.id } } })).toBeUndefined();
    expectError(await apiError(ws.GET('/v1/users/{id}', { params: { path: { id: invited.id } } })), 404, 'not_found');
  });

  it('webhooks and deliveries: subscribe, list, read a delivery, replay one, replay failed ones as a job, unsubscribe', async () => {
    const ws = client(org.ownerKey);
    const ok = await ws.POST('/v1/webhooks', { body: { url: receiver.url('/ok'), events: ['project.created'] } });
    expect(ok).toMatchObject({ url: receiver.url('/ok'), events: ['project.created'], active: true, status: 'active' });
    expect(ok.secret).toMatch(/^whsec_/);
    const down = await ws.POST('/v1/webhooks', { body: { url: receiver.url('/down'), events: ['project.created'], secret: 'a-secret-of-sixteen+' } });
    expect(down.secret).toBe('a-secret-of-sixteen+');

    const hooks = await ws.GET('/v1/webhooks');
    expect(hooks.data.slice(0, 2).map((h) => h.id)).toEqual([down.id, ok.id]);
    expect(hooks.data[0]).not.toHaveProperty('secret');

    const since = new Date(Date.now() - HOUR).toISOString();
    for (const name of ['Hook one', 'Hook two']) await ws.POST('/v1/projects', { body: { name } });
    await waitFor('deliveries delivered and permanently failed', async () => {
      const delivered = await ws.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id: ok.id }, query: { status: 'delivered' } } });
      const failed = await ws.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id: down.id }, query: { status: 'failed' } } });
      return delivered.data.length === 2 && failed.data.length === 2;
    });

    const list = await ws.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id: ok.id } } });
    expect(list.data).toHaveLength(2);
    expect(list.data[0]).toMatchObject({ webhook_id: ok.id, event_type: 'project.created', status: 'delivered', attempts: 1, last_status_code: 200 });

    const failedList = await ws.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id: down.id } } });
    const [newest, oldest] = failedList.data as [(typeof failedList.data)[number], (typeof failedList.data)[number]];
    const detail = await ws.GET('/v1/webhooks/{id}/deliveries/{delivery_id}', { params: { path: { id: down.id, delivery_id: newest.id } } });
    expect(detail).toMatchObject({ id: newest.id, status: 'failed', attempts: 6, last_status_code: 500 });
    expect(JSON.parse(detail.payload)).toMatchObject({ event: 'project.created', data: { name: 'Hook two' } });
    expect(detail.attempt_history).toHaveLength(6);
    expect(detail.attempt_history[0]).toMatchObject({ attempt_number: 1, trigger: 'automatic', outcome: 'failure', response_status: 500, response_body: 'down' });

    const replayed = await ws.POST('/v1/webhooks/{id}/deliveries/{delivery_id}/replay', { params: { path: { id: down.id, delivery_id: newest.id } } });
    expect(replayed).toMatchObject({ id: newest.id, status: 'pending', attempts: 6 });

    const job = await ws.POST('/v1/webhooks/{id}/replay-failed', { params: { path: { id: down.id } }, body: { since } });
    expect(job.id).toMatch(/^rpl_/);
    expect(job).toMatchObject({ webhook_id: down.id, since, more: false });
    expect(job.count).toBeGreaterThanOrEqual(1);
    const progress = await ws.GET('/v1/webhooks/{id}/replay-jobs/{job_id}', { params: { path: { id: down.id, job_id: job.id } } });
    expect(progress).toMatchObject({ id: job.id, webhook_id: down.id, count: job.count });
    await waitFor('the oldest failed delivery replayed', async () => {
      const d = await ws.GET('/v1/webhooks/{id}/deliveries/{delivery_id}', { params: { path: { id: down.id, delivery_id: oldest.id } } });
      return d.replayed && d.status === 'failed' && d.attempts === 7;
    });

    // The subscription extensions (CONTRACT 11), typed end to end.
    const read = await ws.GET('/v1/webhooks/{id}', { params: { path: { id: ok.id } } });
    expect(read).toMatchObject({ id: ok.id, status: 'active', active: true, previous_secret_expires_at: null });
    const patched = await ws.PATCH('/v1/webhooks/{id}', { params: { path: { id: ok.id } }, body: { events: ['project.created', 'task.assigned'] } });
    expect(patched.events).toEqual(['project.created', 'task.assigned']);
    const rotated = await ws.POST('/v1/webhooks/{id}/rotate-secret', { params: { path: { id: ok.id } }, body: { previous_expires_in: 60 } });
    expect(rotated.secret).toMatch(/^whsec_/);
    const test = await ws.POST('/v1/webhooks/{id}/test', { params: { path: { id: ok.id } }, body: { event: 'task.assigned' } });
    expect(test.delivery_id).toMatch(/^dlv_/);
    const enabled = await ws.POST('/v1/webhooks/{id}/enable', { params: { path: { id: ok.id } } });
    expect(enabled.status).toBe('active');

    for (const hook of [ok, down]) expect(await ws.DELETE('/v1/webhooks/{id}', { params: { path: { id: hook.id } } })).toBeUndefined();
    const after = await ws.GET('/v1/webhooks');
    expect(after.data.map((h) => h.id)).not.toContain(ok.id);
  });

  describe('errors become typed WorkspaceApiErrors and change nothing', () => {
    let target: TestOrg;
    let ws: WorkspaceClient;
    // The tables a refused call must leave as they were (idempotency records are the contract's business:
    // an answered POST with a key records its answer, refusals included).
    const state = async () => {
      const snapshot = await orgSnapshot(env.container, target.id);
      delete snapshot.idempotency_keys;
      return snapshot;
    };

    beforeAll(async () => {
      target = await env.createOrg('Refusals');
      ws = client(target.ownerKey);
      await ws.POST('/v1/projects', { body: { name: 'Existing' } });
    });

    it('400 validation_failed names the field in details', async () => {
      const before = await state();
      const error = await apiError(ws.POST('/v1/projects', { body: { name: 42 } as never }));
      expectError(error, 400, 'validation_failed');
      expect(error.details).toEqual([{ field: 'name', message: expect.any(String) }]);
      expect(await state()).toEqual(before);
    });

    it('401 unauthorized for an unknown key', async () => {
      const before = await state();
      const error = await apiError(client('wsk_not_a_real_key').POST('/v1/projects', { body: { name: 'Nope' } }));
      expectError(error, 401, 'unauthorized');
      expect(error.details).toBeUndefined();
      expect(await state()).toEqual(before);
    });

    it('403 forbidden for a viewer’s key', async () => {
      const viewer = await target.member('viewer');
      const before = await state();
      expectError(await apiError(client(viewer.key).POST('/v1/projects', { body: { name: 'Nope' } })), 403, 'forbidden');
      expect(await state()).toEqual(before);
    });

    it('403 workspace_read_only while the subscription is cancelled, naming the deletion date', async () => {
      const deletionAt = await cancelSubscription(env.container, target.id);
      try {
        const before = await state();
        const error = await apiError(ws.POST('/v1/projects', { body: { name: 'Nope' } }));
        expectError(error, 403, 'workspace_read_only');
        expect(error.message).toContain(new Date(deletionAt).toISOString());
        expect(await state()).toEqual(before);
      } finally {
        await resumeSubscription(env.container, target.id);
      }
    });

    it('404 not_found for an unknown id', async () => {
      const before = await state();
      expectError(await apiError(ws.PUT('/v1/projects/{id}', { params: { path: { id: 'proj_nope' } }, body: { name: 'x' } })), 404, 'not_found');
      expect(await state()).toEqual(before);
    });

    it('409 conflict for inviting an active member’s e-mail', async () => {
      const member = await target.member('member');
      const { email } = await ws.GET('/v1/users/{id}', { params: { path: { id: member.userId } } });
      const before = await state();
      expectError(await apiError(ws.POST('/v1/users', { body: { email, role: 'admin' } })), 409, 'conflict');
      expect(await state()).toEqual(before);
      expect(await ws.GET('/v1/users/{id}', { params: { path: { id: member.userId } } })).toMatchObject({ role: 'member', status: 'active' });
    });

    it('413 payload_too_large for a 2 MiB name', async () => {
      const before = await state();
      const error = await apiError(ws.POST('/v1/projects', { body: { name: 'x'.repeat(2 * 1024 * 1024) } }));
      expectError(error, 413, 'payload_too_large');
      expect(await state()).toEqual(before);
    });

    it('422 idempotency_key_reused for one explicit key with another body; the first call stands', async () => {
      const key = `client-test-${crypto.randomUUID()}`;
      const first = await ws.POST('/v1/projects', { params: { header: { 'Idempotency-Key': key } }, body: { name: 'Keyed' } });
      const again = await ws.raw.POST('/v1/projects', { params: { header: { 'Idempotency-Key': key } }, body: { name: 'Keyed' } });
      expect(again.data).toEqual(first);
      expect(again.response.headers.get('idempotent-replayed')).toBe('true');
      const before = await state();
      const error = await apiError(ws.POST('/v1/projects', { params: { header: { 'Idempotency-Key': key } }, body: { name: 'Other' } }));
      expectError(error, 422, 'idempotency_key_reused');
      expect(await state()).toEqual(before);
      const names: string[] = [];
      for await (const p of ws.paginate('/v1/projects')) names.push(p.name);
      expect(names.filter((n) => n === 'Keyed')).toHaveLength(1);
      expect(names).not.toContain('Other');
    });

    it('a non-JSON error (a proxy’s HTML 502) is a WorkspaceApiError with code unknown_error, not retried', async () => {
      const proxy = await startProxy(new URL(baseUrl));
      try {
        const html = '<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>';
        proxy.once('GET', '/v1/projects', { respond: rawResponse('502 Bad Gateway', { 'content-type': 'text/html' }, html) });
        const { sleeps, sleep } = recordingSleep();
        const error = await apiError(client(target.ownerKey, { baseUrl: proxy.url, sleep }).GET('/v1/projects'));
        expect(error).toBeInstanceOf(WorkspaceApiError);
        expect({ status: error.status, code: error.code, requestId: error.requestId }).toEqual({ status: 502, code: 'unknown_error', requestId: undefined });
        expect(error.message).toBe('HTTP 502 Bad Gateway: 502 Bad Gateway');
        expect(error.body).toBe(html);
        expect(proxy.requests).toEqual(['GET /v1/projects']);
        expect(sleeps).toEqual([]);
      } finally {
        await proxy.close();
      }
    });
  });

  it('paginate walks 250 projects: every id once, newest first, 100 a page', async () => {
    const many = await env.createOrg('Many');
    const ws = client(many.ownerKey);
    const ids: string[] = [];
    for (let i = 0; i < 250; i++) ids.push((await ws.POST('/v1/projects', { body: { name: `P${i}` } })).id);
    const pages: string[] = [];
    ws.raw.use({ onRequest: ({ request }) => void pages.push(new URL(request.url).search) });
    const walked: string[] = [];
    for await (const project of ws.paginate('/v1/projects')) {
      expect(Object.keys(project).sort()).toEqual(['created_at', 'id', 'name', 'status']);
      walked.push(project.id);
    }
    expect(walked).toEqual([...ids].reverse());
    expect(new Set(walked).size).toBe(250);
    expect(pages).toHaveLength(3);
    expect(pages[0]).toBe('?limit=100');
    expect(pages[1]).toMatch(/^\?limit=100&cursor=/);

    // Filters and limit pass through; a page size that divides the total still stops at next_cursor null.
    const drafts: string[] = [];
    for await (const p of ws.paginate('/v1/projects', { params: { query: { status: 'draft' } } })) drafts.push(p.id);
    expect(drafts).toEqual([]);
    let count = 0;
    for await (const _ of ws.paginate('/v1/projects', { params: { query: { limit: 50 } } })) count++;
    expect(count).toBe(250);
    // 250 = 5 × 50: the fifth page ends at the last item and carries next_cursor null, so no empty sixth page.
    expect(pages).toHaveLength(3 + 1 + 5);
    expect(pages.slice(-5).every((q) => q.startsWith('?limit=50'))).toBe(true);
  });

  describe('retries through a proxy that drops connections', () => {
    let proxy: Proxy;
    beforeAll(async () => {
      proxy = await startProxy(new URL(baseUrl));
    });
    afterAll(async () => proxy?.close());

    it('a POST whose answer was lost is retried with the same Idempotency-Key: one project, the replayed answer', async () => {
      const replayed: string[] = [];
      const { sleeps, sleep } = recordingSleep();
      const ws = client(org.ownerKey, { baseUrl: proxy.url, sleep });
      ws.raw.use({ onResponse: ({ response }) => void replayed.push(response.headers.get('idempotent-replayed') ?? 'no') });
      proxy.once('POST', '/v1/projects', 'drop-after-response');
      const before = proxy.requests.length;
      const name = `Once only ${crypto.randomUUID()}`;

      const project = await ws.POST('/v1/projects', { body: { name } });
      expect(project).toMatchObject({ name, status: 'active' });
      const attempts = proxy.requests.slice(before);
      expect(attempts).toEqual(['POST /v1/projects', 'POST /v1/projects']);
      const keys = proxy.heads.slice(before).map((h) => headerOf(h, 'idempotency-key'));
      expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(keys[1]).toBe(keys[0]);
      // Both upstream answers reached the proxy: the first (swallowed) created it, the second is its replay.
      const answers = proxy.upstream.filter((chunk) => chunk.startsWith('HTTP/1.1 201'));
      expect(answers.length).toBeGreaterThanOrEqual(2);
      expect(headerOf(answers.at(-2)!, 'idempotent-replayed')).toBeUndefined();
      expect(headerOf(answers.at(-1)!, 'idempotent-replayed')).toBe('true');
      expect(replayed).toEqual(['true']);
      expect(sleeps).toHaveLength(1);
      expect(sleeps[0]).toBeLessThan(250);

      const named: string[] = [];
      for await (const p of client(org.ownerKey).paginate('/v1/projects')) if (p.name === name) named.push(p.id);
      expect(named).toEqual([project.id]);
    });

    it('a GET whose connection drops is retried', async () => {
      const ws = client(org.ownerKey, { baseUrl: proxy.url, sleep: recordingSleep().sleep });
      const created = await ws.POST('/v1/projects', { body: { name: 'Read twice' } });
      proxy.once('GET', `/v1/projects/${created.id}`, 'drop-before');
      const before = proxy.requests.length;
      expect(await ws.GET('/v1/projects/{id}', { params: { path: { id: created.id } } })).toEqual(created);
      expect(proxy.requests.slice(before)).toEqual([`GET /v1/projects/${created.id}`, `GET /v1/projects/${created.id}`]);
    });

    it('a 503 with Retry-After is retried after it; 4xx, 5xx and a 503 without Retry-After are not', async () => {
      const { sleeps, sleep } = recordingSleep();
      const ws = client(org.ownerKey, { baseUrl: proxy.url, sleep });
      const unavailable = JSON.stringify({ error: { code: 'service_unavailable', message: 'the service is temporarily unavailable; retry shortly' } });
      proxy.once('GET', '/v1/users', { respond: rawResponse('503 Service Unavailable', { 'content-type': 'application/json', 'retry-after': '2', 'x-request-id': 'req-503' }, unavailable) });
      let before = proxy.requests.length;
      const users = await ws.GET('/v1/users');
      expect(users.data.length).toBeGreaterThan(0);
      expect(proxy.requests.slice(before)).toEqual(['GET /v1/users', 'GET /v1/users']);
      expect(sleeps).toHaveLength(1);
      expect(sleeps[0]).toBeGreaterThanOrEqual(2000);
      expect(sleeps[0]).toBeLessThanOrEqual(2200);

      before = proxy.requests.length;
      expectError(await apiError(ws.GET('/v1/projects/{id}', { params: { path: { id: 'proj_missing' } } })), 404, 'not_found');
      expect(proxy.requests.slice(before)).toHaveLength(1);

      before = proxy.requests.length;
      const fault = JSON.stringify({ error: { code: 'internal_error', message: 'an internal error occurred' } });
      proxy.once('GET', '/v1/webhooks', { respond: rawResponse('500 Internal Server Error', { 'content-type': 'application/json', 'x-request-id': 'req-500' }, fault) });
      const internal = await apiError(ws.GET('/v1/webhooks'));
      expect({ status: internal.status, code: internal.code, message: internal.message, requestId: internal.requestId }).toEqual({
        status: 500,
        code: 'internal_error',
        message: 'an internal error occurred',
        requestId: 'req-500',
      });
      proxy.once('GET', '/v1/webhooks', { respond: rawResponse('503 Service Unavailable', { 'content-type': 'application/json', 'x-request-id': 'req-503b' }, unavailable) });
      const noRetryAfter = await apiError(ws.GET('/v1/webhooks'));
      expect({ status: noRetryAfter.status, code: noRetryAfter.code, retryAfter: noRetryAfter.retryAfter }).toEqual({ status: 503, code: 'service_unavailable', retryAfter: undefined });
      expect(proxy.requests.slice(before)).toEqual(['GET /v1/webhooks', 'GET /v1/webhooks']);
      expect(sleeps).toHaveLength(1);
    });

    it('an aborted call stops waiting between attempts', async () => {
      const controller = new AbortController();
      // The wait never ends by itself: only the abort can end the call.
      const ws = client(org.ownerKey, { baseUrl: proxy.url, sleep: () => (controller.abort(), new Promise<void>(() => undefined)) });
      const busy = JSON.stringify({ error: { code: 'service_unavailable', message: 'busy' } });
      proxy.once('GET', '/v1/users', { respond: rawResponse('503 Service Unavailable', { 'content-type': 'application/json', 'retry-after': '30' }, busy) });
      const before = proxy.requests.length;
      const error = await ws.GET('/v1/users', { signal: controller.signal }).then(
        () => null,
        (e: unknown) => e,
      );
      expect((error as Error).name).toBe('AbortError');
      expect(proxy.requests.slice(before)).toEqual(['GET /v1/users']);
    });

    it('retries are bounded: against a server that always drops, maxRetries + 1 attempts, then the network error', async () => {
      const dropping = await startDroppingServer();
      try {
        const { sleeps, sleep } = recordingSleep();
        const ws = createWorkspaceClient({ baseUrl: dropping.url, apiKey: org.ownerKey, retry: { maxRetries: 2, baseDelayMs: 100, maxDelayMs: 1000 }, sleep });
        const error = await ws.POST('/v1/projects', { body: { name: 'Never' } }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(TypeError);
        expect(isWorkspaceApiError(error)).toBe(false);
        expect(dropping.heads).toHaveLength(3);
        const keys = dropping.heads.map((h) => headerOf(h, 'idempotency-key'));
        expect(new Set(keys).size).toBe(1);
        expect(keys[0]).toEqual(expect.any(String));
        expect(dropping.heads.every((h) => headerOf(h, 'authorization') === `Bearer ${org.ownerKey}`)).toBe(true);
        // Full jitter: each wait is below its doubling cap.
        expect(sleeps).toHaveLength(2);
        expect(sleeps[0]).toBeLessThan(100);
        expect(sleeps[1]).toBeLessThan(200);

        // maxRetries 0: one attempt.
        const once = createWorkspaceClient({ baseUrl: dropping.url, apiKey: org.ownerKey, retry: { maxRetries: 0 }, sleep });
        await expect(once.GET('/v1/projects')).rejects.toBeInstanceOf(TypeError);
        expect(dropping.heads).toHaveLength(4);

        // Accepting an invitation is a POST the server keeps no Idempotency-Key for (it is unauthenticated):
        // sent once, without a key, since a second try would meet a used token instead of the first answer.
        const anonymous = createWorkspaceClient({ baseUrl: dropping.url, sleep });
        const accept = anonymous.POST('/invitations/{token}/accept', { params: { path: { token: 'tok' } }, body: { name: 'Ada', password: 'long enough' } });
        await expect(accept).rejects.toBeInstanceOf(TypeError);
        expect(dropping.heads).toHaveLength(5);
        expect(headerOf(dropping.heads[4]!, 'idempotency-key')).toBeUndefined();
      } finally {
        await dropping.close();
      }
    });
  });

  it('sends the configured User-Agent and the key on every request', async () => {
    const proxy = await startProxy(new URL(baseUrl));
    try {
      const ws = client(org.ownerKey, { baseUrl: proxy.url, userAgent: 'client-test/1.0' });
      await ws.GET('/v1/projects', { params: { query: { limit: 1 } } });
      await client(org.ownerKey, { baseUrl: proxy.url }).GET('/v1/projects', { params: { query: { limit: 1 } } });
      expect(proxy.heads.map((h) => headerOf(h, 'user-agent'))).toEqual(['client-test/1.0', 'workspace-service-client']);
      expect(proxy.heads.map((h) => headerOf(h, 'authorization'))).toEqual([`Bearer ${org.ownerKey}`, `Bearer ${org.ownerKey}`]);
      // GET carries no Idempotency-Key; only POSTs get one.
      expect(proxy.heads.map((h) => headerOf(h, 'idempotency-key'))).toEqual([undefined, undefined]);
    } finally {
      await proxy.close();
    }
  });

  it('checks paths, params and bodies at compile time (tsc --noEmit runs these lines)', async () => {
    const ws = client(org.ownerKey);
    const typeErrors = [
      // @ts-expect-error an unknown path
      () => ws.GET('/v1/project'),
      // @ts-expect-error POST on a path that has no POST
      () => ws.POST('/v1/projects/{id}', { params: { path: { id: 'x' } } }),
      // @ts-expect-error a required body field (name) is missing
      () => ws.POST('/v1/projects', { body: { description: 'no name' } }),
      // @ts-expect-error the path parameter is required
      () => ws.GET('/v1/projects/{id}'),
      // @ts-expect-error a value outside the enum
      () => ws.GET('/v1/projects', { params: { query: { status: 'deleted' } } }),
      // @ts-expect-error not a list endpoint: paginate takes only { data, next_cursor } GETs
      () => ws.paginate('/v1/projects/{id}', { params: { path: { id: 'x' } } }),
    ];
    expect(typeErrors).toHaveLength(6);
    // And the results are typed: these assignments compile.
    const project = await ws.POST('/v1/projects', { body: { name: 'Typed' } });
    const status: 'active' | 'archived' | 'draft' = project.status;
    const deleted: undefined = await ws.DELETE('/v1/projects/{id}', { params: { path: { id: project.id } } });
    expect([status, deleted]).toEqual(['active', undefined]);
  });

  it('workflows, runs, tasks, events and the organisation: every call of CONTRACT 13 through the typed client', async () => {
    const ws = client(org.ownerKey);
    const project = await ws.POST('/v1/projects', { body: { name: 'Typed work' } });
    const path = { id: project.id };
    const workflow = await ws.POST('/v1/projects/{id}/workflows', {
      params: { path },
      body: { name: 'Review', steps: [{ type: 'approval', title: 'Sign off', assignee_id: org.ownerId }, { type: 'wait', duration: '2h' }] },
    });
    expect(workflow.steps.map((s) => s.duration)).toEqual([null, 'PT2H']);
    expect((await ws.GET('/v1/projects/{id}/workflows', { params: { path } })).data.map((w) => w.id)).toEqual([workflow.id]);
    const read = await ws.GET('/v1/workflows/{id}', { params: { path: { id: workflow.id } } });
    const replaced = await ws.PUT('/v1/workflows/{id}', { params: { path: { id: workflow.id } }, body: { ...read, name: 'Review v2' } });
    expect(replaced).toMatchObject({ name: 'Review v2', version: 2 });

    const run = await ws.POST('/v1/workflows/{id}/runs', { params: { path: { id: workflow.id } }, body: {} });
    expect(run.steps).toHaveLength(2);
    expect((await ws.GET('/v1/workflows/{id}/runs', { params: { path: { id: workflow.id } } })).data[0]!.id).toBe(run.id);
    // The harness's worker may have started it already.
    expect(['queued', 'running', 'waiting']).toContain((await ws.GET('/v1/runs/{id}', { params: { path: { id: run.id } } })).status);
    expect((await ws.POST('/v1/runs/{id}/cancel', { params: { path: { id: run.id } }, body: {} })).status).toBe('cancelled');
    expect(await ws.DELETE('/v1/workflows/{id}', { params: { path: { id: workflow.id } } })).toBeUndefined();

    const taskProject = { id: (await ws.POST('/v1/projects', { body: { name: 'Typed tasks' } })).id };
    const todo = await ws.POST('/v1/projects/{id}/tasks', { params: { path: taskProject }, body: { title: 'Write it', assignee_id: org.ownerId, due_at: '2026-12-31' } });
    expect((await ws.GET('/v1/projects/{id}/tasks', { params: { path: taskProject } })).data.map((t) => t.id)).toEqual([todo.id]);
    expect((await ws.GET('/v1/tasks', { params: { query: { assignee_id: 'me', status: 'open' } } })).data.map((t) => t.id)).toContain(todo.id);
    expect((await ws.PATCH('/v1/tasks/{id}', { params: { path: { id: todo.id } }, body: { title: 'Write it well' } })).title).toBe('Write it well');
    expect((await ws.POST('/v1/tasks/{id}/complete', { params: { path: { id: todo.id } }, body: {} })).status).toBe('done');
    expectError(await apiError(ws.POST('/v1/tasks/{id}/complete', { params: { path: { id: todo.id } }, body: {} })), 409, 'conflict');
    const other = await ws.POST('/v1/projects/{id}/tasks', { params: { path: taskProject }, body: { title: 'Drop it' } });
    expect((await ws.POST('/v1/tasks/{id}/cancel', { params: { path: { id: other.id } }, body: { reason: 'not needed' } })).status).toBe('cancelled');
    expect((await ws.GET('/v1/tasks/{id}', { params: { path: { id: other.id } } })).status).toBe('cancelled');

    // Approvals come from runs (the harness's worker starts them): one approved, one rejected.
    const approvals = await ws.POST('/v1/projects/{id}/workflows', { params: { path }, body: { name: 'Gate', steps: [{ type: 'approval', title: 'Gate', assignee_id: org.ownerId }] } });
    const decide = async (how: 'approve' | 'reject') => {
      const started = await ws.POST('/v1/workflows/{id}/runs', { params: { path: { id: approvals.id } }, body: {} });
      const taskId = await waitFor('the approval step to start', async () => (await ws.GET('/v1/runs/{id}', { params: { path: { id: started.id } } })).steps[0]!.task_id);
      const decided = how === 'approve'
        ? await ws.POST('/v1/tasks/{id}/approve', { params: { path: { id: taskId } }, body: {} })
        : await ws.POST('/v1/tasks/{id}/reject', { params: { path: { id: taskId } }, body: { reason: 'no' } });
      return decided.decision;
    };
    expect([await decide('approve'), await decide('reject')]).toEqual(['approved', 'rejected']);

    const events = [];
    for await (const e of ws.paginate('/v1/events', { params: { query: { type: 'task.assigned' } } })) events.push(e);
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(await ws.GET('/v1/events/{id}', { params: { path: { id: events[0]!.id } } })).toEqual(events[0]);
    expect(await ws.GET('/v1/organization')).toMatchObject({ id: org.id, name: 'Client Co', state: 'active', deletion_at: null });
  });

  it('the audit log, API keys and exports through the typed client', async () => {
    const ws = client(org.ownerKey);
    const created = await ws.POST('/v1/api-keys', { body: { scope: 'projects:read', name: 'typed' } });
    expect(created.key).toMatch(/^wsk_/);
    expect((await ws.GET('/v1/api-keys', { params: { query: { limit: 100 } } })).data.map((k) => k.id)).toContain(created.id);
    expect(await ws.DELETE('/v1/api-keys/{id}', { params: { path: { id: created.id } } })).toBeUndefined();
    const audit = await ws.GET('/v1/audit-log', { params: { query: { action: 'api_key.', target_id: created.id } } });
    expect(audit.data.map((r) => r.action)).toEqual(['api_key.revoked', 'api_key.created']);

    const requested = await ws.POST('/v1/exports', { body: {} });
    expectError(await apiError(ws.GET('/v1/exports/{id}/download', { params: { path: { id: requested.id } }, parseAs: 'arrayBuffer' })), 409, 'conflict');
    // The harness's worker builds it.
    await waitFor('the export to be ready', async () => (await ws.GET('/v1/exports/{id}', { params: { path: { id: requested.id } } })).status === 'ready');
    expect((await ws.GET('/v1/exports')).data[0]!.id).toBe(requested.id);
    const zip = (await ws.GET('/v1/exports/{id}/download', { params: { path: { id: requested.id } }, parseAs: 'arrayBuffer' })) as unknown as ArrayBuffer;
    expect(Buffer.from(zip).subarray(0, 2).toString()).toBe('PK');
  });

  it('runs from the built package as `workspace-service/client` on Node with only openapi-fetch installed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-client-'));
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; exports: unknown };
      const installed = path.join(dir, 'node_modules', pkg.name);
      fs.cpSync(path.join(root, 'dist/client'), path.join(installed, 'dist/client'), { recursive: true, filter: (src) => !src.endsWith('.map') });
      fs.writeFileSync(path.join(installed, 'package.json'), JSON.stringify({ name: pkg.name, type: 'module', exports: pkg.exports }));
      fs.cpSync(path.join(root, 'node_modules/openapi-fetch'), path.join(dir, 'node_modules/openapi-fetch'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
      const script = [
        "import { createWorkspaceClient, isWorkspaceApiError } from 'workspace-service/client';",
        'const ws = createWorkspaceClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY });',
        "const project = await ws.POST('/v1/projects', { body: { name: 'From a bare install' } });",
        "const read = await ws.GET('/v1/projects/{id}', { params: { path: { id: project.id } } });",
        "const missing = await ws.GET('/v1/projects/{id}', { params: { path: { id: 'proj_nope' } } }).catch((e) => e);",
        'console.log(JSON.stringify({ name: read.name, code: isWorkspaceApiError(missing) ? missing.code : String(missing) }));',
      ].join('\n');
      fs.writeFileSync(path.join(dir, 'main.js'), script);
      const output = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ['main.js'], { cwd: dir, env: { PATH: process.env.PATH ?? '', BASE_URL: baseUrl, API_KEY: org.ownerKey } });
        let out = '';
        let err = '';
        child.stdout.on('data', (c: Buffer) => (out += c.toString()));
        child.stderr.on('data', (c: Buffer) => (err += c.toString()));
        child.on('error', reject);
        child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`))));
      });
      expect(JSON.parse(output)).toEqual({ name: 'From a bare install', code: 'not_found' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('called every operation of docs/openapi.json', () => {
    const documented = documentedOperations();
    expect(documented.length).toBeGreaterThan(10);
    expect(documented.filter((op) => !called.has(op))).toEqual([]);
  });
});

describe.each(testDialects())('typed client with a manual clock (%s)', (dialect) => {
  const clock = new ManualClock();
  let env: TestEnv;
  let baseUrl: string;

  beforeAll(async () => {
    // The in-process rate limiter reads the container's clock, so the client's sleep can move time instead of waiting.
    env = await createTestEnv(dialect, { clock, env: { RATE_LIMIT_PER_MINUTE: '5' } });
    baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => env?.close());

  it('429: waits Retry-After seconds (plus a little jitter), then the call succeeds', async () => {
    const org = await env.createOrg('Busy');
    const sleeps: number[] = [];
    const ws = createWorkspaceClient({ baseUrl, apiKey: org.ownerKey, sleep: async (ms) => void (sleeps.push(ms), clock.advance(ms)) });
    await ws.GET('/v1/projects');
    clock.advance(20_000);
    for (let i = 0; i < 4; i++) await ws.GET('/v1/projects');
    expect(sleeps).toEqual([]);

    // The sixth call in the window: refused with Retry-After 40 (the first call leaves the window 40 s from now).
    const started = clock.now();
    const project = await ws.POST('/v1/projects', { body: { name: 'After the wait' } });
    expect(project.name).toBe('After the wait');
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(40_000);
    expect(sleeps[0]).toBeLessThanOrEqual(41_000);
    expect(clock.now() - started).toBe(sleeps[0]);
  });

  it('429 rate_limited surfaces when Retry-After is longer than maxDelayMs (no hour-long sleeps) or retries are off', async () => {
    const org = await env.createOrg('Impatient');
    const sleeps: number[] = [];
    const sleep = async (ms: number) => void sleeps.push(ms);
    const ws = createWorkspaceClient({ baseUrl, apiKey: org.ownerKey, retry: { maxDelayMs: 10_000 }, sleep });
    for (let i = 0; i < 5; i++) await ws.GET('/v1/users');
    const before = await orgSnapshot(env.container, org.id);
    const error = await apiError(ws.POST('/v1/projects', { body: { name: 'Refused' } }));
    expectError(error, 429, 'rate_limited');
    expect(error.retryAfter).toBe(60);
    expect(error.headers.get('retry-after')).toBe('60');
    expect(sleeps).toEqual([]);
    expect(await orgSnapshot(env.container, org.id)).toEqual(before);

    const noRetries = createWorkspaceClient({ baseUrl, apiKey: org.ownerKey, retry: { maxRetries: 0 }, sleep });
    expectError(await apiError(noRetries.GET('/v1/projects')), 429, 'rate_limited');
    expect(sleeps).toEqual([]);
  });

  it('410 invitation_expired after 72 hours; the user stays invited', async () => {
    const org = await env.createOrg('Slow');
    const ws = createWorkspaceClient({ baseUrl, apiKey: org.ownerKey });
    const email = 'late@example.com';
    const invited = await ws.POST('/v1/users', { body: { email, role: 'viewer' } });
    const token = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email);
    clock.advance(72 * HOUR + 1000);
    const anonymous = createWorkspaceClient({ baseUrl });
    const error = await apiError(anonymous.POST('/invitations/{token}/accept', { params: { path: { token } }, body: { name: 'Late', password: 'better late than never' } }));
    expectError(error, 410, 'invitation_expired');
    expect(await ws.GET('/v1/users/{id}', { params: { path: { id: invited.id } } })).toMatchObject({ status: 'invited', name: null });
  });
});

describe('the client’s sources', () => {
  it('imports nothing but openapi-fetch and its own files (no server code, no node: modules)', () => {
    const dir = path.join(root, 'src/client');
    const seen: string[] = [];
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const source = fs.readFileSync(path.join(dir, file), 'utf8');
      const specifiers = [...source.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+'([^']+)'/g)].map((m) => m[1]!);
      for (const specifier of specifiers) {
        expect(specifier === 'openapi-fetch' || /^\.\/[a-z-]+\.js$/.test(specifier), `${file} imports ${specifier}`).toBe(true);
      }
      seen.push(...specifiers);
    }
    expect(seen).toEqual(expect.arrayContaining(['openapi-fetch', './client.js', './errors.js', './retry.js']));
  });
});
