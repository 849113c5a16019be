import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { isLoopbackHost, startMetricsListener } from '../../src/http/metrics.js';
import { startServer, startWorker, type Running } from '../../src/server.js';
import { startServe, type ServeProcess } from '../helpers/cli.js';

// The listener, its configuration and the processes that open it do not depend on the database: SQLite.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-metrics-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const silent = pino({ level: 'silent' });
const TOKEN = 'scrape-token-0123456789abcdef';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig({ DATA_DIR: scratch, ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('metrics configuration', () => {
  it('defaults to 127.0.0.1:9464 without a token', () => {
    const config = loadConfig({ DATA_DIR: scratch });
    expect(config.metricsPort).toBe(9464);
    expect(config.metricsHost).toBe('127.0.0.1');
    expect(config.metricsToken).toBeNull();
    // The worker's own default, so serve and worker start side by side on one host.
    expect(loadConfig({ DATA_DIR: scratch }, 'worker').metricsPort).toBe(9465);
    expect(loadConfig({ DATA_DIR: scratch, METRICS_PORT: '9100' }, 'worker').metricsPort).toBe(9100);
  });

  it('reads METRICS_PORT (0 for any free port, off for none), METRICS_HOST and METRICS_TOKEN', () => {
    expect(loadConfig({ DATA_DIR: scratch, METRICS_PORT: '0' }).metricsPort).toBe(0);
    expect(loadConfig({ DATA_DIR: scratch, METRICS_PORT: '9100' }).metricsPort).toBe(9100);
    expect(loadConfig({ DATA_DIR: scratch, METRICS_PORT: 'off' }).metricsPort).toBeNull();
    expect(loadConfig({ DATA_DIR: scratch, METRICS_PORT: ' OFF ' }).metricsPort).toBeNull();
    // Both 0: each listener gets a free port of its own.
    expect(loadConfig({ DATA_DIR: scratch, PORT: '0', METRICS_PORT: '0' }).metricsPort).toBe(0);
    expect(loadConfig({ DATA_DIR: scratch, METRICS_HOST: '0.0.0.0' }).metricsHost).toBe('0.0.0.0');
    expect(loadConfig({ DATA_DIR: scratch, METRICS_HOST: 'localhost' }).metricsHost).toBe('localhost');
    expect(loadConfig({ DATA_DIR: scratch, METRICS_TOKEN: TOKEN }).metricsToken).toBe(TOKEN);
  });

  it.each([
    ['METRICS_PORT', ['abc', '70000', '-1', '80.5', 'of', '9464x']],
    ['METRICS_HOST', ['not a host', 'http://127.0.0.1', 'exa_mple.com']],
    ['METRICS_TOKEN', ['short', 'has a space in it 0123456789', 'tab\there-0123456789abcdef', 'ünïcode-0123456789abcdef']],
  ] as const)('refuses a bad %s with a ConfigError naming it', (variable, values) => {
    for (const value of values) {
      const error = configError({ [variable]: value });
      expect(error.variable, `${variable}=${value}`).toBe(variable);
      expect(error.message).toContain(variable);
    }
  });

  it('refuses METRICS_PORT equal to PORT: two listeners cannot share it', () => {
    const error = configError({ PORT: '8080', METRICS_PORT: '8080' });
    expect(error.variable).toBe('METRICS_PORT');
    expect(error.message).toContain('PORT');
  });

  it('tells loopback addresses from the others (for the warning at start)', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', '::ffff:10.0.0.1', 'metrics.internal', 'example.com']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});

describe('the metrics listener of serve and worker (in process)', () => {
  const running: Running[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.close()));
  });

  function config(env: Record<string, string> = {}) {
    return loadConfig({ DATA_DIR: fs.mkdtempSync(path.join(scratch, 'data-')), PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'silent', ...env });
  }

  it('serve: the API on one port, /metrics on another (loopback), GET /metrics on the API port is 404', async () => {
    const server = await startServer(config(), { logger: silent });
    running.push(server);
    expect(server.metricsAddress).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(new URL(server.metricsAddress!).port).not.toBe(new URL(server.address).port);

    expect((await fetch(`${server.address}/healthz`)).status).toBe(200);
    const onApi = await fetch(`${server.address}/metrics`);
    expect(onApi.status).toBe(404);
    expect(await onApi.json()).toMatchObject({ error: { code: 'not_found' } });

    const scraped = await fetch(`${server.metricsAddress}/metrics`);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await scraped.text();
    // The API's request counters (the /healthz and 404 above), the delivery gauges, the process metrics.
    expect(text).toMatch(/^workspace_http_requests_total\{method="GET",route="\/healthz",status_code="200"\} 1$/m);
    expect(text).toContain('# TYPE workspace_deliveries_pending gauge');
    expect(text).toContain('# TYPE workspace_process_cpu_seconds_total counter');
  });

  it('answers only GET /metrics: the contract error body otherwise', async () => {
    const server = await startServer(config(), { logger: silent });
    running.push(server);
    const other = await fetch(`${server.metricsAddress}/v1/projects`);
    expect(other.status).toBe(404);
    expect(other.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await other.json()).toEqual({ error: { code: 'not_found', message: 'route not found' } });
    expect((await fetch(`${server.metricsAddress}/`)).status).toBe(404);
    const post = await fetch(`${server.metricsAddress}/metrics`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    expect(await post.json()).toMatchObject({ error: { code: 'method_not_allowed' } });
    // A query string is still the same resource.
    expect((await fetch(`${server.metricsAddress}/metrics?x=1`)).status).toBe(200);
  });

  it('with METRICS_TOKEN: 401 without the token or with a wrong one, 200 with it', async () => {
    const server = await startServer(config({ METRICS_TOKEN: TOKEN }), { logger: silent });
    running.push(server);
    const url = `${server.metricsAddress}/metrics`;
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, 'Bearer wrong', `Basic ${TOKEN}`, TOKEN, 'Bearer ']) {
      const res = await fetch(url, { headers: authorization === undefined ? {} : { authorization } });
      expect(res.status, String(authorization)).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await res.json()).toEqual({ error: { code: 'unauthorized', message: expect.stringContaining('METRICS_TOKEN') } });
    }
    const ok = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('workspace_http_requests_total');
    // The scheme is case-insensitive (RFC 9110).
    expect((await fetch(url, { headers: { authorization: `bearer ${TOKEN}` } })).status).toBe(200);
  });

  it('METRICS_PORT=off opens no listener', async () => {
    const server = await startServer(config({ METRICS_PORT: 'off' }), { logger: silent });
    running.push(server);
    expect(server.metricsAddress).toBeNull();
    expect((await fetch(`${server.address}/metrics`)).status).toBe(404);
    const worker = await startWorker(config({ METRICS_PORT: 'off' }), { logger: silent });
    running.push(worker);
    expect(worker.metricsAddress).toBeNull();
  });

  it('worker: opens the listener too, with the delivery counters', async () => {
    const worker = await startWorker(config(), { logger: silent });
    running.push(worker);
    expect(worker.metricsAddress).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const text = await (await fetch(`${worker.metricsAddress}/metrics`)).text();
    expect(text).toMatch(/^workspace_delivery_attempts_total\{outcome="delivered"\} 0$/m);
    expect(text).toContain('# TYPE workspace_deliveries_oldest_pending_age_seconds gauge');
  });

  it('closes the listener on shutdown', async () => {
    const server = await startServer(config(), { logger: silent });
    const url = `${server.metricsAddress}/metrics`;
    // A kept-alive connection, as a scraper holds one, must not keep the listener open.
    expect((await fetch(url)).status).toBe(200);
    await server.close();
    await expect(fetch(url)).rejects.toThrow();
  });

  it('a busy METRICS_PORT fails the start and leaves nothing listening', async () => {
    const first = await startServer(config(), { logger: silent });
    running.push(first);
    const busy = new URL(first.metricsAddress!).port;
    await expect(startServer(config({ METRICS_PORT: busy }), { logger: silent })).rejects.toThrow(`METRICS_PORT is ${busy}, but 127.0.0.1:${busy} is already in use`);
  });
});

describe('shutting the listener down', () => {
  it('lets a scrape in flight finish, without waiting for the scraper\'s kept-alive connection', async () => {
    let renders = 0;
    const slow = {
      registry: { contentType: 'text/plain; version=0.0.4; charset=utf-8' },
      render: () => new Promise<string>((resolve) => setTimeout(() => resolve(`scrapes_total ${++renders}\n`), 300)),
    };
    const listener = await startMetricsListener(slow as never, { port: 0, host: '127.0.0.1', token: null, logger: silent });
    const url = `${listener.address}/metrics`;
    // A first scrape leaves a kept-alive connection behind, as Prometheus does; the second is in flight at close().
    expect(await (await fetch(url)).text()).toBe('scrapes_total 1\n');
    const inFlight = fetch(url).then(async (res) => ({ status: res.status, text: await res.text() }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await listener.close();
    // Node's keep-alive timeout is far longer: close() returned once the scrape was answered.
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await inFlight).toEqual({ status: 200, text: 'scrapes_total 2\n' });
    await expect(fetch(url)).rejects.toThrow();
  });
});

describe('the warning for a reachable, unprotected /metrics', () => {
  async function warningsFor(host: string, token: string | null): Promise<string[]> {
    const lines: { level: number; msg: string }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const listener = await startMetricsListener(
      { registry: { contentType: 'text/plain' }, render: async () => '' } as never,
      { port: 0, host, token, logger },
    );
    await listener.close();
    return lines.filter((l) => l.level === 40).map((l) => l.msg);
  }

  it('is logged when METRICS_HOST is not loopback and no METRICS_TOKEN is set, and only then', async () => {
    expect(await warningsFor('0.0.0.0', null)).toEqual([expect.stringContaining('METRICS_TOKEN')]);
    expect(await warningsFor('0.0.0.0', TOKEN)).toEqual([]);
    expect(await warningsFor('127.0.0.1', null)).toEqual([]);
  });
});

/** Whether a TCP connection to host:port is accepted. */
function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 2000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** This machine's addresses other than loopback (another machine would connect to one of these). */
const externalAddresses = Object.values(os.networkInterfaces())
  .flat()
  .filter((a) => a !== undefined && !a.internal && a.family === 'IPv4')
  .map((a) => a!.address);

describe('a real `workspace serve` and `worker` process (dist)', () => {
  const processes: ServeProcess[] = [];
  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
  });

  async function stop(p: ServeProcess): Promise<void> {
    p.child.kill('SIGTERM');
    expect(await p.exited).toEqual({ code: 0, signal: null });
  }

  it('serve listens on both ports, /metrics on 127.0.0.1 only, and logs the address', async () => {
    const dataDir = fs.mkdtempSync(path.join(scratch, 'serve-'));
    const serve = await startServe({ DATA_DIR: dataDir, LOG_LEVEL: 'info', METRICS_PORT: '0' });
    processes.push(serve);
    expect(serve.address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(serve.metricsAddress).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(new URL(serve.metricsAddress!).port).not.toBe(new URL(serve.address).port);
    // No warning: loopback.
    expect(serve.lines.filter((l) => JSON.parse(l).level >= 40)).toEqual([]);
    const metricsPort = Number(new URL(serve.metricsAddress!).port);
    expect(await connects('127.0.0.1', metricsPort)).toBe(true);
    for (const address of externalAddresses) expect(await connects(address, metricsPort), address).toBe(false);

    expect((await fetch(`${serve.address}/metrics`)).status).toBe(404);
    const scraped = await fetch(`${serve.metricsAddress}/metrics`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('# TYPE workspace_http_requests_total counter');
    await stop(serve);
  });

  it('worker opens its own listener with the delivery counters', async () => {
    const dataDir = fs.mkdtempSync(path.join(scratch, 'worker-'));
    const worker = await startServe({ DATA_DIR: dataDir, LOG_LEVEL: 'info', METRICS_PORT: '0', METRICS_TOKEN: TOKEN }, 'worker');
    processes.push(worker);
    expect(worker.address).toBe('');
    expect(worker.metricsAddress).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${worker.metricsAddress}/metrics`)).status).toBe(401);
    const scraped = await fetch(`${worker.metricsAddress}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await scraped.text()).toMatch(/^workspace_delivery_attempts_total\{outcome="delivered"\} 0$/m);
    await stop(worker);
  });
});
