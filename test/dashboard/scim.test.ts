import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/access/actor.js';
import { DashboardClient, noticeOf, tableRows, textOf } from '../helpers/dashboard.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const PAGE = '/dashboard/settings/scim';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

const newTokenOf = (html: string) => /<input id="new-token"[^>]*\svalue="([^"]+)"/.exec(html)?.[1] ?? null;

/**
 * DASHBOARD 14 without a browser: the owner's SCIM page (a token shown once, two at most, revoked at once; group
 * mappings and the default role deciding provisioned members' roles), "Provisioned" and the locked role on
 * Members, "Expires" on "Create API key" under the organisation's "Maximum API key lifetime".
 */
describe.each(testDialects())('dashboard: provisioning and key lifetimes (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let owner: DashboardClient;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Provisioned Co');
    owner = await DashboardClient.signedIn(env, org.id, org.ownerId);
  });
  afterAll(async () => env?.close());

  const scim = (token: string, method: string, path: string, body?: unknown) =>
    env.request(method, `/scim/v2${path}`, { key: token, ...(body !== undefined ? { body } : {}) });
  const auditCount = async () => (await env.container.database.db.selectFrom('audit_log').select('id').where('org_id', '=', org.id).execute()).length;

  it('only owners open it; a token is shown once, two at most, and a revoked one is refused at once', async () => {
    const admin = await org.member('admin');
    const adminBrowser = await DashboardClient.signedIn(env, org.id, admin.userId);
    expect((await adminBrowser.get(PAGE)).status).toBe(403);
    const refused = await adminBrowser.post(`${PAGE}/tokens`, { name: 'Sneaky' });
    expect(refused.status).toBe(403);

    const page = await owner.get(PAGE);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`${env.config.publicBaseUrl}/scim/v2`);
    const created = await owner.post(`${PAGE}/tokens`, { name: 'Okta' });
    expect(created.status).toBe(303);
    const shown = await owner.follow(created);
    expect(noticeOf(shown.text)).toContain('SCIM token "Okta" created.');
    const token = newTokenOf(shown.text)!;
    expect(token).toMatch(/^wss_/);
    expect(newTokenOf((await owner.get(PAGE)).text)).toBeNull();
    expect((await scim(token, 'GET', '/Users?count=1')).status).toBe(200);
    const rows = tableRows((await owner.get(PAGE)).text, 'SCIM tokens');
    expect(rows.some((r) => r.startsWith('Okta wss_'))).toBe(true);

    await owner.post(`${PAGE}/tokens`, { name: 'Rotation' });
    const before = await auditCount();
    const third = await owner.post(`${PAGE}/tokens`, { name: 'Third' });
    expect(third.status).toBe(409);
    expect(textOf(third.text)).toMatch(/at most 2 SCIM tokens are valid at once/i);
    expect(await auditCount()).toBe(before);
    expect((await owner.get(PAGE)).text).not.toContain('Create SCIM token</button>');

    const id = (await env.container.services.scimSettings.listTokens(cliActor(org.id))).find((t) => t.name === 'Okta')!.id;
    const confirm = await owner.get(`${PAGE}/tokens/${id}/revoke`);
    expect(textOf(confirm.text)).toContain('Revoke the SCIM token Okta');
    const revoked = await owner.follow(await owner.post(`${PAGE}/tokens/${id}/revoke`));
    expect(noticeOf(revoked.text)).toContain('SCIM token "Okta" revoked.');
    expect((await scim(token, 'GET', '/Users?count=1')).status).toBe(401);
  });

  it('"Save mapping" and "Default role" decide provisioned members\' roles; Members marks them "Provisioned" and says why their role is locked', async () => {
    const token = (await env.container.services.scimSettings.createToken(cliActor(org.id), 'Entra').catch(async () => {
      const live = await env.container.services.scimSettings.listTokens(cliActor(org.id));
      await env.container.services.scimSettings.revokeToken(cliActor(org.id), live[0]!.id);
      return env.container.services.scimSettings.createToken(cliActor(org.id), 'Entra');
    })).token;
    const user = (await scim(token, 'POST', '/Users', { schemas: [USER], userName: 'pat.provisioned@example.com', displayName: 'Pat Provisioned' })).body;
    const group = (await scim(token, 'POST', '/Groups', { schemas: [GROUP], displayName: 'Ops', members: [{ value: user.id }] })).body;
    const project = (await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Runbooks', visibility: 'private' } })).body;

    await owner.get(PAGE);
    const saved = await owner.follow(await owner.post(`${PAGE}/mappings`, { group: group.id, org_role: 'admin', project: project.id, project_role: 'editor' }));
    expect(noticeOf(saved.text)).toContain("Mapping saved. 1 member's role changed.");
    expect(tableRows(saved.text, 'Groups').find((r) => r.startsWith('Ops'))).toContain('Admin; Editor on Runbooks');
    expect((await env.request('GET', `/v1/users/${user.id}`, { key: org.ownerKey })).body.role).toBe('admin');
    // "Unchanged" keeps the organisation role while the project role changes.
    const kept = await owner.follow(await owner.post(`${PAGE}/mappings`, { group: group.id, org_role: 'keep', project: project.id, project_role: 'manager' }));
    expect(tableRows(kept.text, 'Groups').find((r) => r.startsWith('Ops'))).toContain('Admin; Manager on Runbooks');

    const members = await owner.get('/dashboard/members');
    const row = tableRows(members.text, 'Members').find((r) => r.includes('pat.provisioned@example.com'))!;
    expect(row).toContain('Provisioned');
    expect(row).toContain('Managed by your identity provider');
    expect(members.text).not.toContain(`id="role-${user.id}"`);
    const handChange = await owner.post(`/dashboard/members/${user.id}/role`, { role: 'viewer' });
    expect([303, 409]).toContain(handChange.status);
    expect((await env.request('GET', `/v1/users/${user.id}`, { key: org.ownerKey })).body.role).toBe('admin');

    await scim(token, 'PATCH', `/Groups/${group.id}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${user.id}"]` }] });
    expect((await env.request('GET', `/v1/users/${user.id}`, { key: org.ownerKey })).body.role).toBe('member');
    await owner.get(PAGE);
    const defaulted = await owner.follow(await owner.post(`${PAGE}/default-role`, { default_role: 'viewer' }));
    expect(noticeOf(defaulted.text)).toContain("Default role saved: Viewer. 1 member's role changed.");
    expect((await env.request('GET', `/v1/users/${user.id}`, { key: org.ownerKey })).body.role).toBe('viewer');

    // Suspended by the provider: shown as such.
    await scim(token, 'PATCH', `/Users/${user.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
    expect(tableRows((await owner.get('/dashboard/members')).text, 'Members').find((r) => r.includes('pat.provisioned@example.com'))).toContain('Suspended');
  });

  it('"Expires" on "Create API key": the table says when, or "Expired"; "Maximum API key lifetime" narrows the choices and is enforced', async () => {
    await owner.get('/dashboard/api-keys');
    const created = await owner.follow(await owner.post('/dashboard/api-keys', { name: 'Month', access: 'read', expires: '30' }));
    expect(noticeOf(created.text)).toContain('API key "Month" created.');
    const row = tableRows(created.text, 'API keys').find((r) => r.startsWith('Month'))!;
    const expiresAt = new Date(Date.now() + 30 * 86_400_000);
    expect(row).toContain(`${expiresAt.getUTCDate()} ${expiresAt.toUTCString().slice(8, 11)} ${expiresAt.getUTCFullYear()}`);

    await env.container.database.db.updateTable('api_keys').set({ expires_at: Date.now() - 1000 }).where('name', '=', 'Month').execute();
    expect(tableRows((await owner.get('/dashboard/api-keys')).text, 'API keys').find((r) => r.startsWith('Month'))).toContain('Expired');

    await owner.get('/dashboard/settings/security');
    const settings = await owner.follow(await owner.post('/dashboard/settings/security', { max_key_lifetime: '90' }));
    expect(noticeOf(settings.text)).toContain('New API keys now expire within 90 days.');
    expect(settings.text).toMatch(/<option value="90" selected>90 days<\/option>/);

    const form = await owner.get('/dashboard/api-keys');
    expect(form.text).not.toContain('>Never</option>');
    expect(form.text).not.toContain('>1 year</option>');
    expect(form.text).toMatch(/<option value="90" selected>90 days<\/option>/);
    expect(textOf(form.text)).toContain("This organisation's keys expire within 90 days.");
    const before = (await env.container.database.db.selectFrom('api_keys').select('id').where('org_id', '=', org.id).execute()).length;
    const refused = await owner.post('/dashboard/api-keys', { name: 'Forever', access: 'read', expires: 'never' });
    expect(refused.status).toBe(400);
    expect(textOf(refused.text)).toContain('Expires: the key needs an expiry');
    expect((await env.container.database.db.selectFrom('api_keys').select('id').where('org_id', '=', org.id).execute()).length).toBe(before);

    await owner.get('/dashboard/settings/security');
    const lifted = await owner.follow(await owner.post('/dashboard/settings/security', { max_key_lifetime: 'none' }));
    expect(noticeOf(lifted.text)).toContain('API keys may now be created without an expiry.');
  });
});
