import Fastify, { LogController } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lazyChildLogger } from '../../src/http/lazy-logger.js';
import { createTestEnv, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/**
 * The per-request savings of issue 11 must not change what a request does: route-scoped hooks run once
 * per request (HEAD included), the lazily built request logger still writes the request id, and a
 * request that never logs builds no child logger.
 */
describe('per-request hooks and logging', () => {
  const lines: string[] = [];
  let env: TestEnv;
  let org: TestOrg;

  beforeAll(async () => {
    env = await createTestEnv('sqlite', { logger: pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) }) });
    org = await env.createOrg();
  });
  afterAll(async () => {
    await env?.close();
  });

  it('counts a HEAD of an authenticated GET once against the rate limit, like the GET', async () => {
    const remaining = async (method: string) => Number((await env.request(method, '/v1/projects', { key: org.ownerKey })).headers['x-ratelimit-remaining']);
    const first = await remaining('GET');
    const afterHead = await remaining('HEAD');
    const afterGet = await remaining('GET');
    expect(afterHead).toBe(first - 1);
    expect(afterGet).toBe(afterHead - 1);
  });

  it('authenticates HEAD like GET: no key is 401', async () => {
    expect((await env.request('HEAD', '/v1/projects')).status).toBe(401);
  });

  it('an empty body on a POST that takes one is invalid_json; a bodiless POST route is not affected', async () => {
    const res = await env.request('POST', '/v1/projects', { key: org.ownerKey, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(400);
    expect((res.body as { error: { code: string } }).error.code).toBe('invalid_json');
  });

  it('a good request at warn writes nothing', async () => {
    lines.length = 0;
    const res = await env.request('GET', '/v1/projects', { key: org.ownerKey, headers: { 'x-request-id': 'req-lazy-logger-1' } });
    expect(res.status).toBe(200);
    expect(lines).toEqual([]);
  });
});

describe('lazyChildLogger in Fastify', () => {
  it("writes each request's id on what the request logs at an enabled level, and nothing below it", async () => {
    const lines: Record<string, unknown>[] = [];
    const app = Fastify({
      loggerInstance: pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) }),
      childLoggerFactory: lazyChildLogger,
      logController: new LogController({ disableRequestLogging: true }),
    });
    app.get('/quiet', async (request) => {
      request.log.info('not written');
      return { ok: true };
    });
    app.get('/loud', async (request) => {
      request.log.warn({ detail: 1 }, 'written');
      return { ok: true };
    });
    await app.inject({ url: '/quiet', headers: { 'request-id': 'a' } });
    await app.inject({ url: '/loud' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'written', detail: 1, reqId: expect.stringMatching(/.+/) });
    await app.close();
  });
});

describe('lazyChildLogger', () => {
  function capture(level: string) {
    const lines: Record<string, unknown>[] = [];
    const parent = pino({ level }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    return { parent, lines };
  }

  it('builds no child for calls below the level, and one with the bindings on the first enabled call', () => {
    const { parent, lines } = capture('warn');
    let children = 0;
    const counting = Object.assign(Object.create(parent) as typeof parent, {
      child: (...args: Parameters<typeof parent.child>) => {
        children++;
        return parent.child(...args);
      },
    });
    const log = lazyChildLogger(counting, { reqId: 'r1' }, {});
    log.info('ignored');
    log.debug('ignored');
    expect(children).toBe(0);
    expect(lines).toEqual([]);
    log.warn({ a: 1 }, 'kept');
    log.error('also kept');
    expect(children).toBe(1);
    expect(lines.map((l) => [l.reqId, l.msg])).toEqual([
      ['r1', 'kept'],
      ['r1', 'also kept'],
    ]);
    expect(lines[0]!.a).toBe(1);
  });

  it('applies a route log level at once (the child is real)', () => {
    const { parent, lines } = capture('info');
    const log = lazyChildLogger(parent, { reqId: 'r2' }, { level: 'warn' });
    log.info('below the route level');
    log.warn('at the route level');
    expect(lines.map((l) => l.msg)).toEqual(['at the route level']);
  });

  it('reports the level and lets a child be made from it', () => {
    const { parent, lines } = capture('info');
    const log = lazyChildLogger(parent, { reqId: 'r3' }, {});
    expect(log.level).toBe('info');
    log.child({ part: 'x' }).info('from a grandchild');
    expect(lines[0]).toMatchObject({ reqId: 'r3', part: 'x', msg: 'from a grandchild' });
  });
});
