import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage, composeCommand, docker, dockerAvailable, dockerTry, freeLowPort, ROOT } from '../helpers/docker.js';
import { processTimeout } from '../helpers/timeouts.js';
import { makeSelfSignedCertificate, startHttpsReceiver, waitFor, type HttpsReceiver, type TestCertificate } from '../helpers/https-receiver.js';
import { createPgDatabase } from '../helpers/test-env.js';
import { deleteRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix } from '../helpers/redis.js';

/**
 * The container image (Dockerfile) and the compose topology, run for real: CI installs Docker (.ci/run),
 * so these never skip there; on a laptop without a Docker engine they do.
 */
const available = dockerAvailable();
if (!available && process.env.CI) throw new Error('CI must run the container tests: no Docker engine answers (see .ci/run)');

const TAG = `workspace-service:test-${process.pid}`;
const BASE = 'debian:trixie-slim';
const run = randomBytes(4).toString('hex');
const containers: string[] = [];
const volumes: string[] = [];
const ports = new Set<number>();

/** The machine's extra CAs (a TLS-inspecting egress), as the build argument documents. */
function extraCaCerts(): string {
  const dir = '/usr/local/share/ca-certificates';
  if (!fs.existsSync(dir)) return '';
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.crt'))
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
    .join('\n');
}

async function startContainer(name: string, args: string[], command: string[] = []): Promise<string> {
  const full = `ws-${run}-${name}`;
  containers.push(full);
  await docker(['run', '-d', '--name', full, '--network', 'host', ...args, TAG, ...command]);
  return full;
}

async function waitHttp(url: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(`${url} to answer`, async () => {
    try {
      return (await fetch(url)).status === 200;
    } catch {
      return false;
    }
  }, timeoutMs);
}

describe.skipIf(!available)('the container image', () => {
  beforeAll(() => {
    if (execFileSync('docker', ['images', '-q', BASE]).toString().trim() === '') {
      // No registry here: the base image is made from the machine's Debian source (the Dockerfile is the same).
      const tool = path.resolve(ROOT, '../shared/tools/debian-base-image');
      if (!fs.existsSync(tool)) throw new Error(`${BASE} is missing and ${tool} is not there to make it`);
      execFileSync('bash', [tool], { stdio: 'ignore', timeout: 10 * 60_000 });
    }
    buildImage(TAG, extraCaCerts());
  }, 25 * 60_000);

  afterAll(async () => {
    for (const c of containers) await dockerTry(['rm', '-f', c]);
    for (const v of volumes) await dockerTry(['volume', 'rm', '-f', v]);
    await dockerTry(['rmi', TAG]);
  }, 120_000);

  it('is non-root, exposes 3000, keeps /data as a volume, checks its own health, and runs under tini', async () => {
    const [image] = JSON.parse((await docker(['image', 'inspect', TAG])).stdout) as Array<{ Size: number; Config: Record<string, any> }>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const config = image!.Config;
    expect(config.User).toBe('10001:10001');
    expect(Object.keys(config.ExposedPorts)).toEqual(['3000/tcp']);
    expect(Object.keys(config.Volumes)).toEqual(['/data']);
    expect(config.Healthcheck.Test).toEqual(['CMD', 'workspace', 'healthcheck']);
    expect(config.Entrypoint).toEqual(['/usr/bin/tini', '--', 'workspace']);
    expect(config.Cmd).toEqual(['serve']);
    expect(config.Env).toEqual(expect.arrayContaining(['HOST=0.0.0.0', 'PORT=3000', 'DATA_DIR=/data', 'NODE_ENV=production']));

    const [base] = JSON.parse((await docker(['image', 'inspect', BASE])).stdout) as Array<{ Size: number }>;
    const aboveBase = (image!.Size - base!.Size) / 1e6;
    console.log(`image size above ${BASE}: ${aboveBase.toFixed(1)} MB`);
    // A naive multi-stage build came to 303 MB above the base; this one must stay well below.
    expect(aboveBase).toBeLessThan(180);

    // No build tools, no package manager for Node, and the build's extra CAs left behind in the build stage.
    const tools = await dockerTry(['run', '--rm', '--entrypoint', 'sh', TAG, '-c', 'for t in npm npx gcc g++ make python3 curl node-gyp; do command -v $t; done; ls /usr/local/share/ca-certificates']);
    expect(tools.stdout.trim()).toBe('');
    const history = (await docker(['history', '--no-trunc', TAG])).stdout;
    expect(history).not.toContain('BEGIN CERTIFICATE');
    expect(history).not.toContain('EXTRA_CA_CERTS');

    // The runtime is the pinned official binary (docker/node), and nothing compiled or to compile with came along.
    const pinned = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).devDependencies.node as string;
    const runtime = await docker(['run', '--rm', '--entrypoint', 'sh', TAG, '-c',
      'node -p process.versions.node; find / -xdev \\( -name "*.h" -o -name "*.gyp" -o -name "*.c" \\) -not -path "/proc/*" | head -5']);
    expect(runtime.stdout.trim()).toBe(pinned);
  }, processTimeout(4));

  it('runs embedded with a read-only root filesystem: CLI inside, health, data kept on the volume, docker stop exits 0', async () => {
    const volume = `ws-${run}-data`;
    volumes.push(volume);
    const port = await freeLowPort(ports);
    const metrics = await freeLowPort(ports);
    const args = ['--read-only', '--tmpfs', '/tmp', '-v', `${volume}:/data`, '-e', `PORT=${port}`, '-e', `METRICS_PORT=${metrics}`,
      '--health-interval', '2s', '--health-start-period', '5s'];
    const first = await startContainer('embedded-1', args);
    await waitHttp(`http://127.0.0.1:${port}/healthz`);

    expect((await docker(['exec', first, 'id', '-u'])).stdout.trim()).toBe('10001');
    // Nothing outside /data and /tmp can be written.
    const write = await dockerTry(['exec', first, 'sh', '-c', 'touch /app/x']);
    expect(write.code).not.toBe(0);
    expect(write.stderr).toContain('Read-only file system');
    expect((await dockerTry(['exec', first, 'sh', '-c', 'touch /tmp/x && touch /data/x && rm /data/x'])).code).toBe(0);

    const org = JSON.parse((await docker(['exec', first, 'workspace', 'org', 'create', '--name', 'Boxed', '--owner-email', 'o@example.com', '--json'])).stdout);
    const headers = { authorization: `Bearer ${org.api_key.key}`, 'content-type': 'application/json' };
    const created = await fetch(`http://127.0.0.1:${port}/v1/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'Survives' }) });
    expect(created.status).toBe(201);
    const project = (await created.json()) as { id: string };

    await waitFor('the HEALTHCHECK to pass', async () => (await docker(['inspect', '-f', '{{.State.Health.Status}}', first])).stdout.trim() === 'healthy', 60_000);

    const started = Date.now();
    await docker(['stop', first]);
    expect(Date.now() - started).toBeLessThan(8000);
    expect((await docker(['inspect', '-f', '{{.State.ExitCode}}', first])).stdout.trim()).toBe('0');
    expect((await docker(['logs', first])).stdout).toContain('"msg":"stopped"');

    // A new container on the same volume serves the same data (and the same key).
    await startContainer('embedded-2', args);
    await waitHttp(`http://127.0.0.1:${port}/healthz`);
    const read = await fetch(`http://127.0.0.1:${port}/v1/projects/${project.id}`, { headers });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ id: project.id, name: 'Survives' });
  }, 60_000 + processTimeout(10));

  describe('the compose topology on the machine PostgreSQL and Redis', () => {
    let cert: TestCertificate;
    let receiver: HttpsReceiver;
    let pg: Awaited<ReturnType<typeof createPgDatabase>>;
    const prefix = uniqueRedisPrefix();
    beforeAll(async () => {
      cert = makeSelfSignedCertificate();
      // The container's user (uid 10001) reads the CA through the bind mount.
      fs.chmodSync(cert.dir, 0o755);
      fs.chmodSync(cert.certFile, 0o644);
      receiver = await startHttpsReceiver(cert);
      pg = await createPgDatabase();
    });
    afterAll(async () => {
      await receiver?.close();
      await pg?.drop();
      await deleteRedisPrefix(prefix);
    });

    it('compose.yaml is valid', (ctx) => {
      const compose = composeCommand();
      if ('missing' in compose) return ctx.skip(compose.missing);
      const [bin, ...pre] = compose.command;
      const out = execFileSync(bin!, [...pre, '-f', path.join(ROOT, 'compose.yaml'), 'config'], {
        env: { ...process.env, POSTGRES_PASSWORD: 'secret' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }).toString();
      for (const service of ['postgres:', 'redis:', 'migrate:', 'api:', 'worker:']) expect(out).toContain(service);
      expect(out).toContain('service_completed_successfully');
    });

    it('migrate once, then two api and one worker with MIGRATE_ON_START=false: every event delivered exactly once', async () => {
      const shared = [
        '-e', `DATABASE_URL=${pg.url}`, '-e', `REDIS_URL=${TEST_REDIS_URL}`, '-e', `REDIS_KEY_PREFIX=${prefix}`,
        '-e', 'MIGRATE_ON_START=false', '-e', 'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true',
        '-v', `${cert.dir}:/certs:ro`, '-e', `NODE_EXTRA_CA_CERTS=/certs/${path.basename(cert.certFile)}`,
        '--read-only', '--tmpfs', '/tmp',
      ];
      // Before the migration, an api refuses to start and says what to run.
      const early = await dockerTry(['run', '--rm', '--network', 'host', ...shared, '-e', 'METRICS_PORT=off', TAG, 'serve']);
      expect(early.code).toBe(1);
      expect(early.stderr).toContain('`workspace migrate`');

      const migrate = await dockerTry(['run', '--rm', '--network', 'host', ...shared, TAG, 'migrate', '--json']);
      expect(migrate.code, migrate.stderr).toBe(0);
      expect(JSON.parse(migrate.stdout).applied.length).toBeGreaterThan(0);
      expect((await dockerTry(['run', '--rm', '--network', 'host', ...shared, TAG, 'migrate', '--check'])).code).toBe(0);

      const apis: number[] = [];
      for (const name of ['api-1', 'api-2']) {
        const port = await freeLowPort(ports);
        apis.push(port);
        await startContainer(name, [...shared, '-e', `PORT=${port}`, '-e', `METRICS_PORT=${await freeLowPort(ports)}`], ['serve']);
      }
      await startContainer('worker', [...shared, '-e', `METRICS_PORT=${await freeLowPort(ports)}`, '--no-healthcheck'], ['worker']);
      for (const port of apis) await waitHttp(`http://127.0.0.1:${port}/readyz`);

      const org = JSON.parse((await docker(['run', '--rm', '--network', 'host', ...shared, TAG, 'org', 'create', '--name', 'Composed', '--owner-email', 'o@example.com', '--json'])).stdout);
      const headers = { authorization: `Bearer ${org.api_key.key}`, 'content-type': 'application/json' };
      const hook = await fetch(`http://127.0.0.1:${apis[0]}/v1/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiver.url('/compose'), events: ['project.created'] }) });
      expect(hook.status).toBe(201);

      const EVENTS = 30;
      for (let i = 0; i < EVENTS; i++) {
        const res = await fetch(`http://127.0.0.1:${apis[i % 2]}/v1/projects`, { method: 'POST', headers, body: JSON.stringify({ name: `p${i}` }) });
        expect(res.status).toBe(201);
      }
      await waitFor('every event', () => receiver.at('/compose').length >= EVENTS, 60_000);
      // Give a duplicate the time to show up, then count.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const eventIds = receiver.at('/compose').map((r) => r.headers['x-service-event-id']);
      expect(eventIds.length).toBe(EVENTS);
      expect(new Set(eventIds).size).toBe(EVENTS);
    }, 120_000 + processTimeout(8));
  });
});
