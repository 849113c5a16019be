import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DELETION_STEPS, ORGANIZATION_DATA_TABLES } from '../../src/db/repositories/deletion-repo.js';
import { hashPassword } from '../../src/lib/crypto.js';
import { newId } from '../../src/lib/ids.js';
import { DAY_MS } from '../../src/lib/time.js';
import { startLifecycleJob } from '../../src/worker/lifecycle-job.js';
import { cliActor, scimActor } from '../../src/services/access/actor.js';
import { connectApp } from '../helpers/oauth-flow.js';
import { recordAttempt } from '../helpers/attempts.js';
import { DashboardClient, type PageResponse } from '../helpers/dashboard.js';
import { decodeQuotedPrintable, outboxMessages } from '../helpers/mail-outbox.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type TestEnv } from '../helpers/test-env.js';

const PASSWORD = 'correct horse battery';
const INCORRECT = 'Email or password is incorrect';
const CONTEXT = { source: 'dashboard' as const, ip: '127.0.0.1', userAgent: 'test', requestId: null };

/** The dashboard's sign-in form, as a person fills it in. */
async function signIn(env: TestEnv, email: string, password: string): Promise<{ client: DashboardClient; res: PageResponse }> {
  const client = new DashboardClient(env);
  const page = await client.get('/dashboard/login');
  expect(page.status).toBe(200);
  const res = await client.post('/dashboard/login', { email, password });
  return { client, res };
}

/** Every table with an `org_id` column, read from the database's own catalog. */
async function catalogTables(env: TestEnv): Promise<string[]> {
  const { db } = env.container.database;
  const rows =
    env.dialect === 'postgres'
      ? (await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.columns WHERE column_name = 'org_id' AND table_schema = current_schema()`.execute(db)).rows
      : (await sql<{ name: string }>`SELECT m.name AS name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND p.name = 'org_id'`.execute(db)).rows;
  return rows.map((r) => r.name).sort();
}

/** Rows of the organisation in every table that has an `org_id` (from the catalog), by table. */
async function rowsByTable(env: TestEnv, orgId: string): Promise<Record<string, number>> {
  const { db } = env.container.database;
  const counts: Record<string, number> = {};
  for (const table of await catalogTables(env)) {
    const row = (await sql<{ n: number | string }>`SELECT count(*) AS n FROM ${sql.table(table)} WHERE org_id = ${orgId}`.execute(db)).rows[0]!;
    counts[table] = Number(row.n);
  }
  return counts;
}

async function replayItems(env: TestEnv, orgId: string): Promise<number> {
  const row = await env.container.database.db
    .selectFrom('replay_job_items as i')
    .innerJoin('replay_jobs as j', 'j.id', 'i.job_id')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('j.org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Reminder e-mails in the outbox: to whom, and which. */
function reminders(env: TestEnv): { to: string; which: '7d' | '1d'; text: string }[] {
  return outboxMessages(env.dataDir).flatMap(({ raw }) => {
    const subject = /^Subject: (.*)$/m.exec(raw)?.[1] ?? '';
    const which = subject.endsWith('will be deleted in 7 days') ? '7d' : subject.endsWith('will be deleted tomorrow') ? '1d' : null;
    if (!which) return [];
    return [{ to: /^To: (.*)$/m.exec(raw)![1]!.trim(), which, text: decodeQuotedPrintable(raw) }];
  });
}

interface Populated {
  id: string;
  name: string;
  ownerKey: string;
  owners: string[];
  ownerEmail: string;
  webhookId: string;
  memberId: string;
}

/**
 * An organisation with rows in every table the service has: members (two owners), keys, sessions from a
 * real sign-in, password links, invitations, projects, workflows with runs and tasks, webhooks with events,
 * deliveries, attempts and the hourly roll-up, a bulk replay, idempotency keys and request counts from real
 * API calls, audit rows, an export with its chunks, a Stripe event.
 */
async function populate(env: TestEnv, clock: ManualClock, name: string): Promise<Populated> {
  const s = env.container.services;
  const { db } = env.container.database;
  const org = await env.createOrg(name);
  const actor = cliActor(org.id);
  const secondOwner = await org.member('owner');
  const member = await org.member('member');
  const owner = (await env.container.store.repos.users.findById(org.id, org.ownerId))!;
  await env.container.store.repos.users.update(org.id, owner.id, { password_hash: await hashPassword(PASSWORD) });

  const signedIn = await signIn(env, owner.email, PASSWORD);
  expect(signedIn.res.status).toBe(303);
  await s.accounts.issuePasswordLink(cliActor(''), member.userId, 'reset');
  await s.users.invite(actor, { email: `invitee-${name.toLowerCase()}@example.com`, role: 'member' });

  const webhook = await s.webhooks.create(actor, { url: 'https://127.0.0.1:9/hook', events: ['project.created'] });
  // Through the API with an Idempotency-Key: the project, its event, its pending delivery, the day's count.
  for (let i = 0; i < 3; i++) {
    const res = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: `${name} ${i}` }, headers: { 'idempotency-key': `${name}-${i}` } });
    expect(res.status).toBe(201);
  }
  await s.usage.flush();
  const project = await s.projects.create(actor, { name: `${name} workflows` });
  const workflow = await s.workflows.create(actor, project.id, { name: 'Review', steps: [{ type: 'task', title: 'Check', assignee_id: member.userId }] });
  await s.workflows.startRun(actor, workflow.id);
  await s.tasks.create(actor, project.id, { title: 'By hand' });
  // Provisioning (CONTRACT 16): a SCIM token, a group with a member, mapped to a project role.
  await s.scimSettings.createToken(actor, 'Okta');
  const group = await s.scimDirectory.createGroup(scimActor(org.id, 'Okta', { ip: null, userAgent: null, requestId: null }), { displayName: 'Engineering', members: [{ value: member.userId }] });
  await s.scimSettings.saveMapping(actor, { groupId: String(group.id), orgRole: null, projectId: project.id, projectRole: 'viewer' });
  // A connected app (CONTRACT 17): its grant, and the tokens under it.
  await connectApp(env, org.id, member.userId, { scope: 'read' });
  for (const outcome of ['success', 'failure', 'failure'] as const) await recordAttempt(env, org.id, webhook.id, clock.now() - 10 * 60_000, outcome);
  await s.replayJobs.start(actor, webhook.id, clock.now() - 60 * 60_000);

  // Tables whose writers are other parts' jobs: their rows as those jobs leave them.
  const exportId = newId('exp');
  const now = clock.now();
  await db
    .insertInto('exports')
    .values({
      id: exportId, org_id: org.id, status: 'ready', requested_by: owner.id, requested_by_label: owner.email, format_version: 1,
      size_bytes: 4, counts: '{}', error: null, created_at: now, started_at: now, ready_at: now, expires_at: now + 7 * DAY_MS,
      lease_owner: null, lease_expires_at: null, updated_at: now,
    })
    .execute();
  await db.insertInto('export_chunks').values({ export_id: exportId, org_id: org.id, position: 0, data: new Uint8Array([80, 75, 5, 6]) }).execute();
  await db.insertInto('stripe_events').values({ id: newId('evt'), org_id: org.id, type: 'customer.subscription.updated', created: now, received_at: now, outcome: 'applied' }).execute();
  // Second factors (DASHBOARD 11), as their services leave them.
  await db.insertInto('totp_factors').values({ org_id: org.id, user_id: member.userId, secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', last_step: null, created_at: now, enabled_at: now }).execute();
  await db.insertInto('recovery_codes').values({ org_id: org.id, user_id: member.userId, code_hash: newId('tok'), created_at: now, used_at: null }).execute();
  await db
    .insertInto('passkeys')
    .values({ id: newId('pk'), org_id: org.id, user_id: member.userId, credential_id: newId('tok'), public_key: 'pQECAyYgASFYIA', counter: 0, transports: null, device_type: 'singleDevice', backed_up: 0, aaguid: null, name: 'Laptop', created_at: now, last_used_at: null })
    .execute();

  // Single sign-on (DASHBOARD 12): a connection, a domain, an identity, a round trip under way.
  const connectionId = newId('sso');
  await db
    .insertInto('sso_connections')
    .values({ id: connectionId, org_id: org.id, issuer: 'https://idp.example', client_id: 'client', client_secret: 'secret', jit: 0, default_role: 'member', required_at: null, tested_at: null, test_subject: null, test_email: null, test_email_verified: null, created_at: now, updated_at: now })
    .execute();
  await db.insertInto('sso_domains').values({ id: newId('dom'), org_id: org.id, domain: `${org.id}.example`, token: 'token', created_at: now, verified_at: now, last_checked_at: now, missing_since: null }).execute();
  await db.insertInto('sso_identities').values({ id: newId('idn'), org_id: org.id, connection_id: connectionId, issuer: 'https://idp.example', subject: newId('tok'), user_id: member.userId, email: null, created_at: now, last_sign_in_at: null }).execute();
  await db.insertInto('sso_attempts').values({ state_hash: newId('tok'), org_id: org.id, connection_id: connectionId, purpose: 'sign_in', binding: 'b', code_verifier: 'v', nonce: 'n', user_id: null, next: null, expires_at: now + 60_000 }).execute();

  return {
    id: org.id,
    name,
    ownerKey: org.ownerKey,
    owners: [owner.email, (await env.container.store.repos.users.findById(org.id, secondOwner.userId))!.email],
    ownerEmail: owner.email,
    webhookId: webhook.id,
    memberId: member.userId,
  };
}

describe.each(testDialects())('organisation deletion (%s)', (dialect) => {
  let env: TestEnv;
  let clock: ManualClock;
  const owner = 'del_test';

  beforeAll(async () => {
    clock = new ManualClock();
    env = await createTestEnv(dialect, { clock });
  });
  afterAll(async () => {
    await env.close();
  });

  it('the deletion plan names every table that has an org_id, as the database itself lists them', async () => {
    expect(await catalogTables(env)).toEqual([...ORGANIZATION_DATA_TABLES].sort());
    // Each table once as a step of its own; replay_job_items (no org_id) only through its jobs.
    expect(new Set(DELETION_STEPS.map((s) => s.table)).size).toBe(DELETION_STEPS.length);
  });

  it('reminds every owner 7 days and 1 day before, once each; then deletes every row of the organisation and nothing of another', async () => {
    const s = env.container.services;
    const { db } = env.container.database;
    const doomed = await populate(env, clock, 'Doomed');
    const other = await populate(env, clock, 'Other');

    // Every table with an org_id holds rows of both organisations before anything happens.
    for (const org of [doomed, other]) {
      const counts = await rowsByTable(env, org.id);
      expect(Object.entries(counts).filter(([, n]) => n === 0), `${org.name}: tables without rows`).toEqual([]);
      expect(await replayItems(env, org.id)).toBeGreaterThan(0);
    }

    const cancelled = await s.lifecycle.cancel(cliActor(doomed.id));
    const cancelledAt = clock.now();
    const deletionAt = cancelledAt + 30 * DAY_MS;
    expect(cancelled.organization.deletion_at).toBe(new Date(deletionAt).toISOString());
    const otherBefore = await rowsByTable(env, other.id);

    // Nothing is due yet: the job would wake at the 7-day point.
    expect(await s.deletion.sendDueReminders()).toBe(0);
    expect(await s.deletion.nextDueAt()).toBe(deletionAt - 7 * DAY_MS);

    clock.set(deletionAt - 7 * DAY_MS);
    // Two workers at once: the claim lets one of them send.
    const [a, b] = await Promise.all([s.deletion.sendDueReminders(), s.deletion.sendDueReminders()]);
    expect(a + b).toBe(2);
    expect(await s.deletion.sendDueReminders()).toBe(0);
    let sent = reminders(env);
    expect(sent.map((m) => `${m.which} ${m.to}`).sort()).toEqual(doomed.owners.map((o) => `7d ${o}`).sort());
    expect(sent[0]!.text).toContain(new Date(deletionAt).toISOString().slice(0, 10));
    expect(sent[0]!.text).toContain('/dashboard/billing');
    expect(await s.deletion.nextDueAt()).toBe(deletionAt - DAY_MS);

    clock.set(deletionAt - DAY_MS + 60_000);
    expect(await s.deletion.sendDueReminders()).toBe(2);
    expect(await s.deletion.sendDueReminders()).toBe(0);
    sent = reminders(env);
    expect(sent.filter((m) => m.which === '1d').map((m) => m.to).sort()).toEqual([...doomed.owners].sort());
    expect(sent).toHaveLength(4);
    expect(await s.deletion.nextDueAt()).toBe(deletionAt);

    // Not before the date.
    expect(await s.deletion.claimDue(owner)).toBeNull();

    clock.set(deletionAt + 1000);
    expect(await s.deletion.sendDueReminders()).toBe(0);
    // A password link still open when the deletion begins.
    const openLink = new URL((await s.accounts.issuePasswordLink(cliActor(''), doomed.memberId, 'reset')).url).pathname.split('/').at(-1)!;
    const claimed = await s.deletion.claimDue(owner);
    expect(claimed).toMatchObject({ id: doomed.id, resumed: false, deletion_at: deletionAt, cancelled_at: cancelledAt });
    const row = await db.selectFrom('organizations').selectAll().where('id', '=', doomed.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ state: 'deleting', deletion_started_at: deletionAt + 1000, lease_owner: owner });

    // From this moment: keys answer 401, sign-in is refused as a wrong password is, sessions are dead.
    const refusedKey = await env.request('GET', '/v1/projects', { key: doomed.ownerKey });
    expect(refusedKey.status).toBe(401);
    const refusedSignIn = await signIn(env, doomed.ownerEmail, PASSWORD);
    expect(refusedSignIn.res.status).toBe(401);
    expect(refusedSignIn.res.text).toContain(INCORRECT);
    await expect(s.accounts.signIn(doomed.ownerEmail, PASSWORD, CONTEXT)).rejects.toMatchObject({ code: 'invalid_credentials', message: INCORRECT });
    const session = await DashboardClient.signedIn(env, other.id, (await db.selectFrom('users').select('id').where('email', '=', other.ownerEmail).executeTakeFirstOrThrow()).id);
    expect((await session.get('/dashboard')).status).toBe(200);
    // Password links: none issued, none usable.
    expect(await s.accounts.viewPasswordLink(openLink)).toEqual({ state: 'not_found' });
    await expect(s.accounts.setPassword(openLink, 'a brand new password', CONTEXT)).rejects.toMatchObject({ status: 404 });
    await expect(s.accounts.issuePasswordLink(cliActor(''), doomed.memberId, 'reset')).rejects.toMatchObject({ status: 404 });
    const tokensBefore = await db.selectFrom('auth_tokens').select('id').where('org_id', '=', doomed.id).execute();
    await s.accounts.forgotPassword(doomed.ownerEmail, CONTEXT);
    expect(await db.selectFrom('auth_tokens').select('id').where('org_id', '=', doomed.id).execute()).toHaveLength(tokensBefore.length);
    // The other organisation signs in as before.
    expect((await signIn(env, other.ownerEmail, PASSWORD)).res.status).toBe(303);
    expect((await env.request('GET', '/v1/projects', { key: other.ownerKey })).status).toBe(200);
    // Resuming is no longer possible.
    await expect(s.lifecycle.resume(cliActor(doomed.id))).rejects.toMatchObject({ status: 409 });

    // A batch of 3 rows forces many batches; it still ends.
    const result = await s.deletion.deleteOrganization(claimed!, owner, { batchSize: 3 });
    expect(result.finished).toBe(true);
    expect(result.batches).toBeGreaterThan(30);
    expect(Object.keys(result.deleted)).toEqual(expect.arrayContaining(['audit_log', 'projects', 'users', 'replay_job_items', 'delivery_attempts', 'workflow_run_steps']));

    // Nothing of it remains in any table (read from the catalog), nor its row.
    const left = await rowsByTable(env, doomed.id);
    expect(Object.entries(left).filter(([, n]) => n > 0)).toEqual([]);
    expect(await replayItems(env, doomed.id)).toBe(0);
    const orphans = await db
      .selectFrom('replay_job_items as i')
      .select('i.job_id')
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('replay_jobs as j').select('j.id').whereRef('j.id', '=', 'i.job_id'))))
      .execute();
    expect(orphans).toEqual([]);
    expect(await db.selectFrom('organizations').select('id').where('id', '=', doomed.id).executeTakeFirst()).toBeUndefined();

    // The tombstone: the id and the dates, nothing else.
    const tombstone = await db.selectFrom('organization_tombstones').selectAll().where('id', '=', doomed.id).executeTakeFirstOrThrow();
    expect(Object.keys(tombstone).sort()).toEqual(['cancelled_at', 'created_at', 'deleted_at', 'deletion_at', 'id']);
    expect(tombstone).toEqual({ id: doomed.id, created_at: row.created_at, cancelled_at: cancelledAt, deletion_at: deletionAt, deleted_at: deletionAt + 1000 });

    // The other organisation: every table exactly as before, but for its two sign-ins above (sessions and their audit rows).
    const otherAfter = await rowsByTable(env, other.id);
    expect(otherAfter).toEqual({ ...otherBefore, sessions: otherBefore.sessions! + 2, audit_log: otherBefore.audit_log! + 2 });
    expect((await db.selectFrom('organizations').select('state').where('id', '=', other.id).executeTakeFirstOrThrow()).state).toBe('active');

    // Running again is harmless: nothing to claim, and the finished deletion does nothing more.
    expect(await s.deletion.claimDue(owner)).toBeNull();
    const again = await s.deletion.deleteOrganization(claimed!, owner, { batchSize: 3 });
    expect(again).toMatchObject({ finished: false, deleted: {} });
    expect(await rowsByTable(env, other.id)).toEqual(otherAfter);
    expect(await s.deletion.nextDueAt()).toBeNull();
    expect(await s.deletion.sendDueReminders()).toBe(0);
    expect(reminders(env)).toHaveLength(4);
  });

  it('sends only the 1-day reminder when the 7-day point passed unnoticed; none once the date has come; resuming ends them', async () => {
    const s = env.container.services;
    const late = await populate(env, clock, 'Late');
    await s.lifecycle.cancel(cliActor(late.id));
    const deletionAt = clock.now() + 30 * DAY_MS;
    const before = reminders(env).length;

    clock.set(deletionAt - 12 * 60 * 60_000);
    expect(await s.deletion.sendDueReminders()).toBe(2);
    expect(reminders(env).slice(before).map((m) => m.which)).toEqual(['1d', '1d']);
    // The unsent 7-day reminder is nothing to wake for: the next moment is the deletion.
    expect(await s.deletion.nextDueAt()).toBe(deletionAt);

    // Resumed then cancelled again: a new cancellation, reminded afresh.
    await s.lifecycle.resume(cliActor(late.id));
    expect(await s.deletion.nextDueAt()).toBeNull();
    await s.lifecycle.cancel(cliActor(late.id));
    const second = clock.now() + 30 * DAY_MS;
    clock.set(second - 7 * DAY_MS);
    expect(await s.deletion.sendDueReminders()).toBe(2);

    // A worker that was down until after the date sends nothing: the deletion follows.
    clock.set(second + 5000);
    expect(await s.deletion.sendDueReminders()).toBe(0);
    expect(await s.deletion.nextDueAt()).toBe(second);
    const job = startLifecycleJob(env.container, { pollMs: 20, batchSize: 50, workerId: 'del_loop' });
    try {
      const deadline = Date.now() + 15_000;
      while ((await env.container.database.db.selectFrom('organizations').select('id').where('id', '=', late.id).executeTakeFirst()) !== undefined) {
        if (Date.now() > deadline) throw new Error('the lifecycle job did not delete the organisation');
        job.kick();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await job.stop();
    }
    expect(Object.entries(await rowsByTable(env, late.id)).filter(([, n]) => n > 0)).toEqual([]);
    expect(await env.container.database.db.selectFrom('organization_tombstones').select('deletion_at').where('id', '=', late.id).executeTakeFirstOrThrow()).toEqual({ deletion_at: second });
  });

  it('resumes after a stop or a lost lease: a stop gives the lease back, an expired lease passes to another worker', async () => {
    const s = env.container.services;
    const { db } = env.container.database;
    const org = await populate(env, clock, 'Leased');
    await s.lifecycle.cancel(cliActor(org.id));
    clock.advance(30 * DAY_MS + 1);

    const first = await s.deletion.claimDue('del_a', 10_000);
    expect(first).toMatchObject({ id: org.id, resumed: false });
    const startedAt = clock.now();
    // A stop asked after a few batches: the deletion ends there, unfinished, and the lease is given back.
    let asked = 0;
    const stopped = await s.deletion.deleteOrganization(first!, 'del_a', { batchSize: 2, shouldStop: () => ++asked > 5 });
    expect(stopped.finished).toBe(false);
    const afterStop = await db.selectFrom('organizations').selectAll().where('id', '=', org.id).executeTakeFirstOrThrow();
    expect(afterStop).toMatchObject({ state: 'deleting', lease_owner: null, lease_expires_at: null, deletion_started_at: startedAt });

    // Another worker takes it at once; while its lease lives nobody else can.
    clock.advance(1000);
    const second = await s.deletion.claimDue('del_b', 10_000);
    expect(second).toMatchObject({ id: org.id, resumed: true });
    expect(await s.deletion.claimDue('del_c', 10_000)).toBeNull();
    expect(await s.deletion.nextDueAt()).toBe(clock.now() + 10_000);
    expect((await db.selectFrom('organizations').select('deletion_started_at').where('id', '=', org.id).executeTakeFirstOrThrow()).deletion_started_at).toBe(startedAt);

    // B's lease runs out (B died); C takes over; B, coming back, finds the lease gone and stops.
    clock.advance(10_001);
    const third = await s.deletion.claimDue('del_c', 10_000);
    expect(third).toMatchObject({ id: org.id, resumed: true });
    const stale = await s.deletion.deleteOrganization(second!, 'del_b', { batchSize: 2 });
    expect(stale).toMatchObject({ finished: false, deleted: {} });
    const done = await s.deletion.deleteOrganization(third!, 'del_c', { batchSize: 1000 });
    expect(done.finished).toBe(true);
    expect(Object.entries(await rowsByTable(env, org.id)).filter(([, n]) => n > 0)).toEqual([]);
    expect(await db.selectFrom('organization_tombstones').select('id').where('id', '=', org.id).execute()).toHaveLength(1);
  });

  it('an organisation being deleted sends no more deliveries, and an attempt finishing after its delivery vanished records nothing', async () => {
    const s = env.container.services;
    const { db } = env.container.database;
    const org = await populate(env, clock, 'Quiet');
    await s.lifecycle.cancel(cliActor(org.id));
    clock.advance(30 * DAY_MS + 1);
    const pending = await db.selectFrom('deliveries').select(['id', 'next_attempt_at']).where('org_id', '=', org.id).where('status', '=', 'pending').execute();
    expect(pending.length).toBeGreaterThan(0);
    await db.updateTable('deliveries').set({ next_attempt_at: clock.now() - 1 }).where('org_id', '=', org.id).where('status', '=', 'pending').execute();

    const claimed = await s.deletion.claimDue(owner);
    expect(claimed?.id).toBe(org.id);
    const taken = await env.container.store.transaction((repos) =>
      repos.deliveryQueue.claimDueQueueItems({ owner: 'dlv_test', now: clock.now(), leaseMs: 30_000, limit: 100, excludeWebhooks: [], perWebhookRoom: () => 100 }),
    );
    expect(taken.filter((d) => d.org_id === org.id)).toEqual([]);
    const statuses = await db.selectFrom('deliveries').select('status').where('id', 'in', pending.map((p) => p.id)).execute();
    expect(statuses.map((r) => r.status)).toEqual(pending.map(() => 'cancelled'));

    expect((await s.deletion.deleteOrganization(claimed!, owner)).finished).toBe(true);
    // A send that was under way when its delivery went: its completion writes nothing.
    const deliveryId = pending[0]!.id;
    await env.container.store.transaction((repos) =>
      repos.deliveryQueue.completeQueueAttempts(
        'dlv_test',
        [
          {
            attempt: {
              id: newId('att'), org_id: org.id, delivery_id: deliveryId, attempt_number: 1, trigger: 'automatic', started_at: clock.now(),
              duration_ms: 5, request_headers: '{}', response_status: 200, response_headers: '{}', response_body: '', error: null, outcome: 'success',
            },
            webhookId: org.webhookId,
            delivery: { status: 'delivered', attempt_count: 1, failure_count: 0, next_attempt_at: null, last_status_code: 200, last_error: null },
          },
        ],
        clock.now(),
      ),
    );
    expect(Object.entries(await rowsByTable(env, org.id)).filter(([, n]) => n > 0)).toEqual([]);
  });
});
