import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { cliActor, scimActor } from '../../src/services/access/actor.js';
import { EXPORT_LEASE_MS, EXPORT_RETENTION_MS, type ExportManifest } from '../../src/services/lifecycle/exports-service.js';
import { DashboardClient, tableRows, textOf } from '../helpers/dashboard.js';
import { startDeliveryHarness, waitFor, type DeliveryHarness } from '../helpers/https-receiver.js';
import { decodeQuotedPrintable, latestInvitationToken, outboxMessages } from '../helpers/mail-outbox.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { connectApp } from '../helpers/oauth-flow.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/**
 * Data export (DASHBOARD 9): requested on the Export page, built by the worker's export job into chunks in
 * the database, downloaded as a ZIP through the dashboard, opened with yauzl and checked, file by file,
 * against the database; no secret in any byte. The rules (who may, one at a time, read-only, expiry, a
 * build abandoned by a dead worker) run on a manual clock with the job driven through the service.
 */

const PAGE = '/dashboard/export';
const DAY_MS = 86_400_000;
const FILES = [
  'projects.ndjson',
  'project_collaborators.ndjson',
  'users.ndjson',
  'api_keys.ndjson',
  'scim_tokens.ndjson',
  'scim_groups.ndjson',
  'connected_apps.ndjson',
  'webhooks.ndjson',
  'workflows.ndjson',
  'runs.ndjson',
  'tasks.ndjson',
  'deliveries.ndjson',
  'audit_log.ndjson',
  'manifest.json',
];

interface ZipContents {
  /** Entry names in the order they appear. */
  names: string[];
  files: Map<string, Buffer>;
}

/** Opens a ZIP held in memory, reading every entry and checking each one's CRC-32 against its data. */
function readZip(buffer: Buffer): Promise<ZipContents> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buffer, { lazyEntries: true, strictFileNames: true, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      const names: string[] = [];
      const files = new Map<string, Buffer>();
      zip.on('error', reject);
      zip.on('end', () => resolve({ names, files }));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (streamErr, stream) => {
          if (streamErr || !stream) return reject(streamErr ?? new Error('no stream'));
          const parts: Buffer[] = [];
          stream.on('data', (c: Buffer) => parts.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            const data = Buffer.concat(parts);
            if (zlib.crc32(data) !== entry.crc32) return reject(new Error(`${entry.fileName}: CRC mismatch`));
            names.push(entry.fileName);
            files.set(entry.fileName, data);
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

function ndjson(zip: ZipContents, name: string): Json[] {
  const text = zip.files.get(name)!.toString('utf8');
  if (text === '') return [];
  expect(text.endsWith('\n')).toBe(true);
  return text.slice(0, -1).split('\n').map((line) => JSON.parse(line));
}

/** The binary body of a dashboard GET (DashboardClient decodes bodies as text). */
async function download(env: TestEnv, browser: DashboardClient, url: string) {
  const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await env.app.inject({ method: 'GET', url, headers: { cookie } });
  return { status: res.statusCode, headers: res.headers, body: res.rawPayload, text: res.body };
}

/** The href of the first "Download" link of the Exports table. */
function downloadLink(html: string): string | null {
  return /<a href="([^"]+)">Download<\/a>/.exec(html)?.[1] ?? null;
}

async function signedIn(env: TestEnv, org: TestOrg, role: 'owner' | 'admin' | 'member' | 'viewer') {
  const userId = role === 'owner' ? org.ownerId : (await org.member(role)).userId;
  const browser = await DashboardClient.signedIn(env, org.id, userId);
  const user = await env.container.store.repos.users.findById(org.id, userId);
  return { browser, userId, email: user!.email };
}

describe.each(testDialects())('data export (%s)', (dialect) => {
  describe('a whole workspace, built by a running worker and downloaded from the Export page', () => {
    let harness: DeliveryHarness;
    // Retries end quickly, so every delivery has settled (and its attempts are final) before the export.
    beforeAll(async () => {
      harness = await startDeliveryHarness(dialect, { WEBHOOK_RETRY_SCHEDULE: '1s' }, { pollIntervalMs: 100 });
    }, 60_000);
    afterAll(async () => harness?.close());

    it('holds every collection as the database does, in the API shapes, with counts in the manifest and no secret in any byte', async () => {
      const { env, receiver } = harness;
      const { services, database } = env.container;
      const db = database.db;
      receiver.on('/fail', (_req, res) => void res.writeHead(500, { 'content-type': 'text/plain' }).end('no'));
      const org = await env.createOrg('Export Co');
      const other = await env.createOrg('Other Co');
      const actor = cliActor(org.id);

      // Members and keys: an admin (who asks for the export), a member, a viewer, an invited user, one who
      // accepted an invitation with a password, and a revoked key.
      const admin = await org.member('admin');
      const member = await org.member('member');
      const viewer = await org.member('viewer', 'read');
      const invited = await env.request('POST', '/v1/users', { key: org.ownerKey, body: { email: 'pending@example.com', role: 'viewer' } });
      expect(invited.status).toBe(201);
      const joined = await env.request('POST', '/v1/users', { key: org.ownerKey, body: { email: 'joined@example.com', role: 'member' } });
      expect(joined.status).toBe(201);
      const invitationToken = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, 'joined@example.com');
      const password = 'correct horse battery staple';
      const accepted = await env.request('POST', `/invitations/${invitationToken}/accept`, { body: { name: 'Joined Person', password } });
      expect(accepted.status).toBe(200);
      await services.admin.revokeKey(viewer.keyId);

      // Webhooks: one delivered to, one failing (its deliveries end failed after one retry), one deleted.
      const givenSecret = 'whsec_given_secret_0123456789_abcdef';
      const good = await services.webhooks.create(actor, { url: receiver.url('/hook'), events: ['project.created', 'task.assigned'], secret: givenSecret });
      const failing = await services.webhooks.create(actor, { url: receiver.url('/fail'), events: ['project.created'] });
      const gone = await services.webhooks.create(actor, { url: receiver.url('/gone'), events: ['project.updated'] });
      await services.webhooks.remove(actor, gone.id);

      // Projects, a workflow with runs (one finished, one waiting on its task), a free task.
      const projects = [];
      for (let i = 0; i < 5; i++) projects.push(await services.projects.create(actor, { name: `Project ${i} ✓`, description: i % 2 ? `about ${i}` : null }));
      await services.projects.update(actor, projects[1]!.id, { status: 'archived' });
      // One private project with a collaborator (CONTRACT 15): the export holds both.
      await services.collaborators.put(actor, projects[2]!.id, member.userId, 'editor');
      await services.projects.update(actor, projects[2]!.id, { visibility: 'private' });
      // Provisioning (CONTRACT 16): a SCIM token, and a group with a member, mapped to a role and a project role.
      const scimToken = await services.scimSettings.createToken(cliActor(org.id), 'Okta');
      const group = await services.scimDirectory.createGroup(scimActor(org.id, 'Okta', { ip: null, userAgent: null, requestId: null }), {
        displayName: 'Engineering',
        members: [{ value: member.userId }],
      });
      await services.scimSettings.saveMapping(cliActor(org.id), { groupId: String(group.id), orgRole: 'member', projectId: projects[0]!.id, projectRole: 'editor' });
      // An app the member connected (CONTRACT 17): the export names it, never its tokens.
      const connected = await connectApp(env, org.id, member.userId, { scope: 'projects:read', name: 'Claude' });
      const workflow = await services.workflows.create(actor, projects[0]!.id, {
        name: 'Review',
        steps: [
          { type: 'task', title: 'Check it', assignee_id: member.userId },
          { type: 'approval', title: 'Approve it', assignee_id: admin.userId },
        ],
      });
      const finished = await services.workflows.startRun(actor, workflow.id);
      const waiting = await services.workflows.startRun(actor, workflow.id);
      await services.tasks.create(actor, projects[2]!.id, { title: 'Free task', assignee_id: member.userId });
      const openTasks = async (runId: string) =>
        db.selectFrom('tasks').select(['id', 'kind']).where('org_id', '=', org.id).where('run_id', '=', runId).where('status', '=', 'open').execute();
      for (const action of ['done', 'approve'] as const) {
        const [task] = await waitFor(`the ${action} task of the run`, async () => {
          const open = await openTasks(finished.id);
          return open.length > 0 ? open : null;
        });
        await services.tasks.resolve(actor, task!.id, { action });
      }
      await waitFor('the first run to complete', async () => (await services.runs.get(actor, finished.id)).status === 'completed');
      await waitFor('the second run to wait on its task', async () => (await openTasks(waiting.id)).length > 0);
      // Something in another organisation, which must not appear.
      await services.projects.create(cliActor(other.id), { name: 'Not theirs' });

      // Every delivery settled, so the attempts read now are the ones the export holds.
      await waitFor(
        'every delivery to settle',
        async () => {
          const pending = await db.selectFrom('deliveries').select('id').where('org_id', '=', org.id).where('status', '=', 'pending').execute();
          return pending.length === 0;
        },
        20_000,
      );
      const failedAttempts = await db.selectFrom('delivery_attempts').select('id').where('org_id', '=', org.id).where('outcome', '=', 'failure').execute();
      expect(failedAttempts.length).toBeGreaterThanOrEqual(2);

      // The admin asks on the page.
      const adminUser = await env.container.store.repos.users.findById(org.id, admin.userId);
      const browser = await DashboardClient.signedIn(env, org.id, admin.userId);
      const page = await browser.get(PAGE);
      expect(page.status).toBe(200);
      expect(page.text).toMatch(/<caption[^>]*>Exports<\/caption>/);
      expect(page.text).toMatch(/<button type="submit"[^>]*>Request export<\/button>/);
      expect(page.text).toMatch(/<a href="\/dashboard\/export" aria-current="page">Export<\/a>/);
      const requested = await browser.post(PAGE);
      expect(requested.status).toBe(303);
      expect(requested.location).toBe(PAGE);
      const after = await browser.get(requested.location!);
      expect(textOf(after.text)).toContain('Export requested.');

      // The worker builds it.
      const ready = await waitFor(
        'the export to be ready',
        async () => {
          const row = await db.selectFrom('exports').selectAll().where('org_id', '=', org.id).executeTakeFirst();
          if (row?.status === 'failed') throw new Error(`export failed: ${row.error}`);
          return row?.status === 'ready' ? row : null;
        },
        30_000,
      );
      expect(ready.requested_by).toBe(admin.userId);
      expect(ready.requested_by_label).toBe(adminUser!.email);
      expect(ready.expires_at).toBe(ready.ready_at! + EXPORT_RETENTION_MS);

      const listed = await browser.get(PAGE);
      const rows = tableRows(listed.text, 'Exports');
      expect(rows).toHaveLength(1);
      expect(rows[0]).toContain(adminUser!.name ?? adminUser!.email);
      expect(rows[0]).toContain('Ready');
      expect(rows[0]).toContain('Download');
      const href = downloadLink(listed.text);
      expect(href).toBe(`${PAGE}/${ready.id}/download`);

      const file = await download(env, browser, href!);
      expect(file.status).toBe(200);
      expect(file.headers['content-type']).toBe('application/zip');
      expect(file.headers['cache-control']).toBe('no-store');
      const day = new Date(ready.started_at!).toISOString().slice(0, 10).replace(/-/g, '');
      expect(file.headers['content-disposition']).toBe(`attachment; filename="workspace-export-${org.id}-${day}.zip"`);
      expect(file.body.length).toBe(ready.size_bytes);
      const zip = await readZip(file.body);
      expect(zip.names).toEqual(FILES);

      // The manifest.
      const manifest = JSON.parse(zip.files.get('manifest.json')!.toString('utf8')) as ExportManifest;
      expect(manifest.format_version).toBe(1);
      expect(manifest.organization).toEqual({ id: org.id, name: 'Export Co', state: 'active', created_at: expect.any(String) });
      expect(manifest.generated_at).toBe(new Date(ready.started_at!).toISOString());
      expect(manifest.files.map((f) => f.name)).toEqual(FILES.slice(0, -1));
      for (const f of manifest.files) {
        expect(ndjson(zip, f.name)).toHaveLength(f.records);
        expect(manifest.counts[f.collection]).toBe(f.records);
      }
      expect(JSON.parse(ready.counts!)).toEqual(manifest.counts);

      // Each collection against the database, in creation order.
      const byOrg = <T extends 'projects' | 'users' | 'api_keys' | 'webhooks' | 'workflows' | 'workflow_runs' | 'tasks' | 'deliveries'>(table: T) =>
        db.selectFrom(table as 'projects').selectAll().where('org_id', '=', org.id).orderBy('seq').execute() as Promise<Json[]>;

      const exportedProjects = ndjson(zip, 'projects.ndjson');
      const dbProjects = await byOrg('projects');
      expect(exportedProjects.map((p) => [p.id, p.name, p.description, p.status])).toEqual(dbProjects.map((p) => [p.id, p.name, p.description, p.status]));
      expect(Object.keys(exportedProjects[0]).sort()).toEqual(['created_at', 'description', 'id', 'name', 'status', 'updated_at', 'visibility']);
      expect(exportedProjects.map((p) => p.name)).not.toContain('Not theirs');

      // Collaborators (CONTRACT 15): one line per (project, user), as the database holds them.
      const exportedCollaborators = ndjson(zip, 'project_collaborators.ndjson');
      const dbCollaborators = await db.selectFrom('project_collaborators').selectAll().where('org_id', '=', org.id).orderBy('seq').execute();
      expect(exportedCollaborators.map((c) => [c.project_id, c.user_id, c.role])).toEqual(dbCollaborators.map((c) => [c.project_id, c.user_id, c.role]));
      expect(exportedCollaborators.length).toBeGreaterThan(0);
      for (const c of exportedCollaborators) expect(Object.keys(c).sort()).toEqual(['created_at', 'project_id', 'role', 'updated_at', 'user_id']);

      const exportedUsers = ndjson(zip, 'users.ndjson');
      const dbUsers = await byOrg('users');
      expect(exportedUsers.map((u) => [u.id, u.email, u.role, u.status])).toEqual(dbUsers.map((u) => [u.id, u.email, u.role, u.status]));
      expect(exportedUsers.map((u) => u.status)).toContain('invited');
      for (const u of exportedUsers) expect(Object.keys(u).sort()).toEqual(['created_at', 'email', 'id', 'name', 'role', 'status', 'updated_at']);

      const exportedKeys = ndjson(zip, 'api_keys.ndjson');
      const dbKeys = await byOrg('api_keys');
      expect(exportedKeys.map((k) => [k.id, k.prefix, k.scope, k.user_id, k.revoked_at !== null])).toEqual(
        dbKeys.map((k) => [k.id, k.key_prefix, k.scope, k.user_id, k.revoked_at !== null]),
      );
      expect(exportedKeys.find((k) => k.id === viewer.keyId).revoked_at).not.toBeNull();
      for (const k of exportedKeys) {
        expect(Object.keys(k).sort()).toEqual(['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'organization_id', 'prefix', 'revoked_at', 'scope', 'user_id']);
      }

      const exportedTokens = ndjson(zip, 'scim_tokens.ndjson');
      expect(exportedTokens.map((t) => [t.id, t.name])).toEqual([[scimToken.id, 'Okta']]);
      expect(Object.keys(exportedTokens[0]).sort()).toEqual(['created_at', 'id', 'last_used_at', 'name', 'prefix', 'revoked_at']);
      const exportedGroups = ndjson(zip, 'scim_groups.ndjson');
      expect(exportedGroups).toEqual([
        expect.objectContaining({ id: group.id, display_name: 'Engineering', org_role: 'member', member_ids: [member.userId], project_roles: [{ project_id: projects[0]!.id, role: 'editor' }] }),
      ]);

      const exportedApps = ndjson(zip, 'connected_apps.ndjson');
      expect(exportedApps).toEqual([
        expect.objectContaining({ app: 'Claude', client_id: connected.client.client_id, user_id: member.userId, resource: '/mcp', scope: 'projects:read', revoked_at: null }),
      ]);
      expect(exportedApps[0].id).toMatch(/^oag_/);

      const exportedWebhooks = ndjson(zip, 'webhooks.ndjson');
      expect(exportedWebhooks.map((w) => [w.id, w.url, w.events])).toEqual([
        [good.id, good.url, ['project.created', 'task.assigned']],
        [failing.id, failing.url, ['project.created']],
      ]);
      for (const w of exportedWebhooks) expect(w).not.toHaveProperty('secret');

      const exportedWorkflows = ndjson(zip, 'workflows.ndjson');
      expect(exportedWorkflows).toHaveLength(1);
      expect(exportedWorkflows[0].id).toBe(workflow.id);
      expect(exportedWorkflows[0].steps.map((s: Json) => [s.type, s.title, s.assignee_id])).toEqual([
        ['task', 'Check it', member.userId],
        ['approval', 'Approve it', admin.userId],
      ]);

      const exportedRuns = ndjson(zip, 'runs.ndjson');
      expect(exportedRuns.map((r) => [r.id, r.status])).toEqual((await byOrg('workflow_runs')).map((r) => [r.id, r.status]));
      expect(exportedRuns.map((r) => r.id)).toEqual([finished.id, waiting.id]);
      const dbSteps = await db.selectFrom('workflow_run_steps').selectAll().where('org_id', '=', org.id).orderBy('run_id').orderBy('position').execute();
      for (const run of exportedRuns) {
        const steps = dbSteps.filter((s) => s.run_id === run.id);
        expect(run.steps.map((s: Json) => [s.number, s.status, s.task_id])).toEqual(steps.map((s) => [s.position + 1, s.status, s.task_id]));
      }
      expect(exportedRuns[0].steps.every((s: Json) => s.status === 'completed' && s.task?.status === 'done')).toBe(true);

      const exportedTasks = ndjson(zip, 'tasks.ndjson');
      expect(exportedTasks.map((t) => [t.id, t.status, t.run_id, t.assignee_id])).toEqual((await byOrg('tasks')).map((t) => [t.id, t.status, t.run_id, t.assignee_id]));
      expect(exportedTasks.map((t) => t.title)).toContain('Free task');

      const exportedDeliveries = ndjson(zip, 'deliveries.ndjson');
      const dbDeliveries = await byOrg('deliveries');
      const dbAttempts = await db.selectFrom('delivery_attempts').selectAll().where('org_id', '=', org.id).orderBy('seq').execute();
      expect(exportedDeliveries.map((d) => [d.id, d.webhook_id, d.event_id, d.status, d.attempts])).toEqual(
        dbDeliveries.map((d) => [d.id, d.webhook_id, d.event_id, d.status, d.attempt_count]),
      );
      expect(new Set(exportedDeliveries.map((d) => d.status))).toEqual(new Set(['delivered', 'failed']));
      for (const d of exportedDeliveries) {
        const attempts = dbAttempts.filter((a) => a.delivery_id === d.id);
        expect(d.attempt_history.map((a: Json) => [a.id, a.attempt_number, a.outcome, a.response_status])).toEqual(
          attempts.map((a) => [a.id, a.attempt_number, a.outcome, a.response_status]),
        );
        expect(JSON.parse(d.payload).event).toBe(d.event_type);
      }
      expect(exportedDeliveries.reduce((n, d) => n + d.attempt_history.length, 0)).toBe(dbAttempts.length);

      // The audit log up to the request (which the export includes); nothing of the download (which came after).
      const exportedAudit = ndjson(zip, 'audit_log.ndjson');
      const dbAudit = await db.selectFrom('audit_log').selectAll().where('org_id', '=', org.id).orderBy('seq').execute();
      const requestRow = dbAudit.find((a) => a.action === 'export.requested')!;
      expect(requestRow).toMatchObject({ actor_id: admin.userId, target_type: 'export', target_id: ready.id, source: 'dashboard' });
      expect(exportedAudit.map((a) => a.id)).toEqual(dbAudit.filter((a) => a.seq <= requestRow.seq).map((a) => a.id));
      expect(exportedAudit.at(-1)).toMatchObject({ action: 'export.requested', target: { type: 'export', id: ready.id } });
      const downloaded = dbAudit.filter((a) => a.action === 'export.downloaded');
      expect(downloaded).toHaveLength(1);
      expect(downloaded[0]).toMatchObject({ actor_id: admin.userId, target_id: ready.id, source: 'dashboard', session_id: browser.sessionId });

      // No secret, hashed or plain, anywhere: not in the ZIP's bytes, not in any file once inflated.
      const secrets = new Set<string>([org.ownerKey, admin.key, member.key, viewer.key, givenSecret, password, invitationToken, scimToken.token, connected.tokens.access_token, connected.tokens.refresh_token!, ...browser.cookies.values()]);
      const hashed = await Promise.all([
        db.selectFrom('scim_tokens').select('token_hash as v').where('org_id', '=', org.id).execute(),
        db.selectFrom('api_keys').select('key_hash as v').where('org_id', '=', org.id).execute(),
        db.selectFrom('users').select('password_hash as v').where('org_id', '=', org.id).execute(),
        db.selectFrom('sessions').select('token_hash as v').where('org_id', '=', org.id).execute(),
        db.selectFrom('invitations').select('token_hash as v').where('org_id', '=', org.id).execute(),
        db.selectFrom('auth_tokens').select('token_hash as v').where('org_id', '=', org.id).execute(),
        db.selectFrom('webhooks').select('secret as v').where('org_id', '=', org.id).execute(),
      ]);
      for (const rowsOfKind of hashed) for (const { v } of rowsOfKind) if (v) secrets.add(v);
      expect(secrets.size).toBeGreaterThanOrEqual(15);
      const haystacks = [file.body, ...zip.files.values()];
      for (const secret of secrets) {
        for (const hay of haystacks) expect(hay.includes(Buffer.from(secret, 'utf8')), `a secret (${secret.slice(0, 6)}…) in the export`).toBe(false);
      }
      // The password hash's salt and digest on their own are not there either (scrypt$N$salt$hash forms).
      for (const { v } of hashed[1]) {
        for (const part of (v ?? '').split('$').filter((p) => p.length >= 16)) {
          for (const hay of haystacks) expect(hay.includes(Buffer.from(part))).toBe(false);
        }
      }

      // The requester got an e-mail with the Export page's link.
      const mail = outboxMessages(env.dataDir).filter((m) => new RegExp(`^To: ${adminUser!.email}$`, 'im').test(m.raw));
      const readyMail = mail.find((m) => /your data export is ready/.test(m.raw));
      expect(readyMail).toBeDefined();
      expect(decodeQuotedPrintable(readyMail!.raw)).toContain(`${env.config.publicBaseUrl}/dashboard/export`);
    });
  });

  describe('rules: who may, one at a time, read-only, expiry, a dead worker', () => {
    let env: TestEnv;
    const clock = new ManualClock();
    beforeAll(async () => {
      env = await createTestEnv(dialect, { clock });
    });
    afterAll(async () => env?.close());

    const exportsOf = (orgId: string) => env.container.database.db.selectFrom('exports').selectAll().where('org_id', '=', orgId).orderBy('seq').execute();
    const chunksOf = (exportId: string) =>
      env.container.database.db.selectFrom('export_chunks').select(['position', 'data']).where('export_id', '=', exportId).orderBy('position').execute();
    /** Runs the export job's work in this process until nothing is queued. */
    async function runJob(owner = 'test-worker'): Promise<number> {
      let built = 0;
      while (await env.container.services.exports.runNext(owner)) built += 1;
      return built;
    }

    it('is for admins and owners: members and viewers get 403 pages and queue nothing; no Export link for them', async () => {
      const org = await env.createOrg();
      await env.container.services.projects.create(cliActor(org.id), { name: 'P' });
      for (const role of ['member', 'viewer'] as const) {
        const { browser } = await signedIn(env, org, role);
        const home = await browser.get('/dashboard/projects');
        expect(home.status).toBe(200);
        expect(home.text).not.toContain('href="/dashboard/export"');
        const page = await browser.get(PAGE);
        expect(page.status).toBe(403);
        expect(textOf(page.text)).toContain(`Your role (${role}) does not allow exporting`);
        const post = await browser.post(PAGE);
        expect(post.status).toBe(403);
        expect(await exportsOf(org.id)).toHaveLength(0);
      }
      // An admin's export exists; a member still cannot download it.
      const admin = await signedIn(env, org, 'admin');
      await admin.browser.get(PAGE);
      expect((await admin.browser.post(PAGE)).status).toBe(303);
      await runJob();
      const [row] = await exportsOf(org.id);
      expect(row!.status).toBe('ready');
      const { browser: memberBrowser } = await signedIn(env, org, 'member');
      expect((await download(env, memberBrowser, `${PAGE}/${row!.id}/download`)).status).toBe(403);
      const owner = await signedIn(env, org, 'owner');
      const ownerPage = await owner.browser.get(PAGE);
      expect(ownerPage.status).toBe(200);
      expect(downloadLink(ownerPage.text)).toBe(`${PAGE}/${row!.id}/download`);
      const audit = await env.container.database.db.selectFrom('audit_log').select('action').where('org_id', '=', org.id).where('action', 'like', 'export.%').execute();
      expect(audit.map((a) => a.action)).toEqual(['export.requested']);
    });

    it('one at a time: a second request while one is queued is 409 on the page; once built, a new one is taken', async () => {
      const org = await env.createOrg();
      const { browser } = await signedIn(env, org, 'admin');
      await browser.get(PAGE);
      expect((await browser.post(PAGE)).status).toBe(303);
      const again = await browser.post(PAGE);
      expect(again.status).toBe(409);
      expect(again.text).toContain('role="alert"');
      expect(textOf(again.text)).toContain('An export of this workspace is already being prepared');
      expect(tableRows(again.text, 'Exports')).toHaveLength(1);
      await expect(env.container.services.exports.request(cliActor(org.id))).rejects.toMatchObject({ status: 409, code: 'conflict' });
      expect(await exportsOf(org.id)).toHaveLength(1);
      const requests = await env.container.database.db.selectFrom('audit_log').select('id').where('org_id', '=', org.id).where('action', '=', 'export.requested').execute();
      expect(requests).toHaveLength(1);

      // Not ready yet: the page follows it by itself, "Request export" waits (disabled), no link, and the
      // download address answers 409 (not ready), as the API's does.
      const waiting = await browser.get(PAGE);
      expect(waiting.text).toContain('data-progress-url="/dashboard/export/progress"');
      expect(waiting.text).toMatch(/<button type="submit" class="button" disabled>Request export<\/button>/);
      const before = JSON.parse((await browser.get(`${PAGE}/progress`)).text);
      expect(before).toMatchObject({ active: true });
      const [queued] = await exportsOf(org.id);
      const early = await download(env, browser, `${PAGE}/${queued!.id}/download`);
      expect(early.status).toBe(409);
      expect(downloadLink((await browser.get(PAGE)).text)).toBeNull();

      await runJob();
      // Built: the fragment's version moves on (the script then shows the page again) and it stops asking.
      const after = JSON.parse((await browser.get(`${PAGE}/progress`)).text);
      expect(after.version).not.toBe(before.version);
      expect(after.active).toBe(false);
      clock.advance(1000);
      expect((await browser.post(PAGE, {}, { csrf: browser.lastCsrf })).status).toBe(303);
      expect((await exportsOf(org.id)).map((e) => e.status)).toEqual(['ready', 'queued']);
    });

    it('another organisation’s export, or an unknown id, is not found', async () => {
      const a = await env.createOrg();
      const b = await env.createOrg();
      const theirs = await env.container.services.exports.request(cliActor(b.id));
      await runJob();
      const { browser } = await signedIn(env, a, 'owner');
      for (const id of [theirs.id, 'exp_doesnotexist', 'bad%00id']) {
        const res = await download(env, browser, `${PAGE}/${id}/download`);
        expect(res.status).toBe(404);
      }
      await expect(env.container.services.exports.openDownload(cliActor(a.id), theirs.id)).rejects.toMatchObject({ status: 404 });
    });

    it('is allowed while read-only, and the download ends with the workspace: capped at the deletion date', async () => {
      const org = await env.createOrg();
      await env.container.services.projects.create(cliActor(org.id), { name: 'Kept' });
      const cancelled = await env.container.services.lifecycle.cancel(cliActor(org.id));
      expect(cancelled.organization.state).toBe('read_only');
      const deletionAt = Date.parse(cancelled.organization.deletion_at!);
      // Late in the grace period: 7 days from now is past the deletion date.
      clock.advance(25 * DAY_MS);
      const { browser, userId } = await signedIn(env, org, 'owner');
      await browser.get(PAGE);
      const requested = await browser.post(PAGE);
      expect(requested.status).toBe(303);
      // A write the read-only workspace refuses, for contrast.
      await expect(env.container.services.projects.create(cliActor(org.id), { name: 'No' })).rejects.toMatchObject({ code: 'workspace_read_only' });
      await runJob();
      const [row] = await exportsOf(org.id);
      expect(row).toMatchObject({ status: 'ready', requested_by: userId, expires_at: deletionAt });
      const file = await download(env, browser, `${PAGE}/${row!.id}/download`);
      expect(file.status).toBe(200);
      const zip = await readZip(file.body);
      const manifest = JSON.parse(zip.files.get('manifest.json')!.toString()) as ExportManifest;
      expect(manifest.organization.state).toBe('read_only');
      expect(ndjson(zip, 'projects.ndjson').map((p) => p.name)).toEqual(['Kept']);

      // Past the deletion date the link is gone (the deletion job removes the rest).
      clock.set(deletionAt);
      const { browser: later } = await signedIn(env, org, 'owner');
      expect(downloadLink((await later.get(PAGE)).text)).toBeNull();
      expect((await download(env, later, `${PAGE}/${row!.id}/download`)).status).toBe(404);
    });

    it('expires after 7 days: the link disappears, the download is not found, and the job removes it with its chunks', async () => {
      const org = await env.createOrg();
      const { browser } = await signedIn(env, org, 'admin');
      await browser.get(PAGE);
      await browser.post(PAGE);
      await runJob();
      const [row] = await exportsOf(org.id);
      expect(row!.expires_at).toBe(row!.ready_at! + 7 * DAY_MS);
      expect((await chunksOf(row!.id)).length).toBeGreaterThan(0);
      await env.container.services.exports.prune();
      expect(await exportsOf(org.id)).toHaveLength(1);

      clock.set(row!.expires_at! - 1);
      const { browser: before } = await signedIn(env, org, 'admin');
      expect(downloadLink((await before.get(PAGE)).text)).not.toBeNull();
      clock.set(row!.expires_at!);
      const { browser: after } = await signedIn(env, org, 'admin');
      const page = await after.get(PAGE);
      expect(downloadLink(page.text)).toBeNull();
      expect(tableRows(page.text, 'Exports')[0]).toContain('Expired');
      expect((await download(env, after, `${PAGE}/${row!.id}/download`)).status).toBe(404);

      expect(await env.container.services.exports.prune()).toBeGreaterThanOrEqual(1);
      expect(await exportsOf(org.id)).toHaveLength(0);
      expect(await chunksOf(row!.id)).toHaveLength(0);
    });

    it('a build abandoned by a dead worker is rebuilt cleanly once its lease expires; the dead worker can write nothing more', async () => {
      const org = await env.createOrg();
      const actor = cliActor(org.id);
      for (let i = 0; i < 30; i++) await env.container.services.projects.create(actor, { name: `Crash ${i}` });
      const requested = await env.container.services.exports.request(actor);

      // The dead worker claimed it and wrote part of a file, then vanished.
      const claimed = await env.container.services.exports.claim('dead-worker');
      expect(claimed!.id).toBe(requested.id);
      const garbage = Buffer.from('GARBAGE-FROM-A-DEAD-WORKER '.repeat(100));
      for (let position = 0; position < 3; position++) await env.container.store.repos.exports.insertChunk(org.id, requested.id, position, garbage);

      // While its lease lives, nobody takes the export over.
      clock.advance(EXPORT_LEASE_MS - 1);
      expect(await runJob('live-worker')).toBe(0);
      expect((await exportsOf(org.id))[0]).toMatchObject({ status: 'running', lease_owner: 'dead-worker' });

      clock.advance(1);
      expect(await runJob('live-worker')).toBe(1);
      const [row] = await exportsOf(org.id);
      expect(row).toMatchObject({ status: 'ready', lease_owner: null });
      // The dead worker, if it woke up, could not renew or write.
      expect(await env.container.store.repos.exports.holdLease(org.id, requested.id, 'dead-worker', clock.now(), EXPORT_LEASE_MS)).toBe(false);

      const chunks = await chunksOf(requested.id);
      expect(chunks.map((c) => c.position)).toEqual(chunks.map((_, i) => i));
      const stored = Buffer.concat(chunks.map((c) => Buffer.from(c.data)));
      expect(stored.length).toBe(row!.size_bytes);
      expect(stored.includes(Buffer.from('GARBAGE'))).toBe(false);

      const { browser } = await signedIn(env, org, 'owner');
      const file = await download(env, browser, `${PAGE}/${row!.id}/download`);
      expect(file.body.equals(stored)).toBe(true);
      const zip = await readZip(file.body);
      expect(zip.names).toEqual(FILES);
      const names = ndjson(zip, 'projects.ndjson').map((p) => p.name);
      expect(names).toEqual(Array.from({ length: 30 }, (_, i) => `Crash ${i}`));
    });

    it('a workspace being deleted is left alone: no new export, and the job does not build a queued one', async () => {
      const org = await env.createOrg();
      const queued = await env.container.services.exports.request(cliActor(org.id));
      await env.container.database.db.updateTable('organizations').set({ state: 'deleting' }).where('id', '=', org.id).execute();
      expect(await runJob()).toBe(0);
      expect((await exportsOf(org.id))[0]).toMatchObject({ id: queued.id, status: 'queued' });
      await expect(env.container.services.exports.request(cliActor(org.id))).rejects.toMatchObject({ status: 409 });
    });
  });
});
