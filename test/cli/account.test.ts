import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContainer, type Container } from '../../src/container.js';
import { buildApp, type App } from '../../src/app.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import { cliActor } from '../../src/services/access/actor.js';
import { cliJson, createCliWorld, runCli } from '../helpers/cli.js';
import { DashboardClient } from '../helpers/dashboard.js';
import { testDialects, type TestEnv } from '../helpers/test-env.js';

// Each case spawns Node processes; on a busy two-core machine that is slow, not wrong.
vi.setConfig({ testTimeout: 120_000 });

const BASE = 'https://ws.example.com';
const HOUR = 60 * 60 * 1000;

describe.each(testDialects())('password links from the command line (%s)', (dialect) => {
  let world: Awaited<ReturnType<typeof createCliWorld>>;
  let container: Container;
  let app: App;
  /** The dashboard on the database the CLI writes to. */
  let web: TestEnv;

  beforeAll(async () => {
    world = await createCliWorld(dialect);
    world.env.PUBLIC_BASE_URL = BASE;
    const config = loadConfig({ ...world.env, LOG_LEVEL: 'silent' });
    container = await createContainer(config, { migrate: true, logger: pino({ level: 'silent' }) });
    app = await buildApp(container);
    await app.ready();
    web = { app, config, container } as TestEnv;
  });
  afterAll(async () => {
    await app?.close();
    await container?.close();
    await world?.cleanup();
  });

  const pathOf = (url: string) => {
    expect(url.startsWith(`${BASE}/dashboard/password/`)).toBe(true);
    return new URL(url).pathname;
  };

  async function setPassword(path: string, password: string) {
    const browser = new DashboardClient(web);
    const page = await browser.get(path);
    expect(page.status).toBe(200);
    const saved = await browser.post(path, { password });
    return { browser, saved };
  }

  it('org create --json carries a 72-hour setup_url that lets the owner choose a password and signs them in', async () => {
    const created = await cliJson(['org', 'create', '--name', 'Setup Co', '--owner-email', 'founder@example.com'], world.env);
    expect(created.setup_url).toMatch(/^https:\/\/ws\.example\.com\/dashboard\/password\/[A-Za-z0-9_-]{43}$/);
    const token = created.setup_url.split('/').at(-1);
    const row = await container.database.db.selectFrom('auth_tokens').selectAll().where('token_hash', '=', sha256Hex(token)).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ purpose: 'setup', user_id: created.owner.id, org_id: created.organization.id, used_at: null });
    expect(row.expires_at - row.created_at).toBe(72 * HOUR);

    const { browser, saved } = await setPassword(pathOf(created.setup_url), 'the founder password');
    expect(saved.status).toBe(303);
    expect(saved.location).toBe('/dashboard');
    expect(browser.cookies.has('__Host-ws_session')).toBe(true);
    expect((await browser.get('/dashboard')).status).toBe(200);

    // Used once, the link is dead; the password signs in.
    expect((await new DashboardClient(web).get(pathOf(created.setup_url))).status).toBe(404);
    const again = new DashboardClient(web);
    await again.get('/dashboard/login');
    expect((await again.post('/dashboard/login', { email: 'founder@example.com', password: 'the founder password' })).status).toBe(303);
  });

  it('org create without --json prints the setup link for people', async () => {
    const res = await runCli(['org', 'create', '--name', 'Readable Setup', '--owner-email', 'readable@example.com'], world.env);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/Password setup\s+https:\/\/ws\.example\.com\/dashboard\/password\/\S+/);
  });

  it('user password-link prints a fresh link for an active user and kills the older one', async () => {
    const created = await cliJson(['org', 'create', '--name', 'Links Ltd', '--owner-email', 'links@example.com'], world.env);
    const member = await cliJson(['user', 'add', '--org', created.organization.id, '--email', 'm@example.com', '--role', 'member'], world.env);
    const first = await cliJson(['user', 'password-link', '--user', member.id], world.env);
    expect(Object.keys(first).sort()).toEqual(['expires_at', 'url']);
    expect(Date.parse(first.expires_at)).toBeGreaterThan(Date.now() + 71 * HOUR);
    const second = await cliJson(['user', 'password-link', '--user', member.id], world.env);
    expect(second.url).not.toBe(first.url);

    expect((await new DashboardClient(web).get(pathOf(first.url))).status).toBe(404);
    const { browser, saved } = await setPassword(pathOf(second.url), 'member password ok');
    expect(saved.status).toBe(303);
    expect((await browser.get('/dashboard')).status).toBe(200);

    const human = await runCli(['user', 'password-link', '--user', member.id], world.env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/Link\s+https:\/\/ws\.example\.com\/dashboard\/password\/\S+/);
  });

  it('user password-link refuses unknown and invited users (exit 1, not_found) and a missing --user (exit 2)', async () => {
    const created = await cliJson(['org', 'create', '--name', 'Refusals', '--owner-email', 'refusals@example.com'], world.env);
    const invited = await invitedUser(created.organization.id);
    for (const user of ['user_doesnotexist', invited]) {
      const res = await runCli(['user', 'password-link', '--user', user, '--json'], world.env);
      expect(res.code).toBe(1);
      expect(JSON.parse(res.stdout)).toEqual({ error: { code: 'not_found', message: 'user not found' } });
      expect(res.stderr).toContain('user not found');
    }
    const usage = await runCli(['user', 'password-link'], world.env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('missing required option --user');
  });

  /** An invited (not yet active) user, made through the service the API calls. */
  it("user reset-mfa removes a user's factors and sessions (exit 0), and refuses an unknown user (exit 1)", async () => {
    const created = await cliJson(['org', 'create', '--name', 'Locked Out', '--owner-email', 'lockedout@example.com'], world.env);
    const orgId = created.organization.id;
    const member = await cliJson(['user', 'add', '--org', orgId, '--email', 'lost.phone@example.com', '--role', 'member'], world.env);
    const now = Date.now();
    const db = container.database.db;
    await db.insertInto('totp_factors').values({ org_id: orgId, user_id: member.id, secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', last_step: null, created_at: now, enabled_at: now }).execute();
    await db.insertInto('recovery_codes').values({ org_id: orgId, user_id: member.id, code_hash: 'c'.repeat(64), created_at: now, used_at: null }).execute();
    const link = await cliJson(['user', 'password-link', '--user', member.id], world.env);
    const { browser } = await setPassword(pathOf(link.url), 'member password ok');
    // With a factor, the link's sign-in owes the second step.
    expect((await browser.get('/dashboard')).location).toBe('/dashboard/login/two-step');

    const reset = await cliJson(['user', 'reset-mfa', '--user', member.id], world.env);
    expect(reset).toEqual({ user_id: member.id, passkeys_removed: 0, sessions_ended: 1 });
    expect(await container.store.repos.secondFactors.hasAny(orgId, member.id)).toBe(false);
    expect(await db.selectFrom('recovery_codes').select('seq').where('user_id', '=', member.id).execute()).toHaveLength(0);
    const audit = await db.selectFrom('audit_log').selectAll().where('org_id', '=', orgId).where('action', '=', 'user.mfa_disabled').execute();
    expect(audit.map((r) => [r.source, r.target_id])).toEqual([['cli', member.id]]);
    const human = await runCli(['user', 'reset-mfa', '--user', member.id], world.env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/Sessions ended\s+0/);

    const unknown = await runCli(['user', 'reset-mfa', '--user', 'user_doesnotexist', '--json'], world.env);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toEqual({ error: { code: 'not_found', message: 'user not found' } });
    expect((await runCli(['user', 'reset-mfa'], world.env)).code).toBe(2);
  });

  async function invitedUser(orgId: string): Promise<string> {
    const user = await container.services.users.invite(cliActor(orgId), { email: 'invited@example.com', role: 'member' });
    expect(user.status).toBe('invited');
    return user.id;
  }
});
