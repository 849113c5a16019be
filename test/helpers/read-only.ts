import type { Container } from '../../src/container.js';
import type { Role } from '../../src/db/schema.js';
import { cliActor, FULL_SCOPE, scimActor, type UserActor } from '../../src/services/access/actor.js';
import { latestInvitationToken } from './mail-outbox.js';
import type { TestEnv, TestOrg } from './test-env.js';

/**
 * Every table that holds an organisation's rows, read whole for one organisation, to prove that a refused
 * change wrote nothing anywhere. Left out: `request_counts` (every API request is counted, refused or
 * not), and the two columns a request touches by design (`api_keys.last_used_at`, `sessions.last_seen_at`).
 */
const ORG_TABLES = [
  'users', 'projects', 'workflows', 'tasks', 'workflow_runs', 'workflow_run_steps', 'api_keys', 'sessions', 'auth_tokens',
  'audit_log', 'invitations', 'webhooks', 'idempotency_keys', 'events', 'deliveries', 'delivery_attempts', 'delivery_hourly',
  'replay_jobs', 'exports',
] as const;

const VOLATILE: Record<string, readonly string[]> = { api_keys: ['last_used_at'], sessions: ['last_seen_at'] };

export type OrgSnapshot = Record<string, string[]>;

/** The organisation's rows, table by table, each row as sorted JSON (order-independent, comparable with toEqual). */
export async function orgSnapshot(container: Container, orgId: string): Promise<OrgSnapshot> {
  const db = container.database.db;
  // Last-used writes run after responses; wait for them so they cannot land between two snapshots.
  await container.services.apiKeys.flush();
  const snapshot: OrgSnapshot = {};
  const rowsOf = (table: string, rows: Record<string, unknown>[]) =>
    rows
      .map((row) => {
        const copy = { ...row };
        for (const column of VOLATILE[table] ?? []) delete copy[column];
        return JSON.stringify(copy, (_, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
      })
      .sort();
  snapshot.organizations = rowsOf('organizations', await db.selectFrom('organizations').selectAll().where('id', '=', orgId).execute());
  for (const table of ORG_TABLES) {
    snapshot[table] = rowsOf(table, await db.selectFrom(table).selectAll().where('org_id', '=', orgId).execute());
  }
  const jobs = (await db.selectFrom('replay_jobs').select('id').where('org_id', '=', orgId).execute()).map((j) => j.id);
  snapshot.replay_job_items = rowsOf('replay_job_items', jobs.length ? await db.selectFrom('replay_job_items').selectAll().where('job_id', 'in', jobs).execute() : []);
  return snapshot;
}

/** Cancels the subscription as the operator would; returns the deletion time (epoch ms). */
export async function cancelSubscription(container: Container, orgId: string): Promise<number> {
  const { organization } = await container.services.lifecycle.cancel(cliActor(orgId));
  return Date.parse(organization.deletion_at!);
}

export async function resumeSubscription(container: Container, orgId: string): Promise<void> {
  await container.services.lifecycle.resume(cliActor(orgId));
}

/** A person acting through the dashboard, with the organisation's state read now, as a session carries it. */
export async function sessionActorOf(container: Container, orgId: string, userId: string): Promise<UserActor> {
  const { store } = container;
  const user = await store.repos.users.findById(orgId, userId);
  const workspace = await store.repos.organizations.workspace(orgId);
  if (!user || !workspace) throw new Error(`no user ${userId} in ${orgId}`);
  return {
    type: 'user',
    orgId,
    userId,
    label: user.email,
    role: user.role as Role,
    scope: FULL_SCOPE,
    keyId: null,
    sessionId: 'sess_test',
    confirmedAt: container.clock.now(),
    workspace,
    context: { source: 'dashboard', ip: '192.0.2.9', userAgent: 'vitest', requestId: null },
  };
}

/**
 * An organisation with something of every kind a write could touch: projects, a workflow with a run
 * waiting on an approval, a plain task, subscriptions with a failed delivery and a bulk replay job, an
 * invitation, and people of each role with keys.
 */
export interface ReadOnlyWorld {
  org: TestOrg;
  projectId: string;
  /** A second project, for deletions. */
  spareProjectId: string;
  projectName: string;
  workflowId: string;
  stepId: string;
  runId: string;
  /** The approval the run waits on, assigned to `member`. */
  approvalTaskId: string;
  /** A plain to-do assigned to `member`. */
  taskId: string;
  webhookId: string;
  /** A subscription kept for the allowed deletion. */
  spareWebhookId: string;
  /** A failed delivery of `webhookId`. */
  deliveryId: string;
  replayJobId: string;
  invitationToken: string;
  invitedUserId: string;
  member: { userId: string; key: string; keyId: string };
  admin: { userId: string; key: string; keyId: string };
  viewer: { userId: string; key: string; keyId: string };
  /** The owner's key limited to reads. */
  readKey: { key: string; keyId: string };
  /** A SCIM token (and its secret) and a group the provider pushed (CONTRACT 16). */
  scimTokenId: string;
  scimToken: string;
  scimGroupId: string;
}

export async function buildReadOnlyWorld(env: TestEnv, orgName = 'Readonly Co'): Promise<ReadOnlyWorld> {
  const { container } = env;
  const s = container.services;
  const org = await env.createOrg(orgName);
  const ok = async (method: string, url: string, body?: unknown) => {
    const res = await env.request(method, url, { key: org.ownerKey, body });
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.text}`);
    return res.body;
  };
  const member = await org.member('member');
  const admin = await org.member('admin');
  const viewer = await org.member('viewer');
  const read = await s.admin.createKey({ userId: org.ownerId, scope: 'read', name: 'reader' });

  const webhook = await ok('POST', '/v1/webhooks', { url: 'https://127.0.0.1:9/hook', events: ['project.created', 'project.updated', 'project.deleted'] });
  const spareWebhook = await ok('POST', '/v1/webhooks', { url: 'https://127.0.0.1:9/spare', events: ['project.created'] });
  const projectName = `Launch ${orgName}`;
  const project = await ok('POST', '/v1/projects', { name: projectName });
  const spare = await ok('POST', '/v1/projects', { name: 'Spare' });
  // The creation's delivery to the first subscription, made a permanent failure so that it may be replayed.
  const delivery = await container.database.db
    .selectFrom('deliveries')
    .select('id')
    .where('org_id', '=', org.id)
    .where('webhook_id', '=', webhook.id)
    .orderBy('seq')
    .executeTakeFirstOrThrow();
  await container.database.db
    .updateTable('deliveries')
    .set({ status: 'failed', next_attempt_at: null, failure_count: 1, attempt_count: 1 })
    .where('org_id', '=', org.id)
    .where('id', '=', delivery.id)
    .execute();
  const job = await ok('POST', `/v1/webhooks/${webhook.id}/replay-failed`, { since: '2000-01-01T00:00:00.000Z' });

  const invitee = await ok('POST', '/v1/users', { email: `invitee.${org.id}@example.com`, role: 'member' });
  const invitationToken = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, invitee.email);

  const owner = await sessionActorOf(container, org.id, org.ownerId);
  const workflow = await s.workflows.create(owner, project.id, {
    name: 'Sign-off',
    steps: [{ type: 'approval', title: 'Sign off', assignee_id: member.userId }],
  });
  const run = await s.workflows.startRun(owner, workflow.id);
  const keys = await s.runs.claimDue('world-builder', 30_000, 1000);
  for (const key of keys) await s.runs.advance('world-builder', key);
  const detail = await s.runs.get(owner, run.id);
  const approvalTaskId = detail.steps[0]!.task_id;
  if (!approvalTaskId) throw new Error('the run did not start its approval');
  const task = await s.tasks.create(owner, project.id, { title: 'Write the notes', assignee_id: member.userId });
  const scimToken = await s.scimSettings.createToken(cliActor(org.id), 'Okta');
  const scimGroup = await s.scimDirectory.createGroup(scimActor(org.id, 'Okta', { ip: null, userAgent: null, requestId: null }), { displayName: 'Engineering' });

  return {
    org,
    projectId: project.id,
    spareProjectId: spare.id,
    projectName,
    workflowId: workflow.id,
    stepId: workflow.steps[0]!.id,
    runId: run.id,
    approvalTaskId,
    taskId: task.id,
    webhookId: webhook.id,
    spareWebhookId: spareWebhook.id,
    deliveryId: delivery.id,
    replayJobId: job.id,
    invitationToken,
    invitedUserId: invitee.id,
    member,
    admin,
    viewer,
    readKey: { key: read.key, keyId: read.id },
    scimTokenId: scimToken.id,
    scimToken: scimToken.token,
    scimGroupId: String(scimGroup.id),
  };
}
