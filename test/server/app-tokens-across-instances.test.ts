import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/access/actor.js';
import { startServe, type ServeProcess } from '../helpers/cli.js';
import { clientOptions, connectApp, MCP_ACCEPT, MCP_INITIALIZE, mcpInitialize } from '../helpers/oauth-flow.js';
import { deleteRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix } from '../helpers/redis.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/** CONTRACT 17: a token revoked on one instance is refused on every other within the auth cache's promise. */
const PROMISE_MS = 2000;

interface Mode {
  name: string;
  dialect: 'sqlite' | 'postgres';
  redis: boolean;
}

const dialects = testDialects();
const MODES: Mode[] = [
  { name: 'SQLite, two processes on one file', dialect: 'sqlite' as const, redis: false },
  { name: 'PostgreSQL, LISTEN/NOTIFY', dialect: 'postgres' as const, redis: false },
  { name: 'PostgreSQL and Redis', dialect: 'postgres' as const, redis: true },
].filter((m) => dialects.includes(m.dialect));

/**
 * App tokens on two instances sharing the database (and Redis): instance A is the test's own app (it runs the
 * OAuth flow in process), instance B a real `serve`. A token revoked on A (RFC 7009, or "Revoke" in the
 * dashboard) is refused by B, and one revoked at B's /oauth/revoke by A, within the promise, measured by polling.
 */
describe.each(MODES)('app tokens on every instance: $name', (mode) => {
  let env: TestEnv;
  let org: TestOrg;
  let serve: ServeProcess;
  const prefix = uniqueRedisPrefix();

  beforeAll(async () => {
    env = await createTestEnv(mode.dialect, { env: mode.redis ? { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix } : {} });
    org = await env.createOrg('Two instances');
    serve = await startServe({
      DATA_DIR: env.dataDir,
      LOG_LEVEL: 'info',
      PUBLIC_BASE_URL: env.config.publicBaseUrl,
      ...(env.config.databaseUrl ? { DATABASE_URL: env.config.databaseUrl, DATABASE_POOL_SIZE: '4' } : {}),
      ...(mode.redis ? { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix } : {}),
    });
  }, 120_000);

  afterAll(async () => {
    serve?.child.kill('SIGKILL');
    await serve?.exited;
    await env?.close();
    if (mode.redis) await deleteRedisPrefix(prefix);
  });

  const onB = async (token: string) =>
    (await fetch(`${serve.address}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${token}`, accept: MCP_ACCEPT, 'content-type': 'application/json' }, body: JSON.stringify(MCP_INITIALIZE) })).status;
  const onA = async (token: string) => (await mcpInitialize(env, token)).status;

  async function refusedWithin(probe: () => Promise<number>): Promise<number> {
    const since = performance.now();
    for (;;) {
      if ((await probe()) === 401) return performance.now() - since;
      if (performance.now() - since > PROMISE_MS * 5) return Number.POSITIVE_INFINITY;
    }
  }

  it(`a token revoked on A (RFC 7009, then "Revoke") is refused by B within ${PROMISE_MS} ms, and one revoked at B by A`, async () => {
    const member = await org.member('member');

    const first = await connectApp(env, org.id, member.userId, { scope: 'read' });
    expect(await onB(first.tokens.access_token)).toBe(200);
    expect(await onB(first.tokens.access_token)).toBe(200);
    await oauth.processRevocationResponse(await oauth.revocationRequest(first.as, first.client, oauth.None(), first.tokens.access_token, clientOptions(env)));
    const times: number[] = [];
    times.push(await refusedWithin(() => onB(first.tokens.access_token)));

    const second = await connectApp(env, org.id, member.userId, { scope: 'read' });
    expect(await onB(second.tokens.access_token)).toBe(200);
    const [app] = await env.container.services.connectedApps.listAll(cliActor(org.id));
    await env.container.services.connectedApps.revoke(cliActor(org.id), app!.id);
    times.push(await refusedWithin(() => onB(second.tokens.access_token)));

    const third = await connectApp(env, org.id, member.userId, { scope: 'read' });
    expect(await onA(third.tokens.access_token)).toBe(200);
    expect(await onA(third.tokens.access_token)).toBe(200);
    const revokedAtB = await fetch(`${serve.address}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: third.tokens.access_token, client_id: third.client.client_id }).toString(),
    });
    expect(revokedAtB.status).toBe(200);
    times.push(await refusedWithin(() => onA(third.tokens.access_token)));
    // For docs/benchmarks.md: APP_TOKEN_FIGURES=1 prints the three times (ms from the revocation's answer to the first refusal).
    if (process.env.APP_TOKEN_FIGURES) console.log(`app tokens (${mode.name}): RFC 7009 at A → B ${times[0]!.toFixed(1)}, "Revoke" at A → B ${times[1]!.toFixed(1)}, RFC 7009 at B → A ${times[2]!.toFixed(1)} ms`);
    for (const t of times) expect(t).toBeLessThan(PROMISE_MS);
  }, 120_000);
});
