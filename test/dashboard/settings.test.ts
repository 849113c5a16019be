import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, textOf } from '../helpers/dashboard.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/*
 * Issue 46, DASHBOARD 1 "Settings": admins and owners have "Settings" in the navigation, a page linking every
 * organisation setting the role may open with its state in a line; members and viewers have neither.
 */
describe.each(testDialects())('dashboard: the Settings page (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Settings & Co');
  });
  afterAll(async () => env?.close());

  const navLinks = (html: string) => [.../<nav aria-label="Main"[^]*?<\/nav>/.exec(html)![0].matchAll(/<a href="[^"]+"[^>]*>([^<]+)<\/a>/g)].map((m) => m[1]);
  const settingLines = (html: string) => [...html.matchAll(/<li><a href="([^"]+)">([^<]+)<\/a><span class="hint">([^<]+)<\/span><\/li>/g)].map((m) => [m[1], m[2], m[3]]);

  it('is in the navigation of admins and owners, each setting the role may open with its state; members and viewers get 403', async () => {
    // The people first: their keys are made without an expiry, which the lifetime set below would refuse.
    const people = { admin: await org.member('admin'), member: await org.member('member'), viewer: await org.member('viewer') };
    const owner = await DashboardClient.signedIn(env, org.id, org.ownerId);
    const page = await owner.get('/dashboard/settings');
    expect(page.status).toBe(200);
    expect(navLinks(page.text)).toContain('Settings');
    expect(page.text).toMatch(/<a href="\/dashboard\/settings" aria-current="page">Settings<\/a>/);
    expect(settingLines(page.text)).toEqual([
      ['/dashboard/settings/security', 'Organisation security', 'Two-step verification is not required. API keys may be created without an expiry.'],
      ['/dashboard/settings/sso', 'Single sign-on', 'Not set up: members sign in with a password or a passkey.'],
      ['/dashboard/settings/scim', 'Provisioning', 'Off: no SCIM token.'],
      ['/dashboard/settings/apps', 'Apps', 'No app connected. Members may connect apps.'],
      ['/dashboard/billing', 'Billing', 'Subscription active.'],
    ]);
    // A sub-page marks "Settings" as where the person is.
    expect((await owner.get('/dashboard/settings/sso')).text).toMatch(/<a href="\/dashboard\/settings" aria-current="page">Settings<\/a>/);

    // The state follows the settings: a requirement and a key lifetime, said in words.
    await owner.follow(await owner.post('/dashboard/settings/security', { require_two_step: 'on', max_key_lifetime: '90' }));
    expect(settingLines((await owner.get('/dashboard/settings')).text)[0]![2]).toMatch(/^Two-step verification required since \d{1,2} [A-Z][a-z]{2} \d{4}\. API keys expire within 90 days\.$/);

    const admin = await DashboardClient.signedIn(env, org.id, people.admin.userId);
    const adminPage = await admin.get('/dashboard/settings');
    expect(adminPage.status).toBe(200);
    // Only what an admin may open: not the owner's security settings, not provisioning.
    expect(settingLines(adminPage.text).map((l) => l[1])).toEqual(['Single sign-on', 'Apps', 'Billing']);

    for (const role of ['member', 'viewer'] as const) {
      const browser = await DashboardClient.signedIn(env, org.id, people[role].userId);
      const overview = await browser.get('/dashboard');
      expect(navLinks(overview.text), role).not.toContain('Settings');
      const refused = await browser.get('/dashboard/settings');
      expect(refused.status, role).toBe(403);
      expect(textOf(refused.text), role).not.toContain('Organisation security');
    }
  });
});
