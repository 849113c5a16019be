import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/lib/crypto.js';
import { DashboardClient } from '../helpers/dashboard.js';
import { startSecondInstance, type SecondInstance } from '../helpers/second-instance.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/**
 * Sessions are read from the database on every request, so what one instance does to a session (sign out,
 * a password change, a role change, a removal) holds on the next click at every other instance. Two apps,
 * each with its own container and connection pool, on one PostgreSQL database.
 */
describe.skipIf(!testDialects().includes('postgres'))('dashboard sessions across instances (postgres)', () => {
  let env: TestEnv;
  let second: SecondInstance;
  let org: TestOrg;
  const PASSWORD = 'a good long password';

  beforeAll(async () => {
    env = await createTestEnv('postgres');
    second = await startSecondInstance(env);
    org = await env.createOrg();
  });
  afterAll(async () => {
    await second?.close();
    await env?.close();
  });

  /** The same browser (cookie jar) talking to the other instance. */
  function onSecond(browser: DashboardClient): DashboardClient {
    const other = new DashboardClient({ ...env, app: second.app });
    for (const [name, value] of browser.cookies) other.cookies.set(name, value);
    return other;
  }

  async function member(role: 'admin' | 'member' = 'member') {
    const { userId } = await org.member(role);
    await env.container.store.repos.users.update(org.id, userId, { password_hash: await hashPassword(PASSWORD) });
    const user = (await env.container.store.repos.users.findById(org.id, userId))!;
    return { userId, email: user.email };
  }

  async function signIn(email: string): Promise<DashboardClient> {
    const browser = new DashboardClient(env);
    await browser.get('/dashboard/login');
    expect((await browser.post('/dashboard/login', { email, password: PASSWORD })).status).toBe(303);
    return browser;
  }

  it('a session started on one instance works on the other, and signing out on one ends it on both', async () => {
    const { email } = await member();
    const browser = await signIn(email);
    const elsewhere = onSecond(browser);
    expect((await elsewhere.get('/dashboard')).status).toBe(200);
    await browser.get('/dashboard');
    expect((await browser.post('/dashboard/logout')).status).toBe(303);
    expect((await elsewhere.get('/dashboard')).status).toBe(303);
  });

  it('a password changed on one instance ends the other sessions on the other instance', async () => {
    const { email } = await member();
    const changing = await signIn(email);
    const other = onSecond(await signIn(email));
    expect((await other.get('/dashboard/account')).status).toBe(200);
    await changing.get('/dashboard/account');
    const res = await changing.post('/dashboard/account/password', { current_password: PASSWORD, new_password: 'another long password' });
    expect(res.status).toBe(303);
    expect((await other.get('/dashboard/account')).status).toBe(303);
    expect((await changing.get('/dashboard/account')).status).toBe(200);
  });

  it('a role change made on one instance applies to the next click on the other', async () => {
    const { userId, email } = await member();
    const other = onSecond(await signIn(email));
    expect((await other.get('/dashboard/projects')).text).toContain('New project');
    const owner = await DashboardClient.signedIn(env, org.id, org.ownerId);
    await owner.get('/dashboard/members');
    expect((await owner.post(`/dashboard/members/${userId}/role`, { role: 'viewer' })).status).toBe(303);
    expect((await other.get('/dashboard/projects')).text).not.toContain('New project');
  });

  it('a member removed on one instance is signed out on the other', async () => {
    const { userId, email } = await member();
    const other = onSecond(await signIn(email));
    expect((await other.get('/dashboard')).status).toBe(200);
    expect((await env.request('DELETE', `/v1/users/${userId}`, { key: org.ownerKey })).status).toBe(204);
    expect((await other.get('/dashboard')).status).toBe(303);
  });
});
