import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInstancePresence, HEARTBEAT_MS, LIVE_MS } from '../../src/services/shared/instances-service.js';
import { createCliWorld, startServe, type ServeProcess } from '../helpers/cli.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { TEST_REDIS_URL, uniqueRedisPrefix } from '../helpers/redis.js';
import { createTestEnv, testDialects, type TestEnv } from '../helpers/test-env.js';

/** A logger that keeps its warnings. */
function warnings() {
  const said: string[] = [];
  return { said, log: { warn: (_obj: unknown, msg?: string) => void said.push(msg ?? ''), info: () => {} } };
}

/**
 * Security review F5: without REDIS_URL each `serve` counts sign-in and two-step attempts in its own memory, so
 * N instances on one database allow N times the attempts. The service now says so, loudly: at start when it
 * finds another instance, and on its next heartbeat when another starts after it.
 */
describe.each(testDialects())('instances sharing a database (%s)', (dialect) => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await createTestEnv(dialect);
  });
  afterAll(async () => {
    await env?.close();
  });

  it('the second instance without Redis warns at start, the first on its next heartbeat; a stopped one is no longer counted', async () => {
    const clock = new ManualClock(Date.now());
    const first = warnings();
    const second = warnings();
    const a = createInstancePresence({ store: env.container.store, clock, sharedLimits: false, log: first.log, hostname: 'host-a', pid: 1 });
    const b = createInstancePresence({ store: env.container.store, clock, sharedLimits: false, log: second.log, hostname: 'host-b', pid: 2 });
    await a.beat();
    expect(first.said).toEqual([]);
    clock.advance(1000);
    await b.beat();
    expect(second.said).toHaveLength(1);
    expect(second.said[0]).toContain('2 instances serve this database');
    expect(second.said[0]).toContain('REDIS_URL is not set on this one, host-a pid 1');
    expect(second.said[0]).toContain('Set REDIS_URL on every instance');

    clock.advance(HEARTBEAT_MS);
    await a.beat();
    expect(first.said).toHaveLength(1);
    expect(first.said[0]).toContain('host-b pid 2');
    // Said once per newcomer, not at every heartbeat.
    clock.advance(HEARTBEAT_MS);
    await a.beat();
    await b.beat();
    expect(first.said).toHaveLength(1);
    expect(second.said).toHaveLength(1);

    // A stopped instance says goodbye; a killed one stops counting after three missed heartbeats.
    await b.stop();
    const c = createInstancePresence({ store: env.container.store, clock, sharedLimits: false, log: warnings().log, hostname: 'host-c', pid: 3 });
    await c.beat();
    clock.advance(LIVE_MS + 1);
    const late = warnings();
    const d = createInstancePresence({ store: env.container.store, clock, sharedLimits: false, log: late.log, hostname: 'host-d', pid: 4 });
    await a.beat();
    await d.beat();
    expect(late.said[0]).toContain('2 instances serve this database');
    expect(late.said[0]).not.toContain('host-c');
    expect(late.said[0]).not.toContain('host-b');
    await Promise.all([a.stop(), c.stop(), d.stop()]);
  });

  it('says nothing when every instance shares its limits in Redis, and names the one that does not', async () => {
    const clock = new ManualClock(Date.now() + 10 * LIVE_MS);
    const [x, y, z] = [warnings(), warnings(), warnings()];
    const shared1 = createInstancePresence({ store: env.container.store, clock, sharedLimits: true, log: x.log, hostname: 'redis-1', pid: 11 });
    const shared2 = createInstancePresence({ store: env.container.store, clock, sharedLimits: true, log: y.log, hostname: 'redis-2', pid: 12 });
    await shared1.beat();
    await shared2.beat();
    expect([...x.said, ...y.said]).toEqual([]);
    const alone = createInstancePresence({ store: env.container.store, clock, sharedLimits: false, log: z.log, hostname: 'no-redis', pid: 13 });
    await alone.beat();
    await shared1.beat();
    expect(z.said[0]).toContain('REDIS_URL is not set on this one:');
    expect(x.said[0]).toContain('REDIS_URL is not set on no-redis pid 13');
    await Promise.all([shared1.stop(), shared2.stop(), alone.stop()]);
  });
});

describe.each(testDialects())('two serve processes on one database (%s)', (dialect) => {
  let world: Awaited<ReturnType<typeof createCliWorld>>;
  const running: ServeProcess[] = [];
  beforeAll(async () => {
    world = await createCliWorld(dialect);
  });
  afterAll(async () => {
    for (const serve of running) serve.child.kill('SIGKILL');
    await Promise.all(running.map((serve) => serve.exited));
    await world?.cleanup();
  });

  const warned = (serve: ServeProcess) => serve.lines.filter((line) => line.includes('instances serve this database'));

  it('without REDIS_URL the second says so before it is ready; with REDIS_URL on both, neither does', async () => {
    const base = { ...world.env, METRICS_PORT: 'off', LOG_LEVEL: 'info' };
    const first = await startServe(base);
    running.push(first);
    expect(warned(first)).toEqual([]);
    const second = await startServe(base);
    running.push(second);
    const [line] = warned(second);
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ level: 40, instances: 2 });
    for (const serve of running.splice(0)) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }

    const shared = { ...base, REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: uniqueRedisPrefix() };
    const r1 = await startServe(shared);
    running.push(r1);
    const r2 = await startServe(shared);
    running.push(r2);
    expect([...warned(r1), ...warned(r2)]).toEqual([]);
  });
});
