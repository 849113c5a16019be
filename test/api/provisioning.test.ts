import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/access/actor.js';
import { hashPassword } from '../../src/lib/crypto.js';
import { DashboardClient } from '../helpers/dashboard.js';
import { decodeQuotedPrintable, outboxMessages } from '../helpers/mail-outbox.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const PASSWORD = 'correct horse battery';
const DAY = 86_400_000;

/**
 * What provisioning does to members (CONTRACT 16): groups decide roles both ways, a hand change is refused, owners
 * are left alone, and `active: false` ends every way in at once (sessions, keys, sign-in), which reactivation
 * does not give back. Key lifetimes with an injected clock close the file.
 */
describe.each(testDialects())('provisioning and key lifetimes (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let token: string;
  const clock = new ManualClock(Date.now());

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
    org = await env.createOrg('Provisioned');
    token = (await env.container.services.scimSettings.createToken(cliActor(org.id), 'Okta')).token;
  });
  afterAll(async () => env?.close());

  const scim = (method: string, path: string, body?: unknown) =>
    env.request(method, `/scim/v2${path}`, { key: token, ...(body !== undefined ? { body, headers: { 'content-type': 'application/scim+json' } } : {}) });
  const user = async (id: string) => (await env.request('GET', `/v1/users/${id}`, { key: org.ownerKey })).body as Json;
  const provision = async (email: string) => {
    const res = await scim('POST', '/Users', { schemas: [USER], userName: email, name: { givenName: 'P', familyName: 'Member' } });
    expect(res.status, res.text).toBe(201);
    return res.body.id as string;
  };
  const members = (groupId: string, op: 'add' | 'remove', ids: string[]) =>
    scim('PATCH', `/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op, path: 'members', value: ids.map((value) => ({ value })) }] });
  const projectRole = async (projectId: string, userId: string) => {
    const list = (await env.request('GET', `/v1/projects/${projectId}/collaborators?limit=100`, { key: org.ownerKey })).body.data as Json[];
    return list.find((c) => c.user.id === userId)?.role ?? null;
  };

  it('groups decide a provisioned member\'s organisation and project roles, in both directions; the default role applies with none', async () => {
    const s = env.container.services.scimSettings;
    const owner = cliActor(org.id);
    const project = (await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Mapped', visibility: 'private' } })).body;
    const admins = (await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Admins' })).body.id as string;
    const readers = (await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Readers' })).body.id as string;
    await s.saveMapping(owner, { groupId: admins, orgRole: 'admin' });
    await s.saveMapping(owner, { groupId: readers, orgRole: 'viewer', projectId: project.id, projectRole: 'editor' });

    const id = await provision('mapped.member@example.com');
    expect((await user(id)).role).toBe('member');
    expect(await projectRole(project.id, id)).toBeNull();

    expect((await members(readers, 'add', [id])).status).toBe(200);
    expect((await user(id)).role).toBe('viewer');
    expect(await projectRole(project.id, id)).toBe('editor');

    await members(admins, 'add', [id]);
    expect((await user(id)).role).toBe('admin');

    await members(admins, 'remove', [id]);
    expect((await user(id)).role).toBe('viewer');

    // A mapping changed by the owner reaches the group's members at once.
    await s.saveMapping(owner, { groupId: readers, orgRole: 'member', projectId: project.id, projectRole: 'manager' });
    expect((await user(id)).role).toBe('member');
    expect(await projectRole(project.id, id)).toBe('manager');

    await members(readers, 'remove', [id]);
    expect((await user(id)).role).toBe('member');
    expect(await projectRole(project.id, id)).toBeNull();

    await s.setDefaultRole(owner, 'viewer');
    expect((await user(id)).role).toBe('viewer');
    await s.setDefaultRole(owner, 'member');

    // A group is never mapped to owner.
    await expect(s.saveMapping(owner, { groupId: admins, orgRole: 'owner' as never })).rejects.toMatchObject({ status: 400 });
    const audit = (await env.request('GET', `/v1/audit-log?action=member.role_changed&target_id=${id}&limit=100`, { key: org.ownerKey })).body.data as Json[];
    expect(audit.every((row) => row.source === 'scim' || row.source === 'cli')).toBe(true);
    expect(audit.length).toBeGreaterThanOrEqual(5);
  });

  it('a provisioned member\'s role changed by hand is 409 conflict "managed by your identity provider", and nothing changes; owners stay owners', async () => {
    const id = await provision('hand.change@example.com');
    const res = await env.request('PUT', `/v1/users/${id}`, { key: org.ownerKey, body: { role: 'admin' } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    expect(res.body.error.message).toContain('managed by your identity provider');
    expect((await user(id)).role).toBe('member');

    // The provider claims the owner (the same e-mail) and puts them in a mapped group: still owner.
    const ownerRow = await user(org.ownerId);
    const claimed = await scim('PUT', `/Users/${org.ownerId}`, { schemas: [USER], userName: ownerRow.email, active: true, externalId: 'okta-owner' });
    expect(claimed.status, claimed.text).toBe(200);
    const viewers = (await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Viewers' })).body.id as string;
    await env.container.services.scimSettings.saveMapping(cliActor(org.id), { groupId: viewers, orgRole: 'viewer' });
    await members(viewers, 'add', [org.ownerId]);
    expect((await user(org.ownerId)).role).toBe('owner');
  });

  it('active: false ends the member\'s sessions, keys and sign-in at once; active: true restores the status, not the keys', async () => {
    const added = await org.member('member');
    await env.container.store.repos.users.update(org.id, added.userId, { password_hash: await hashPassword(PASSWORD) });
    const email = (await user(added.userId)).email as string;
    const session = await DashboardClient.signedIn(env, org.id, added.userId);
    expect((await session.get('/dashboard')).status).toBe(200);
    expect((await env.request('GET', '/v1/projects', { key: added.key })).status).toBe(200);

    const res = await scim('PATCH', `/Users/${added.userId}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
    expect(res.status, res.text).toBe(200);

    const refused = await env.request('GET', '/v1/projects', { key: added.key });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthorized');
    const page = await session.get('/dashboard');
    expect(page.status).toBe(303);
    expect(page.location).toMatch(/\/dashboard\/login/);
    const signIn = await new DashboardClient(env).post('/dashboard/login', { email, password: PASSWORD }, { csrf: null });
    expect(signIn.status).not.toBe(303);
    await expect(env.container.services.accounts.signIn(email, PASSWORD, { source: 'dashboard', ip: '10.9.9.9', userAgent: null, requestId: null })).rejects.toMatchObject({ code: 'invalid_credentials' });

    // Listed only when asked for.
    const listed = (await env.request('GET', '/v1/users?limit=100', { key: org.ownerKey })).body.data as Json[];
    expect(listed.some((u) => u.id === added.userId)).toBe(false);
    const suspended = (await env.request('GET', '/v1/users?limit=100&status=suspended', { key: org.ownerKey })).body.data as Json[];
    expect(suspended.map((u) => u.id)).toContain(added.userId);
    // Nobody re-invites them around the provider.
    expect((await env.request('POST', '/v1/users', { key: org.ownerKey, body: { email, role: 'member' } })).status).toBe(409);

    const back = await scim('PATCH', `/Users/${added.userId}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: true } }] });
    expect(back.body.active).toBe(true);
    expect((await user(added.userId)).status).toBe('active');
    expect((await env.request('GET', '/v1/projects', { key: added.key })).status).toBe(401);
    expect((await session.get('/dashboard')).status).toBe(303);
  });

  it('keys expire: expires_at in every key object, 401 "API key expired" once past it, and the organisation\'s maximum enforced at creation', async () => {
    const member = await org.member('member');
    const in1h = new Date(clock.now() + 3_600_000).toISOString();
    const created = await env.request('POST', '/v1/api-keys', { key: member.key, body: { scope: 'read', name: 'Short', expires_at: in1h } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.expires_at).toBe(in1h);
    const listed = (await env.request('GET', '/v1/api-keys?limit=100', { key: org.ownerKey })).body.data as Json[];
    expect(listed.find((k) => k.id === created.body.id).expires_at).toBe(in1h);
    expect((await env.request('GET', '/v1/projects', { key: created.body.key })).status).toBe(200);
    clock.advance(3_600_001);
    const expired = await env.request('GET', '/v1/projects', { key: created.body.key });
    expect(expired.status).toBe(401);
    expect(expired.body.error).toEqual({ code: 'unauthorized', message: 'API key expired' });

    const past = await env.request('POST', '/v1/api-keys', { key: member.key, body: { scope: 'read', expires_at: new Date(clock.now() - 1000).toISOString() } });
    expect(past.status).toBe(400);
    expect(past.body.error.details[0].field).toBe('expires_at');

    await env.container.services.accountSecurity.setMaxKeyLifetime(cliActor(org.id), 30);
    const before = (await env.request('GET', '/v1/api-keys?limit=100', { key: org.ownerKey })).body.data.length;
    for (const expires of [undefined, null, new Date(clock.now() + 31 * DAY).toISOString()]) {
      const refused = await env.request('POST', '/v1/api-keys', { key: member.key, body: { scope: 'read', ...(expires !== undefined ? { expires_at: expires } : {}) } });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.error.code).toBe('validation_failed');
      expect(refused.body.error.details[0].field).toBe('expires_at');
    }
    expect((await env.request('GET', '/v1/api-keys?limit=100', { key: org.ownerKey })).body.data.length).toBe(before);
    const within = await env.request('POST', '/v1/api-keys', { key: member.key, body: { scope: 'read', expires_at: new Date(clock.now() + 29 * DAY).toISOString() } });
    expect(within.status).toBe(201);
    await env.container.services.accountSecurity.setMaxKeyLifetime(cliActor(org.id), null);
  });

  it('the key\'s user is mailed once, 7 days before expiry; keys further out, revoked or without an expiry are not', async () => {
    const member = await org.member('member');
    const email = (await user(member.userId)).email as string;
    const create = async (name: string, days: number | null) =>
      (await env.request('POST', '/v1/api-keys', { key: member.key, body: { scope: 'read', name, ...(days === null ? {} : { expires_at: new Date(clock.now() + days * DAY).toISOString() }) } })).body;
    await create('Soon', 10);
    await create('Later', 30);
    await create('Forever', null);
    const revoked = await create('Revoked', 8);
    expect((await env.request('DELETE', `/v1/api-keys/${revoked.id}`, { key: member.key })).status).toBe(204);
    const apiKeys = env.container.services.apiKeys;
    const mine = () => outboxMessages(env.dataDir).filter((m) => m.raw.includes(`To: ${email}`)).map((m) => decodeQuotedPrintable(m.raw));

    expect(await apiKeys.sendExpiryNotices()).toBe(0);
    clock.advance(3 * DAY + 1000);
    expect(await apiKeys.sendExpiryNotices()).toBe(1);
    expect(await apiKeys.sendExpiryNotices()).toBe(0);
    const mails = mine();
    expect(mails).toHaveLength(1);
    expect(mails[0]).toContain('API key "Soon" stops working on');
    expect(mails[0]).toContain('/dashboard/api-keys');
  });

  it('a group pushed with 1,200 members is stored whole (written in slices), and emptied by one PATCH', async () => {
    const now = clock.now();
    const ids: string[] = [];
    await env.container.store.transaction(async (repos) => {
      for (let i = 0; i < 1200; i++) {
        const row = await repos.users.insert({
          id: `user_bulk${String(i).padStart(19, '0')}`, org_id: org.id, email: `bulk${i}@example.com`, email_normalized: `bulk${i}@example.com`,
          name: null, role: 'member', status: 'active', password_hash: null, created_at: now, updated_at: now, provisioned_at: now,
        });
        ids.push(row.id);
      }
    });
    const group = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Everyone', members: ids.map((value) => ({ value })) });
    expect(group.status, group.text.slice(0, 300)).toBe(201);
    expect(group.body.members).toHaveLength(1200);
    const emptied = await scim('PATCH', `/Groups/${group.body.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'members', value: [] }] });
    expect(emptied.status, emptied.text.slice(0, 300)).toBe(200);
    expect(emptied.body.members).toEqual([]);
  });
});
