import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, invitationPageStatus } from '../helpers/dashboard.js';
import { latestInvitationToken } from '../helpers/mail-outbox.js';
import { createTestEnv, testDialects, type ApiResponse, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/**
 * DELETE /v1/users/:id (CONTRACT 5 extension, DASHBOARD 5): who may remove whom, what a removal takes with
 * it (keys, sessions, the invitation), and that every refusal leaves the organisation exactly as it was.
 */
describe.each(testDialects())('DELETE /v1/users/:id (%s)', (dialect) => {
  let env: TestEnv;
  let counter = 0;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
  });
  afterAll(async () => env?.close());

  const db = () => env.container.database.db;

  const remove = (key: string | null, id: string) => env.request('DELETE', `/v1/users/${id}`, { key });
  const invite = (key: string, email: string, role = 'member') => env.request('POST', '/v1/users', { key, body: { email, role } });

  function expectError(res: ApiResponse, status: number, code: string) {
    expect(res.status, res.text).toBe(status);
    expect(res.body.error.code).toBe(code);
  }

  /** Everything a removal could touch in an organisation, to prove a refusal changed none of it. */
  async function snapshot(orgId: string) {
    const [users, keys, sessions, invitations, audit, events, deliveries] = await Promise.all([
      db().selectFrom('users').select(['id', 'email', 'role', 'status', 'updated_at']).where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('api_keys').select(['id', 'user_id', 'revoked_at']).where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('sessions').select(['id', 'user_id']).where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('invitations').select(['id', 'user_id', 'used_at']).where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('audit_log').select('id').where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('events').select('id').where('org_id', '=', orgId).execute(),
      db().selectFrom('deliveries').select('id').where('org_id', '=', orgId).execute(),
    ]);
    return { users, keys, sessions, invitations, audit, events, deliveries };
  }

  /** An invited user (with a live invitation link) and the token of that link. */
  async function invited(org: TestOrg, role = 'member') {
    const email = `invitee${++counter}@example.com`;
    const res = await invite(org.ownerKey, email, role);
    expect(res.status).toBe(201);
    return { userId: res.body.id as string, email, token: latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email) };
  }

  /** A dashboard session for the user, so a removal can be seen to end it. */
  async function signedIn(orgId: string, userId: string): Promise<DashboardClient> {
    const browser = new DashboardClient(env);
    await browser.signInAs(orgId, userId);
    expect((await browser.get('/dashboard')).status).toBe(200);
    return browser;
  }

  async function auditRows(orgId: string, action: string, targetId: string) {
    return db().selectFrom('audit_log').selectAll().where('org_id', '=', orgId).where('action', '=', action).where('target_id', '=', targetId).execute();
  }

  describe('removals that succeed (204)', () => {
    let org: TestOrg;
    let admin: { userId: string; key: string; keyId: string };

    beforeAll(async () => {
      org = await env.createOrg('Removals');
      admin = await org.member('admin');
    });

    it('an admin removes an active member: keys 401, sessions gone, the user 404, an audit row, no event', async () => {
      const member = await org.member('member');
      const secondKey = (await env.container.services.admin.createKey({ userId: member.userId, scope: 'projects:read' })).key;
      const browser = await signedIn(org.id, member.userId);
      expect((await env.request('GET', '/v1/projects', { key: member.key })).status).toBe(200);
      const before = await snapshot(org.id);

      const res = await remove(admin.key, member.userId);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');

      for (const key of [member.key, secondKey]) expectError(await env.request('GET', '/v1/projects', { key }), 401, 'unauthorized');
      expectError(await env.request('GET', `/v1/users/${member.userId}`, { key: admin.key }), 404, 'not_found');
      expect((await browser.get('/dashboard')).status).toBe(303);

      const after = await snapshot(org.id);
      expect(after.users.map((u) => u.id)).toEqual(before.users.map((u) => u.id).filter((id) => id !== member.userId));
      expect(after.keys.filter((k) => k.user_id === member.userId)).toEqual([]);
      expect(after.sessions.filter((s) => s.user_id === member.userId)).toEqual([]);
      expect(after.events).toEqual(before.events);
      expect(after.deliveries).toEqual(before.deliveries);
      expect(after.audit).toHaveLength(before.audit.length + 1);

      const [row] = await auditRows(org.id, 'member.removed', member.userId);
      expect(row).toMatchObject({
        actor_type: 'user',
        actor_id: admin.userId,
        api_key_id: admin.keyId,
        session_id: null,
        source: 'api',
        target_type: 'user',
        target_id: member.userId,
        outcome: 'success',
      });
      expect(JSON.parse(row!.changes!)).toEqual({ role: { old: 'member', new: null }, status: { old: 'active', new: null } });

      // Gone means gone: a second DELETE is a plain 404.
      expectError(await remove(admin.key, member.userId), 404, 'not_found');
    });

    it('an admin removes an invited user: the invitation link dies, and the e-mail can be invited again', async () => {
      const { userId, email, token } = await invited(org, 'viewer');
      expect(await invitationPageStatus(env, token)).toBe(200);

      expect((await remove(admin.key, userId)).status).toBe(204);
      expect(await invitationPageStatus(env, token)).toBe(404);
      const accept = await env.request('POST', `/invitations/${token}/accept`, { body: { name: 'Late', password: 'correct horse battery' } });
      expectError(accept, 404, 'not_found');
      expect(await db().selectFrom('invitations').select('id').where('user_id', '=', userId).execute()).toEqual([]);
      expectError(await env.request('GET', `/v1/users/${userId}`, { key: admin.key }), 404, 'not_found');

      const again = await invite(admin.key, email, 'member');
      expect(again.status).toBe(201);
      expect(again.body).toMatchObject({ email, role: 'member', status: 'invited' });
      expect(again.body.id).not.toBe(userId);
      const fresh = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email);
      expect(fresh).not.toBe(token);
      expect(await invitationPageStatus(env, fresh)).toBe(200);
    });

    it('an active member removed, then re-invited, gets a new user and a working link', async () => {
      const member = await org.member('member');
      const email = (await env.request('GET', `/v1/users/${member.userId}`, { key: admin.key })).body.email as string;
      expect((await remove(admin.key, member.userId)).status).toBe(204);
      const again = await invite(admin.key, email, 'viewer');
      expect(again.status).toBe(201);
      expect(again.body.id).not.toBe(member.userId);
      const token = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email);
      const accepted = await env.request('POST', `/invitations/${token}/accept`, { body: { name: 'Back Again', password: 'correct horse battery' } });
      expect(accepted.status).toBe(200);
      expect(accepted.body).toMatchObject({ id: again.body.id, role: 'viewer', status: 'active' });
      // The old key stays dead: it belonged to the removed user, not to the e-mail.
      expectError(await env.request('GET', '/v1/projects', { key: member.key }), 401, 'unauthorized');
    });

    it('an owner removes an admin, and another owner', async () => {
      const otherAdmin = await org.member('admin');
      expect((await remove(org.ownerKey, otherAdmin.userId)).status).toBe(204);
      expectError(await env.request('GET', '/v1/projects', { key: otherAdmin.key }), 401, 'unauthorized');

      const secondOwner = await org.member('owner');
      expect((await remove(org.ownerKey, secondOwner.userId)).status).toBe(204);
      expectError(await env.request('GET', '/v1/projects', { key: secondOwner.key }), 401, 'unauthorized');
    });

    it('an owner may remove themselves while another active owner remains', async () => {
      const own = await env.createOrg('Two owners');
      const second = await own.member('owner');
      expect((await remove(own.ownerKey, own.ownerId)).status).toBe(204);
      expectError(await env.request('GET', '/v1/projects', { key: own.ownerKey }), 401, 'unauthorized');
      // Now the second owner is the last one.
      expectError(await remove(second.key, second.userId), 409, 'conflict');
    });

    it('an admin removes an invited user and an admin; an owner removes an invited owner', async () => {
      const pending = await invited(org, 'admin');
      expect((await remove(admin.key, pending.userId)).status).toBe(204);
      const otherAdmin = await org.member('admin');
      expect((await remove(admin.key, otherAdmin.userId)).status).toBe(204);
      const invitedOwner = await invited(org, 'owner');
      expect((await remove(org.ownerKey, invitedOwner.userId)).status).toBe(204);
      expect(await invitationPageStatus(env, invitedOwner.token)).toBe(404);
    });
  });

  describe('refusals change nothing', () => {
    let org: TestOrg;
    let other: TestOrg;
    let admin: { userId: string; key: string };
    let member: { userId: string; key: string };
    let secondOwner: { userId: string; key: string };
    let target: { userId: string; key: string };

    beforeAll(async () => {
      org = await env.createOrg('Refusals');
      other = await env.createOrg('Elsewhere');
      admin = await org.member('admin');
      member = await org.member('member');
      secondOwner = await org.member('owner');
      target = await org.member('viewer');
    });

    async function expectRefused(call: () => Promise<ApiResponse>, status: number, code: string, orgId = org.id) {
      const before = await snapshot(orgId);
      const otherBefore = await snapshot(other.id);
      expectError(await call(), status, code);
      expect(await snapshot(orgId)).toEqual(before);
      expect(await snapshot(other.id)).toEqual(otherBefore);
    }

    it('403 for an admin removing an owner (active or invited)', async () => {
      await expectRefused(() => remove(admin.key, secondOwner.userId), 403, 'forbidden');
      await expectRefused(() => remove(admin.key, org.ownerId), 403, 'forbidden');
      const invitedOwner = await invited(org, 'owner');
      await expectRefused(() => remove(admin.key, invitedOwner.userId), 403, 'forbidden');
      expect(await invitationPageStatus(env, invitedOwner.token)).toBe(200);
    });

    it('409 for the last active owner, also removing themselves; invited owners do not count', async () => {
      const solo = await env.createOrg('Solo');
      const invitedOwner = await invited(solo, 'owner');
      await expectRefused(() => remove(solo.ownerKey, solo.ownerId), 409, 'conflict', solo.id);
      expect((await env.request('GET', '/v1/projects', { key: solo.ownerKey })).status).toBe(200);
      expect((await env.request('GET', `/v1/users/${invitedOwner.userId}`, { key: solo.ownerKey })).status).toBe(200);
    });

    it.each([
      ['a member', 'member', 'full'],
      ['a viewer', 'viewer', 'full'],
    ])('403 for %s role key', async (_label, role, scope) => {
      const caller = await org.member(role as 'member' | 'viewer', scope);
      await expectRefused(() => remove(caller.key, target.userId), 403, 'forbidden');
      await expectRefused(() => remove(caller.key, caller.userId), 403, 'forbidden');
      // A member may not remove even an invited user.
      const pending = await invited(org);
      await expectRefused(() => remove(caller.key, pending.userId), 403, 'forbidden');
    });

    it('403 for the member key of this suite too', async () => {
      await expectRefused(() => remove(member.key, target.userId), 403, 'forbidden');
    });

    it.each(['users:read', 'projects', 'read', 'projects,webhooks'])('403 for an owner key whose scope is %s', async (scope) => {
      const key = (await env.container.services.admin.createKey({ userId: org.ownerId, scope })).key;
      await expectRefused(() => remove(key, target.userId), 403, 'forbidden');
      // The role check and the scope check both apply: an admin with a narrow key is refused as well.
      const narrowAdmin = await org.member('admin', scope);
      await expectRefused(() => remove(narrowAdmin.key, target.userId), 403, 'forbidden');
    });

    it('a key with users (write) scope is enough for an admin', async () => {
      const scoped = await org.member('admin', 'users');
      const victim = await org.member('viewer');
      expect((await remove(scoped.key, victim.userId)).status).toBe(204);
    });

    it('404 for an unknown id and for another organisation\'s user, whatever their role', async () => {
      await expectRefused(() => remove(admin.key, 'user_doesnotexist000000000000'), 404, 'not_found');
      await expectRefused(() => remove(org.ownerKey, 'nothing-like-an-id'), 404, 'not_found');
      const stranger = await other.member('member');
      await expectRefused(() => remove(admin.key, stranger.userId), 404, 'not_found');
      await expectRefused(() => remove(org.ownerKey, other.ownerId), 404, 'not_found');
      expect((await env.request('GET', '/v1/projects', { key: stranger.key })).status).toBe(200);
    });

    it('401 without a key, with a malformed header, or with a wrong key', async () => {
      await expectRefused(() => remove(null, target.userId), 401, 'unauthorized');
      await expectRefused(
        () => env.request('DELETE', `/v1/users/${target.userId}`, { headers: { authorization: 'Basic abc' } }),
        401,
        'unauthorized',
      );
      await expectRefused(() => remove('wsk_not_a_real_key_at_all_000000000000', target.userId), 401, 'unauthorized');
    });

    it('401 for a revoked key of an admin', async () => {
      const keyAdmin = await org.member('admin');
      const created = await env.container.services.admin.createKey({ userId: keyAdmin.userId, scope: 'full' });
      await env.container.services.apiKeys.revoke(
        { type: 'cli', orgId: org.id, context: { source: 'cli', ip: null, userAgent: null, requestId: null } },
        created.id,
      );
      await expectRefused(() => remove(created.key, target.userId), 401, 'unauthorized');
      // The admin's other key still works: only the revoked one is refused.
      expect((await env.request('GET', '/v1/projects', { key: keyAdmin.key })).status).toBe(200);
    });
  });

  it('is documented in OpenAPI as an extension, with 204 and the error responses', async () => {
    const res = await env.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    const op = res.body.paths['/v1/users/{id}']?.delete;
    expect(op).toBeDefined();
    expect(op['x-extension']).toBe(true);
    for (const code of ['204', '401', '403', '404', '409']) expect(op.responses[code], code).toBeDefined();
    expect(op.parameters.map((p: { name: string }) => p.name)).toContain('id');
  });
});
