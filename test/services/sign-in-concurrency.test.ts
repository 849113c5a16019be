import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/lib/crypto.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/**
 * Throttling must hold against guesses sent all at once: each attempt is counted before its password is
 * checked (and given back when it succeeds), so no burst gets more than the limit's worth of checks.
 */
describe.each(testDialects())('sign-in throttling under concurrency (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let counter = 0;
  const PASSWORD = 'correct horse battery';

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg();
  });
  afterAll(async () => env?.close());

  async function memberWithPassword(): Promise<string> {
    const email = `burst${++counter}@example.com`;
    const user = await env.container.services.admin.addUser({ orgId: org.id, email, role: 'member' });
    await env.container.store.repos.users.update(org.id, user.id, { password_hash: await hashPassword(PASSWORD) });
    return email;
  }

  const context = (ip: string) => ({ source: 'dashboard' as const, ip, userAgent: 'burst', requestId: null });
  const attempt = (email: string, password: string, ip: string) =>
    env.container.services.accounts.signIn(email, password, context(ip)).then(
      () => 200,
      (err: { status?: number }) => err.status ?? 500,
    );

  it('lets at most five of twenty simultaneous wrong guesses for one e-mail be checked', async () => {
    const email = await memberWithPassword();
    const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => attempt(email, `wrong ${i}`, `10.1.${counter}.${i}`)));
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    // The right password is refused too while the e-mail is throttled.
    expect(await attempt(email, PASSWORD, '10.9.9.9')).toBe(429);
    const failed = await env.container.database.db
      .selectFrom('audit_log')
      .select('id')
      .where('org_id', '=', org.id)
      .where('action', '=', 'user.sign_in_failed')
      .where('actor_label', '=', email)
      .execute();
    expect(failed).toHaveLength(5);
  });

  it('gives back the count of every successful sign-in', async () => {
    const email = await memberWithPassword();
    // More successes than the limit, in bursts within it: each is counted while checked, then given back.
    for (let burst = 0; burst < 3; burst++) {
      const statuses = await Promise.all(Array.from({ length: 4 }, () => attempt(email, PASSWORD, '10.2.0.1')));
      expect(statuses).toEqual([200, 200, 200, 200]);
    }
    // All five failures are still available afterwards.
    for (let i = 0; i < 5; i++) expect(await attempt(email, 'nope', '10.2.0.2')).toBe(401);
    expect(await attempt(email, 'nope', '10.2.0.2')).toBe(429);
  });
});
