import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Migrator } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { migrationProvider } from '../../src/db/migrations/index.js';
import { cliJson, createCliWorld, runCli, startServe, type ServeProcess } from '../helpers/cli.js';

/**
 * `workspace backup` and `workspace restore` (CONTRACT 12, docs/deployment.md "Backups"), run as an operator
 * runs them: the built CLI against a DATA_DIR that a real `serve` process is using.
 */
const ALL = Object.keys(await migrationProvider('sqlite').getMigrations());

const processes: ServeProcess[] = [];
const worlds: Array<{ cleanup(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(
    processes.splice(0).map(async (p) => {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
      await p.exited;
    }),
  );
});
afterAll(async () => {
  await Promise.all(worlds.map((w) => w.cleanup()));
});

async function world() {
  const w = await createCliWorld('sqlite');
  worlds.push(w);
  return { ...w, live: path.join(w.dataDir, 'workspace.db') };
}

async function serve(env: Record<string, string>): Promise<ServeProcess> {
  const p = await startServe(env);
  processes.push(p);
  return p;
}

async function stop(p: ServeProcess): Promise<void> {
  p.child.kill('SIGTERM');
  expect((await p.exited).code).toBe(0);
}

/** An organisation made with the CLI; its owner's full-access key. */
async function org(env: Record<string, string>, name = 'Acme'): Promise<{ id: string; key: string }> {
  const created = await cliJson(['org', 'create', '--name', name, '--owner-email', `owner@${name.toLowerCase()}.example`], env);
  return { id: created.organization.id, key: created.api_key.key };
}

async function createProject(base: string, key: string, name: string): Promise<number> {
  const res = await fetch(`${base}/v1/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function projectNames(base: string, key: string): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await fetch(`${base}/v1/projects?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { data: Array<{ name: string }>; next_cursor: string | null };
    names.push(...page.data.map((p) => p.name));
    cursor = page.next_cursor;
  } while (cursor);
  return names;
}

function namesIn(file: string): string[] {
  const raw = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    return raw.prepare('select name from projects order by seq').pluck().all() as string[];
  } finally {
    raw.close();
  }
}

function digest(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** Files in the directory other than the live database's own. */
function strays(dir: string): string[] {
  return fs.readdirSync(dir).filter((f) => !/^workspace\.db(-wal|-shm)?$/.test(f));
}

describe('workspace backup', () => {
  it('copies the database while serve keeps taking writes: the copy passes integrity_check, holds a prefix of each writer\'s acknowledged writes, and restores into a service that serves them with the same key', async () => {
    const w = await world();
    const acme = await org(w.env);
    const server = await serve(w.env);

    // Four writers, each creating its projects one after another and noting which were acknowledged.
    const acknowledged: string[][] = [[], [], [], []];
    let writing = true;
    const writers = acknowledged.map(async (acks, writer) => {
      for (let i = 0; writing; i++) {
        const name = `w${writer}-${String(i).padStart(5, '0')}`;
        expect(await createProject(server.address, acme.key, name)).toBe(201);
        acks.push(name);
      }
    });
    const total = () => acknowledged.reduce((n, a) => n + a.length, 0);
    while (total() < 80) await new Promise((r) => setTimeout(r, 10));
    const before = acknowledged.map((a) => [...a]);

    const file = path.join(w.dataDir, '..', `${path.basename(w.dataDir)}-backup.db`);
    const backup = await runCli(['backup', file, '--json'], w.env);
    const during = total() - before.reduce((n, a) => n + a.length, 0);
    // Writes go on after the copy too: the service never paused.
    const afterBackup = total();
    while (total() < afterBackup + 20) await new Promise((r) => setTimeout(r, 10));
    writing = false;
    await Promise.all(writers);
    await stop(server);

    expect(backup.code, backup.stderr).toBe(0);
    // One line, so a scheduled backup appends one line per run to its log.
    expect(backup.stdout.trimEnd().split('\n')).toHaveLength(1);
    const report = JSON.parse(backup.stdout);
    expect(report).toMatchObject({ file, bytes: fs.statSync(file).size });
    expect(report.tables).toBeGreaterThan(20);
    expect(report.rows).toBeGreaterThan(80);
    expect(typeof report.seconds).toBe('number');
    // Writes were acknowledged while the command ran: the service never paused for it.
    expect(during).toBeGreaterThan(0);
    // No temporary file is left beside it.
    expect(fs.readdirSync(path.dirname(file)).filter((f) => f.startsWith(`${path.basename(file)}.`))).toEqual([]);

    const check = new BetterSqlite3(file, { readonly: true });
    expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
    // One self-contained file: nothing beside it is needed to read it.
    expect(check.pragma('journal_mode', { simple: true })).toBe('delete');
    check.close();

    const copied = namesIn(file);
    for (let writer = 0; writer < acknowledged.length; writer++) {
      const mine = copied.filter((n) => n.startsWith(`w${writer}-`));
      // Everything acknowledged before the backup began is in it, in order, and nothing that came after a gap.
      expect(mine.length).toBeGreaterThanOrEqual(before[writer]!.length);
      expect(mine).toEqual(acknowledged[writer]!.slice(0, mine.length));
    }

    // The restore drill: a fresh DATA_DIR, the backup restored into it, a service started on it.
    const fresh = await world();
    const restored = await cliJson(['restore', file], fresh.env);
    expect(restored).toMatchObject({ file: fresh.live, restored_from: file, replaced: null, migrated: [] });
    const again = await serve(fresh.env);
    // The API lists newest first.
    expect(await projectNames(again.address, acme.key)).toEqual([...copied].reverse());
    await stop(again);
  });

  it('refuses what it must not do, clearly: PostgreSQL (pointing at pg_dump), a missing directory, the live file itself, no database', async () => {
    const w = await world();
    await org(w.env);

    const pg = await runCli(['backup', path.join(w.dataDir, 'b.db'), '--json'], { ...w.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' });
    expect(pg.code).toBe(1);
    expect(JSON.parse(pg.stdout).error.code).toBe('not_embedded');
    expect(pg.stderr).toContain('pg_dump');

    const noDir = await runCli(['backup', path.join(w.dataDir, 'missing', 'b.db'), '--json'], w.env);
    expect(noDir.code).toBe(1);
    expect(JSON.parse(noDir.stdout).error).toMatchObject({ code: 'invalid_target', message: expect.stringContaining('does not exist') });

    const before = digest(w.live);
    const self = await runCli(['backup', w.live, '--json'], w.env);
    expect(self.code).toBe(1);
    expect(JSON.parse(self.stdout).error.code).toBe('invalid_target');
    expect(digest(w.live)).toBe(before);

    const empty = await world();
    const none = await runCli(['backup', path.join(empty.dataDir, 'b.db'), '--json'], empty.env);
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stdout).error.code).toBe('no_database');
    expect(fs.readdirSync(empty.dataDir)).toEqual([]);

    const usage = await runCli(['backup'], w.env);
    expect(usage.code).toBe(2);
  });
});

describe('workspace restore', () => {
  it('is refused while serve has the database open, and changes nothing', async () => {
    const w = await world();
    const acme = await org(w.env);
    const file = path.join(w.dataDir, 'backup.db');
    await cliJson(['backup', file], w.env);
    const server = await serve(w.env);
    expect(await createProject(server.address, acme.key, 'After the backup')).toBe(201);

    const refused = await runCli(['restore', file, '--json'], w.env);
    expect(refused.code).toBe(1);
    const error = JSON.parse(refused.stdout).error;
    expect(error.code).toBe('database_in_use');
    // It says how it knows and what to do.
    expect(error.message).toContain('exclusive lock');
    expect(error.message).toContain('Stop every `workspace serve`');
    expect(await projectNames(server.address, acme.key)).toEqual(['After the backup']);
    expect(strays(w.dataDir)).toEqual(['backup.db']);
    await stop(server);

    // Stopped, it goes ahead and keeps the database it replaced.
    const restored = await cliJson(['restore', file], w.env);
    expect(restored.replaced).toMatch(/workspace\.db\.before-restore-\d{8}T\d{6}Z$/);
    expect(namesIn(restored.replaced)).toEqual(['After the backup']);
    expect(namesIn(w.live)).toEqual([]);
    const again = await serve(w.env);
    expect(await projectNames(again.address, acme.key)).toEqual([]);
  });

  it('migrates a backup written by an older release, leaving the backup file itself unchanged', async () => {
    const old = await world();
    // A real older schema: this release's migrations up to the one before last, as the previous release left it.
    const database = openDatabase({ databaseUrl: null, dataDir: old.dataDir });
    const { error } = await new Migrator({ db: database.db, provider: migrationProvider('sqlite') }).migrateTo(ALL.at(-2)!);
    expect(error).toBeUndefined();
    await database.close();
    const file = path.join(old.dataDir, 'old-backup.db');
    fs.copyFileSync(old.live, file);
    const before = digest(file);

    const w = await world();
    const restored = await cliJson(['restore', file], w.env);
    expect(restored.migrated).toEqual([ALL.at(-1)]);
    expect(digest(file)).toBe(before);
    const check = await runCli(['migrate', '--check', '--json'], w.env);
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ current: true, applied: ALL });
  });

  it('refuses a file that is not a sound backup of this service, naming why, and replaces nothing', async () => {
    const w = await world();
    const acme = await org(w.env);
    const good = path.join(w.dataDir, 'good.db');
    await cliJson(['backup', good], w.env);
    const live = digest(w.live);

    const cases: Array<{ name: string; make(file: string): void; says: string }> = [
      { name: 'random bytes', make: (f) => fs.writeFileSync(f, Buffer.alloc(8192, 7)), says: 'is not a SQLite database' },
      { name: 'a text file', make: (f) => fs.writeFileSync(f, 'id,name\n1,Apollo\n'), says: 'is not a SQLite database' },
      {
        name: 'damaged pages',
        make: (f) => {
          const bytes = fs.readFileSync(good);
          // Every page after the first overwritten: the header is intact, the data is not.
          bytes.fill(0x5a, 4096);
          fs.writeFileSync(f, bytes);
        },
        says: 'integrity_check',
      },
      {
        name: 'another application\'s database',
        make: (f) => {
          const raw = new BetterSqlite3(f);
          raw.exec('create table notes (id integer primary key, body text)');
          raw.close();
        },
        says: 'not one of this service\'s',
      },
      {
        name: 'a newer release\'s backup',
        make: (f) => {
          fs.copyFileSync(good, f);
          const raw = new BetterSqlite3(f);
          raw.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('999_from_the_future', new Date().toISOString());
          raw.close();
        },
        says: 'newer release',
      },
    ];
    for (const c of cases) {
      const file = path.join(w.dataDir, `${c.name.replace(/\W+/g, '-')}.db`);
      c.make(file);
      const result = await runCli(['restore', file, '--json'], w.env);
      expect(result.code, c.name).toBe(1);
      const error = JSON.parse(result.stdout).error;
      expect(error.code, c.name).toBe('invalid_backup');
      expect(error.message, c.name).toContain(c.says);
      expect(digest(w.live), c.name).toBe(live);
      fs.rmSync(file);
    }
    const missing = await runCli(['restore', path.join(w.dataDir, 'nope.db'), '--json'], w.env);
    expect(JSON.parse(missing.stdout).error).toMatchObject({ code: 'invalid_backup', message: expect.stringContaining('no backup file') });
    // No staging copy and no "before-restore" file: nothing happened.
    expect(strays(w.dataDir)).toEqual(['good.db']);
    const server = await serve(w.env);
    expect((await fetch(`${server.address}/v1/projects`, { headers: { authorization: `Bearer ${acme.key}` } })).status).toBe(200);

    const pg = await runCli(['restore', good, '--json'], { ...w.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' });
    expect(JSON.parse(pg.stdout).error.code).toBe('not_embedded');
  });
});
