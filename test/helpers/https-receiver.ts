import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface TestCertificate {
  dir: string;
  keyFile: string;
  certFile: string;
  key: string;
  cert: string;
}

/** A self-signed certificate for localhost and 127.0.0.1, made with the openssl CLI in a temp dir. */
export function makeSelfSignedCertificate(): TestCertificate {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-tls-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'pipe' },
  );
  return { dir, keyFile, certFile, key: fs.readFileSync(keyFile, 'utf8'), cert: fs.readFileSync(certFile, 'utf8') };
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The raw body bytes exactly as received. */
  body: Buffer;
}

/** Answers one request; `undefined` (or never ending `res`) are the handler's choice. */
export type ReceiverHandler = (req: ReceivedRequest, res: ServerResponse) => void | Promise<void>;

export interface HttpsReceiver {
  /** `https://127.0.0.1:PORT` */
  origin: string;
  url(pathname?: string): string;
  requests: ReceivedRequest[];
  /** Requests to one path. */
  at(pathname: string): ReceivedRequest[];
  /** Per-path behaviour; unmatched paths answer 200 `ok`. */
  on(pathname: string, handler: ReceiverHandler): void;
  close(): Promise<void>;
}

export async function startHttpsReceiver(cert: TestCertificate): Promise<HttpsReceiver> {
  const handlers = new Map<string, ReceiverHandler>();
  const requests: ReceivedRequest[] = [];
  const server = https.createServer({ key: cert.key, cert: cert.cert, keepAlive: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      requests.push(received);
      const handler = handlers.get(received.path.split('?')[0]!);
      if (!handler) {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        return;
      }
      void Promise.resolve(handler(received, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (pathname = '/hook') => `${origin}${pathname}`,
    requests,
    at: (pathname) => requests.filter((r) => r.path === pathname),
    on: (pathname, handler) => handlers.set(pathname, handler),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `check` until it returns a truthy value (returned) or `timeoutMs` passes (throws with `what`). */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 15_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface DeliveryHarness {
  cert: TestCertificate;
  receiver: HttpsReceiver;
  env: import('./test-env.js').TestEnv;
  worker: import('../../src/worker/index.js').RunningWorker;
  close(): Promise<void>;
}

/**
 * A test environment with a running delivery worker that trusts a local HTTPS receiver's self-signed
 * certificate (through the worker's injectable `ca`).
 */
export async function startDeliveryHarness(
  dialect: import('./test-env.js').TestDialect,
  envVars: Record<string, string>,
  tuning: import('../../src/worker/index.js').StartDeliveryWorkerOptions = {},
): Promise<DeliveryHarness> {
  const { createTestEnv } = await import('./test-env.js');
  const { startDeliveryWorker } = await import('../../src/worker/index.js');
  const cert = makeSelfSignedCertificate();
  const receiver = await startHttpsReceiver(cert);
  const env = await createTestEnv(dialect, { env: envVars });
  const worker = await startDeliveryWorker(env.container, { ca: cert.cert, pollIntervalMs: 100, ...tuning });
  return {
    cert,
    receiver,
    env,
    worker,
    async close() {
      await worker.stop();
      await receiver.close();
      await env.close();
      fs.rmSync(cert.dir, { recursive: true, force: true });
    },
  };
}
