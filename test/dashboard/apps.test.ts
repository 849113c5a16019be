import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/access/actor.js';
import { DashboardClient, noticeOf, tableRows, textOf } from '../helpers/dashboard.js';
import { authorizationRequest, connectApp, discover, follow, mcpInitialize, register, visit } from '../helpers/oauth-flow.js';
import { cancelSubscription } from '../helpers/read-only.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/**
 * Connected apps in the dashboard (DASHBOARD 14, CONTRACT 17) without a browser: who sees which page, who may
 * revoke whose app and change the switches, each refusal with its status and nothing changed, and the consent
 * refused while the workspace is read-only.
 */
describe.each(testDialects())('connected apps in the dashboard (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let member: { userId: string; key: string };
  let admin: { userId: string; key: string };

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Acme');
    member = await org.member('member');
    admin = await org.member('admin');
  });
  afterAll(async () => env?.close());

  const initialize = (token: string) => mcpInitialize(env, token);
  const settings = () => env.container.services.connectedApps.settings(cliActor(org.id));

  it("the account page lists one's own apps only; a member revokes theirs but not someone else's", async () => {
    const mine = await connectApp(env, org.id, member.userId, { scope: 'projects:read', name: 'Cursor' });
    const theirs = await connectApp(env, org.id, admin.userId, { scope: 'read', name: 'ChatGPT' });
    const browser = await DashboardClient.signedIn(env, org.id, member.userId);
    const account = await browser.get('/dashboard/account');
    expect(account.status).toBe(200);
    const rows = tableRows(account.text, 'Connected apps');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('Cursor');
    expect(rows[0]).toContain('Read projects and their collaborators');
    expect(account.text).not.toContain('ChatGPT');
    expect(account.text).not.toContain('/dashboard/settings/apps');

    const [theirApp] = (await env.container.services.connectedApps.listAll(cliActor(org.id))).filter((a) => a.appName === 'ChatGPT');
    const refusedPage = await browser.get(`/dashboard/account/apps/${theirApp!.id}/revoke`);
    expect(refusedPage.status).toBe(303);
    await browser.get('/dashboard/account');
    const refused = await browser.post(`/dashboard/account/apps/${theirApp!.id}/revoke`);
    expect(refused.status).toBe(404);
    expect((await initialize(theirs.tokens.access_token)).status).toBe(200);

    const [myApp] = (await env.container.services.connectedApps.listAll(cliActor(org.id))).filter((a) => a.appName === 'Cursor');
    const confirm = await browser.get(`/dashboard/account/apps/${myApp!.id}/revoke`);
    expect(confirm.status).toBe(200);
    expect(textOf(confirm.text)).toMatch(/Revoke\s*Cursor\s*\?/);
    const done = await browser.follow(await browser.post(`/dashboard/account/apps/${myApp!.id}/revoke`));
    expect(noticeOf(done.text)).toBe('Cursor was revoked.');
    expect((await initialize(mine.tokens.access_token)).status).toBe(401);
    const audit = (await env.request('GET', '/v1/audit-log?action=app.revoked&limit=5', { key: org.ownerKey })).body.data as Json[];
    expect(audit[0]).toMatchObject({ source: 'dashboard', actor: { id: member.userId }, target: { id: myApp!.id, label: 'Cursor' } });
  });

  it('settings/apps: 403 for a member; an admin sees every app and revokes one, but not the switches; an owner changes them', async () => {
    const app = await connectApp(env, org.id, member.userId, { scope: 'read', name: 'VS Code' });
    const memberBrowser = await DashboardClient.signedIn(env, org.id, member.userId);
    expect((await memberBrowser.get('/dashboard/settings/apps')).status).toBe(403);

    const adminBrowser = await DashboardClient.signedIn(env, org.id, admin.userId);
    const page = await adminBrowser.get('/dashboard/settings/apps');
    expect(page.status).toBe(200);
    expect(tableRows(page.text, 'Connected apps').some((r) => r.includes('VS Code'))).toBe(true);
    expect(page.text).not.toContain('Members may connect apps');
    const before = await settings();
    const forbidden = await adminBrowser.post('/dashboard/settings/apps', { agents_may_delete: 'on' });
    expect(forbidden.status).toBe(403);
    expect(await settings()).toEqual(before);

    const [row] = (await env.container.services.connectedApps.listAll(cliActor(org.id))).filter((a) => a.appName === 'VS Code');
    await adminBrowser.get(`/dashboard/settings/apps/${row!.id}/revoke`);
    const revoked = await adminBrowser.follow(await adminBrowser.post(`/dashboard/settings/apps/${row!.id}/revoke`));
    expect(noticeOf(revoked.text)).toContain('VS Code');
    expect((await initialize(app.tokens.access_token)).status).toBe(401);

    const ownerBrowser = await DashboardClient.signedIn(env, org.id, org.ownerId);
    const ownerPage = await ownerBrowser.get('/dashboard/settings/apps');
    expect(ownerPage.text).toContain('Members may connect apps');
    const saved = await ownerBrowser.follow(await ownerBrowser.post('/dashboard/settings/apps', { agents_may_delete: 'on' }));
    expect(noticeOf(saved.text)).toBe('Only admins and owners may connect apps now. AI agents may now delete.');
    expect(await settings()).toEqual({ membersMayConnect: false, agentsMayDelete: true });
    const audit = (await env.request('GET', '/v1/audit-log?action=organization.apps_settings_changed&limit=5', { key: org.ownerKey })).body.data as Json[];
    expect(audit[0].changes).toEqual({ members_may_connect_apps: { old: true, new: false }, agents_may_delete: { old: false, new: true } });
    await ownerBrowser.follow(await ownerBrowser.post('/dashboard/settings/apps', { members_may_connect: 'on' }));
    expect(await settings()).toEqual({ membersMayConnect: true, agentsMayDelete: false });
  });

  it('a consent that expired, or is another browser\'s, is a 400 page and grants nothing', async () => {
    const browser = await DashboardClient.signedIn(env, org.id, member.userId);
    const unknown = await browser.get('/dashboard/authorize/notarealinteraction');
    expect(unknown.status).toBe(400);
    expect(textOf(unknown.text)).toContain('This request has expired');

    // Another browser opens the consent page of this one's request: its cookies do not match.
    const as = await discover(env);
    const client = await register(env, as);
    const page = await follow(browser, env.config.publicBaseUrl, await visit(browser, authorizationRequest(as, client, { scope: 'read' }).url));
    const uid = /action="\/dashboard\/authorize\/([^"]+)"/.exec(page.text)![1]!;
    const stranger = await DashboardClient.signedIn(env, org.id, admin.userId);
    expect((await stranger.get(`/dashboard/authorize/${uid}`)).status).toBe(400);
    const before = (await env.container.services.connectedApps.listAll(cliActor(org.id))).length;
    expect((await stranger.post(`/dashboard/authorize/${uid}`, { decision: 'allow' })).status).toBe(400);
    expect((await env.container.services.connectedApps.listAll(cliActor(org.id))).length).toBe(before);
  });

  it('while the workspace is read-only, "Allow" is refused (403) and no app is connected; revoking still works', async () => {
    const frozen = await env.createOrg('Frozen');
    const existing = await connectApp(env, frozen.id, frozen.ownerId, { scope: 'read', name: 'Before' });
    await cancelSubscription(env.container, frozen.id);
    const browser = await DashboardClient.signedIn(env, frozen.id, frozen.ownerId);
    const as = await discover(env);
    const client = await register(env, as, { client_name: 'After' });
    const page = await follow(browser, env.config.publicBaseUrl, await visit(browser, authorizationRequest(as, client, { scope: 'read' }).url));
    const uid = /action="\/dashboard\/authorize\/([^"]+)"/.exec(page.text)![1]!;
    const refused = await browser.post(`/dashboard/authorize/${uid}`, { decision: 'allow' });
    expect(refused.status).toBe(403);
    const apps = await env.container.services.connectedApps.listAll(cliActor(frozen.id));
    expect(apps.map((a) => a.appName)).toEqual(['Before']);
    // Reads still work with the earlier app; revoking it is allowed.
    expect((await initialize(existing.tokens.access_token)).status).toBe(200);
    await browser.get(`/dashboard/account/apps/${apps[0]!.id}/revoke`);
    expect((await browser.post(`/dashboard/account/apps/${apps[0]!.id}/revoke`)).status).toBe(303);
    expect((await initialize(existing.tokens.access_token)).status).toBe(401);
  });
});
