import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery } from 'kysely';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { GroupCommitFailed, NestedTransactionError, type GroupCommit } from '../../src/db/group-commit.js';
import type { Store } from '../../src/db/store.js';
import { cliActor } from '../../src/services/access/actor.js';
import { cliJson, createCliWorld, startServe, type ServeProcess } from '../helpers/cli.js';
import { createTestEnv, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/**
 * SQLite group commit (src/db/group-commit.ts): concurrent units of work share one COMMIT, each in its
 * own savepoint; a unit that fails fails alone and at once; a caller is answered only after the commit
 * that holds its writes, so every write answered with success survives kill -9. PostgreSQL is unchanged
 * (its transactions are covered by every other suite).
 */

const settle = (promises: Promise<unknown>[]) => Promise.allSettled(promises);

describe('SQLite group commit: store level', () => {
  let env: TestEnv;
  let org: TestOrg;
  let store: Store;
  let group: GroupCommit;

  beforeAll(async () => {
    env = await createTestEnv('sqlite');
    org = await env.createOrg('Grouped');
    store = env.container.store;
    group = env.container.database.groupCommit!;
  });
  afterAll(async () => {
    await env?.close();
  });

  const projectIds = async () => (await env.container.database.db.selectFrom('projects').select('id').where('org_id', '=', org.id).execute()).map((r) => r.id);

  it('50 concurrent creates share commits, and every one is there with its event and audit row', async () => {
    const before = { ...group.stats };
    const created = await Promise.all(Array.from({ length: 50 }, (_, i) => env.container.services.projects.create(cliActor(org.id), { name: `Concurrent ${i}` })));
    const commits = group.stats.commits - before.commits;
    expect(group.stats.committedUnits - before.committedUnits).toBe(50);
    expect(commits).toBeGreaterThanOrEqual(1);
    expect(commits).toBeLessThan(50);
    expect(group.stats.largestBatch).toBeGreaterThan(1);

    const ids = created.map((p) => p.id);
    expect(new Set(ids).size).toBe(50);
    expect(await projectIds()).toEqual(expect.arrayContaining(ids));
    const { db } = env.container.database;
    const events = await db.selectFrom('events').select('body').where('org_id', '=', org.id).where('type', '=', 'project.created').execute();
    const audited = await db.selectFrom('audit_log').select('target_id').where('org_id', '=', org.id).where('action', '=', 'project.created').execute();
    for (const id of ids) {
      expect(events.some((e) => e.body.includes(id))).toBe(true);
      expect(audited.some((a) => a.target_id === id)).toBe(true);
    }
  });

  it('a unit that throws, or breaks a constraint, fails alone and at once; the rest of its batch commits', async () => {
    const existing = await env.container.services.projects.create(cliActor(org.id), { name: 'Existing' });
    const now = Date.now();
    const row = (id: string, name: string) => ({ id, org_id: org.id, name, description: null, status: 'active' as const, created_at: now, updated_at: now });
    /** The number of commits so far, as seen from inside each unit: units of one batch see the same one. */
    const batchOf = new Map<string, number>();
    const answeredAfter = new Map<string, number>();
    const units = Array.from({ length: 21 }, (_, i) => {
      const id = `proj_gc_${i}_${now}`;
      const p = store.transaction(async (repos) => {
        batchOf.set(id, group.stats.commits);
        await repos.projects.insert(row(id, `Unit ${i}`));
        // Its own write is visible to it (and to later units of the batch), not yet to the read connection.
        expect(await repos.projects.findById(org.id, id)).toMatchObject({ id });
        expect(await store.repos.projects.findById(org.id, id)).toBeUndefined();
        if (i === 7) throw new Error('unit 7 changed its mind');
        if (i === 14) await repos.projects.insert(row(existing.id, 'Duplicate id')); // primary key violation
        return id;
      });
      return p.then(
        (value) => {
          answeredAfter.set(id, group.stats.commits);
          return value;
        },
        (err: unknown) => {
          answeredAfter.set(id, group.stats.commits);
          throw err;
        },
      );
    });
    const results = await settle(units);

    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [[i, r.reason as Error & { code?: string }] as const] : []));
    expect(failed.map(([i]) => i)).toEqual([7, 14]);
    expect(failed[0]![1].message).toBe('unit 7 changed its mind');
    expect(failed[1]![1].code).toMatch(/^SQLITE_CONSTRAINT/);

    const present = new Set(await projectIds());
    const ids = Array.from({ length: 21 }, (_, i) => `proj_gc_${i}_${now}`);
    for (const [i, id] of ids.entries()) {
      const failedUnit = i === 7 || i === 14;
      expect(present.has(id), id).toBe(!failedUnit);
      if (failedUnit) {
        // Told before the commit of its batch: it had nothing to wait for.
        expect(answeredAfter.get(id)).toBe(batchOf.get(id));
        // It shared its batch with other units (which all committed and were answered, checked below).
        expect(ids.filter((other) => other !== id && batchOf.get(other) === batchOf.get(id)).length).toBeGreaterThan(0);
      } else {
        // Answered only after the commit holding its writes.
        expect(answeredAfter.get(id)!).toBeGreaterThan(batchOf.get(id)!);
      }
    }
    // The existing project is untouched by the failed duplicate.
    expect((await store.repos.projects.findById(org.id, existing.id))?.name).toBe('Existing');
  });

  it('the first unit of a batch failing (it runs without a savepoint) takes nothing else with it', async () => {
    const now = Date.now();
    const row = (id: string) => ({ id, org_id: org.id, name: id, description: null, status: 'active' as const, created_at: now, updated_at: now });
    // Queued in one go while no batch is open: the first starts a batch, the others follow it.
    const results = await settle(
      Array.from({ length: 5 }, (_, i) =>
        store.transaction(async (repos) => {
          await repos.projects.insert(row(`proj_first_${i}_${now}`));
          if (i === 0) throw new Error('the first unit fails');
          return i;
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(((results[0] as PromiseRejectedResult).reason as Error).message).toBe('the first unit fails');
    const present = await projectIds();
    expect(present).not.toContain(`proj_first_0_${now}`);
    for (let i = 1; i < 5; i++) expect(present).toContain(`proj_first_${i}_${now}`);
  });

  it('a success is readable on the read-only connection by the time its caller hears of it', async () => {
    const seen = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const project = await env.container.services.projects.create(cliActor(org.id), { name: `Visible ${i}` });
        return (await store.repos.projects.findById(org.id, project.id))?.id === project.id;
      }),
    );
    expect(seen.every(Boolean)).toBe(true);
  });

  it('refuses store.transaction from inside a unit instead of waiting for its own batch forever', async () => {
    const outer = store.transaction(async (repos) => {
      await repos.projects.findById(org.id, 'proj_none');
      return store.transaction(async () => 'inner');
    });
    await expect(outer).rejects.toBeInstanceOf(NestedTransactionError);
    const synchronous = store.transaction(() => store.transaction(async () => 'inner'));
    await expect(synchronous).rejects.toBeInstanceOf(NestedTransactionError);
    // Concurrent units are not mistaken for nested ones, even while a unit waits on a timer.
    const slow = store.transaction(async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return 'slow';
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await expect(Promise.all([slow, store.transaction(async () => 'joined')])).resolves.toEqual(['slow', 'joined']);
  });

  it('a unit that ends the transaction takes its batch down: the units before it fail, the later ones commit next', async () => {
    const now = Date.now();
    const insert = (id: string) => async (trx: Parameters<Parameters<GroupCommit['run']>[0]>[0]) => {
      await trx.insertInto('projects').values({ id, org_id: org.id, name: id, description: null, status: 'active', created_at: now, updated_at: now }).execute();
    };
    const before = { ...group.stats };
    const first = group.run(insert(`proj_lost_a_${now}`));
    const breaker = group.run(async (trx) => {
      await trx.executeQuery(CompiledQuery.raw('rollback'));
    });
    const after = group.run(insert(`proj_lost_b_${now}`));
    const [a, b, c] = (await settle([first, breaker, after])) as [PromiseSettledResult<void>, PromiseSettledResult<void>, PromiseSettledResult<void>];
    expect(a.status).toBe('rejected');
    expect((a as PromiseRejectedResult).reason).toBeInstanceOf(GroupCommitFailed);
    expect(b.status).toBe('rejected');
    expect(c.status).toBe('fulfilled');
    expect(group.stats.failedBatches - before.failedBatches).toBe(1);
    const present = await projectIds();
    expect(present).not.toContain(`proj_lost_a_${now}`);
    expect(present).toContain(`proj_lost_b_${now}`);
  });

  it('a failed COMMIT fails every unit of its batch, and none of their writes is there', async () => {
    const now = Date.now();
    const good = (id: string) =>
      group.run((trx) => trx.insertInto('projects').values({ id, org_id: org.id, name: id, description: null, status: 'active', created_at: now, updated_at: now }).execute());
    const units = [
      good(`proj_commit_a_${now}`),
      // A deferred foreign key violation is checked at COMMIT, which then fails.
      group.run(async (trx) => {
        await trx.executeQuery(CompiledQuery.raw('pragma defer_foreign_keys = on'));
        await trx.insertInto('projects').values({ id: `proj_orphan_${now}`, org_id: 'org_missing', name: 'Orphan', description: null, status: 'active', created_at: now, updated_at: now }).execute();
      }),
      good(`proj_commit_b_${now}`),
    ];
    const results = await settle(units);
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(GroupCommitFailed);
      expect(((r as PromiseRejectedResult).reason as GroupCommitFailed).code).toBe('SQLITE_CONSTRAINT_FOREIGNKEY');
    }
    const present = await projectIds();
    expect(present.filter((id) => id.endsWith(`_${now}`))).toEqual([]);
    // The connection is usable again at once.
    const next = await env.container.services.projects.create(cliActor(org.id), { name: 'After the failed commit' });
    expect(await projectIds()).toContain(next.id);
  });
});

describe('SQLite group commit: shutdown and other processes', () => {
  const dirs: string[] = [];
  const envs: TestEnv[] = [];
  afterEach(async () => {
    await Promise.all(envs.splice(0).map((env) => env.close()));
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('close waits for the queued units and the open batch; later units are refused', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-gc-close-'));
    dirs.push(dataDir);
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    const container = await createContainer(config, { migrate: true, logger: pino({ level: 'silent' }) });
    const created = await container.services.admin.createOrganization({ name: 'Closing', ownerEmail: 'close@example.com' });
    const orgId = created.organization.id;
    const now = Date.now();
    // Queued before the close (a service's create reaches its transaction after a read, too late to be sure).
    const pending = Array.from({ length: 30 }, (_, i) =>
      container.store.transaction(async (repos) => {
        const row = await repos.projects.insert({ id: `proj_close_${i}_${now}`, org_id: orgId, name: `Before close ${i}`, description: null, status: 'active', created_at: now, updated_at: now });
        return row.id;
      }),
    );
    await container.close();
    const ids = await Promise.all(pending);
    expect(ids).toHaveLength(30);
    await expect(container.store.transaction(async () => 1)).rejects.toThrow(/closing/);

    const db = new BetterSqlite3(path.join(dataDir, 'workspace.db'), { readonly: true });
    try {
      const stored = (db.prepare('select id from projects where org_id = ?').all(orgId) as { id: string }[]).map((r) => r.id);
      expect(stored.sort()).toEqual([...ids].sort());
    } finally {
      db.close();
    }
  });

  it('units wait for another process holding the write lock, then commit (no SQLITE_BUSY, no 500)', async () => {
    const env = await createTestEnv('sqlite');
    envs.push(env);
    const org = await env.createOrg('Busy');
    const file = path.join(env.dataDir, 'workspace.db');
    const HOLD_MS = 800;
    // Another process takes SQLite's write lock (as the CLI does for a change) and holds it a while.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const D = require(${JSON.stringify(require_('better-sqlite3'))});
         const db = new D(${JSON.stringify(file)});
         db.exec('begin immediate');
         process.stdout.write('locked\\n');
         setTimeout(() => { db.exec('commit'); db.close(); process.stdout.write('released\\n'); }, ${HOLD_MS});`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const output: string[] = [];
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        output.push(chunk);
        if (output.join('').includes('locked')) resolve();
      });
      holder.on('exit', (code) => reject(new Error(`the lock holder exited (${code}) before locking`)));
    });
    const started = Date.now();
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: `While busy ${i}` } })));
    const waited = Date.now() - started;
    await new Promise((resolve) => (holder.exitCode === null ? holder.on('exit', resolve) : resolve(null)));
    expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 201));
    // They really met the lock: they could not commit before the other process let go.
    expect(waited).toBeGreaterThanOrEqual(HOLD_MS / 2);
    const stored = await env.container.database.db.selectFrom('projects').select('id').where('org_id', '=', org.id).execute();
    expect(stored.map((r) => r.id).sort()).toEqual(responses.map((r) => r.body.id as string).sort());
  });
});

/** The absolute path of a dependency, for a child process started elsewhere. */
function require_(name: string): string {
  return createRequire(import.meta.url).resolve(name);
}

/**
 * `./bin/workspace serve` (the built dist/) killed with SIGKILL while a few hundred creates are in flight:
 * every create answered 201 is in the database after the restart, with its outbox event.
 */
describe('SQLite group commit: kill -9 of serve', () => {
  const REQUESTS = 300;
  let world: Awaited<ReturnType<typeof createCliWorld>>;
  let serve: ServeProcess | null = null;

  beforeAll(async () => {
    world = await createCliWorld('sqlite');
  });
  afterAll(async () => {
    if (serve && serve.child.exitCode === null && serve.child.signalCode === null) {
      serve.child.kill('SIGKILL');
      await serve.exited;
    }
    await world?.cleanup();
  });

  it('every acknowledged create survives, with its event', async () => {
    const env = { ...world.env, RATE_LIMIT_PER_MINUTE: '1000000', LOG_LEVEL: 'info' };
    const created = await cliJson(['org', 'create', '--name', 'Crash', '--owner-email', 'crash@example.com'], env);
    const key: string = created.api_key.key;
    const orgId: string = created.organization.id;
    serve = await startServe(env);
    const address = serve.address;

    const acknowledged: string[] = [];
    let failed = 0;
    let sent = 0;
    let killed = false;
    const kill = () => {
      if (killed) return;
      killed = true;
      serve!.child.kill('SIGKILL');
    };
    // A steady stream from CONCURRENCY clients rather than one burst: a burst could be committed whole (one or
    // two group commits) before the first answer reaches this process, and then the kill would find nothing
    // in flight. Streaming, requests are always in flight when the kill lands.
    // The clients go on until the process is gone, so requests are cut off by the kill or refused after it.
    const CONCURRENCY = 32;
    let gone = false;
    void serve.exited.then(() => (gone = true));
    const clients = Array.from({ length: CONCURRENCY }, async () => {
      while (!gone && sent < REQUESTS) {
        const i = sent++;
        try {
          const res = await fetch(`${address}/v1/projects`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: `Crash ${i}` }),
          });
          const body = (await res.json()) as { id?: string };
          if (res.status === 201 && body.id) acknowledged.push(body.id);
          else failed++;
        } catch {
          failed++; // cut off by the kill: no answer, no promise made
        }
        // Kill while requests are still being sent and answered.
        if (acknowledged.length >= REQUESTS / 5) kill();
      }
    });
    await Promise.all(clients);
    kill();
    const exit = await serve.exited;
    expect(exit.signal).toBe('SIGKILL');
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(acknowledged.length).toBeLessThan(sent); // the kill found requests in flight
    expect(failed).toBeGreaterThan(0);

    // Restart (recovery of the WAL), then read the database through the service and directly.
    serve = await startServe(env);
    for (const id of acknowledged.slice(0, 20)) {
      const res = await fetch(`${serve.address}/v1/projects/${id}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status, id).toBe(200);
    }
    serve.child.kill('SIGTERM');
    await serve.exited;

    const db = new BetterSqlite3(path.join(world.dataDir, 'workspace.db'), { readonly: true });
    try {
      const stored = new Set((db.prepare('select id from projects where org_id = ?').all(orgId) as { id: string }[]).map((r) => r.id));
      const eventBodies = (db.prepare("select body from events where org_id = ? and type = 'project.created'").all(orgId) as { body: string }[]).map(
        (r) => (JSON.parse(r.body) as { data: { project_id: string } }).data.project_id,
      );
      const events = new Set(eventBodies);
      const missing = acknowledged.filter((id) => !stored.has(id));
      const withoutEvent = acknowledged.filter((id) => !events.has(id));
      console.info(`[sqlite] group commit kill -9: ${sent} sent, ${acknowledged.length} acknowledged, ${stored.size} stored`);
      expect(missing).toEqual([]);
      expect(withoutEvent).toEqual([]);
      // Nothing is stored without its event (a create is one unit of work).
      expect(events.size).toBe(stored.size);
    } finally {
      db.close();
    }
  }, 120_000);
});
