import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedStatementName } from '../../src/db/pg-prepared.js';
import type { Repositories } from '../../src/db/repositories/index.js';
import type { AuditLogRow, DeliveryRow } from '../../src/db/schema.js';
import type { Clock } from '../../src/lib/time.js';
import { recordEvent } from '../../src/services/events/outbox.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/**
 * The PostgreSQL hot path (issue 11): hot queries as named prepared statements, a create in three round
 * trips (begin + insert, event with fan-out, audit + commit), the outbox rows the same on both dialects,
 * the first page of a list on its index without statistics.
 */

// Every statement a pg client sends while `recording` is on. Installed before any client connects, so
// the per-client wrapper of pg-prepared.ts calls through it.
interface Sent {
  text: string;
  name: string | undefined;
  /** A PipelinedQuery: statements held back travel in front of this one. */
  pipelined: boolean;
}
const sent: Sent[] = [];
let recording = false;
const prototypeQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  const [query] = args;
  if (recording) {
    if (typeof query === 'string') sent.push({ text: query, name: undefined, pipelined: false });
    else {
      const q = query as { text?: string; name?: string; constructor?: { name?: string } };
      sent.push({ text: q.text ?? '', name: q.name, pipelined: q.constructor?.name === 'PipelinedQuery' });
    }
  }
  return (prototypeQuery as unknown as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;
afterAll(() => {
  pg.Client.prototype.query = prototypeQuery;
});

/** The statements sent while `work` runs, LISTEN/NOTIFY traffic left out. */
async function record(work: () => Promise<unknown>): Promise<Sent[]> {
  sent.length = 0;
  recording = true;
  try {
    await work();
  } finally {
    recording = false;
  }
  return sent.filter((s) => !/^\s*(listen|unlisten|select pg_notify)/i.test(s.text));
}

const START = Date.UTC(2026, 10, 23, 12, 0, 0, 0);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
const short = (text: string) => text.replace(/\s+/g, ' ').slice(0, 22);

async function subscribe(env: TestEnv, org: TestOrg, events: string[]): Promise<string> {
  const res = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://hooks.example.com/in', events } });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function createProject(env: TestEnv, org: TestOrg, name: string): Promise<string> {
  const res = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name } });
  expect(res.status).toBe(201);
  return res.body.id;
}

const hasPostgres = testDialects().includes('postgres');

describe.skipIf(!hasPostgres)('PostgreSQL: prepared statements and round trips (one pooled connection)', () => {
  let env: TestEnv;
  let org: TestOrg;
  let pool: pg.Pool;

  beforeAll(async () => {
    // One connection: every statement below runs on it, so pg_prepared_statements shows them all.
    env = await createTestEnv('postgres', { env: { DATABASE_POOL_SIZE: '1' } });
    pool = env.container.database.pgPool!;
    org = await env.createOrg();
    // Warm: every statement of a create and a read prepared once on the connection.
    const id = await createProject(env, org, 'Warm');
    await createProject(env, org, 'Warm again');
    expect((await env.request('GET', `/v1/projects/${id}`, { key: org.ownerKey })).status).toBe(200);
    expect((await env.request('GET', '/v1/projects', { key: org.ownerKey })).status).toBe(200);
  });
  afterAll(async () => env?.close());

  /** Each prepared statement of the connection: how often it ran since it was prepared. */
  async function preparedRuns(): Promise<Map<string, { name: string; runs: number }>> {
    const { rows } = await pool.query<{ name: string; statement: string; runs: number }>(
      'select name, statement, generic_plans + custom_plans as runs from pg_prepared_statements where not from_sql',
    );
    return new Map(rows.map((r) => [r.statement, { name: r.name, runs: r.runs }]));
  }

  it('hot reads run as named statements, parsed once per connection and then only executed', async () => {
    const id = await createProject(env, org, 'Read me');
    const texts = await record(async () => {
      expect((await env.request('GET', `/v1/projects/${id}`, { key: org.ownerKey })).status).toBe(200);
    });
    const byId = texts.find((s) => s.text.includes('from "projects" where "org_id" = $2 and "id" = $3'));
    expect(byId?.name).toMatch(/^ws_[0-9a-f]{16}$/);
    expect(byId?.name).toBe(preparedStatementName(byId!.text));

    const before = (await preparedRuns()).get(byId!.text)!;
    for (let i = 0; i < 5; i++) expect((await env.request('GET', `/v1/projects/${id}`, { key: org.ownerKey })).status).toBe(200);
    const after = await preparedRuns();
    // The same server-side statement, executed five more times (not re-parsed: one entry, same name).
    expect(after.get(byId!.text)).toEqual({ name: byId!.name, runs: before.runs + 5 });
    expect([...after.values()].filter((s) => s.name.startsWith(byId!.name!))).toHaveLength(1);
  });

  it('a create is three round trips: begin with the insert, the event with its fan-out, the audit row with the commit', async () => {
    await subscribe(env, org, ['project.created']);
    await subscribe(env, org, ['project.created', 'project.deleted']);
    await createProject(env, org, 'Learn the listeners');
    const runsBefore = await preparedRuns();

    let projectId = '';
    const texts = await record(async () => {
      projectId = await createProject(env, org, 'Three round trips');
    });
    const start = texts.findIndex((s) => s.text.startsWith('insert into "projects"'));
    // The creator's collaborator row (CONTRACT 15: the creator manages the project) travels with the event.
    expect(texts.slice(start).map((s) => [short(s.text), s.pipelined])).toEqual([
      ['insert into "projects"', true],
      ['with inserted_event as', true],
      ['commit', true],
    ]);
    // Nothing else of the transaction went on its own.
    expect(texts.filter((s) => /^(begin|insert into "audit_log"|insert into "deliveries"|insert into "events"|insert into "project_collaborators")/.test(s.text))).toEqual([]);
    for (const s of texts.slice(start)) expect(s.name).toMatch(/^ws_/);

    // The server did run begin, the audit insert and commit, once each, as prepared statements.
    const runsAfter = await preparedRuns();
    const ranOnce = (match: (statement: string) => boolean) => {
      const [statement] = [...runsAfter.keys()].filter(match);
      expect(statement).toBeDefined();
      expect(runsAfter.get(statement!)!.runs - (runsBefore.get(statement!)?.runs ?? 0)).toBe(1);
    };
    ranOnce((s) => s === 'begin');
    ranOnce((s) => s === 'commit');
    ranOnce((s) => s.startsWith('insert into "audit_log"'));
    ranOnce((s) => s.startsWith('with inserted_event'));
    ranOnce((s) => s.startsWith('insert into "project_collaborators"'));

    const audit = await env.container.store.repos.audit.list(org.id, { target: projectId }, 10, null);
    expect(audit.rows.map((r) => r.action)).toEqual(['project.created']);
    const events = await env.container.store.repos.events.listEvents(org.id);
    const event = events.find((e) => e.body.includes(projectId))!;
    expect(await env.container.store.repos.events.listDeliveriesForEvent(org.id, event.id)).toHaveLength(2);
  });

  function auditRow(orgId: string, id: string): Omit<AuditLogRow, 'seq'> {
    return {
      id,
      org_id: orgId,
      occurred_at: START,
      actor_type: 'cli',
      actor_id: null,
      actor_label: 'cli',
      api_key_id: null,
      session_id: null,
      action: 'project.created',
      target_type: 'project',
      target_id: id,
      target_label: null,
      source: 'cli',
      ip: null,
      user_agent: null,
      request_id: null,
      outcome: 'success',
      changes: null,
    };
  }

  async function auditIds(): Promise<string[]> {
    return (await pool.query<{ id: string }>('select id from audit_log where id like $1 order by seq', ['aud_test_%'])).rows.map((r) => r.id);
  }

  it('a transaction that sends nothing costs nothing; one held-back insert and its commit are one round trip', async () => {
    expect(await record(() => env.container.store.transaction(async () => 1))).toEqual([]);

    const texts = await record(() => env.container.store.transaction((repos) => repos.audit.insert(auditRow(org.id, 'aud_test_alone'))));
    expect(texts.map((s) => [s.text, s.pipelined])).toEqual([['commit', true]]);
    expect(await auditIds()).toEqual(['aud_test_alone']);
  });

  it('a rollback drops held-back statements; an error in one fails the commit and rolls everything back', async () => {
    const projectsBefore = (await env.container.store.repos.projects.list(org.id, 100, null, { status: null, visibility: null, viewer: null })).rows.length;
    const insertProject = (r: Repositories, name: string) =>
      r.projects.insert({ id: `proj_test_${name}`, org_id: org.id, name, description: null, status: 'active', created_at: START, updated_at: START });

    const thrown = await record(() =>
      env.container.store
        .transaction(async (r) => {
          await insertProject(r, 'thrown');
          await r.audit.insert(auditRow(org.id, 'aud_test_thrown'));
          throw new Error('changed my mind');
        })
        .catch((err: Error) => expect(err.message).toBe('changed my mind')),
    );
    expect(thrown.map((s) => short(s.text))).toEqual(['insert into "projects"', 'rollback']);

    // The audit row names an organisation that does not exist: its foreign key fails at the commit.
    await expect(
      env.container.store.transaction(async (r) => {
        await insertProject(r, 'broken');
        await r.audit.insert(auditRow('org_missing', 'aud_test_broken'));
      }),
    ).rejects.toMatchObject({ code: '23503' });

    expect(await auditIds()).toEqual(['aud_test_alone']);
    expect((await env.container.store.repos.projects.list(org.id, 100, null, { status: null, visibility: null, viewer: null })).rows.length).toBe(projectsBefore);
    // The connection is clean afterwards: the next transaction commits normally.
    await env.container.store.transaction(async (r) => {
      await insertProject(r, 'after');
      await r.audit.insert(auditRow(org.id, 'aud_test_after'));
    });
    expect(await auditIds()).toEqual(['aud_test_alone', 'aud_test_after']);
  });

  it('timestamps are BIGINT epoch milliseconds read as numbers: no date or time column anywhere', async () => {
    const { rows } = await pool.query(
      `select table_name, column_name, data_type from information_schema.columns
       where table_schema = 'public' and (data_type like 'timestamp%' or data_type like 'time %' or data_type in ('date', 'interval'))`,
    );
    expect(rows).toEqual([]);
    const project = (await env.container.store.repos.projects.list(org.id, 1, null, { status: null, visibility: null, viewer: null })).rows[0]!;
    expect(typeof project.created_at).toBe('number');
    expect(typeof project.seq).toBe('number');
    const full = await env.container.store.repos.projects.findById(org.id, project.id);
    expect([typeof full!.created_at, typeof full!.updated_at]).toEqual(['number', 'number']);
  });

  it('a new connection prepares again after the old one is gone', async () => {
    const id = await createProject(env, org, 'Reconnect');
    const { rows } = await pool.query<{ pid: number }>('select pg_backend_pid() as pid');
    const admin = new pg.Client({ connectionString: env.config.databaseUrl! });
    await admin.connect();
    try {
      await admin.query('select pg_terminate_backend($1)', [rows[0]!.pid]);
    } finally {
      await admin.end();
    }
    // The idle client hears of its end and leaves the pool; the next request opens a new connection.
    await waitUntil(() => pool.totalCount === 0, 'the terminated client to leave the pool');
    expect((await env.request('GET', `/v1/projects/${id}`, { key: org.ownerKey })).status).toBe(200);
    const { rows: after } = await pool.query<{ pid: number }>('select pg_backend_pid() as pid');
    expect(after[0]!.pid).not.toBe(rows[0]!.pid);
    const byId = [...(await preparedRuns()).entries()].find(([statement]) => statement.includes('from "projects" where "org_id" = $2 and "id" = $3'));
    expect(byId?.[1].runs).toBe(1);
  });

  // Last: it changes the schema under the running process.
  it('a column whose type changes under a prepared statement: the statement is renamed and the read retried', async () => {
    const id = await createProject(env, org, 'Retyped');
    const texts = await record(() => env.request('GET', `/v1/projects/${id}`, { key: org.ownerKey }));
    const byId = texts.find((s) => s.text.includes('from "projects" where "org_id" = $2 and "id" = $3'))!;
    await pool.query('alter table projects alter column name type varchar(500)');
    const res = await env.request('GET', `/v1/projects/${id}`, { key: org.ownerKey });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('Retyped');
    expect(preparedStatementName(byId.text)).toBe(`${byId.name}_1`);
  });
});

describe.skipIf(!hasPostgres)('PostgreSQL: outbox locking and the first page without statistics', () => {
  let env: TestEnv;
  let pool: pg.Pool;

  beforeAll(async () => {
    env = await createTestEnv('postgres');
    pool = env.container.database.pgPool!;
    // Autovacuum must not ANALYZE the table behind the test's back.
    await pool.query('alter table projects set (autovacuum_enabled = off)');
  });
  afterAll(async () => env?.close());

  /** Until a statement of the test database waits on a row lock (the deleted or share-locked subscription). */
  async function someoneWaitsOnALock(): Promise<void> {
    const db = new URL(env.config.databaseUrl!).pathname.slice(1);
    await waitUntil(
      async () => (await pool.query('select 1 from pg_stat_activity where datname = $1 and wait_event_type = $2', [db, 'Lock'])).rows.length > 0,
      'a statement blocked on a lock',
    );
  }

  it('an event recorded first: a concurrent delete of its subscription waits for the commit, then cancels the delivery', async () => {
    const org = await env.createOrg('Event first');
    const hook = await subscribe(env, org, ['project.created']);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let recorded!: (deliveries: number) => void;
    const recordedEvent = new Promise<number>((resolve) => (recorded = resolve));
    const transaction = env.container.store.transaction(async (repos) => {
      const event = await recordEvent(repos, { orgId: org.id, type: 'project.created', data: { project_id: 'p' }, occurredAt: START });
      recorded(event.deliveries);
      await gate;
      return event;
    });
    expect(await recordedEvent).toBe(1);

    let deleted = false;
    const deletion = env.request('DELETE', `/v1/webhooks/${hook}`, { key: org.ownerKey }).then((res) => {
      deleted = true;
      return res;
    });
    await someoneWaitsOnALock();
    await sleep(100);
    expect(deleted).toBe(false);
    release();
    const event = await transaction;
    expect((await deletion).status).toBe(204);
    const deliveries = await env.container.store.repos.events.listDeliveriesForEvent(org.id, event.id);
    expect(deliveries.map((d) => [d.webhook_id, d.status])).toEqual([[hook, 'cancelled']]);
  });

  it('a delete first: the event waits for it and gives the deleted subscription no delivery', async () => {
    const org = await env.createOrg('Delete first');
    const doomed = await subscribe(env, org, ['project.created']);
    const kept = await subscribe(env, org, ['project.created']);
    const other = new pg.Client({ connectionString: env.config.databaseUrl! });
    await other.connect();
    try {
      await other.query('begin');
      await other.query('delete from webhooks where id = $1', [doomed]);
      let created = false;
      const creation = env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Waits' } }).then((res) => {
        created = true;
        return res;
      });
      await someoneWaitsOnALock();
      await sleep(100);
      expect(created).toBe(false);
      await other.query('commit');
      const res = await creation;
      expect(res.status).toBe(201);
      const event = (await env.container.store.repos.events.listEvents(org.id)).find((e) => e.body.includes(res.body.id))!;
      const deliveries = await env.container.store.repos.events.listDeliveriesForEvent(org.id, event.id);
      expect(deliveries.map((d) => d.webhook_id)).toEqual([kept]);
    } finally {
      await other.end();
    }
  });

  interface PlanNode {
    'Node Type': string;
    'Index Name'?: string;
    'Scan Direction'?: string;
    Plans?: PlanNode[];
  }
  function nodes(plan: PlanNode): PlanNode[] {
    return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
  }
  /** The plan PostgreSQL picks for `sql` with these values (a custom plan, as for an unnamed statement). */
  async function plan(sql: string, values: unknown[]): Promise<PlanNode[]> {
    const { rows } = await pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`explain (format json) ${sql}`, values);
    return nodes(rows[0]!['QUERY PLAN'][0].Plan);
  }

  it('the first page of a list scans the (org_id, seq) index backwards on a table never analysed, without a sort', async () => {
    const org = await env.createOrg('Big');
    const small = await env.createOrg('Small');
    await pool.query(
      `insert into projects (id, org_id, name, description, status, created_at, updated_at)
       select 'proj_big_' || i, $1, 'Project ' || i, null, case when i % 10 = 0 then 'archived' else 'active' end, $3::bigint + i, $3::bigint + i
       from generate_series(1, 10100) i
       union all
       select 'proj_small_' || i, $2, 'Project ' || i, null, 'active', $3::bigint + i, $3::bigint + i from generate_series(1, 50) i`,
      [org.id, small.id, START],
    );
    const { rows: stats } = await pool.query(
      `select c.reltuples, s.last_analyze, s.last_autoanalyze from pg_class c join pg_stat_user_tables s on s.relid = c.oid where c.relname = 'projects'`,
    );
    expect(stats).toEqual([{ reltuples: -1, last_analyze: null, last_autoanalyze: null }]);

    const first = await record(() => env.request('GET', '/v1/projects?limit=100', { key: org.ownerKey }));
    const listSql = first.find((s) => s.text.includes('from "projects" where "org_id" = $1 order by "seq" desc'))!.text;
    const firstPage = await env.request('GET', '/v1/projects?limit=100', { key: org.ownerKey });
    const afterCursor = await record(() => env.request('GET', `/v1/projects?limit=100&cursor=${firstPage.body.next_cursor}`, { key: org.ownerKey }));
    const afterSql = afterCursor.find((s) => s.text.includes('"seq" < $2'))!.text;
    const byStatus = await record(() => env.request('GET', '/v1/projects?limit=100&status=active', { key: org.ownerKey }));
    const statusSql = byStatus.find((s) => s.text.includes('"status" = $2'))!.text;

    const shapes: [string, unknown[], string][] = [
      [listSql, [org.id, 101], 'projects_org_seq_idx'],
      [listSql, [small.id, 101], 'projects_org_seq_idx'],
      [afterSql, [org.id, 5000, 101], 'projects_org_seq_idx'],
      [statusSql, [org.id, 'active', 101], 'projects_org_status_seq_idx'],
    ];
    for (const [sql, values, index] of shapes) {
      const planned = await plan(sql, values);
      expect(planned.map((n) => n['Node Type'])).not.toContain('Sort');
      expect(planned.find((n) => n['Node Type'] === 'Index Scan')).toMatchObject({ 'Index Name': index, 'Scan Direction': 'Backward' });
    }
    // Why the limit is a sub-select: written as a plain parameter, the same query sorts every row of
    // the organisation on this table (the planner guesses 0.5% of the rows match, fewer than a page).
    const plain = listSql.replace('limit (select cast($2 as bigint))', 'limit $2');
    expect(plain).not.toBe(listSql);
    expect((await plan(plain, [org.id, 101])).map((n) => n['Node Type'])).toContain('Sort');

    expect(firstPage.body.data).toHaveLength(100);
    expect(firstPage.body.data[0].name).toBe('Project 10100');
  });
});

// The outbox rows a create writes, in a form that does not depend on the dialect (ids replaced by
// which subscription they belong to); compared across dialects at the end.
type OutboxShape = { returned: number; deliveries: Record<string, unknown>[] }[];
const outboxShapes = new Map<string, OutboxShape>();

describe.each(testDialects())('outbox rows (%s)', (dialect) => {
  let env: TestEnv;
  const clock: Clock = { now: () => START };

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
  });
  afterAll(async () => env?.close());

  it('one pending delivery per listening subscription, in subscription order, however many there are', async () => {
    const org = await env.createOrg('Outbox');
    const quiet = await env.createOrg('Quiet');
    const names = new Map<string, string>();
    const hook = async (name: string, events: string[]) => names.set(await subscribe(env, org, events), name);
    await hook('A', ['project.created']);
    await hook('B', ['project.updated']);
    await hook('C', ['project.deleted', 'project.created']);
    await hook('D', ['project.created', 'project.updated', 'project.deleted', 'workflow.completed', 'workflow.failed', 'task.assigned']);

    const shape: OutboxShape = [];
    async function recordOne(orgId: string, data: Record<string, unknown>) {
      const event = await env.container.store.transaction((repos) => recordEvent(repos, { orgId, type: 'project.created', data, occurredAt: START }));
      const rows: DeliveryRow[] = await env.container.store.repos.events.listDeliveriesForEvent(orgId, event.id);
      expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
      for (const row of rows) expect(row.id).toMatch(/^dlv_[0-9a-z]{24}$/);
      shape.push({
        returned: event.deliveries,
        deliveries: rows.map(({ seq: _seq, id: _id, webhook_id, event_id, org_id, ...rest }) => ({
          webhook: names.get(webhook_id) ?? webhook_id,
          ofThisEvent: event_id === event.id,
          ofThisOrg: org_id === orgId,
          ...rest,
        })),
      });
      return rows;
    }

    await recordOne(org.id, { n: 1 }); // no idea yet how many listen
    await recordOne(org.id, { n: 2 }); // as many as last time
    await hook('E', ['project.created']);
    await hook('F', ['project.created']);
    await hook('G', ['task.assigned', 'project.created']);
    await hook('H', ['project.created']);
    await recordOne(org.id, { n: 3 }); // more than last time
    for (const [id, name] of names) {
      if (name === 'A' || name === 'E') expect((await env.request('DELETE', `/v1/webhooks/${id}`, { key: org.ownerKey })).status).toBe(204);
    }
    await recordOne(org.id, { n: 4 }); // fewer than last time
    await recordOne(quiet.id, { n: 5 }); // none

    expect(shape.map((s) => [s.returned, s.deliveries.map((d) => d.webhook)])).toEqual([
      [3, ['A', 'C', 'D']],
      [3, ['A', 'C', 'D']],
      [7, ['A', 'C', 'D', 'E', 'F', 'G', 'H']],
      [5, ['C', 'D', 'F', 'G', 'H']],
      [0, []],
    ]);
    for (const d of shape.flatMap((s) => s.deliveries)) {
      expect(d).toEqual({
        webhook: d.webhook,
        ofThisEvent: true,
        ofThisOrg: true,
        event_type: 'project.created',
        status: 'pending',
        attempt_count: 0,
        failure_count: 0,
        next_attempt_at: START,
        lease_owner: null,
        lease_expires_at: null,
        last_status_code: null,
        last_error: null,
        created_at: START,
        updated_at: START,
        replay_requested_at: null,
        test: 0,
        cancel_reason: null,
        fifo: 0,
      });
    }
    outboxShapes.set(dialect, shape);
  });
});

describe.skipIf(testDialects().length < 2)('outbox rows on both dialects', () => {
  it('are the same', () => {
    expect(outboxShapes.get('sqlite')).toBeDefined();
    expect(outboxShapes.get('postgres')).toEqual(outboxShapes.get('sqlite'));
  });
});
