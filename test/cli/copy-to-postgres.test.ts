import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase } from '../../src/db/database.js';
import { COPIED_TABLES, PROCESS_TABLES, SQLITE_ONLY_TABLES } from '../../src/db/maintenance/table-plan.js';
import { cliActor, scimActor } from '../../src/services/access/actor.js';
import { connectApp } from '../helpers/oauth-flow.js';
import { BIN, cliEnv, cliJson, runCli, startServe, type ServeProcess } from '../helpers/cli.js';
import { DashboardClient } from '../helpers/dashboard.js';
import { deliverEveryEvent } from '../helpers/event-flows.js';
import { startDeliveryHarness, waitFor, type DeliveryHarness } from '../helpers/https-receiver.js';
import { createPgDatabase } from '../helpers/test-env.js';

/**
 * `workspace copy-to-postgres URL` (CONTRACT 12; docs/deployment.md "Moving to PostgreSQL"): the embedded
 * database of a service that has really been used, copied with the built CLI into a fresh PostgreSQL
 * database, compared row by row, and then served from PostgreSQL by a real `serve` process.
 */
const PLAN_NAMES = COPIED_TABLES.map((t) => t.table as string);
const HOUR = 3_600_000;

/** PostgreSQL rows as the service reads them: BIGINT as numbers. */
function pgClient(url: string): pg.Client {
  return new pg.Client({
    connectionString: url,
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        oid === 20 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
}

const keyOf = (row: Record<string, unknown>, key: readonly string[]) => JSON.stringify(key.map((k) => row[k]));
const byKey = (key: readonly string[]) => (a: Record<string, unknown>, b: Record<string, unknown>) => (keyOf(a, key) < keyOf(b, key) ? -1 : 1);

async function pgTables(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    "select table_name as name from information_schema.tables where table_schema = current_schema() and table_name not like 'kysely\\_%' order by 1",
  );
  return rows.map((r) => r.name);
}

async function pgPrimaryKey(client: pg.Client, table: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select a.attname as name from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
     where i.indrelid = $1::regclass and i.indisprimary order by array_position(i.indkey, a.attnum)`,
    [table],
  );
  return rows.map((r) => r.name);
}

describe('the copy plan: one table list', () => {
  it('names every table of both schemas with its real primary key, parents before the children their foreign keys point at', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-plan-'));
    const sqlite = openDatabase({ databaseUrl: null, dataDir: dir });
    await migrateToLatest(sqlite);
    await sqlite.close();
    const raw = new BetterSqlite3(path.join(dir, 'workspace.db'), { readonly: true });
    const target = await createPgDatabase();
    const postgres = openDatabase({ databaseUrl: target.url, dataDir: dir, poolSize: 1 });
    await migrateToLatest(postgres);
    await postgres.close();
    const client = pgClient(target.url);
    await client.connect();
    try {
      const sqliteTables = (raw.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\' and name not like 'kysely\\_%' escape '\\'").pluck().all() as string[]).sort();
      expect(sqliteTables).toEqual([...PLAN_NAMES, ...SQLITE_ONLY_TABLES, ...PROCESS_TABLES].sort());
      expect(await pgTables(client)).toEqual([...PLAN_NAMES, ...PROCESS_TABLES].sort());
      for (const { table, key } of COPIED_TABLES) {
        const sqliteKey = raw.prepare('select name from pragma_table_info(?) where pk > 0 order by pk').pluck().all(table);
        expect(sqliteKey, table).toEqual(key);
        expect(await pgPrimaryKey(client, table), table).toEqual(key);
        for (const parent of raw.prepare('select "table" from pragma_foreign_key_list(?)').pluck().all(table) as string[]) {
          expect(PLAN_NAMES.indexOf(parent), `${table} references ${parent}`).toBeLessThan(PLAN_NAMES.indexOf(table));
        }
      }
    } finally {
      raw.close();
      await client.end();
      await target.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('copy-to-postgres from a service that has been used', () => {
  let harness: DeliveryHarness;
  let target: { url: string; drop(): Promise<void> };
  let env: Record<string, string>;
  let sqliteFile: string;
  const serves: ServeProcess[] = [];
  // What the SQLite-backed service answered, to compare with what the PostgreSQL one answers.
  const before: Record<string, unknown> = {};
  let beta: { id: string; key: string; ownerId: string; webhookId: string; retrying: string; fresh: string; failed: string; waitingRun: string; queuedRun: string };
  let alphaKey: string;
  let sessionCookie: string;
  let deliveredToA: number;

  async function pages(base: (url: string) => Promise<{ status: number; body: any }>, url: string): Promise<string[][]> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const out: string[][] = [];
    let cursor: string | null = null;
    do {
      const res = await base(`${url}${url.includes('?') ? '&' : '?'}limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status, url).toBe(200);
      out.push(res.body.data.map((item: { id: string }) => item.id));
      cursor = res.body.next_cursor;
    } while (cursor);
    return out;
  }
  const LISTS = () => [
    ['alpha', alphaKey, '/v1/projects'],
    ['beta', beta.key, '/v1/projects'],
    ['beta', beta.key, '/v1/projects?status=active'],
    ['beta', beta.key, '/v1/users'],
    ['beta', beta.key, '/v1/webhooks'],
    ['beta', beta.key, `/v1/webhooks/${beta.webhookId}/deliveries`],
  ] as const;

  beforeAll(async () => {
    harness = await startDeliveryHarness('sqlite', {});
    const { env: testEnv, receiver } = harness;
    const { container } = testEnv;
    const s = container.services;
    const db = container.database.db;

    // Organisation A: every kind of event made and delivered (projects, tasks, runs completed and failed).
    const alpha = await deliverEveryEvent(harness, 'whsec_alpha_secret_for_copy_tests', '/a');
    alphaKey = alpha.org.ownerKey;

    // Organisation B: members, keys, invitations, projects enough to page, a subscription, idempotency, an export.
    const b = await testEnv.createOrg('Beta');
    const api = async (method: string, url: string, body?: unknown, headers?: Record<string, string>) => {
      const res = await testEnv.request(method, url, { key: b.ownerKey, body, headers });
      expect(res.status, `${method} ${url}: ${res.text}`).toBeLessThan(300);
      return res.body as { id: string };
    };
    await b.member('admin');
    await b.member('viewer', 'read');
    await api('POST', '/v1/users', { email: 'invited@beta.example', role: 'member' });
    for (let i = 0; i < 5; i++) await api('POST', '/v1/projects', { name: `Beta ${i}`, status: i % 2 ? 'active' : 'draft' }, { 'idempotency-key': `copy-${i}` });
    const owner = cliActor(b.id);
    const bProject = await s.projects.create(owner, { name: 'Beta workflows' });
    await s.accounts.issuePasswordLink(owner, b.ownerId, 'reset');
    const hook = await api('POST', '/v1/webhooks', { url: receiver.url('/b'), events: ['project.created', 'project.deleted'] });
    await s.exports.request(owner);
    while (await s.exports.runNext('copy-test')) {
      // Built in chunks, ready to download.
    }
    const client = await DashboardClient.signedIn(testEnv, b.id, b.ownerId);
    sessionCookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    expect((await client.get('/dashboard/members')).status).toBe(200);

    await waitFor('every delivery to A', async () => (await db.selectFrom('deliveries').select('id').where('status', '=', 'pending').execute()).length === 0);
    await harness.worker.stop();
    deliveredToA = receiver.at('/a').length;

    // With the worker stopped: deliveries left pending (one retrying after a failed attempt), one failed, one cancelled.
    const project = await api('POST', '/v1/projects', { name: 'Beta retrying' });
    await api('DELETE', `/v1/projects/${project.id}`);
    await api('POST', '/v1/projects', { name: 'Beta failed' });
    await api('POST', '/v1/projects', { name: 'Beta cancelled' });
    const pending = await db.selectFrom('deliveries').selectAll().where('org_id', '=', b.id).orderBy('seq').execute();
    expect(pending.map((d) => d.status)).toEqual(['pending', 'pending', 'pending', 'pending']);
    const [retrying, fresh, failed, cancelled] = pending;
    const now = Date.now();
    await db.updateTable('deliveries').set({ attempt_count: 1, failure_count: 1, last_status_code: 503, next_attempt_at: now + 4000 }).where('id', '=', retrying!.id).execute();
    await db
      .insertInto('delivery_attempts')
      .values({
        id: 'att_copytest_retrying', org_id: b.id, delivery_id: retrying!.id, attempt_number: 1, trigger: 'automatic', started_at: now - 1000,
        duration_ms: 12, request_headers: '{"content-type":"application/json"}', response_status: 503, response_headers: '{}', response_body: 'busy', error: null, outcome: 'failure',
      })
      .execute();
    await db.updateTable('deliveries').set({ status: 'failed', attempt_count: 8, failure_count: 8, next_attempt_at: null, last_error: 'connection refused' }).where('id', '=', failed!.id).execute();
    await db.updateTable('deliveries').set({ status: 'cancelled', next_attempt_at: null }).where('id', '=', cancelled!.id).execute();
    // A bulk replay asked for while no worker runs: the PostgreSQL-backed worker carries it out.
    await api('POST', `/v1/webhooks/${hook.id}/replay-failed`, { since: new Date(now - HOUR).toISOString() });

    // Runs: one waiting on a Wait step that is due in a few seconds, one queued (no worker took it yet).
    const waitFlow = await s.workflows.create(owner, bProject.id, { name: 'Cool-off', steps: [{ type: 'wait', duration: '1h' }, { type: 'task', title: 'Follow up' }] });
    const waitingRun = await s.workflows.startRun(owner, waitFlow.id);
    for (const key of await s.runs.claimDue('copy-test', 60_000, 10)) await s.runs.advance('copy-test', key);
    const wakeAt = Date.now() + 6000;
    await db.updateTable('workflow_run_steps').set({ started_at: wakeAt - HOUR }).where('run_id', '=', waitingRun.id).where('position', '=', 0).execute();
    await db.updateTable('workflow_runs').set({ wake_at: wakeAt }).where('id', '=', waitingRun.id).execute();
    const queuedRun = await s.workflows.startRun(owner, waitFlow.id);

    // Rows no API flow of this test makes: a deleted organisation's tombstone, a Stripe event.
    await db.insertInto('organization_tombstones').values({ id: 'org_gone', created_at: now - 90 * 24 * HOUR, cancelled_at: now - 40 * 24 * HOUR, deletion_at: now - 10 * 24 * HOUR, deleted_at: now - 10 * 24 * HOUR }).execute();
    await db.insertInto('stripe_events').values({ id: 'evt_copytest', org_id: b.id, type: 'customer.subscription.updated', created: now - HOUR, received_at: now - HOUR, outcome: 'applied' }).execute();
    // Second factors (DASHBOARD 11): an authenticator app, its recovery codes, a passkey, an open passkey challenge.
    await db.insertInto('totp_factors').values({ org_id: b.id, user_id: b.ownerId, secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', last_step: 59_000_000, created_at: now - HOUR, enabled_at: now - HOUR }).execute();
    await db.insertInto('recovery_codes').values({ org_id: b.id, user_id: b.ownerId, code_hash: 'a'.repeat(64), created_at: now - HOUR, used_at: null }).execute();
    await db
      .insertInto('passkeys')
      .values({ id: 'pk_copytest', org_id: b.id, user_id: b.ownerId, credential_id: 'cred-copytest', public_key: 'pQECAyYgASFYIA', counter: 3, transports: '["internal"]', device_type: 'singleDevice', backed_up: 0, aaguid: null, name: 'Laptop', created_at: now - HOUR, last_used_at: null })
      .execute();
    await db.insertInto('webauthn_challenges').values({ challenge: 'challenge-copytest', purpose: 'sign_in', binding: 'b'.repeat(64), user_id: null, expires_at: now + HOUR }).execute();
    // Single sign-on (DASHBOARD 12): a connection, a verified domain, a linked identity, a round trip under way.
    await db
      .insertInto('sso_connections')
      .values({ id: 'sso_copytest', org_id: b.id, issuer: 'https://idp.example', client_id: 'client', client_secret: 'secret', jit: 0, default_role: 'member', required_at: null, tested_at: now - HOUR, test_subject: 'sub', test_email: 'a@b.example', test_email_verified: 1, created_at: now - HOUR, updated_at: now - HOUR })
      .execute();
    await db.insertInto('sso_domains').values({ id: 'dom_copytest', org_id: b.id, domain: 'copy.example', token: 'token', created_at: now - HOUR, verified_at: now - HOUR, last_checked_at: now - HOUR, missing_since: null }).execute();
    await db.insertInto('sso_identities').values({ id: 'idn_copytest', org_id: b.id, connection_id: 'sso_copytest', issuer: 'https://idp.example', subject: 'sub', user_id: b.ownerId, email: 'a@b.example', created_at: now - HOUR, last_sign_in_at: now - HOUR }).execute();
    await db.insertInto('sso_attempts').values({ state_hash: 'c'.repeat(64), org_id: b.id, connection_id: 'sso_copytest', purpose: 'sign_in', binding: 'b'.repeat(64), code_verifier: 'v', nonce: 'n', user_id: null, next: null, expires_at: now + HOUR }).execute();

    // Provisioning (CONTRACT 16): a SCIM token, a group with a member, mapped to a role and a project role.
    await s.scimSettings.createToken(owner, 'Okta');
    const betaMembers = await s.users.list(b.id, { limit: 10 });
    const group = await s.scimDirectory.createGroup(scimActor(b.id, 'Okta', { ip: null, userAgent: null, requestId: null }), { displayName: 'Engineering', members: [{ value: betaMembers.items[0]!.id }] });
    await s.scimSettings.saveMapping(owner, { groupId: String(group.id), orgRole: null, projectId: bProject.id, projectRole: 'viewer' });
    // A connected app (CONTRACT 17): a client, a grant, its tokens, and the server's shared secret. Connected by
    // a member without a second factor (the owner's session would first be asked for theirs).
    const appUser = await s.admin.addUser({ orgId: b.id, email: 'agent.user@beta.example', role: 'member', name: 'Agent User' });
    await connectApp(testEnv, b.id, appUser.id, { scope: 'read' });

    beta = { id: b.id, key: b.ownerKey, ownerId: b.ownerId, webhookId: hook.id, retrying: retrying!.id, fresh: fresh!.id, failed: failed!.id, waitingRun: waitingRun.id, queuedRun: queuedRun.id };
    for (const [who, key, url] of LISTS()) before[`${who} ${url}`] = await pages((u) => testEnv.request('GET', u, { key }), url);

    // The service stops; its database stays (the harness' own cleanup would remove it).
    await testEnv.app.close();
    await container.close();
    sqliteFile = path.join(testEnv.dataDir, 'workspace.db');
    target = await createPgDatabase();
    env = { DATA_DIR: testEnv.dataDir, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', NODE_EXTRA_CA_CERTS: harness.cert.certFile };
  }, 120_000);

  afterAll(async () => {
    for (const p of serves) {
      if (p.child.exitCode === null) p.child.kill('SIGTERM');
      await p.exited;
    }
    await harness?.receiver.close();
    fs.rmSync(harness.env.dataDir, { recursive: true, force: true });
    fs.rmSync(harness.cert.dir, { recursive: true, force: true });
    await target?.drop();
  });

  it('every table had rows to copy (the fixture covers the whole plan)', () => {
    const raw = new BetterSqlite3(sqliteFile, { readonly: true });
    const empty = PLAN_NAMES.filter((table) => raw.prepare(`select count(*) from ${table}`).pluck().get() === 0);
    raw.close();
    expect(empty).toEqual([]);
  });

  it('is refused while serve has the embedded database open, and leaves the target untouched', async () => {
    const server = await startServe(env);
    serves.push(server);
    const refused = await runCli(['copy-to-postgres', target.url, '--json'], env);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error.code).toBe('database_in_use');
    const client = pgClient(target.url);
    await client.connect();
    expect((await client.query("select to_regclass('kysely_migration') is not null as present")).rows[0].present).toBe(false);
    await client.end();
  });

  it('copies every row of every table, equal field by field, verified per table, with progress on stderr', async () => {
    const result = await runCli(['copy-to-postgres', target.url, '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.verified).toBe(true);
    expect(report.tables.map((t: { table: string }) => t.table)).toEqual(PLAN_NAMES);
    for (const { table } of COPIED_TABLES) expect(result.stderr).toMatch(new RegExp(`copy-to-postgres: {3}${table}: [\\d,]+ rows in [\\d.]+ s, verified`));

    const raw = new BetterSqlite3(sqliteFile, { readonly: true });
    const client = pgClient(target.url);
    await client.connect();
    try {
      let total = 0;
      for (const { table, key } of COPIED_TABLES) {
        const source = (raw.prepare(`select * from ${table}`).all() as Array<Record<string, unknown>>).sort(byKey(key));
        const copied = (await client.query(`select * from ${table}`)).rows.sort(byKey(key));
        expect(copied, table).toEqual(source);
        expect(report.tables.find((t: { table: string }) => t.table === table).rows, table).toBe(source.length);
        total += source.length;
      }
      expect(report.rows).toBe(total);
      // New rows follow the copied ones.
      const { rows } = await client.query<{ next: number; max: number }>("select nextval(pg_get_serial_sequence('projects', 'seq')) as next, (select max(seq) from projects) as max");
      expect(rows[0]!.next).toBe(rows[0]!.max + 1);
    } finally {
      raw.close();
      await client.end();
    }
  });

  it('then serve on PostgreSQL serves the same organisations: keys, sessions and lists work, the retrying delivery is delivered once, the waiting run wakes, nothing is sent twice', async () => {
    const server = await startServe({ ...env, DATABASE_URL: target.url });
    serves.push(server);
    const get = async (url: string, key: string) => {
      const res = await fetch(server.address + url, { headers: { authorization: `Bearer ${key}` } });
      return { status: res.status, body: await res.json() };
    };
    for (const [who, key, url] of LISTS()) expect(await pages((u) => get(u, key), url), `${who} ${url}`).toEqual(before[`${who} ${url}`]);
    const members = await fetch(`${server.address}/dashboard/members`, { headers: { cookie: sessionCookie }, redirect: 'manual' });
    expect(members.status).toBe(200);
    expect(await members.text()).toContain('Beta');

    const { receiver } = harness;
    await waitFor('the retrying, the fresh and the replayed delivery', () => receiver.at('/b').length >= 3, 20_000);
    const run = await waitFor(
      'the Wait step to wake',
      async () => {
        const detail = await runOf(beta.waitingRun);
        return detail.status === 'waiting' && detail.current_step === 1 ? detail : null;
      },
      20_000,
    );
    expect(run.wake_at).toBeNull();
    // Give the worker time to send anything twice, if it were going to.
    await new Promise((r) => setTimeout(r, 1500));
    const ids = receiver.at('/b').map((r) => String(r.headers['x-service-delivery-id']));
    expect(ids.sort()).toEqual([beta.retrying, beta.fresh, beta.failed].sort());
    expect(receiver.at('/a').length).toBe(deliveredToA);
    const statuses = await deliveriesOf();
    expect(statuses[beta.retrying]).toMatchObject({ status: 'delivered', attempt_count: 2 });
    expect(statuses[beta.fresh]).toMatchObject({ status: 'delivered', attempt_count: 1 });
    expect(statuses[beta.failed]).toMatchObject({ status: 'delivered', attempt_count: 9 });
    expect((await runOf(beta.queuedRun)).status).toBe('waiting');

    // A new project gets the next seq and lists first.
    const created = await fetch(`${server.address}/v1/projects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${beta.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Made on PostgreSQL' }),
    });
    expect(created.status).toBe(201);
    const first = await get('/v1/projects?limit=1', beta.key);
    expect(first.body.data[0].name).toBe('Made on PostgreSQL');
  }, 60_000);

  async function runOf(id: string): Promise<{ status: string; current_step: number; wake_at: number | null }> {
    const client = pgClient(target.url);
    await client.connect();
    try {
      return (await client.query('select status, current_step, wake_at from workflow_runs where id = $1', [id])).rows[0];
    } finally {
      await client.end();
    }
  }

  async function deliveriesOf(): Promise<Record<string, { status: string; attempt_count: number }>> {
    const client = pgClient(target.url);
    await client.connect();
    try {
      const { rows } = await client.query('select id, status, attempt_count from deliveries where org_id = $1', [beta.id]);
      return Object.fromEntries(rows.map((r) => [r.id, r]));
    } finally {
      await client.end();
    }
  }

  it('refuses a target that already holds rows, a URL that is not PostgreSQL, and one it cannot reach; each says why', async () => {
    const client = pgClient(target.url);
    await client.connect();
    const countBefore = (await client.query('select count(*) as n from projects')).rows[0].n;
    const again = await runCli(['copy-to-postgres', target.url, '--json'], env);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout).error).toMatchObject({ code: 'target_not_empty', message: expect.stringContaining('projects') });
    expect((await client.query('select count(*) as n from projects')).rows[0].n).toBe(countBefore);
    await client.end();

    const mysql = await runCli(['copy-to-postgres', 'mysql://root@127.0.0.1/db', '--json'], env);
    expect(JSON.parse(mysql.stdout).error.code).toBe('invalid_target');
    const away = await runCli(['copy-to-postgres', 'postgres://postgres:hunter2@127.0.0.1:1/none', '--json'], env);
    const error = JSON.parse(away.stdout).error;
    expect(error.code).toBe('target_unreachable');
    // The password is never echoed.
    expect(error.message).not.toContain('hunter2');
    expect(error.message).toContain('postgres://postgres:***@127.0.0.1:1/none');
  });
});

describe('copy-to-postgres at size: 1,000,000 delivery attempts', () => {
  const ATTEMPTS = 1_000_000;
  let dir: string;
  let env: Record<string, string>;
  let target: { url: string; drop(): Promise<void> };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-copy-size-'));
    env = { DATA_DIR: dir };
    const created = await cliJson(['org', 'create', '--name', 'Big', '--owner-email', 'owner@big.example'], env);
    const raw = new BetterSqlite3(path.join(dir, 'workspace.db'));
    const headers = JSON.stringify({ 'content-type': 'application/json', 'user-agent': 'WorkspaceService-Webhooks/1.0', 'x-service-event': 'project.created', 'x-service-signature': `sha256=${'ab'.repeat(32)}` });
    raw.exec('begin');
    raw.prepare(
      `with recursive n(i) as (select 0 union all select i + 1 from n where i < 999)
       insert into deliveries (id, org_id, event_id, webhook_id, event_type, status, attempt_count, failure_count, next_attempt_at, lease_owner, lease_expires_at, last_status_code, last_error, created_at, updated_at)
       select printf('dlv_%05d', i), ?, printf('evt_%05d', i), 'wh_big', 'project.created', 'delivered', 1000, 0, null, null, null, 200, null, 1700000000000 + i, 1700000000000 + i from n`,
    ).run(created.organization.id);
    raw.prepare(
      `with recursive n(i) as (select 0 union all select i + 1 from n where i < ${ATTEMPTS - 1})
       insert into delivery_attempts (id, org_id, delivery_id, attempt_number, trigger, started_at, duration_ms, request_headers, response_status, response_headers, response_body, error, outcome)
       select printf('att_%08d', i), ?, printf('dlv_%05d', i / 1000), i % 1000 + 1, 'automatic', 1700000000000 + i, 40 + i % 50, ?, 200, '{"content-type":"text/plain"}', 'ok', null, 'success' from n`,
    ).run(created.organization.id, headers);
    raw.exec('commit');
    raw.close();
    target = await createPgDatabase();
  }, 180_000);

  afterAll(async () => {
    await target?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a copy killed with -9 leaves no rows (one transaction), the next run accepts the target and completes; peak memory stays flat', async () => {
    const child = spawn(process.execPath, [BIN, 'copy-to-postgres', target.url], { env: cliEnv(env), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const exited = new Promise((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve, reject) => {
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
        // Killed while the big table is being written.
        if (/delivery_attempts: [\d,]+ of/.test(stderr)) resolve();
      });
      void exited.then(() => reject(new Error(`the copy ended before it could be killed: ${stderr}`)));
    });
    child.kill('SIGKILL');
    await exited;

    const client = pgClient(target.url);
    await client.connect();
    // The server rolls the transaction back as it notices the connection is gone.
    await waitFor('the killed copy\'s session to end', async () => (await client.query("select count(*) as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()")).rows[0].n === 0);
    for (const table of PLAN_NAMES) expect((await client.query(`select count(*) as n from ${table}`)).rows[0].n, table).toBe(0);
    await client.end();

    const report = await cliJson(['copy-to-postgres', target.url], env);
    expect(report.tables.find((t: { table: string }) => t.table === 'delivery_attempts').rows).toBe(ATTEMPTS);
    const aboveIdle = report.memory.peak_rss_bytes - report.memory.rss_start_bytes;
    console.log(`copy of ${report.rows} rows: ${report.seconds} s, ${report.rows_per_second} rows/s, peak RSS ${(report.memory.peak_rss_bytes / 1048576).toFixed(0)} MB (${(aboveIdle / 1048576).toFixed(0)} MB above the start)`);
    expect(aboveIdle).toBeLessThan(150 * 1024 * 1024);
  }, 300_000);
});
