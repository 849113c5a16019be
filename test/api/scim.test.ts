import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/access/actor.js';
import { createTestEnv, testDialects, type ApiResponse, type TestEnv, type TestOrg } from '../helpers/test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

function expectScimError(res: ApiResponse, status: number, scimType?: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
  expect(res.body.schemas).toEqual([ERROR]);
  expect(res.body.status).toBe(String(status));
  expect(typeof res.body.detail).toBe('string');
  if (scimType) expect(res.body.scimType).toBe(scimType);
  else expect(res.body.scimType).toBeUndefined();
}

function expectList(res: ApiResponse): void {
  expect(res.status, res.text).toBe(200);
  expect(res.body.schemas).toEqual([LIST]);
  for (const field of ['totalResults', 'itemsPerPage', 'startIndex']) expect(typeof res.body[field]).toBe('number');
  expect(Array.isArray(res.body.Resources)).toBe(true);
}

/**
 * SCIM 2.0 (CONTRACT 16) as Okta and Microsoft Entra ID exercise it: each provider's request sequence replayed
 * from the research notes (shared/research/provisioning-and-agents-5.md, 1b) with the bodies they send, every
 * status and body shape asserted, then the error cases.
 */
describe.each(testDialects())('SCIM 2.0 (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let token: string;
  let other: TestOrg;
  let otherToken: string;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Provisioned');
    other = await env.createOrg('Elsewhere');
    token = (await env.container.services.scimSettings.createToken(cliActor(org.id), 'Okta')).token;
    otherToken = (await env.container.services.scimSettings.createToken(cliActor(other.id), 'Entra')).token;
  });
  afterAll(async () => env?.close());

  const scim = (method: string, path: string, body?: unknown, as = token) =>
    env.request(method, `/scim/v2${path}`, {
      key: as,
      headers: { accept: 'application/scim+json', ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}) },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  const audit = async (action: string) => (await env.request('GET', `/v1/audit-log?action=${action}&limit=100`, { key: org.ownerKey })).body.data as Json[];

  it('Okta: test credentials, probe groups, look a user up, 404, create, read, replace, deactivate, push a group', async () => {
    const probe = await scim('GET', '/Users?count=2&startIndex=1');
    expectList(probe);
    expect(probe.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(probe.body.Resources.length).toBeGreaterThan(0);
    expect(probe.body.itemsPerPage).toBeLessThanOrEqual(2);
    expect(probe.body.startIndex).toBe(1);

    expectList(await scim('GET', '/Groups?count=100&startIndex=1'));

    const missing = await scim('GET', `/Users?count=100&filter=${encodeURIComponent('userName eq "nobody-7f3a@example.com"')}&startIndex=1`);
    expectList(missing);
    expect(missing.body.totalResults).toBe(0);

    expectScimError(await scim('GET', '/Users/user_doesnotexist000000000000'), 404);

    const created = await scim('POST', '/Users', {
      schemas: [USER],
      userName: 'Ines.Okta@Example.com',
      name: { givenName: 'Ines', familyName: 'Okta' },
      emails: [{ primary: true, value: 'Ines.Okta@Example.com', type: 'work' }],
      displayName: 'Ines Okta',
      locale: 'en-US',
      externalId: '00u1abcd',
      groups: [],
      password: 'ignored-1234',
      active: true,
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.schemas).toEqual([USER]);
    expect(created.body.id).toMatch(/^user_/);
    expect(created.headers.location).toBe(created.body.meta.location);
    expect(created.body).toMatchObject({ userName: 'Ines.Okta@Example.com', active: true, externalId: '00u1abcd', displayName: 'Ines Okta', name: { givenName: 'Ines', familyName: 'Okta' } });
    const id = created.body.id as string;

    // A member at once, with the default role, and no invitation.
    const member = await env.request('GET', `/v1/users/${id}`, { key: org.ownerKey });
    expect(member.body).toMatchObject({ status: 'active', role: 'member', email: 'Ines.Okta@Example.com', name: 'Ines Okta' });

    const read = await scim('GET', `/Users/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id, userName: 'Ines.Okta@Example.com', active: true, meta: { resourceType: 'User' } });

    // Okta's Integration Wizard apps replace the whole user (and keep active: true).
    const replaced = await scim('PUT', `/Users/${id}`, { ...read.body, name: { givenName: 'Inès', familyName: 'Okta' }, displayName: 'Inès Okta' });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).toMatchObject({ active: true, name: { givenName: 'Inès' }, displayName: 'Inès Okta' });

    const deactivated = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
    expect(deactivated.status, deactivated.text).toBe(200);
    expect(deactivated.body.active).toBe(false);
    expect((await env.request('GET', `/v1/users/${id}`, { key: org.ownerKey })).body.status).toBe('suspended');

    const group = await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Engineering', members: [] });
    expect(group.status, group.text).toBe(201);
    expect(group.body).toMatchObject({ schemas: [GROUP], displayName: 'Engineering', members: [] });
    const added = await scim('PATCH', `/Groups/${group.body.id}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: id, display: 'Ines.Okta@Example.com' }] }] });
    expect(added.status, added.text).toBe(200);
    expect(added.body.members.map((m: Json) => m.value)).toEqual([id]);
    const removed = await scim('PATCH', `/Groups/${group.body.id}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }] });
    expect(removed.body.members).toEqual([]);

    const rows = await audit('member.provisioned');
    expect(rows.some((r) => r.target?.id === id && r.source === 'scim' && r.actor.label === 'Okta')).toBe(true);
    expect((await audit('member.suspended')).some((r) => r.target?.id === id)).toBe(true);
  });

  it('Entra ID: filter by userName and externalId, capitalised ops with paths, string booleans, emails[type eq "work"], groups without members, delete', async () => {
    const none = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "ada.entra@example.com"')}`);
    expect(none.body.totalResults).toBe(0);

    const created = await scim('POST', '/Users', {
      schemas: [USER, ENTERPRISE],
      externalId: 'f3b1c2d4-entra',
      userName: 'ada.entra@example.com',
      active: true,
      emails: [{ primary: true, type: 'work', value: 'ada.entra@example.com' }],
      meta: { resourceType: 'User' },
      name: { formatted: 'Ada Entra', familyName: 'Entra', givenName: 'Ada' },
      roles: [],
      [ENTERPRISE]: { department: 'Research' },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;

    // userName is compared case-insensitively (RFC 7643 4.1.1), whatever the library does.
    const byName = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "ADA.Entra@Example.COM"')}`);
    expect(byName.body.totalResults).toBe(1);
    expect(byName.body.Resources[0].id).toBe(id);
    const byExternal = await scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "f3b1c2d4-entra"')}`);
    expect(byExternal.body.Resources.map((u: Json) => u.id)).toEqual([id]);
    const byEmail = await scim('GET', `/Users?filter=${encodeURIComponent('emails[type eq "work"].value eq "ada.entra@example.com"')}`);
    expect(byEmail.body.Resources.map((u: Json) => u.id)).toEqual([id]);
    const both = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "ada.entra@example.com" and externalId eq "other"')}`);
    expect(both.body.totalResults).toBe(0);

    const patched = await scim('PATCH', `/Users/${id}`, {
      schemas: [PATCH],
      Operations: [
        { op: 'Replace', path: 'displayName', value: 'Ada E.' },
        { op: 'Add', path: 'emails[type eq "work"].value', value: 'ada.entra@example.com' },
        { op: 'Replace', path: 'name.givenName', value: 'Adeline' },
        { op: 'Add', path: `${ENTERPRISE}:department`, value: 'Physics' },
      ],
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ displayName: 'Ada E.', name: { givenName: 'Adeline', familyName: 'Entra' }, active: true });

    const suspended = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
    expect(suspended.status, suspended.text).toBe(200);
    expect(suspended.body.active).toBe(false);
    const back = await scim('PATCH', `/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'True' }] });
    expect(back.body.active).toBe(true);

    const group = await scim('POST', '/Groups', { schemas: [GROUP], externalId: 'grp-entra-1', displayName: 'Research', members: [] });
    expect(group.status, group.text).toBe(201);
    const found = await scim('GET', `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "research"')}`);
    expect(found.body.totalResults).toBe(1);
    expect(found.body.Resources[0].members).toBeUndefined();
    const add = await scim('PATCH', `/Groups/${group.body.id}`, { schemas: [PATCH], Operations: [{ op: 'Add', path: 'members', value: [{ value: id }] }] });
    expect(add.status, add.text).toBe(200);
    expect((await scim('GET', `/Groups/${group.body.id}`)).body.members.map((m: Json) => m.value)).toEqual([id]);
    const remove = await scim('PATCH', `/Groups/${group.body.id}`, { schemas: [PATCH], Operations: [{ op: 'Remove', path: 'members', value: [{ value: id }] }] });
    expect(remove.status, remove.text).toBe(200);
    expect(remove.body.members).toEqual([]);

    const deleted = await scim('DELETE', `/Users/${id}`);
    expect(deleted.status).toBe(204);
    expectScimError(await scim('GET', `/Users/${id}`), 404);
    expect((await env.request('GET', `/v1/users/${id}`, { key: org.ownerKey })).status).toBe(404);
    expect((await scim('DELETE', `/Groups/${group.body.id}`)).status).toBe(204);
    expectScimError(await scim('GET', `/Groups/${group.body.id}`), 404);
  });

  it('the discovery endpoints describe Users and Groups, and PATCH, filter and no bulk', async () => {
    const spc = await scim('GET', '/ServiceProviderConfig');
    expect(spc.status).toBe(200);
    expect(spc.body).toMatchObject({ patch: { supported: true }, filter: { supported: true }, bulk: { supported: false } });
    const types = await scim('GET', '/ResourceTypes');
    expect(types.body.Resources.map((r: Json) => r.id)).toEqual(['User', 'Group']);
    const schemas = await scim('GET', '/Schemas');
    expect(schemas.body.Resources.map((s: Json) => s.id)).toEqual([USER, GROUP]);
    expect((await scim('GET', `/Schemas/${USER}`)).body.attributes.find((a: Json) => a.name === 'userName')).toMatchObject({ uniqueness: 'server', caseExact: false });
  });

  it('refusals: a duplicate userName in any case is 409 uniqueness; a wrong token 401; another organisation\'s token sees nothing of this one; a bad filter 400; nothing changes', async () => {
    const first = await scim('POST', '/Users', { schemas: [USER], userName: 'dup.one@example.com' });
    expect(first.status).toBe(201);
    const count = async () => (await scim('GET', '/Users?count=0')).body.totalResults as number;
    const before = await count();

    expectScimError(await scim('POST', '/Users', { schemas: [USER], userName: 'DUP.One@Example.com' }), 409, 'uniqueness');
    // The owner's address is taken too: a member created by hand is not duplicated.
    const owner = (await env.request('GET', `/v1/users/${org.ownerId}`, { key: org.ownerKey })).body;
    expectScimError(await scim('POST', '/Users', { schemas: [USER], userName: owner.email.toUpperCase() }), 409, 'uniqueness');
    const second = await scim('POST', '/Users', { schemas: [USER], userName: 'dup.two@example.com' });
    expectScimError(await scim('PATCH', `/Users/${second.body.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'userName', value: 'Dup.One@example.com' }] }), 409, 'uniqueness');
    expect((await scim('GET', `/Users/${second.body.id}`)).body.userName).toBe('dup.two@example.com');
    expect(await count()).toBe(before + 1);

    expectScimError(await scim('GET', '/Users', undefined, 'wss_notatoken'), 401);
    expectScimError(await scim('GET', '/Users', undefined, org.ownerKey), 401);
    expectScimError(await env.request('GET', '/scim/v2/Users'), 401);
    expectScimError(await scim('GET', `/Users/${first.body.id}`, undefined, otherToken), 404);
    expectScimError(await scim('PATCH', `/Users/${first.body.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] }, otherToken), 404);
    expectScimError(await scim('DELETE', `/Users/${first.body.id}`, undefined, otherToken), 404);
    const otherList = await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "dup.one@example.com"')}`, undefined, otherToken);
    expect(otherList.body.totalResults).toBe(0);
    expect((await scim('GET', `/Users/${first.body.id}`)).body.active).toBe(true);

    expectScimError(await scim('GET', `/Users?filter=${encodeURIComponent('userName co "dup"')}`), 400, 'invalidFilter');
    expectScimError(await scim('GET', `/Users?filter=${encodeURIComponent('userName eq')}`), 400, 'invalidFilter');
    expectScimError(await scim('POST', '/Users', { schemas: [USER], userName: 'not-an-email' }), 400, 'invalidValue');
    expectScimError(await scim('POST', '/Users', { schemas: [USER], userName: 'x@example.com', active: 'maybe' }), 400, 'invalidValue');
    expectScimError(await scim('PATCH', `/Users/${first.body.id}`, { schemas: [PATCH], Operations: [{ op: 'explode', path: 'active', value: false }] }), 400, 'invalidSyntax');
    expectScimError(await scim('PATCH', `/Users/${first.body.id}`, { schemas: [PATCH], Operations: 'none' }), 400, 'invalidSyntax');
    const bad = await env.request('POST', '/scim/v2/Users', { key: token, headers: { 'content-type': 'application/scim+json' }, payload: '{"userName":' });
    expectScimError(bad, 400, 'invalidSyntax');
    expectScimError(await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Ghosts', members: [{ value: 'user_nobody00000000000000000' }] }), 400, 'invalidValue');
    expect((await scim('GET', `/Groups?filter=${encodeURIComponent('displayName eq "Ghosts"')}`)).body.totalResults).toBe(0);
    expect(await count()).toBe(before + 1);
  });

  it('a revoked token is refused at once; the last owner can be neither suspended nor deleted (409)', async () => {
    const s = env.container.services.scimSettings;
    const spare = await s.createToken(cliActor(org.id), 'Rotation');
    await expect(s.createToken(cliActor(org.id), 'Third')).rejects.toMatchObject({ status: 409 });
    expect((await scim('GET', '/Users?count=1', undefined, spare.token)).status).toBe(200);
    await s.revokeToken(cliActor(org.id), spare.id);
    expectScimError(await scim('GET', '/Users?count=1', undefined, spare.token), 401);

    expectScimError(await scim('PATCH', `/Users/${org.ownerId}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] }), 409);
    expectScimError(await scim('DELETE', `/Users/${org.ownerId}`), 409);
    expect((await env.request('GET', `/v1/users/${org.ownerId}`, { key: org.ownerKey })).body.status).toBe('active');
  });

  it('100 requests a second per organisation: the next is 429 with Retry-After in the SCIM schema; another organisation is not slowed', async () => {
    const busy = await env.createOrg('Busy');
    const busyToken = (await env.container.services.scimSettings.createToken(cliActor(busy.id), 'Okta')).token;
    const answers = await Promise.all(Array.from({ length: 101 }, () => scim('GET', '/Users?count=1', undefined, busyToken)));
    const limited = answers.filter((r) => r.status === 429);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(100);
    expect(limited).toHaveLength(1);
    expectScimError(limited[0]!, 429);
    expect(Number(limited[0]!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await scim('GET', '/Users?count=1', undefined, otherToken)).status).toBe(200);
  });

  it('a group cannot hold another organisation\'s member; while read-only the provider may suspend, and nothing else', async () => {
    const outsider = (await env.request('GET', `/v1/users/${other.ownerId}`, { key: other.ownerKey })).body.id as string;
    expectScimError(await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Mixed', members: [{ value: outsider }] }), 400, 'invalidValue');

    const closing = await env.createOrg('Closing');
    const closingToken = (await env.container.services.scimSettings.createToken(cliActor(closing.id), 'Okta')).token;
    const member = (await scim('POST', '/Users', { schemas: [USER], userName: 'leaving.soon@example.com' }, closingToken)).body;
    await env.container.services.lifecycle.cancel(cliActor(closing.id));
    expectScimError(await scim('POST', '/Users', { schemas: [USER], userName: 'too.late@example.com' }, closingToken), 403);
    expectScimError(await scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Late' }, closingToken), 403);
    const suspended = await scim('PATCH', `/Users/${member.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] }, closingToken);
    expect(suspended.status, suspended.text).toBe(200);
    expect(suspended.body.active).toBe(false);
    expectScimError(await scim('PATCH', `/Users/${member.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: true } }] }, closingToken), 403);
  });
});
