import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/access/actor.js';
import { startServe, type ServeProcess } from '../helpers/cli.js';
import { createTestEnv, testDialects, type TestDialect, type TestEnv } from '../helpers/test-env.js';

/**
 * The run engine's durability, with real `./bin/workspace worker` processes (the built dist/, compiled by
 * the global setup) on one database. The test process holds a container that creates the organisation,
 * workflows and runs through the services and plays the people who finish tasks; it runs no engine itself,
 * so every step transition below was made by a worker process.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 20_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Every worker started here, so a failing test still leaves no process behind. */
const workers: ServeProcess[] = [];
/** Every test environment (and its database) opened here. */
const envs: TestEnv[] = [];

async function killWorker(worker: ServeProcess): Promise<void> {
  if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
  await worker.exited;
}

afterEach(async () => {
  await Promise.all(workers.splice(0).map(killWorker));
  await Promise.all(envs.splice(0).map((env) => env.close()));
});
afterAll(async () => {
  await Promise.all(workers.splice(0).map(killWorker));
  await Promise.all(envs.splice(0).map((env) => env.close()));
});

async function openEnv(dialect: TestDialect): Promise<TestEnv> {
  const env = await createTestEnv(dialect);
  envs.push(env);
  return env;
}

/** `./bin/workspace worker` on the test environment's database. */
async function startWorker(env: TestEnv, extra: Record<string, string> = {}): Promise<ServeProcess> {
  const worker = await startServe(
    {
      DATA_DIR: env.dataDir,
      ...(env.config.databaseUrl ? { DATABASE_URL: env.config.databaseUrl } : {}),
      LOG_LEVEL: 'info',
      ...extra,
    },
    'worker',
  );
  workers.push(worker);
  return worker;
}

/** An organisation with a member, a project, and a workflow of the given steps. */
async function setUp(env: TestEnv, steps: (member: string) => { type: string; title?: string; assignee_id?: string; duration?: string }[]) {
  const org = await env.createOrg();
  const member = await org.member('member');
  const actor = cliActor(org.id);
  const s = env.container.services;
  const project = await s.projects.create(actor, { name: 'Engine' });
  const workflow = await s.workflows.create(actor, project.id, { name: 'Durable', steps: steps(member.userId) });
  return { org, actor, workflow };
}

const waitTaskWait = (member: string) => [
  { type: 'wait', duration: '1s' },
  { type: 'task', title: 'Check it', assignee_id: member },
  { type: 'wait', duration: '1s' },
];

/**
 * Plays the assignees: finishes every open task of the organisation as it appears (a few at once), until
 * `stop()`. Resolves each task once; returns how many it finished.
 */
function completeTasksAsTheyAppear(env: TestEnv, orgId: string) {
  const { db } = env.container.database;
  const actor = cliActor(orgId);
  const resolved = new Set<string>();
  let stopped = false;
  let failure: unknown = null;
  const loop = (async () => {
    while (!stopped) {
      const open = await db.selectFrom('tasks').select('id').where('org_id', '=', orgId).where('status', '=', 'open').execute();
      const fresh = open.map((t) => t.id).filter((id) => !resolved.has(id));
      for (let i = 0; i < fresh.length; i += 8) {
        await Promise.all(
          fresh.slice(i, i + 8).map(async (id) => {
            resolved.add(id);
            await env.container.services.tasks.resolve(actor, id, { action: 'done' });
          }),
        );
      }
      if (fresh.length === 0) await sleep(25);
    }
  })().catch((err: unknown) => {
    failure = err;
  });
  return {
    async stop(): Promise<number> {
      stopped = true;
      await loop;
      if (failure) throw failure;
      return resolved.size;
    },
  };
}

/** The durability invariants for a set of runs that all finished: each step once, each event once. */
async function expectEachRunDoneOnce(env: TestEnv, orgId: string, runIds: string[], taskSteps: number[]) {
  const { db } = env.container.database;
  const runs = await db.selectFrom('workflow_runs').select(['id', 'status']).where('org_id', '=', orgId).execute();
  expect(runs).toHaveLength(runIds.length);
  expect(runs.filter((r) => r.status !== 'completed')).toEqual([]);

  const steps = await db.selectFrom('workflow_run_steps').select(['run_id', 'status', 'outcome']).where('org_id', '=', orgId).execute();
  expect(steps.filter((s) => s.status !== 'completed')).toEqual([]);

  // No step done twice: one task per (run, task step), and nothing else.
  const tasks = await db.selectFrom('tasks').select(['run_id', 'run_step', 'status']).where('org_id', '=', orgId).execute();
  const perStep = new Map<string, number>();
  for (const t of tasks) perStep.set(`${t.run_id}/${t.run_step}`, (perStep.get(`${t.run_id}/${t.run_step}`) ?? 0) + 1);
  const expected = runIds.flatMap((id) => taskSteps.map((step) => `${id}/${step}`));
  expect([...perStep.keys()].sort()).toEqual(expected.sort());
  expect([...perStep.values()].filter((n) => n !== 1)).toEqual([]);
  expect(tasks.filter((t) => t.status !== 'done')).toEqual([]);

  // Each run's events exactly once: one task.assigned per task step, one workflow.completed, no failure.
  const events = await db.selectFrom('events').select(['type', 'body']).where('org_id', '=', orgId).where('type', 'like', '%.%').execute();
  const count = (type: string) => {
    const byRun = new Map<string, number>();
    for (const e of events.filter((x) => x.type === type)) {
      const runId = (JSON.parse(e.body) as { data: { run_id: string } }).data.run_id;
      byRun.set(runId, (byRun.get(runId) ?? 0) + 1);
    }
    return byRun;
  };
  const completed = count('workflow.completed');
  const assigned = count('task.assigned');
  expect([...completed.keys()].sort()).toEqual([...runIds].sort());
  expect([...completed.values()].every((n) => n === 1)).toBe(true);
  expect([...assigned.keys()].sort()).toEqual(taskSteps.length > 0 ? [...runIds].sort() : []);
  expect([...assigned.values()].every((n) => n === taskSteps.length)).toBe(true);
  expect(events.filter((e) => e.type === 'workflow.failed')).toEqual([]);

  // The audit trail agrees: each run completed once, each task created once.
  const audit = await db.selectFrom('audit_log').select(['action']).where('org_id', '=', orgId).execute();
  expect(audit.filter((a) => a.action === 'workflow_run.completed')).toHaveLength(runIds.length);
  expect(audit.filter((a) => a.action === 'task.created')).toHaveLength(runIds.length * taskSteps.length);
}

describe('run engine on PostgreSQL with worker processes', () => {
  it('two workers share 200 runs of Wait 1s, Task, Wait 1s: every run completes, each step and event once', async () => {
    const started = Date.now();
    const env = await openEnv('postgres');
    const { db } = env.container.database;
    const { org, actor, workflow } = await setUp(env, waitTaskWait);
    await Promise.all([startWorker(env), startWorker(env)]);

    // Which workers hold leases, sampled while the runs move: each process leases under its own id.
    const owners = new Map<string, number>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const rows = await db.selectFrom('workflow_runs').select('lease_owner').where('org_id', '=', org.id).where('lease_owner', 'is not', null).execute();
        for (const r of rows) owners.set(r.lease_owner!, (owners.get(r.lease_owner!) ?? 0) + 1);
        await sleep(5);
      }
    })();

    const completer = completeTasksAsTheyAppear(env, org.id);
    const runIds: string[] = [];
    for (let i = 0; i < 200; i++) runIds.push((await env.container.services.workflows.startRun(actor, workflow.id)).id);
    const allStarted = Date.now();
    await until(
      'every run to finish',
      async () => (await env.container.store.repos.runs.countActive(org.id)) === 0,
      60_000,
    );
    const finished = Date.now();
    sampling = false;
    await sampler;
    expect(await completer.stop()).toBe(200);

    await expectEachRunDoneOnce(env, org.id, runIds, [1]);
    // Both processes did part of the work, and both are still alive.
    expect(owners.size).toBe(2);
    for (const w of workers) expect(w.child.exitCode).toBeNull();
    console.info(
      `[postgres] 2 workers, 200 runs: started in ${allStarted - started} ms (setup included), all finished ${finished - allStarted} ms later; ` +
        `lease samples per worker ${[...owners.values()].join('/')}`,
    );
  }, 120_000);

  it('a worker killed with SIGKILL while holding leases: a second worker finishes every run after the lease expires', async () => {
    const LEASE_MS = 3000;
    const RUNS = 300;
    const env = await openEnv('postgres');
    const { db } = env.container.database;
    const { org, actor, workflow } = await setUp(env, waitTaskWait);
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) runIds.push((await env.container.services.workflows.startRun(actor, workflow.id)).id);

    // Worker A finds 300 due runs; it is killed as soon as it holds leases on some of them.
    const first = await startWorker(env, { WORKFLOW_LEASE: `${LEASE_MS}ms`, PGAPPNAME: 'killed-worker' });
    await until(
      'worker A to lease runs',
      async () => {
        const row = await db.selectFrom('workflow_runs').select('id').where('org_id', '=', org.id).where('lease_owner', 'is not', null).executeTakeFirst();
        return row !== undefined;
      },
      30_000,
      1,
    );
    const backendsOfA = async () => {
      const { rows } = await env.container.database.pgPool!.query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'killed-worker'",
      );
      return rows[0]!.n;
    };
    expect(await backendsOfA()).toBeGreaterThan(0);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const killedAt = Date.now();
    // A COMMIT that A sent just before it died still applies: its backends outlive the process by a moment.
    // Until they are gone, a snapshot could miss a release that B may then act on before the old expiry.
    await until("worker A's connections to close", async () => (await backendsOfA()) === 0, 30_000);

    // What A left leased, as it stood when it died (an advance in flight was rolled back with its connection).
    const leased = await db.selectFrom('workflow_runs').selectAll().where('org_id', '=', org.id).where('lease_owner', 'is not', null).execute();
    expect(leased.length).toBeGreaterThan(0);
    expect(new Set(leased.map((r) => r.lease_owner)).size).toBe(1);
    const leasedIds = leased.map((r) => r.id);
    const stepsBefore = await db.selectFrom('workflow_run_steps').selectAll().where('org_id', '=', org.id).where('run_id', 'in', leasedIds).execute();
    const expiresAt = new Map(leased.map((r) => [r.id, Number(r.lease_expires_at)]));

    const second = await startWorker(env, { WORKFLOW_LEASE: `${LEASE_MS}ms` });
    const completer = completeTasksAsTheyAppear(env, org.id);
    await until(
      'every run to finish',
      async () => (await env.container.store.repos.runs.countActive(org.id)) === 0,
      60_000,
    );
    const finished = Date.now();
    expect(await completer.stop()).toBe(RUNS);
    expect(second.child.exitCode).toBeNull();

    await expectEachRunDoneOnce(env, org.id, runIds, [1]);
    // Nothing A held was touched before its lease ran out: every change to those runs' steps came later.
    const stepsAfter = await db.selectFrom('workflow_run_steps').selectAll().where('org_id', '=', org.id).where('run_id', 'in', leasedIds).execute();
    const before = new Map(stepsBefore.map((s) => [`${s.run_id}/${s.position}`, s]));
    const early: string[] = [];
    for (const s of stepsAfter) {
      const old = before.get(`${s.run_id}/${s.position}`)!;
      const expiry = expiresAt.get(s.run_id)!;
      for (const field of ['started_at', 'finished_at'] as const) {
        if (s[field] !== old[field] && Number(s[field]) < expiry) early.push(`${s.run_id} step ${s.position} ${field} ${Number(s[field]) - expiry} ms before expiry`);
      }
    }
    expect(early).toEqual([]);
    console.info(
      `[postgres] kill -9: ${leased.length} of ${RUNS} runs leased by the killed worker (lease ${LEASE_MS} ms); ` +
        `all finished ${finished - killedAt} ms after the kill`,
    );
  }, 120_000);
  it('a surviving worker sleeps until a dead worker\'s lease ends instead of polling the leased run', async () => {
    const env = await openEnv('postgres');
    const { db } = env.container.database;
    const { org, actor, workflow } = await setUp(env, () => [{ type: 'wait', duration: '1s' }]);
    const run = await env.container.services.workflows.startRun(actor, workflow.id);
    // What a worker killed right after its claim leaves behind: a due run under a live lease of an owner that is gone.
    const expiry = Date.now() + 6000;
    await db.updateTable('workflow_runs').set({ lease_owner: 'run_killed', lease_expires_at: expiry }).where('id', '=', run.id).execute();
    await startWorker(env);
    const transactions = async () => {
      const { rows } = await env.container.database.pgPool!.query<{ n: string }>(
        'select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()',
      );
      return Number(rows[0]!.n);
    };
    await sleep(1000);
    const before = await transactions();
    await sleep(3000);
    const during = (await transactions()) - before;
    // Polling the leased run every 5 ms (the bug this guards) costs hundreds of transactions in 3 s; an idle
    // worker makes a few dozen (its 1 s polls and this probe).
    expect(during).toBeLessThan(150);
    const picked = await until(
      'the run to be taken over once the lease ends',
      async () => {
        const step = await db.selectFrom('workflow_run_steps').selectAll().where('run_id', '=', run.id).where('position', '=', 0).executeTakeFirst();
        return step?.status !== 'pending' ? step : null;
      },
      10_000,
    );
    expect(Number(picked!.started_at)).toBeGreaterThanOrEqual(expiry);
    await until('the run to complete', async () => (await env.container.services.runs.get(actor, run.id)).status === 'completed');
    await expectEachRunDoneOnce(env, org.id, [run.id], []);
    console.info(`[postgres] a dead worker's live lease: ${during} transactions in 3 s while waiting; taken over ${Number(picked!.started_at) - expiry} ms after expiry`);
  }, 90_000);
});

describe.each(testDialects())('run engine: a Wait across a worker restart (%s)', (dialect) => {
  it('fires on time after a SIGKILL and a restart; the next step starts once', async () => {
    const WAIT_MS = 3000;
    const env = await openEnv(dialect);
    const { db } = env.container.database;
    const { org, actor, workflow } = await setUp(env, (member) => [
      { type: 'wait', duration: '3s' },
      { type: 'task', title: 'After the wait', assignee_id: member },
    ]);
    const first = await startWorker(env);
    const run = await env.container.services.workflows.startRun(actor, workflow.id);
    const waiting = await until('the run to wait on its timer', async () => {
      const step = await db.selectFrom('workflow_run_steps').selectAll().where('run_id', '=', run.id).where('position', '=', 0).executeTakeFirst();
      return step?.status === 'waiting' ? step : null;
    });
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const startedAt = Number(waiting.started_at);

    await startWorker(env);
    const backAt = Date.now();
    const elapsed = await until(
      'the Wait to elapse',
      async () => {
        const step = await db.selectFrom('workflow_run_steps').selectAll().where('run_id', '=', run.id).where('position', '=', 0).executeTakeFirst();
        return step?.status === 'completed' ? step : null;
      },
      30_000,
    );
    const due = startedAt + WAIT_MS;
    const late = Number(elapsed.finished_at) - due;
    expect(elapsed.outcome).toBe('elapsed');
    expect(late).toBeGreaterThanOrEqual(0);
    // Within 2 s of the due time, or, on a machine so loaded that the new worker took longer than the wait
    // to boot, within 2 s of it being ready: the timer was read from the database, not lost with the process.
    expect(Number(elapsed.finished_at) - Math.max(due, backAt)).toBeLessThan(2000);

    // Step 2's task exists once, assigned once, and stays so.
    await until('the task of step 2', async () => (await db.selectFrom('tasks').select('id').where('run_id', '=', run.id).executeTakeFirst()) ?? null);
    await sleep(1500);
    const tasks = await db.selectFrom('tasks').selectAll().where('run_id', '=', run.id).execute();
    expect(tasks.map((t) => [t.run_step, t.status])).toEqual([[1, 'open']]);

    // Finishing it completes the run, once.
    await env.container.services.tasks.resolve(actor, tasks[0]!.id, { action: 'done' });
    await until('the run to complete', async () => (await env.container.services.runs.get(actor, run.id)).status === 'completed');
    await sleep(300);
    await expectEachRunDoneOnce(env, org.id, [run.id], [1]);
    console.info(`[${dialect}] Wait 3s across kill -9: worker back ${backAt - startedAt} ms into the wait; step 1 finished ${late} ms after due`);
  }, 90_000);
});
