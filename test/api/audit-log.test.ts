import { ACTIVE_WORKSPACE } from '../../src/services/access/workspace.js';
import type { Readable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDeliveryWorker } from '../../src/worker/index.js';
import type { Role } from '../../src/db/schema.js';
import { toIso } from '../../src/lib/time.js';
import { cliActor, FULL_SCOPE, systemActor, type Actor, type UserActor } from '../../src/services/access/actor.js';
import { recordAudit } from '../../src/services/audit/audit-record.js';
import { canReadAudit, CSV_COLUMNS, type AuditEntryView, type AuditListFilter } from '../../src/services/audit/audit-service.js';
import { waitFor } from '../helpers/https-receiver.js';
import { createTestEnv, testDialects, type ApiResponse, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const START = Date.UTC(2026, 10, 22, 9, 30, 0, 0);
const DAY_MS = 86_400_000;
const UA = 'audit-test/1.0 (+https://example.com)';

/** Who made an API call, as the audit row must name them. */
interface Caller {
  key: string;
  keyId: string;
  userId: string;
  email: string;
}

describe.each(testDialects())('audit log (%s)', (dialect) => {
  let env: TestEnv;
  let time = START;
  const clock = { now: () => time };
  /** Moves time on, so every change below has its own occurred_at. */
  const tick = (ms = 1000) => (time += ms);
  const logLines: string[] = [];

  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
    env = await createTestEnv(dialect, { clock, logger });
  });
  afterAll(async () => env?.close());

  const audit = () => env.container.services.audit;
  const db = () => env.container.database.db;

  async function callerOf(key: string): Promise<Caller> {
    const principal = await env.container.services.auth.authenticate(key);
    if (!principal) throw new Error('the test key does not authenticate');
    return { key, keyId: principal.keyId, userId: principal.userId, email: principal.email };
  }

  const api = (method: string, url: string, caller: Caller, body?: unknown) =>
    env.request(method, url, { key: caller.key, body, headers: { 'user-agent': UA } });

  /** Every entry of the organisation matching the filter, newest first, following cursors. */
  async function entries(orgId: string, filter: AuditListFilter = {}, actor: Actor = cliActor(orgId), limit = 100): Promise<AuditEntryView[]> {
    const all: AuditEntryView[] = [];
    let cursor: string | undefined;
    do {
      const page = await audit().list(actor, filter, { limit, cursor });
      all.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return all;
  }

  const newest = async (orgId: string) => (await audit().list(cliActor(orgId), {}, { limit: 1 })).items[0]!;
  const countRows = async (orgId: string) => (await db().selectFrom('audit_log').select('id').where('org_id', '=', orgId).execute()).length;

  function userActor(orgId: string, userId: string, role: Role): UserActor {
    return {
      type: 'user',
      orgId,
      userId,
      label: `${role}@example.com`,
      role,
      scope: FULL_SCOPE,
      keyId: null,
      workspace: ACTIVE_WORKSPACE,
      sessionId: 'sess_test',
    confirmedAt: Date.now(),
      context: { source: 'dashboard', ip: '192.0.2.7', userAgent: UA, requestId: 'req_test' },
    };
  }

  /** The whole entry an API change must leave: the key's user and key, the request, success. */
  function expectApiEntry(entry: AuditEntryView, res: ApiResponse, caller: Caller, expected: Pick<AuditEntryView, 'action' | 'target' | 'changes'>) {
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
    expect(entry).toEqual({
      id: expect.stringMatching(/^aud_[0-9a-z]{24}$/),
      occurred_at: toIso(time),
      actor: { type: 'user', id: caller.userId, label: caller.email, api_key_id: caller.keyId, session_id: null },
      action: expected.action,
      target: expected.target,
      source: 'api',
      ip: '127.0.0.1',
      user_agent: UA,
      request_id: res.headers['x-request-id'],
      outcome: 'success',
      changes: expected.changes,
    });
  }

  async function expectDomainError(promise: Promise<unknown>, status: number, code: string, details?: unknown) {
    const err = await promise.then(
      () => {
        throw new Error('expected the call to fail');
      },
      (e: unknown) => e as { status: number; code: string; details?: unknown },
    );
    expect(err).toMatchObject({ status, code });
    if (details !== undefined) expect(err.details).toEqual(details);
  }

  async function readAll(stream: Readable): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    return Buffer.concat(chunks).toString('utf8');
  }

  describe('one row per change, from the API', () => {
    let org: TestOrg;
    let owner: Caller;
    let admin: Caller;

    beforeAll(async () => {
      org = await env.createOrg('Doors');
      owner = await callerOf(org.ownerKey);
      const member = await org.member('admin');
      admin = await callerOf(member.key);
    });

    it('projects: created, updated with old → new, nothing for an update that changes nothing, deleted', async () => {
      tick();
      let before = await countRows(org.id);
      const created = await api('POST', '/v1/projects', admin, { name: 'Alpha', description: 'first', status: 'draft' });
      expect(created.status).toBe(201);
      const id = created.body.id;
      expect(await countRows(org.id)).toBe(before + 1);
      expectApiEntry(await newest(org.id), created, admin, {
        action: 'project.created',
        target: { type: 'project', id, label: 'Alpha' },
        changes: { name: { old: null, new: 'Alpha' }, description: { old: null, new: 'first' }, status: { old: null, new: 'draft' }, visibility: { old: null, new: 'organization' } },
      });

      tick();
      before = await countRows(org.id);
      const updated = await api('PUT', `/v1/projects/${id}`, admin, { name: 'Beta', status: 'draft' });
      expect(updated.status).toBe(200);
      expect(await countRows(org.id)).toBe(before + 1);
      expectApiEntry(await newest(org.id), updated, admin, {
        action: 'project.updated',
        target: { type: 'project', id, label: 'Beta' },
        changes: { name: { old: 'Alpha', new: 'Beta' } },
      });

      tick();
      before = await countRows(org.id);
      const unchanged = await api('PUT', `/v1/projects/${id}`, admin, { name: 'Beta', description: 'first' });
      expect(unchanged.status).toBe(200);
      expect(await countRows(org.id)).toBe(before);

      tick();
      const deleted = await api('DELETE', `/v1/projects/${id}`, owner);
      expect(deleted.status).toBe(204);
      expect(await countRows(org.id)).toBe(before + 1);
      expectApiEntry(await newest(org.id), deleted, owner, { action: 'project.deleted', target: { type: 'project', id, label: 'Beta' }, changes: null });
    });

    it('members: invited, role changed, removed (DELETE /v1/users/:id)', async () => {
      tick();
      const before = await countRows(org.id);
      const invited = await api('POST', '/v1/users', admin, { email: 'Nina@Example.com', role: 'member' });
      expect(invited.status).toBe(201);
      const id = invited.body.id;
      expectApiEntry(await newest(org.id), invited, admin, {
        action: 'member.invited',
        target: { type: 'user', id, label: 'Nina@Example.com' },
        changes: { role: { old: null, new: 'member' } },
      });

      tick();
      const changed = await api('PUT', `/v1/users/${id}`, admin, { role: 'viewer' });
      expect(changed.status).toBe(200);
      expectApiEntry(await newest(org.id), changed, admin, {
        action: 'member.role_changed',
        target: { type: 'user', id, label: 'Nina@Example.com' },
        changes: { role: { old: 'member', new: 'viewer' } },
      });

      tick();
      const removed = await api('DELETE', `/v1/users/${id}`, owner);
      expect(removed.status).toBe(204);
      expectApiEntry(await newest(org.id), removed, owner, {
        action: 'member.removed',
        target: { type: 'user', id, label: 'Nina@Example.com' },
        changes: { role: { old: 'viewer', new: null }, status: { old: 'invited', new: null } },
      });
      expect(await countRows(org.id)).toBe(before + 3);
    });

    it('webhooks: created without the secret anywhere in the row, and deleted', async () => {
      const secret = 'given-secret-0123456789-abcdef';
      for (const body of [
        { url: 'https://127.0.0.1:9/given', events: ['project.created'], secret },
        { url: 'https://127.0.0.1:9/generated', events: ['project.created', 'project.deleted', 'project.created'] },
      ]) {
        tick();
        const res = await api('POST', '/v1/webhooks', admin, body);
        expect(res.status).toBe(201);
        expect(res.body.secret).toEqual(expect.any(String));
        const entry = await newest(org.id);
        expectApiEntry(entry, res, admin, {
          action: 'webhook.created',
          target: { type: 'webhook', id: res.body.id, label: body.url },
          changes: {
            url: { old: null, new: body.url },
            events: { old: null, new: [...new Set(body.events)] },
            secret: { old: null, new: body.secret ? 'given' : 'generated' },
          },
        });
        // Not in any column of the stored row, in any form.
        const row = await db().selectFrom('audit_log').selectAll().where('id', '=', entry.id).executeTakeFirstOrThrow();
        const stored = JSON.stringify(row);
        expect(stored).not.toContain(res.body.secret);
        expect(stored).not.toContain(res.body.secret.slice(6, 30));
      }

      const list = await api('GET', '/v1/webhooks', admin);
      const doomed = list.body.data.find((w: { url: string }) => w.url.endsWith('/given'));
      tick();
      const deleted = await api('DELETE', `/v1/webhooks/${doomed.id}`, admin);
      expect(deleted.status).toBe(204);
      expectApiEntry(await newest(org.id), deleted, admin, {
        action: 'webhook.deleted',
        target: { type: 'webhook', id: doomed.id, label: doomed.url },
        changes: null,
      });
    });

    it('deliveries: a replay of a failed delivery', async () => {
      const hook = await api('POST', '/v1/webhooks', admin, { url: 'https://127.0.0.1:9/replay', events: ['project.created'] });
      await api('POST', '/v1/projects', admin, { name: 'Replayed' });
      const listed = await api('GET', `/v1/webhooks/${hook.body.id}/deliveries`, admin);
      const deliveryId = listed.body.data[0].id;
      // No worker runs in this suite: settle the delivery as failed, as the worker would after its retries.
      await db().updateTable('deliveries').set({ status: 'failed', next_attempt_at: null }).where('id', '=', deliveryId).execute();

      tick();
      const before = await countRows(org.id);
      const res = await api('POST', `/v1/webhooks/${hook.body.id}/deliveries/${deliveryId}/replay`, admin);
      expect(res.status).toBe(202);
      expect(await countRows(org.id)).toBe(before + 1);
      expectApiEntry(await newest(org.id), res, admin, {
        action: 'delivery.replayed',
        target: { type: 'delivery', id: deliveryId, label: 'project.created' },
        changes: { status: { old: 'failed', new: 'pending' } },
      });
    });

    it('writes nothing for a change that fails: 409 last owner, 404, 403', async () => {
      tick();
      const before = await countRows(org.id);
      const lastOwner = await api('PUT', `/v1/users/${owner.userId}`, owner, { role: 'admin' });
      expect(lastOwner.status).toBe(409);
      expect(lastOwner.body.error.code).toBe('conflict');
      const removeLastOwner = await api('DELETE', `/v1/users/${owner.userId}`, owner);
      expect(removeLastOwner.status).toBe(409);
      expect((await api('DELETE', '/v1/projects/proj_doesnotexist', admin)).status).toBe(404);
      const viewer = await callerOf((await org.member('viewer')).key);
      const afterSetup = await countRows(org.id);
      expect((await api('POST', '/v1/projects', viewer, { name: 'Nope' })).status).toBe(403);
      expect(afterSetup - before).toBe(2); // the viewer's member.added and api_key.created (CLI), nothing else
      expect(await countRows(org.id)).toBe(afterSetup);
    });

    it('a rolled-back transaction leaves no row', async () => {
      const before = await countRows(org.id);
      const failed = env.container.store.transaction(async (repos) => {
        await recordAudit(repos, cliActor(org.id), { action: 'task.created', target: { type: 'task', id: 'task_x' }, at: time });
        throw new Error('the change failed after its audit row was written');
      });
      await expect(failed).rejects.toThrow('the change failed');
      expect(await countRows(org.id)).toBe(before);
      expect(await entries(org.id, { action: 'task.created' })).toEqual([]);
    });
  });

  describe('one row per change, from the CLI', () => {
    it('adding a member, creating and revoking a key: actor cli, source cli, no request data', async () => {
      const org = await env.createOrg('Cli');
      const admin = env.container.services.admin;
      const cliEntry = (action: string, target: AuditEntryView['target'], changes: AuditEntryView['changes']) => ({
        id: expect.stringMatching(/^aud_/),
        occurred_at: toIso(time),
        actor: { type: 'cli', id: null, label: 'cli', api_key_id: null, session_id: null },
        action,
        target,
        source: 'cli',
        ip: null,
        user_agent: null,
        request_id: null,
        outcome: 'success',
        changes,
      });

      tick();
      const user = await admin.addUser({ orgId: org.id, email: 'carl@example.com', role: 'admin', name: 'Carl' });
      expect(await newest(org.id)).toEqual(
        cliEntry('member.added', { type: 'user', id: user.id, label: 'carl@example.com' }, { role: { old: null, new: 'admin' }, status: { old: null, new: 'active' } }),
      );

      tick();
      const key = await admin.createKey({ userId: user.id, scope: 'projects:read', name: 'ci' });
      const created = await newest(org.id);
      expect(created).toEqual(
        cliEntry('api_key.created', { type: 'api_key', id: key.id, label: 'ci' }, {
          name: { old: null, new: 'ci' },
          scope: { old: null, new: 'projects:read' },
          user_id: { old: null, new: user.id, new_label: user.name ?? user.email },
        }),
      );
      const row = await db().selectFrom('audit_log').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
      expect(JSON.stringify(row)).not.toContain(key.key);

      tick();
      await admin.revokeKey(key.id);
      expect(await newest(org.id)).toEqual(cliEntry('api_key.revoked', { type: 'api_key', id: key.id, label: 'ci' }, null));
      // Revoking again changes nothing and records nothing.
      const before = await countRows(org.id);
      await admin.revokeKey(key.id);
      expect(await countRows(org.id)).toBe(before);
    });
  });

  describe('reading: filters, paging, permissions', () => {
    let org: TestOrg;
    let admin: Caller;
    const at: Record<string, number> = {};
    let redId: string;

    beforeAll(async () => {
      tick();
      org = await env.createOrg('Filters');
      admin = await callerOf((await org.member('admin')).key);
      const step = async (name: string, work: () => Promise<ApiResponse>) => {
        at[name] = tick();
        const res = await work();
        expect(res.status, name).toBeLessThan(300);
        return res;
      };
      redId = (await step('red', () => api('POST', '/v1/projects', admin, { name: 'Red' }))).body.id;
      await step('blue', () => api('POST', '/v1/projects', admin, { name: 'Blue' }));
      await step('crimson', () => api('PUT', `/v1/projects/${redId}`, admin, { name: 'Crimson' }));
      await step('hook', () => api('POST', '/v1/webhooks', admin, { url: 'https://127.0.0.1:9/filters', events: ['project.created'] }));
      await step('zed', () => api('POST', '/v1/users', admin, { email: 'zed@example.org', role: 'viewer' }));
    });

    const actions = (list: AuditEntryView[]) => list.map((e) => `${e.action} ${e.target?.label ?? ''}`.trim());

    it('lists newest first, with the organisation’s rows only', async () => {
      const all = await entries(org.id);
      expect(actions(all)).toEqual([
        'member.invited zed@example.org',
        'webhook.created https://127.0.0.1:9/filters',
        'project.updated Crimson',
        'project.created Blue',
        'project.created Red',
        `api_key.created ${all[5]!.target!.label}`,
        `member.added ${all[6]!.target!.label}`,
        'api_key.created owner key',
        `member.added ${all[8]!.target!.label}`,
        'organization.created Filters',
      ]);
      expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    });

    it('filters by action prefix (CONTRACT 13): a word, a word and a dot, part of an action or a whole one', async () => {
      expect(actions(await entries(org.id, { action: 'project.' }))).toEqual(['project.updated Crimson', 'project.created Blue', 'project.created Red']);
      expect(actions(await entries(org.id, { action: 'project' }))).toEqual(['project.updated Crimson', 'project.created Blue', 'project.created Red']);
      expect(actions(await entries(org.id, { action: 'project.created' }))).toEqual(['project.created Blue', 'project.created Red']);
      expect(actions(await entries(org.id, { action: 'project.create' }))).toEqual(['project.created Blue', 'project.created Red']);
      expect(await entries(org.id, { action: 'projects' })).toEqual([]);
      expect((await entries(org.id, { action: 'member.' })).map((e) => e.action)).toEqual(['member.invited', 'member.added', 'member.added']);
      // LIKE wildcards in the filter are literal text.
      expect(await entries(org.id, { action: '%.' })).toEqual([]);
      expect(await entries(org.id, { action: '_roject.' })).toEqual([]);
    });

    it('filters by actor: user id, part of the e-mail (any case), or cli', async () => {
      const byId = await entries(org.id, { actor: admin.userId });
      expect(byId).toHaveLength(5);
      expect(byId.every((e) => e.actor.id === admin.userId)).toBe(true);
      const local = admin.email.split('@')[0]!;
      expect((await entries(org.id, { actor: local.toUpperCase() })).map((e) => e.id)).toEqual(byId.map((e) => e.id));
      const cli = await entries(org.id, { actor: 'cli' });
      expect(cli.map((e) => e.action)).toEqual(['api_key.created', 'member.added', 'api_key.created', 'member.added', 'organization.created']);
      expect(await entries(org.id, { actor: 'nobody-like-this' })).toEqual([]);
    });

    it('filters by target: id or part of the label', async () => {
      expect(actions(await entries(org.id, { target: redId }))).toEqual(['project.updated Crimson', 'project.created Red']);
      expect(actions(await entries(org.id, { target: 'rims' }))).toEqual(['project.updated Crimson']);
      expect(actions(await entries(org.id, { target: 'ZED@' }))).toEqual(['member.invited zed@example.org']);
    });

    it('filters by time: from inclusive, to exclusive, combined with the others', async () => {
      expect(actions(await entries(org.id, { from: at.blue, to: at.hook }))).toEqual(['project.updated Crimson', 'project.created Blue']);
      expect(actions(await entries(org.id, { from: at.crimson }))).toHaveLength(3);
      expect(actions(await entries(org.id, { to: at.red! + 1 }))).toContain('project.created Red');
      expect(actions(await entries(org.id, { action: 'project.', actor: admin.userId, from: at.blue }))).toEqual(['project.updated Crimson', 'project.created Blue']);
    });

    it('pages by cursor, visiting every row exactly once, even while rows are added', async () => {
      const all = await entries(org.id);
      for (const limit of [1, 3, 4]) {
        const seen = await entries(org.id, {}, cliActor(org.id), limit);
        expect(seen.map((e) => e.id), `limit ${limit}`).toEqual(all.map((e) => e.id));
      }
      const filtered = await entries(org.id, { action: 'project.' }, cliActor(org.id), 2);
      expect(filtered).toHaveLength(3);

      const first = await audit().list(cliActor(org.id), {}, { limit: 4 });
      tick();
      await api('POST', '/v1/projects', admin, { name: 'Added mid-walk' });
      const rest: AuditEntryView[] = [];
      let cursor = first.nextCursor;
      while (cursor) {
        const page = await audit().list(cliActor(org.id), {}, { limit: 4, cursor });
        rest.push(...page.items);
        cursor = page.nextCursor;
      }
      expect([...first.items, ...rest].map((e) => e.id)).toEqual(all.map((e) => e.id));
    });

    it('rejects bad filters and paging with validation_failed naming the field', async () => {
      const actor = cliActor(org.id);
      const list = (filter: AuditListFilter, page = { limit: 10 } as { limit: number; cursor?: string }) => audit().list(actor, filter, page);
      await expect(list({ action: 'a'.repeat(100) })).resolves.toMatchObject({ items: [] });
      await expect(list({ actor: 'é'.repeat(200), target: 't'.repeat(200) })).resolves.toMatchObject({ items: [] });
      await expectDomainError(list({ action: 'a'.repeat(101) }), 400, 'validation_failed', [{ field: 'action', message: 'must be at most 100 characters' }]);
      await expectDomainError(list({ actor: 'a'.repeat(201) }), 400, 'validation_failed', [{ field: 'actor', message: 'must be at most 200 characters' }]);
      await expectDomainError(list({ target: 'a'.repeat(201) }), 400, 'validation_failed', [{ field: 'target', message: 'must be at most 200 characters' }]);
      for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 253_402_300_800_000]) {
        await expectDomainError(list({ from: bad }), 400, 'validation_failed', [{ field: 'from', message: 'must be a time between 1970-01-01 and 9999-12-31' }]);
        await expectDomainError(list({ to: bad }), 400, 'validation_failed');
      }
      await expectDomainError(list({ from: at.blue, to: at.blue }), 400, 'validation_failed', [{ field: 'to', message: 'must be later than from' }]);
      await expectDomainError(list({ from: at.blue, to: at.red }), 400, 'validation_failed', [{ field: 'to', message: 'must be later than from' }]);
      for (const limit of [0, 101, 2.5]) await expectDomainError(list({}, { limit }), 400, 'validation_failed', [{ field: 'limit', message: 'must be an integer from 1 to 100' }]);
      await expectDomainError(list({}, { limit: 10, cursor: 'not-a-cursor' }), 400, 'validation_failed');
      // Empty filter fields (an empty form field) are no filter.
      expect((await audit().list(actor, { action: '', actor: '', target: '' }, { limit: 100 })).items.length).toBeGreaterThan(5);
    });

    it('lets admins, owners and operators read; members and viewers get 403 forbidden (before any 400)', async () => {
      for (const role of ['member', 'viewer'] as const) {
        const actor = userActor(org.id, 'user_x', role);
        expect(canReadAudit(actor)).toBe(false);
        await expectDomainError(audit().list(actor, {}, { limit: 10 }), 403, 'forbidden');
        await expectDomainError(audit().list(actor, { action: 'x'.repeat(500) }, { limit: 0 }), 403, 'forbidden');
        const before = await countRows(org.id);
        await expectDomainError(audit().export(actor, {}, 'csv'), 403, 'forbidden');
        expect(await countRows(org.id)).toBe(before);
      }
      for (const actor of [userActor(org.id, admin.userId, 'admin'), userActor(org.id, 'user_o', 'owner'), cliActor(org.id), systemActor(org.id)]) {
        expect(canReadAudit(actor)).toBe(true);
        const page = await audit().list(actor, {}, { limit: 100 });
        expect(page.items.length).toBeGreaterThan(5);
        expect(page.items.every((e) => e.id.startsWith('aud_'))).toBe(true);
      }
    });

    it('never shows another organisation’s rows', async () => {
      const other = await env.createOrg('Other');
      const mine = new Set((await entries(org.id)).map((e) => e.id));
      const theirs = await entries(other.id);
      expect(theirs.map((e) => e.action)).toEqual(['api_key.created', 'member.added', 'organization.created']);
      expect(theirs.some((e) => mine.has(e.id))).toBe(false);
      expect(await entries(other.id, { target: redId })).toEqual([]);
    });
  });

  describe('export', () => {
    let org: TestOrg;
    let admin: Caller;
    let adminActor: UserActor;
    let formulaId: string;

    beforeAll(async () => {
      tick();
      org = await env.createOrg('Export');
      admin = await callerOf((await org.member('admin')).key);
      adminActor = { ...userActor(org.id, admin.userId, 'admin'), label: admin.email };
      tick();
      formulaId = (await api('POST', '/v1/projects', admin, { name: '=HYPERLINK("x")', description: 'a, "quoted"\nmulti-line — ünïcode' })).body.id;
      tick();
      await api('POST', '/v1/projects', admin, { name: '@SUM(1)', description: '-1+1' });
      tick();
      await api('POST', '/v1/users', admin, { email: 'export@example.org', role: 'member' });
    });

    /** RFC 4180 reader: CRLF record ends, quoted fields with doubled quotes, nothing else allowed. */
    function parseCsv(text: string): string[][] {
      const records: string[][] = [];
      let record: string[] = [];
      let cell = '';
      let i = 0;
      while (i < text.length) {
        if (text[i] === '"' && cell === '') {
          i++;
          for (;;) {
            if (i >= text.length) throw new Error('unterminated quoted field');
            if (text[i] === '"' && text[i + 1] === '"') {
              cell += '"';
              i += 2;
            } else if (text[i] === '"') {
              i++;
              break;
            } else cell += text[i++];
          }
          if (i < text.length && text[i] !== ',' && text[i] !== '\r') throw new Error('text after a closing quote');
        } else if (text[i] === ',') {
          record.push(cell);
          cell = '';
          i++;
        } else if (text[i] === '\r' && text[i + 1] === '\n') {
          record.push(cell);
          records.push(record);
          record = [];
          cell = '';
          i += 2;
        } else if (text[i] === '"' || text[i] === '\r' || text[i] === '\n') {
          throw new Error(`bare ${JSON.stringify(text[i])} in an unquoted field at ${i}`);
        } else cell += text[i++];
      }
      if (record.length > 0 || cell !== '') throw new Error('the last record does not end with CRLF');
      return records;
    }

    async function exportCsv(filter: AuditListFilter) {
      const result = await audit().export(adminActor, filter, 'csv');
      const text = await readAll(result.stream);
      const [header, ...rows] = parseCsv(text);
      return { result, text, header: header!, rows: rows.map((cells) => Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, cells[i]!]))) };
    }

    async function exportJsonl(filter: AuditListFilter): Promise<AuditEntryView[]> {
      const result = await audit().export(adminActor, filter, 'jsonl');
      expect(result.contentType).toBe('application/x-ndjson; charset=utf-8');
      expect(result.filename).toMatch(/^audit-log-\d{4}-\d{2}-\d{2}T\d{6}Z\.jsonl$/);
      const text = await readAll(result.stream);
      if (text === '') return [];
      expect(text.endsWith('\n')).toBe(true);
      return text.slice(0, -1).split('\n').map((line) => JSON.parse(line) as AuditEntryView);
    }

    const csvKey = (r: Record<string, string>) => [r.occurred_at, r.action, r.target_id, r.request_id].join('|');
    const viewKey = (e: AuditEntryView) => [e.occurred_at, e.action, e.target?.id ?? '', e.request_id ?? ''].join('|');

    it('JSON Lines holds exactly the filtered rows, newest first, as the list shows them', async () => {
      for (const filter of [{}, { action: 'project.' }, { actor: admin.userId }, { target: formulaId }, { action: 'nothing.' }] as AuditListFilter[]) {
        tick();
        const listed = await entries(org.id, filter);
        const exported = await exportJsonl(filter);
        expect(exported, JSON.stringify(filter)).toEqual(listed);
      }
    });

    it('CSV holds exactly the filtered rows, every column, with formula cells escaped', async () => {
      tick();
      const listed = await entries(org.id, { action: 'project.' });
      const { result, text, header, rows } = await exportCsv({ action: 'project.' });
      expect(result.contentType).toBe('text/csv; charset=utf-8');
      expect(result.filename).toMatch(/^audit-log-\d{4}-\d{2}-\d{2}T\d{6}Z\.csv$/);
      expect(header).toEqual([...CSV_COLUMNS]);
      expect(rows.map(csvKey)).toEqual(listed.map(viewKey));
      expect(rows).toHaveLength(2);

      const formula = rows.find((r) => r.target_id === formulaId)!;
      expect(formula).toEqual({
        occurred_at: listed[1]!.occurred_at,
        actor_type: 'user',
        actor_id: admin.userId,
        actor_label: admin.email,
        api_key_id: admin.keyId,
        session_id: '',
        action: 'project.created',
        target_type: 'project',
        target_id: formulaId,
        target_label: `'=HYPERLINK("x")`,
        source: 'api',
        ip: '127.0.0.1',
        user_agent: UA,
        request_id: listed[1]!.request_id,
        outcome: 'success',
        changes: JSON.stringify(listed[1]!.changes),
      });
      expect(JSON.parse(formula.changes!)).toEqual({
        name: { old: null, new: '=HYPERLINK("x")' },
        description: { old: null, new: 'a, "quoted"\nmulti-line — ünïcode' },
        status: { old: null, new: 'active' },
        visibility: { old: null, new: 'organization' },
      });
      expect(text).toContain(`,"'=HYPERLINK(""x"")",`);
      expect(rows[0]!.target_label).toBe(`'@SUM(1)`);
      // No cell of the file starts with a formula character.
      for (const row of rows) for (const cell of Object.values(row)) expect(cell, cell).not.toMatch(/^[=+\-@\t\r]/);
    });

    it('records audit_log.exported before streaming, naming the filter and format, and leaves it out of its own export', async () => {
      tick();
      const filter = { action: 'project.', from: START };
      const before = await countRows(org.id);
      const result = await audit().export(adminActor, filter, 'jsonl');
      // Written before a byte is read.
      expect(await countRows(org.id)).toBe(before + 1);
      const row = await newest(org.id);
      expect(row).toEqual({
        id: expect.stringMatching(/^aud_/),
        occurred_at: toIso(time),
        actor: { type: 'user', id: admin.userId, label: admin.email, api_key_id: null, session_id: 'sess_test' },
        action: 'audit_log.exported',
        target: null,
        source: 'dashboard',
        ip: '192.0.2.7',
        user_agent: UA,
        request_id: 'req_test',
        outcome: 'success',
        changes: { format: { old: null, new: 'jsonl' }, filter: { old: null, new: { action: 'project.', from: toIso(START) } } },
      });
      result.stream.destroy();

      // An unfiltered export holds every earlier row, earlier exports included, but not its own.
      tick();
      const all = await entries(org.id);
      const exported = await exportJsonl({});
      const own = await newest(org.id);
      expect(own.action).toBe('audit_log.exported');
      expect(own.changes).toEqual({ format: { old: null, new: 'jsonl' }, filter: { old: null, new: {} } });
      expect(exported.map((e) => e.id)).toEqual(all.map((e) => e.id));
      expect(exported.map((e) => e.id)).not.toContain(own.id);
      expect(exported.some((e) => e.action === 'audit_log.exported')).toBe(true);

      // Nor does a row written while the file streams.
      tick();
      const streaming = await audit().export(adminActor, { action: 'project.' }, 'jsonl');
      const created = await api('POST', '/v1/projects', admin, { name: 'During the download' });
      const lines = (await readAll(streaming.stream)).trim().split('\n').map((l) => JSON.parse(l) as AuditEntryView);
      expect(lines.map((e) => e.target?.id)).not.toContain(created.body.id);
      expect(lines).toHaveLength(2);
    });

    it('refuses an unknown format and a bad filter, and records nothing then', async () => {
      const before = await countRows(org.id);
      await expectDomainError(audit().export(adminActor, {}, 'xml' as 'csv'), 400, 'validation_failed', [{ field: 'format', message: 'must be one of: csv, jsonl' }]);
      await expectDomainError(audit().export(adminActor, { action: 'x'.repeat(101) }, 'csv'), 400, 'validation_failed');
      expect(await countRows(org.id)).toBe(before);
    });

    it('streams exports larger than one read batch and one chunk, each row exactly once', async () => {
      const bulk = await env.createOrg('Bulk');
      tick();
      await env.container.store.transaction(async (repos) => {
        for (let n = 0; n < 1200; n++) {
          await recordAudit(repos, cliActor(bulk.id), {
            action: n % 2 === 0 ? 'task.created' : 'task.assigned',
            target: { type: 'task', id: `task_${String(n).padStart(5, '0')}`, label: `Task "${n}", =step` },
            changes: { title: { old: null, new: `Task ${n}` } },
            at: time,
          });
        }
      });
      const actor = cliActor(bulk.id);
      const all = await audit().export(actor, {}, 'jsonl');
      const lines = (await readAll(all.stream)).trim().split('\n').map((l) => JSON.parse(l) as AuditEntryView);
      expect(lines).toHaveLength(1203);
      expect(new Set(lines.map((e) => e.id)).size).toBe(1203);
      expect(lines[0]!.target!.id).toBe('task_01199');
      expect(lines[1199]!.target!.id).toBe('task_00000');

      const csv = await audit().export(actor, { action: 'task.created' }, 'csv');
      const records = parseCsv(await readAll(csv.stream)).slice(1);
      expect(records).toHaveLength(600);
      expect(records.map((r) => r[8])).toEqual(Array.from({ length: 600 }, (_, i) => `task_${String(1198 - 2 * i).padStart(5, '0')}`));
      expect(records.every((r) => r[9]!.startsWith('Task "'))).toBe(true);
    });
  });

  // Last: pruning removes every old row of every organisation, so it runs after the suites that read them.
  describe('retention', () => {
    const retentionMs = () => env.config.auditRetentionDays * DAY_MS;
    const olderThan = async (cutoff: number) => (await db().selectFrom('audit_log').select('id').where('occurred_at', '<', cutoff).execute()).length;

    it('defaults to 180 days', () => {
      expect(env.config.auditRetentionDays).toBe(180);
    });

    it('prunes rows older than AUDIT_RETENTION_DAYS in batches, across organisations, and keeps newer ones', async () => {
      tick();
      const old = time;
      const org = await env.createOrg('Retention');
      time = old + 1;
      const kept = await env.container.services.admin.addUser({ orgId: org.id, email: 'kept@example.com', role: 'member' });

      time = old + 1 + retentionMs(); // cutoff = old + 1: the row at `old` goes, the one at `old + 1` stays
      await env.container.services.admin.addUser({ orgId: org.id, email: 'new@example.com', role: 'member' });
      const doomed = await olderThan(old + 1);
      expect(doomed).toBeGreaterThan(1000); // every earlier row, the bulk export's included: several batches
      const total = (await db().selectFrom('audit_log').select('id').execute()).length;

      expect(await audit().prune()).toBe(doomed);
      expect(await olderThan(old + 1)).toBe(0);
      expect((await db().selectFrom('audit_log').select('id').execute()).length).toBe(total - doomed);
      const left = await entries(org.id);
      expect(left.map((e) => [e.action, e.target?.label])).toEqual([
        ['member.added', 'new@example.com'],
        ['member.added', 'kept@example.com'],
      ]);
      expect(left[1]!.target!.id).toBe(kept.id);
      expect(await audit().prune()).toBe(0);
    });

    it('runs on the delivery worker’s pruning cadence and logs how many rows went', async () => {
      tick();
      const org = await env.createOrg('Worker');
      time += retentionMs() + DAY_MS;
      const doomed = await olderThan(time - retentionMs());
      expect(doomed).toBeGreaterThanOrEqual(3);
      // Nothing else for the worker to do: earlier suites' deliveries are settled.
      await db().updateTable('deliveries').set({ status: 'cancelled', next_attempt_at: null }).where('status', '=', 'pending').execute();
      const worker = await startDeliveryWorker(env.container, { pruneIntervalMs: 20 });
      try {
        await waitFor('audit rows pruned by the worker', async () => (await olderThan(time - retentionMs())) === 0);
        const logged = await waitFor('the prune logged', () =>
          logLines.map((l) => JSON.parse(l) as { msg: string; removed?: number; level: number }).find((l) => l.msg === 'delivery worker: pruned audit log'),
        );
        expect(logged).toMatchObject({ level: 30, removed: doomed });
      } finally {
        await worker.stop();
      }
      expect(await entries(org.id)).toEqual([]);
    });
  });
});
