import fs from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { createCliWorld, type ServeProcess } from './cli.js';
import { makeSelfSignedCertificate, startHttpsReceiver, type HttpsReceiver, type TestCertificate } from './https-receiver.js';
import type { TestDialect } from './test-env.js';

/** What a suite that runs `./bin/workspace serve` against a real HTTPS receiver starts from. */
export interface ServeFixture {
  readonly receiver: HttpsReceiver;
  readonly world: Awaited<ReturnType<typeof createCliWorld>>;
  /** The world's environment, trusting the receiver's certificate and allowing its private address, plus the suite's own. */
  readonly env: Record<string, string>;
}

/**
 * The hooks those suites shared: a self-signed certificate, an HTTPS receiver (`routes` set up its answers),
 * a CLI world on the dialect, and all of it removed after the suite. The suite's own `afterAll` (registered
 * later, run first) stops the `serve` it started, with `stopServe`.
 */
export function serveFixture(dialect: TestDialect, options: { env?: Record<string, string>; routes?: (receiver: HttpsReceiver) => void } = {}): ServeFixture {
  let cert: TestCertificate | undefined;
  let receiver: HttpsReceiver;
  let world: ServeFixture['world'];
  let env: Record<string, string>;
  beforeAll(async () => {
    cert = makeSelfSignedCertificate();
    receiver = await startHttpsReceiver(cert);
    options.routes?.(receiver);
    world = await createCliWorld(dialect);
    env = { ...world.env, NODE_EXTRA_CA_CERTS: cert.certFile, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...options.env };
  });
  afterAll(async () => {
    await receiver?.close();
    await world?.cleanup();
    if (cert) fs.rmSync(cert.dir, { recursive: true, force: true });
  });
  return {
    get receiver() {
      return receiver;
    },
    get world() {
      return world;
    },
    get env() {
      return env;
    },
  };
}

/** Stops a `serve` the test started, if it still runs, and waits for it to exit. */
export async function stopServe(serve: ServeProcess | null, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (serve && serve.child.exitCode === null) {
    serve.child.kill(signal);
    await serve.exited;
  }
}
