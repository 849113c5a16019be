import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { latestInvitationToken } from '../helpers/mail-outbox.js';
import { createTestEnv, testDialects, type ApiResponse, type TestEnv, type TestOrg } from '../helpers/test-env.js';

type Json = ApiResponse['body'];

const START = Date.UTC(2026, 10, 22, 9, 30, 0, 0);
const USER_FIELDS = ['created_at', 'email', 'id', 'name', 'role', 'status', 'updated_at'];
const LIST_FIELDS = ['created_at', 'email', 'id', 'name', 'role'];

describe.each(testDialects())('users (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let admin: { userId: string; key: string };
  let time = START;
  const clock = { now: () => time };
  /** Moves time on, so a write that happens shows a new updated_at. */
  const tick = () => (time += 1000);

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
    org = await env.createOrg();
    admin = await org.member('admin');
  });
  afterAll(async () => env?.close());
  afterEach(() => vi.restoreAllMocks());

  const invite = (key: string, body: unknown) => env.request('POST', '/v1/users', { key, body });
  const changeRole = (key: string, id: string, body: unknown) => env.request('PUT', `/v1/users/${id}`, { key, body });
  const read = async (id: string, key = org.ownerKey) => (await env.request('GET', `/v1/users/${id}`, { key })).body;

  /** Every user of the caller's organisation, following cursors. */
  async function listAll(key: string, limit = 100): Promise<{ items: Json[]; pages: number }> {
    const items: Json[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await env.request('GET', `/v1/users?${query}`, { key });
      expect(res.status).toBe(200);
      items.push(...res.body.data);
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    return { items, pages };
  }

  const emails = async () => (await listAll(org.ownerKey)).items.map((u) => u.email);

  function expectError(res: ApiResponse, status: number, code: string, details?: unknown) {
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    if (details !== undefined) expect(res.body.error.details).toEqual(details);
  }

  describe('rejections', () => {
    it.each([
      ['no dot in the domain', 'someone@localhost', 'must be a valid e-mail address'],
      ['missing @', 'someone.example.com', 'must be a valid e-mail address'],
      ['empty', '', 'must be a valid e-mail address'],
      ['a space', 'some one@example.com', 'must be a valid e-mail address'],
      ['over 254 characters', `${'a'.repeat(243)}@example.com`, 'must be at most 254 characters'],
    ])('rejects an e-mail with %s and creates nothing', async (_label, email) => {
      const before = await emails();
      const res = await invite(org.ownerKey, { email, role: 'member' });
      expectError(res, 400, 'validation_failed', [{ field: 'email', message: _label === 'over 254 characters' ? 'must be at most 254 characters' : 'must be a valid e-mail address' }]);
      expect(await emails()).toEqual(before);
    });

    it('accepts an e-mail of exactly 254 characters', async () => {
      const email = `${'b'.repeat(242)}@example.com`;
      expect(email).toHaveLength(254);
      const res = await invite(org.ownerKey, { email, role: 'viewer' });
      expect(res.status).toBe(201);
      expect(res.body.email).toBe(email);
    });

    it('rejects a bad or missing role and a wrong type, naming every field', async () => {
      const before = await emails();
      expectError(await invite(org.ownerKey, { email: 'r1@example.com', role: 'superuser' }), 400, 'validation_failed', [
        { field: 'role', message: 'must be one of: owner, admin, member, viewer' },
      ]);
      expectError(await invite(org.ownerKey, { email: 'r2@example.com' }), 400, 'validation_failed', [{ field: 'role', message: 'is required' }]);
      expectError(await invite(org.ownerKey, { role: 'member' }), 400, 'validation_failed', [{ field: 'email', message: 'is required' }]);
      expectError(await invite(org.ownerKey, { email: 42, role: 'Member' }), 400, 'validation_failed', [
        { field: 'email', message: 'must be of type string' },
        { field: 'role', message: 'must be one of: owner, admin, member, viewer' },
      ]);
      expect(await emails()).toEqual(before);
    });

    it('rejects unknown fields on invite (name and status cannot be set)', async () => {
      const before = await emails();
      expectError(await invite(org.ownerKey, { email: 'u1@example.com', role: 'member', name: 'Una' }), 400, 'validation_failed', [
        { field: 'name', message: 'is not an accepted field' },
      ]);
      expectError(await invite(org.ownerKey, { email: 'u1@example.com', role: 'member', status: 'active' }), 400, 'validation_failed', [
        { field: 'status', message: 'is not an accepted field' },
      ]);
      expect(await emails()).toEqual(before);
    });

    it('rejects every field but role on PUT, and a PUT without role', async () => {
      const member = await org.member('member');
      const before = await read(member.userId);
      tick();
      for (const field of ['email', 'name', 'status', 'password']) {
        const res = await changeRole(org.ownerKey, member.userId, { role: 'viewer', [field]: 'x@example.com' });
        expectError(res, 400, 'validation_failed', [{ field, message: 'is not an accepted field' }]);
      }
      expectError(await changeRole(org.ownerKey, member.userId, {}), 400, 'validation_failed', [{ field: 'role', message: 'is required' }]);
      expectError(await changeRole(org.ownerKey, member.userId, { role: 'boss' }), 400, 'validation_failed', [
        { field: 'role', message: 'must be one of: owner, admin, member, viewer' },
      ]);
      expectError(await env.request('PUT', `/v1/users/${member.userId}`, { key: org.ownerKey, payload: '{"role":', headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
      expect(await read(member.userId)).toEqual(before);
    });

    it('refuses invites and role changes to members and viewers (403) and changes nothing', async () => {
      const member = await org.member('member');
      const viewer = await org.member('viewer');
      const before = await emails();
      expectError(await invite(member.key, { email: 'm@example.com', role: 'viewer' }), 403, 'forbidden');
      expectError(await invite(viewer.key, { email: 'v@example.com', role: 'viewer' }), 403, 'forbidden');
      expectError(await changeRole(member.key, viewer.userId, { role: 'admin' }), 403, 'forbidden');
      expect(await emails()).toEqual(before);
      expect((await read(viewer.userId)).role).toBe('viewer');
      // Reading is open to every role.
      expect((await env.request('GET', '/v1/users', { key: viewer.key })).status).toBe(200);
    });

    it('forbids an admin to invite an owner', async () => {
      const before = await emails();
      expectError(await invite(admin.key, { email: 'would-be-owner@example.com', role: 'owner' }), 403, 'forbidden');
      expect(await emails()).toEqual(before);
    });

    it("forbids an admin to grant owner or to change an owner's role", async () => {
      const member = await org.member('member');
      const memberBefore = await read(member.userId);
      const ownerBefore = await read(org.ownerId);
      tick();
      expectError(await changeRole(admin.key, member.userId, { role: 'owner' }), 403, 'forbidden');
      expectError(await changeRole(admin.key, org.ownerId, { role: 'admin' }), 403, 'forbidden');
      expectError(await changeRole(admin.key, org.ownerId, { role: 'viewer' }), 403, 'forbidden');
      expect(await read(member.userId)).toEqual(memberBefore);
      expect(await read(org.ownerId)).toEqual(ownerBefore);
    });

    it("forbids an admin to re-invite an invited owner with another role", async () => {
      const invited = await invite(org.ownerKey, { email: 'future-owner@example.com', role: 'owner' });
      expect(invited.status).toBe(201);
      tick();
      expectError(await invite(admin.key, { email: 'future-owner@example.com', role: 'member' }), 403, 'forbidden');
      expectError(await changeRole(admin.key, invited.body.id, { role: 'member' }), 403, 'forbidden');
      expect(await read(invited.body.id)).toEqual(invited.body);
    });

    it('refuses to demote the last active owner (409), also when an owner is only invited', async () => {
      const solo = await env.createOrg('Solo');
      const ownerBefore = await read(solo.ownerId, solo.ownerKey);
      const pending = await invite(solo.ownerKey, { email: 'pending-owner@example.com', role: 'owner' });
      expect(pending.status).toBe(201);
      tick();
      const res = await changeRole(solo.ownerKey, solo.ownerId, { role: 'admin' });
      expectError(res, 409, 'conflict');
      expect(res.body.error.message).toMatch(/owner/);
      expect(await read(solo.ownerId, solo.ownerKey)).toEqual(ownerBefore);
    });

    it('refuses to invite the e-mail of an active member, whatever its case', async () => {
      const owner = await read(org.ownerId);
      const before = await listAll(org.ownerKey);
      for (const email of [owner.email, owner.email.toUpperCase(), owner.email.replace(/^o/, 'O')]) {
        const res = await invite(org.ownerKey, { email, role: 'member' });
        expectError(res, 409, 'conflict');
        expect(res.body.error.message).toMatch(/active member/);
      }
      expect(await listAll(org.ownerKey)).toEqual(before);
      expect(await read(org.ownerId)).toEqual(owner);
    });

    it("answers 404 for another organisation's user and for unknown ids, and changes nothing", async () => {
      const other = await env.createOrg('Other');
      const stranger = await other.member('member');
      const before = await read(stranger.userId, other.ownerKey);
      tick();
      expectError(await env.request('GET', `/v1/users/${stranger.userId}`, { key: org.ownerKey }), 404, 'not_found');
      expectError(await changeRole(org.ownerKey, stranger.userId, { role: 'viewer' }), 404, 'not_found');
      expectError(await env.request('GET', '/v1/users/user_doesnotexist', { key: org.ownerKey }), 404, 'not_found');
      expectError(await changeRole(org.ownerKey, 'nope', { role: 'viewer' }), 404, 'not_found');
      expect(await read(stranger.userId, other.ownerKey)).toEqual(before);
      expect((await listAll(org.ownerKey)).items.map((u) => u.id)).not.toContain(stranger.userId);
    });

    it('rejects a bad limit and an unusable cursor', async () => {
      expectError(await env.request('GET', '/v1/users?limit=0', { key: org.ownerKey }), 400, 'validation_failed', [{ field: 'limit', message: 'must be at least 1' }]);
      expectError(await env.request('GET', '/v1/users?limit=101', { key: org.ownerKey }), 400, 'validation_failed', [{ field: 'limit', message: 'must be at most 100' }]);
      const bad = await env.request('GET', '/v1/users?cursor=garbage', { key: org.ownerKey });
      expectError(bad, 400, 'validation_failed');
      expect(bad.body.error.details[0].field).toBe('cursor');
    });
  });

  describe('invitations and roles', () => {
    it('invites a user: 201, invited, name null, readable and listed', async () => {
      tick();
      const res = await invite(admin.key, { email: 'Nora.New@Example.com', role: 'member' });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(USER_FIELDS);
      expect(res.body).toMatchObject({ email: 'Nora.New@Example.com', name: null, role: 'member', status: 'invited' });
      expect(res.body.id).toMatch(/^user_[a-z0-9]{24}$/);
      expect(res.body.created_at).toBe(new Date(time).toISOString());
      expect(res.body.updated_at).toBe(res.body.created_at);
      expect(await read(res.body.id)).toEqual(res.body);

      const listed = (await listAll(org.ownerKey)).items.find((u) => u.id === res.body.id);
      expect(listed).toEqual({ id: res.body.id, email: res.body.email, name: null, role: 'member', created_at: res.body.created_at });
    });

    it('re-invites an invited user: same id, the new role, a fresh link, the old link dead', async () => {
      tick();
      const first = await invite(org.ownerKey, { email: 'pat@example.com', role: 'member' });
      expect(first.status).toBe(201);
      const oldToken = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, 'pat@example.com');

      tick();
      const again = await invite(admin.key, { email: 'PAT@example.COM', role: 'admin' });
      expect(again.status).toBe(201);
      expect(again.body).toMatchObject({ id: first.body.id, email: 'pat@example.com', role: 'admin', status: 'invited', name: null });
      expect(again.body.created_at).toBe(first.body.created_at);
      expect(again.body.updated_at).toBe(new Date(time).toISOString());
      const newToken = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, 'pat@example.com');
      expect(newToken).not.toBe(oldToken);

      const accept = (token: string) => env.request('POST', `/invitations/${token}/accept`, { body: { name: 'Pat', password: 'correct horse' } });
      expectError(await accept(oldToken), 404, 'not_found');
      expect(await read(first.body.id)).toEqual(again.body);
      expect((await listAll(org.ownerKey)).items.filter((u) => u.email.toLowerCase() === 'pat@example.com')).toHaveLength(1);

      const accepted = await accept(newToken);
      expect(accepted.status).toBe(200);
      expect(accepted.body).toMatchObject({ id: first.body.id, role: 'admin', status: 'active', name: 'Pat' });
    });

    it('changes a role, announces it to the auth caches, and leaves a same-role change untouched', async () => {
      const changed = vi.spyOn(env.container.authEvents, 'userChanged');
      const member = await org.member('member');
      const before = await read(member.userId);

      tick();
      const same = await changeRole(org.ownerKey, member.userId, { role: 'member' });
      expect(same.status).toBe(200);
      expect(same.body).toEqual(before);
      expect(changed).not.toHaveBeenCalled();

      tick();
      const res = await changeRole(admin.key, member.userId, { role: 'viewer' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...before, role: 'viewer', updated_at: new Date(time).toISOString() });
      expect(await read(member.userId)).toEqual(res.body);
      expect(changed).toHaveBeenCalledWith(member.userId);

      // The new role applies to the user's key at once.
      const viewerNow = await org.member('member');
      await changeRole(org.ownerKey, viewerNow.userId, { role: 'viewer' });
      expectError(await env.request('POST', '/v1/projects', { key: viewerNow.key, body: { name: 'Nope' } }), 403, 'forbidden');
    });

    it('lets an admin manage admins, members and viewers', async () => {
      const other = await org.member('admin');
      expect((await changeRole(admin.key, other.userId, { role: 'member' })).body.role).toBe('member');
      expect((await changeRole(admin.key, other.userId, { role: 'admin' })).body.role).toBe('admin');
      expect((await changeRole(admin.key, other.userId, { role: 'viewer' })).body.role).toBe('viewer');
    });

    it('lets an owner grant owner and demote another owner while one active owner remains', async () => {
      const pair = await env.createOrg('Pair');
      const second = await pair.member('admin');
      const promoted = await changeRole(pair.ownerKey, second.userId, { role: 'owner' });
      expect(promoted.status).toBe(200);
      expect(promoted.body.role).toBe('owner');

      tick();
      const demoted = await changeRole(second.key, pair.ownerId, { role: 'member' });
      expect(demoted.status).toBe(200);
      expect(demoted.body.role).toBe('member');
      expect((await read(pair.ownerId, second.key)).role).toBe('member');

      // Now the second is the only active owner: it cannot step down.
      expectError(await changeRole(second.key, second.userId, { role: 'admin' }), 409, 'conflict');
      expect((await read(second.userId, second.key)).role).toBe('owner');

      const invitedOwner = await invite(second.key, { email: 'owner-two@example.com', role: 'owner' });
      expect(invitedOwner.status).toBe(201);
      expect(invitedOwner.body.role).toBe('owner');
    });

    it('lists newest first, invited users included, and pages with cursors', async () => {
      const team = await env.createOrg('Team');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await invite(team.ownerKey, { email: `t${i}@example.com`, role: 'viewer' });
        expect(res.status).toBe(201);
        ids.push(res.body.id);
      }
      const expected = [...ids].reverse().concat(team.ownerId);

      const first = await env.request('GET', '/v1/users?limit=2', { key: team.ownerKey });
      expect(first.body.data.map((u: Json) => u.id)).toEqual(expected.slice(0, 2));
      for (const item of first.body.data) expect(Object.keys(item).sort()).toEqual(LIST_FIELDS);
      expect(first.body.next_cursor).toEqual(expect.any(String));

      const walk = await listAll(team.ownerKey, 2);
      expect(walk.items.map((u) => u.id)).toEqual(expected);
      expect(walk.pages).toBe(3);

      // A page that ends exactly at the last item has no cursor.
      const exact = await env.request('GET', '/v1/users?limit=6', { key: team.ownerKey });
      expect(exact.body.data).toHaveLength(6);
      expect(exact.body.next_cursor).toBeNull();

      const defaults = await env.request('GET', '/v1/users', { key: team.ownerKey });
      expect(defaults.body.data.map((u: Json) => u.id)).toEqual(expected);
    });
  });
});
