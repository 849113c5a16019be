import fs from 'node:fs';
import path from 'node:path';
import { Migrator, sql } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrationProvider } from '../../src/db/migrations/index.js';
import { createCliWorld, runCli, startServe, type ServeProcess } from '../helpers/cli.js';
import { testDialects, type TestDialect } from '../helpers/test-env.js';

/** Every migration this release ships, in order. */
const ALL = Object.keys(await migrationProvider('sqlite').getMigrations());
const LAST = ALL.at(-1)!;
const BEFORE_LAST = ALL.at(-2)!;

const processes: ServeProcess[] = [];
afterEach(async () => {
  await Promise.all(
    processes.splice(0).map(async (p) => {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
      await p.exited;
    }),
  );
});

function open(world: { env: Record<string, string>; dataDir: string }): Database {
  return openDatabase({ databaseUrl: world.env.DATABASE_URL ?? null, dataDir: world.dataDir, poolSize: 1 });
}

async function migrationRows(database: Database): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.db);
  return rows.map((r) => r.name);
}

async function json(url: string) {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe.each(testDialects())('migrations under control (%s)', (dialect: TestDialect) => {
  const worlds: Array<{ cleanup(): Promise<void> }> = [];
  afterAll(async () => {
    await Promise.all(worlds.map((w) => w.cleanup()));
  });
  async function world() {
    const w = await createCliWorld(dialect);
    worlds.push(w);
    return w;
  }

  it('migrate --check: exit 1 listing every pending migration and changing nothing, then exit 0 once migrated', async () => {
    const w = await world();
    const before = await runCli(['migrate', '--check', '--json'], w.env);
    expect(before.code).toBe(1);
    expect(JSON.parse(before.stdout)).toEqual({ current: false, pending: ALL, applied: [], newer: [] });
    const text = await runCli(['migrate', '--check'], w.env);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`${ALL.length} migration(s) pending; run \`workspace migrate\``);
    for (const name of ALL) expect(text.stdout).toContain(`  ${name}`);
    if (dialect === 'sqlite') {
      // Not even an empty database file is left behind.
      expect(fs.readdirSync(w.dataDir)).toEqual([]);
    } else {
      const database = open(w);
      const { rows } = await sql<{ present: boolean }>`select to_regclass('kysely_migration') is not null as present`.execute(database.db);
      await database.close();
      expect(rows[0]!.present).toBe(false);
    }

    expect((await runCli(['migrate'], w.env)).code).toBe(0);
    const after = await runCli(['migrate', '--check', '--json'], w.env);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout)).toEqual({ current: true, pending: [], applied: ALL, newer: [] });
  });

  it('MIGRATE_ON_START=false: serve and worker refuse an out-of-date schema naming `workspace migrate`, and start once it is migrated', async () => {
    const w = await world();
    // A real older schema: migrated by this release's list up to the one before last.
    const database = open(w);
    const { error } = await new Migrator({ db: database.db, provider: migrationProvider(database.dialect) }).migrateTo(BEFORE_LAST);
    expect(error).toBeUndefined();
    await database.close();

    for (const command of ['serve', 'worker']) {
      const refused = await runCli([command], { ...w.env, PORT: '0', MIGRATE_ON_START: 'false' });
      expect(refused.code, command).toBe(1);
      expect(refused.stderr).toContain('`workspace migrate`');
      expect(refused.stderr).toContain(LAST);
    }
    // Nothing was migrated by the refusals.
    const check = await runCli(['migrate', '--check', '--json'], w.env);
    expect(JSON.parse(check.stdout)).toMatchObject({ current: false, pending: [LAST] });

    expect((await runCli(['migrate'], w.env)).code).toBe(0);
    const serve = await startServe({ ...w.env, MIGRATE_ON_START: 'false' });
    processes.push(serve);
    const worker = await startServe({ ...w.env, MIGRATE_ON_START: 'false' }, 'worker');
    processes.push(worker);
    expect((await json(`${serve.address}/readyz`)).body).toMatchObject({ status: 'ok', checks: { database: 'ok', schema: 'ok' } });
  });

  it('/readyz is 503 while the schema is behind this release, and the healthcheck fails with it', async () => {
    const w = await world();
    const serve = await startServe(w.env);
    processes.push(serve);
    const port = new URL(serve.address).port;
    expect(await json(`${serve.address}/readyz`)).toEqual({ status: 200, body: { status: 'ok', checks: { database: 'ok', schema: 'ok', redis: 'disabled' } } });
    const healthy = await runCli(['healthcheck'], { ...w.env, PORT: port });
    expect(healthy.code).toBe(0);
    expect(healthy.stdout).toContain('answered 200');

    // The schema goes behind underneath the running process (an older backup restored, say).
    const database = open(w);
    await sql`delete from kysely_migration where name = ${LAST}`.execute(database.db);
    const behind = await json(`${serve.address}/readyz`);
    expect(behind).toEqual({
      status: 503,
      body: { status: 'unavailable', checks: { database: 'ok', schema: 'behind', redis: 'disabled' }, pending_migrations: [LAST] },
    });
    const unhealthy = await runCli(['healthcheck'], { ...w.env, PORT: port });
    expect(unhealthy.code).toBe(1);
    expect(unhealthy.stderr).toContain('answered 503');
    // /healthz is liveness: the process is fine, so it stays 200 (no restart loop).
    expect((await fetch(`${serve.address}/healthz`)).status).toBe(200);

    await sql`insert into kysely_migration (name, timestamp) values (${LAST}, ${new Date().toISOString()})`.execute(database.db);
    await database.close();
    expect((await json(`${serve.address}/readyz`)).status).toBe(200);
  });

  it('a schema a newer release migrated further: serve starts on it (migrate-on-start or not) and --check is current', async () => {
    const w = await world();
    expect((await runCli(['migrate'], w.env)).code).toBe(0);
    const database = open(w);
    await sql`insert into kysely_migration (name, timestamp) values ('999_from_a_newer_release', ${new Date().toISOString()})`.execute(database.db);
    await database.close();

    const check = await runCli(['migrate', '--check', '--json'], w.env);
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout)).toEqual({ current: true, pending: [], applied: [...ALL, '999_from_a_newer_release'], newer: ['999_from_a_newer_release'] });
    // `migrate` itself is a no-op there (Kysely's migrator alone would call the history corrupted).
    const migrate = await runCli(['migrate', '--json'], w.env);
    expect(migrate.code).toBe(0);
    expect(JSON.parse(migrate.stdout)).toEqual({ applied: [] });

    for (const env of [w.env, { ...w.env, MIGRATE_ON_START: 'false' }]) {
      const serve = await startServe(env);
      processes.push(serve);
      expect((await json(`${serve.address}/readyz`)).status).toBe(200);
      const warning = serve.lines.map((l) => JSON.parse(l)).find((l) => l.msg?.includes('newer release'));
      expect(warning).toMatchObject({ level: 40, newer: ['999_from_a_newer_release'] });
    }
    const check2 = open(w);
    expect(await migrationRows(check2)).toEqual([...ALL, '999_from_a_newer_release'].sort());
    await check2.close();
  });
});

describe('every documented topology starts on one host', () => {
  const worlds: Array<{ cleanup(): Promise<void> }> = [];
  afterAll(async () => {
    await Promise.all(worlds.map((w) => w.cleanup()));
  });

  it('serve + worker with default settings (metrics on 9464 and 9465); a third process on a taken port names METRICS_PORT', async () => {
    const w = await createCliWorld('sqlite');
    worlds.push(w);
    // Default settings: no PORT, no METRICS_PORT (the helper's own METRICS_PORT=0 is cleared).
    const defaults = { ...w.env, METRICS_PORT: '' };
    const serve = await startServe({ ...defaults, PORT: '' });
    processes.push(serve);
    expect(serve.address).toBe('http://127.0.0.1:3000');
    expect(serve.metricsAddress).toBe('http://127.0.0.1:9464');
    const worker = await startServe(defaults, 'worker');
    processes.push(worker);
    expect(worker.metricsAddress).toBe('http://127.0.0.1:9465');
    expect((await fetch(`${worker.metricsAddress}/metrics`)).status).toBe(200);
    expect((await fetch(`${serve.metricsAddress}/metrics`)).status).toBe(200);

    // A second serve with its own PORT but the default METRICS_PORT: stops at start, saying what to change.
    const second = await runCli(['serve'], { ...defaults, PORT: '0' });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/METRICS_PORT is 9464, but 127\.0\.0\.1:9464 is already in use/);
    const secondWorker = await runCli(['worker'], defaults);
    expect(secondWorker.code).toBe(1);
    expect(secondWorker.stderr).toContain('METRICS_PORT is 9465');
    // The same for the API port.
    const samePort = await runCli(['serve'], { ...w.env, PORT: '3000', METRICS_PORT: '0' });
    expect(samePort.code).toBe(1);
    expect(samePort.stderr).toContain('PORT is 3000, but 127.0.0.1:3000 is already in use');
    // The first two are unharmed.
    expect((await fetch(`${serve.address}/readyz`)).status).toBe(200);
    expect(worker.child.exitCode).toBeNull();
  });

  it('two serve on PostgreSQL, each with its own PORT and METRICS_PORT, serve the same data', async () => {
    const w = await createCliWorld('postgres');
    worlds.push(w);
    const org = JSON.parse((await runCli(['org', 'create', '--name', 'Twin', '--owner-email', 'o@example.com', '--json'], w.env)).stdout);
    const a = await startServe({ ...w.env, PORT: '0', METRICS_PORT: '0' });
    processes.push(a);
    const b = await startServe({ ...w.env, PORT: '0', METRICS_PORT: '0' });
    processes.push(b);
    expect(a.metricsAddress).not.toBe(b.metricsAddress);
    const headers = { authorization: `Bearer ${org.api_key.key}`, 'content-type': 'application/json' };
    const created = await fetch(`${a.address}/v1/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'Shared' }) });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const read = await fetch(`${b.address}/v1/projects/${id}`, { headers });
    expect(read.status).toBe(200);
    for (const p of [a, b]) expect((await fetch(`${p.metricsAddress}/metrics`)).status).toBe(200);
  });
});

describe('workspace healthcheck', () => {
  it('exits 1 with the reason when nothing answers on HOST:PORT', async () => {
    const dataDir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'ws-hc-'));
    try {
      // Port 1 on loopback: nothing listens there.
      const result = await runCli(['healthcheck', '--json'], { DATA_DIR: dataDir, PORT: '1' });
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, url: 'http://127.0.0.1:1/readyz', error: expect.stringContaining('ECONNREFUSED') });
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('asks a wildcard HOST on loopback', async () => {
    const w = await createCliWorld('sqlite');
    try {
      const serve = await startServe({ ...w.env, HOST: '0.0.0.0' });
      processes.push(serve);
      const port = new URL(serve.address.replace('0.0.0.0', '127.0.0.1')).port;
      const result = await runCli(['healthcheck', '--json'], { ...w.env, HOST: '0.0.0.0', PORT: port });
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, url: `http://127.0.0.1:${port}/readyz`, status: 200, body: { status: 'ok' } });
    } finally {
      await w.cleanup();
    }
  });
});

describe('the settings of running it', () => {
  const base = { DATA_DIR: '/tmp' };
  it('reads MIGRATE_ON_START, SHUTDOWN_TIMEOUT and HSTS_MAX_AGE with their defaults', () => {
    expect(loadConfig(base)).toMatchObject({ migrateOnStart: true, shutdownTimeoutMs: 25_000, hstsMaxAgeSeconds: null });
    expect(loadConfig({ ...base, PUBLIC_BASE_URL: 'https://w.example.com' }).hstsMaxAgeSeconds).toBe(31_536_000);
    expect(loadConfig({ ...base, MIGRATE_ON_START: 'false', SHUTDOWN_TIMEOUT: '40s' })).toMatchObject({ migrateOnStart: false, shutdownTimeoutMs: 40_000 });
  });

  it.each([
    ['MIGRATE_ON_START', 'sometimes'],
    ['SHUTDOWN_TIMEOUT', 'soon'],
    ['SHUTDOWN_TIMEOUT', '0'],
    ['HSTS_MAX_AGE', '-1'],
    ['HSTS_MAX_AGE', '1y'],
  ])('refuses %s=%s naming the variable, and serve stops at start with it', async (variable, value) => {
    expect(() => loadConfig({ ...base, [variable]: value })).toThrow(ConfigError);
    try {
      loadConfig({ ...base, [variable]: value });
    } catch (err) {
      expect((err as ConfigError).variable).toBe(variable);
    }
    const refused = await runCli(['serve'], { DATA_DIR: '/tmp/ws-never-created', PORT: '0', [variable]: value });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(variable);
    expect(fs.existsSync('/tmp/ws-never-created')).toBe(false);
  });
});
