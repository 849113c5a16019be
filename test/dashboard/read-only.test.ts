import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/lib/crypto.js';
import { formatDay } from '../../src/lib/time.js';
import { DashboardClient, textOf, type FormFields } from '../helpers/dashboard.js';
import { buildReadOnlyWorld, cancelSubscription, orgSnapshot, resumeSubscription, type ReadOnlyWorld } from '../helpers/read-only.js';
import { createTestEnv, testDialects, type TestEnv } from '../helpers/test-env.js';

const PAGES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/dashboard/pages');

/** A dashboard route as its page module declares it (`/projects/:id`), and the address it takes in this world. */
interface PageCase {
  route: string;
  url(w: ReadOnlyWorld): string;
  fields?(w: ReadOnlyWorld): FormFields;
}

const P = (w: ReadOnlyWorld) => `/dashboard/projects/${w.projectId}`;
const WF = (w: ReadOnlyWorld) => `${P(w)}/workflows/${w.workflowId}`;
const WH = (w: ReadOnlyWorld) => `/dashboard/webhooks/${w.webhookId}`;

/** Every page a signed-in member opens: each shows the banner while read-only. */
const BANNER_PAGES: PageCase[] = [
  { route: '/', url: () => '/dashboard' },
  { route: '/projects', url: () => '/dashboard/projects' },
  { route: '/projects/:id', url: P },
  { route: '/projects/:id/workflows/:wf', url: WF },
  { route: '/runs/:run', url: (w) => `/dashboard/runs/${w.runId}` },
  { route: '/tasks', url: () => '/dashboard/tasks' },
  { route: '/members', url: () => '/dashboard/members' },
  { route: '/api-keys', url: () => '/dashboard/api-keys' },
  { route: '/api-keys/:id/revoke', url: (w) => `/dashboard/api-keys/${w.readKey.keyId}/revoke` },
  { route: '/webhooks', url: () => '/dashboard/webhooks' },
  { route: '/webhooks/:id', url: WH },
  { route: '/webhooks/:id/delete', url: (w) => `/dashboard/webhooks/${w.spareWebhookId}/delete` },
  { route: '/webhooks/:id/deliveries/:dlv', url: (w) => `${WH(w)}/deliveries/${w.deliveryId}` },
  { route: '/audit-log', url: () => '/dashboard/audit-log' },
  { route: '/account', url: () => '/dashboard/account' },
  { route: '/account/security', url: () => '/dashboard/account/security' },
  { route: '/account/security/recovery-codes', url: () => '/dashboard/account/security/recovery-codes' },
  { route: '/settings', url: () => '/dashboard/settings' },
  { route: '/settings/security', url: () => '/dashboard/settings/security' },
  { route: '/settings/sso', url: () => '/dashboard/settings/sso' },
  { route: '/settings/scim', url: () => '/dashboard/settings/scim' },
  { route: '/settings/scim/tokens/:id/revoke', url: (w) => `/dashboard/settings/scim/tokens/${w.scimTokenId}/revoke` },
  { route: '/settings/apps', url: () => '/dashboard/settings/apps' },
  { route: '/billing', url: () => '/dashboard/billing' },
  { route: '/export', url: () => '/dashboard/export' },
];

/** Confirmation steps of refused changes: 403 while read-only, as the change itself would answer. */
const REFUSED_STEPS: PageCase[] = [
  { route: '/projects/:id/delete', url: (w) => `${P(w)}/delete` },
  { route: '/projects/:id/workflows/:wf/delete', url: (w) => `${WF(w)}/delete` },
  { route: '/runs/:run/cancel', url: (w) => `/dashboard/runs/${w.runId}/cancel` },
  { route: '/members/:id/remove', url: (w) => `/dashboard/members/${w.member.userId}/remove` },
  { route: '/webhooks/:id/replay-failed', url: (w) => `${WH(w)}/replay-failed` },
  { route: '/webhooks/:id/edit', url: (w) => `${WH(w)}/edit` },
  { route: '/webhooks/:id/rotate-secret', url: (w) => `${WH(w)}/rotate-secret` },
  { route: '/webhooks/:id/test', url: (w) => `${WH(w)}/test` },
  { route: '/tasks/:id/reject', url: (w) => `/dashboard/tasks/${w.approvalTaskId}/reject` },
  { route: '/projects/:id/workflows/:wf/steps/:step/edit', url: (w) => `${WF(w)}/steps/${w.stepId}/edit` },
];

/** Every form that changes something the services refuse while read-only, filled in as a person would. */
const REFUSED_FORMS: PageCase[] = [
  { route: '/projects', url: () => '/dashboard/projects', fields: () => ({ name: 'During the grace period', description: '', status: 'active' }) },
  { route: '/projects/:id', url: P, fields: () => ({ name: 'Renamed', description: '', status: 'active' }) },
  { route: '/projects/:id/archive', url: (w) => `${P(w)}/archive` },
  { route: '/projects/:id/unarchive', url: (w) => `${P(w)}/unarchive` },
  { route: '/projects/:id/delete', url: (w) => `${P(w)}/delete`, fields: (w) => ({ confirm_name: w.projectName }) },
  { route: '/projects/:id/workflows', url: (w) => `${P(w)}/workflows`, fields: () => ({ name: 'Another', description: '' }) },
  { route: '/projects/:id/tasks', url: (w) => `${P(w)}/tasks`, fields: () => ({ title: 'Another task', assignee_id: '', due_date: '' }) },
  { route: '/projects/:id/tasks/:task/assign', url: (w) => `${P(w)}/tasks/${w.taskId}/assign`, fields: (w) => ({ assignee_id: w.admin.userId }) },
  { route: '/projects/:id/collaborators', url: (w) => `${P(w)}/collaborators`, fields: (w) => ({ user_id: w.member.userId, role: 'editor' }) },
  { route: '/projects/:id/collaborators/:user/role', url: (w) => `${P(w)}/collaborators/${w.org.ownerId}/role`, fields: () => ({ role: 'viewer' }) },
  { route: '/projects/:id/collaborators/:user/remove', url: (w) => `${P(w)}/collaborators/${w.org.ownerId}/remove` },
  { route: '/projects/:id/visibility', url: (w) => `${P(w)}/visibility`, fields: () => ({ visibility: 'private' }) },
  { route: '/projects/:id/workflows/:wf', url: WF, fields: () => ({ name: 'Renamed workflow', description: '' }) },
  { route: '/projects/:id/workflows/:wf/steps', url: (w) => `${WF(w)}/steps`, fields: () => ({ type: 'wait', title: '', assignee_id: '', due_in: '', duration: '1h' }) },
  { route: '/projects/:id/workflows/:wf/steps/:step/remove', url: (w) => `${WF(w)}/steps/${w.stepId}/remove` },
  { route: '/projects/:id/workflows/:wf/steps/:step/edit', url: (w) => `${WF(w)}/steps/${w.stepId}/edit`, fields: () => ({ type: 'wait', title: '', assignee_id: '', due_in: '', duration: '2h' }) },
  { route: '/projects/:id/workflows/:wf/steps/:step/move', url: (w) => `${WF(w)}/steps/${w.stepId}/move`, fields: () => ({ direction: 'down' }) },
  { route: '/projects/:id/workflows/:wf/run', url: (w) => `${WF(w)}/run` },
  { route: '/projects/:id/workflows/:wf/delete', url: (w) => `${WF(w)}/delete` },
  { route: '/runs/:run/cancel', url: (w) => `/dashboard/runs/${w.runId}/cancel` },
  { route: '/tasks/:id/done', url: (w) => `/dashboard/tasks/${w.taskId}/done`, fields: () => ({ back: '/dashboard/tasks' }) },
  { route: '/tasks/:id/approve', url: (w) => `/dashboard/tasks/${w.approvalTaskId}/approve`, fields: () => ({ back: '/dashboard/tasks' }) },
  { route: '/tasks/:id/reject', url: (w) => `/dashboard/tasks/${w.approvalTaskId}/reject`, fields: () => ({ back: '/dashboard/tasks', reason: 'No' }) },
  { route: '/members/invite', url: () => '/dashboard/members/invite', fields: () => ({ email: 'late.joiner@example.com', role: 'member' }) },
  { route: '/members/:id/resend', url: (w) => `/dashboard/members/${w.member.userId}/resend` },
  { route: '/members/:id/role', url: (w) => `/dashboard/members/${w.member.userId}/role`, fields: () => ({ role: 'admin' }) },
  { route: '/members/:id/remove', url: (w) => `/dashboard/members/${w.member.userId}/remove` },
  { route: '/api-keys', url: () => '/dashboard/api-keys', fields: () => ({ name: 'Late key', access: 'full' }) },
  { route: '/webhooks', url: () => '/dashboard/webhooks', fields: () => ({ url: 'https://127.0.0.1:9/late', events: ['project.created'], secret: '' }) },
  { route: '/webhooks/:id/replay-failed', url: (w) => `${WH(w)}/replay-failed`, fields: () => ({ since: '2000-01-01T00:00' }) },
  { route: '/webhooks/:id/deliveries/:dlv/replay', url: (w) => `${WH(w)}/deliveries/${w.deliveryId}/replay` },
  { route: '/webhooks/:id/edit', url: (w) => `${WH(w)}/edit`, fields: () => ({ url: 'https://127.0.0.1:9/moved', events: ['project.created'] }) },
  { route: '/webhooks/:id/rotate-secret', url: (w) => `${WH(w)}/rotate-secret`, fields: () => ({ previous_expires_in: '3600' }) },
  { route: '/webhooks/:id/test', url: (w) => `${WH(w)}/test`, fields: () => ({ event: 'project.created' }) },
  { route: '/webhooks/:id/enable', url: (w) => `${WH(w)}/enable` },
  // Single sign-on's settings (DASHBOARD 12) are the workspace's configuration.
  { route: '/settings/sso/connection', url: () => '/dashboard/settings/sso/connection', fields: () => ({ issuer: 'https://idp.example', client_id: 'late', client_secret: 'late secret', default_role: 'member' }) },
  { route: '/settings/sso/connection/delete', url: () => '/dashboard/settings/sso/connection/delete' },
  { route: '/settings/sso/domains', url: () => '/dashboard/settings/sso/domains', fields: () => ({ domain: 'late.example' }) },
  { route: '/settings/sso/domains/verify', url: () => '/dashboard/settings/sso/domains/verify', fields: () => ({ domain: 'late.example' }) },
  { route: '/settings/sso/domains/remove', url: () => '/dashboard/settings/sso/domains/remove', fields: () => ({ domain: 'late.example' }) },
  { route: '/settings/sso/require', url: () => '/dashboard/settings/sso/require', fields: () => ({ required: 'on' }) },
  // Provisioning's settings (DASHBOARD 14) too; revoking a SCIM token stays open (taking access away).
  { route: '/settings/scim/tokens', url: () => '/dashboard/settings/scim/tokens', fields: () => ({ name: 'Late' }) },
  { route: '/settings/scim/mappings', url: () => '/dashboard/settings/scim/mappings', fields: (w) => ({ group: w.scimGroupId, org_role: 'admin' }) },
  { route: '/settings/scim/default-role', url: () => '/dashboard/settings/scim/default-role', fields: () => ({ default_role: 'viewer' }) },
  // The owners' app switches (DASHBOARD 14).
  { route: '/settings/apps', url: () => '/dashboard/settings/apps', fields: () => ({ members_may_connect: 'on', agents_may_delete: 'on' }) },
];

/** Refused while read-only, in their own suite: "Allow" on the consent page needs an app's request (test/dashboard/apps.test.ts). */
const OWN_SUITE_FORMS = ['/authorize/:uid'];

/**
 * Forms that stay open while read-only (DASHBOARD 10: sign-in and sign-out, account settings, revoking keys,
 * deleting subscriptions, reading the audit log, data export, billing) or that belong to no workspace yet.
 * Each allowed one is exercised below (export and billing in their own suites).
 */
const ALLOWED_FORMS = [
  '/login', '/login/choose', '/forgot-password', '/password/:token', '/logout', '/account/name', '/account/password',
  '/api-keys/:id/revoke', '/webhooks/:id/delete', '/audit-log/export', '/export', '/billing/cancel', '/billing/resume', '/billing/portal',
  // Signing in and account security (DASHBOARD 11) change no workspace data: test/dashboard/account-security.test.ts.
  '/login/two-step', '/login/two-step/passkey-options', '/login/passkey/options', '/login/passkey', '/account/confirm/passkey-options',
  '/account/security/totp/setup', '/account/security/totp/enable', '/account/security/totp/disable', '/account/security/recovery-codes',
  '/account/security/passkeys/options', '/account/security/passkeys', '/account/security/passkeys/:id/remove',
  '/account/security/sessions/:id/revoke', '/account/security/sessions/revoke-others', '/settings/security',
  // Signing in through single sign-on, its test round trip, "Confirm with single sign-on" and "Link my single sign-on
  // account" change no workspace data (test/dashboard/sso.test.ts, test/dashboard/sign-in-review.test.ts); members are not created on
  // first sign-in while read-only.
  '/login/sso', '/settings/sso/test', '/sso/confirm', '/sso/link',
  // Revoking a SCIM token takes access away (test/dashboard/scim.test.ts).
  '/settings/scim/tokens/:id/revoke',
  // Revoking a connected app takes access away too (test/dashboard/apps.test.ts).
  '/account/apps/:id/revoke', '/settings/apps/:id/revoke',
];
/**
 * Pages open without a session (no workspace to show), file downloads, and the cancellation's confirmation
 * (the Billing suite's: a workspace already read-only has nothing to confirm and is sent back to Billing).
 */
const OTHER_GETS = ['/login', '/login/sso', '/sso/callback', '/login/two-step', '/forgot-password', '/password/:token', '/invitations/:token', '/export/:id/download', '/billing/cancel', '/webhooks/:id/rotated', '/account/security/totp',
  // Need an app's request or connection: test/dashboard/apps.test.ts.
  '/authorize/:uid', '/account/apps/:id/revoke', '/settings/apps/:id/revoke',
  // Needs a saved connection: test/dashboard/sign-in-review.test.ts.
  '/settings/sso/connection/delete'];

/** Every route each page module declares, by method, from the source: a new form cannot go untested here. */
function declaredRoutes(method: 'get' | 'post'): string[] {
  const routes: string[] = [];
  for (const file of fs.readdirSync(PAGES_DIR).filter((f) => f.endsWith('.tsx'))) {
    const source = fs.readFileSync(path.join(PAGES_DIR, file), 'utf8');
    for (const match of source.matchAll(new RegExp(`app\\.${method}\\(\\s*'([^']+)'`, 'g'))) routes.push(match[1]!);
  }
  return routes;
}

/** The banner's content, tags removed (the date is a `<time>`). */
function bannerOf(html: string): { text: string; datetime: string | undefined } | null {
  const match = /<p class="read-only-banner" role="status">([\s\S]*?)<\/p>/.exec(html);
  if (!match) return null;
  return { text: match[1]!.replace(/<[^>]+>/g, ''), datetime: /<time datetime="([^"]+)"/.exec(match[1]!)?.[1] };
}

/** The alert at the top of a page, as text. */
const alertOf = (html: string) => textOf(/<div class="error-summary" role="alert"[^>]*>([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '');

describe.each(testDialects())('dashboard while read-only (%s)', (dialect) => {
  let env: TestEnv;
  let w: ReadOnlyWorld;
  let deletionAt: number;
  let owner: DashboardClient;
  let ownerEmail: string;
  const PASSWORD = 'owner password 1';

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    w = await buildReadOnlyWorld(env, 'Dashboard');
    const db = env.container.database.db;
    ownerEmail = (await db.selectFrom('users').select('email').where('id', '=', w.org.ownerId).executeTakeFirstOrThrow()).email;
    await db.updateTable('users').set({ password_hash: await hashPassword(PASSWORD) }).where('org_id', '=', w.org.id).where('id', '=', w.org.ownerId).execute();
    owner = await DashboardClient.signedIn(env, w.org.id, w.org.ownerId);
    // While active: no banner.
    const active = await owner.get('/dashboard/projects');
    expect(active.status).toBe(200);
    expect(bannerOf(active.text)).toBeNull();
    deletionAt = await cancelSubscription(env.container, w.org.id);
  });
  afterAll(async () => env?.close());

  const expectedBanner = (role: 'owner' | 'viewer' = 'owner') => ({
    text: `This workspace is read-only. It will be deleted on ${formatDay(deletionAt)}. ${role === 'owner' ? 'Resume subscription' : 'An owner can resume it on the Billing page.'}`,
    datetime: new Date(deletionAt).toISOString(),
  });

  it('the tables name every route of the page modules', () => {
    const posts = declaredRoutes('post');
    const covered = [...REFUSED_FORMS.map((f) => f.route), ...ALLOWED_FORMS, ...OWN_SUITE_FORMS, '/invitations/:token'];
    expect(posts.filter((r) => !covered.includes(r))).toEqual([]);
    const gets = declaredRoutes('get');
    const shown = [...BANNER_PAGES.map((p) => p.route), ...REFUSED_STEPS.map((p) => p.route), ...OTHER_GETS];
    expect(gets.filter((r) => !shown.includes(r))).toEqual([]);
  });

  it('every page shows the banner with the deletion date, to every role', async () => {
    for (const page of BANNER_PAGES) {
      const res = await owner.get(page.url(w));
      expect(res.status, page.route).toBe(200);
      expect(bannerOf(res.text), page.route).toEqual(expectedBanner());
    }
    const viewer = await DashboardClient.signedIn(env, w.org.id, w.viewer.userId);
    for (const url of ['/dashboard', '/dashboard/projects', '/dashboard/account']) expect(bannerOf((await viewer.get(url)).text)).toEqual(expectedBanner('viewer'));
    // The error pages too (a page that is not there).
    const missing = await owner.get('/dashboard/nowhere');
    expect(missing.status).toBe(404);
    expect(bannerOf(missing.text)).toEqual(expectedBanner());
  });

  it('a run of the read-only workspace says it is paused and promises no progress', async () => {
    const res = await owner.get(`/dashboard/runs/${w.runId}`);
    expect(res.status).toBe(200);
    expect(textOf(res.text)).toContain('Status Paused while the workspace is read-only');
    expect(res.text).not.toContain('data-progress-url');
    expect(textOf(res.text)).not.toContain('This page updates by itself');
  });

  it('every form that changes something answers 403 with the refusal listed at the top, and nothing changes', async () => {
    const before = await orgSnapshot(env.container, w.org.id);
    for (const step of REFUSED_STEPS) {
      const res = await owner.get(step.url(w));
      expect(res.status, `GET ${step.route}`).toBe(403);
      expect(alertOf(res.text), step.route).toContain('This workspace is read-only');
    }
    for (const form of REFUSED_FORMS) {
      await owner.get('/dashboard/projects'); // a fresh CSRF token, as the page holding the form would give
      const res = await owner.post(form.url(w), form.fields?.(w) ?? {});
      expect(res.status, `POST ${form.route}`).toBe(403);
      const alert = alertOf(res.text);
      expect(alert, form.route).toContain('This workspace is read-only since its subscription was cancelled');
      expect(alert, form.route).toContain(`It will be deleted on ${formatDay(deletionAt)}.`);
      expect(bannerOf(res.text), form.route).toEqual(expectedBanner());
      expect(textOf(res.text)).toContain('Nothing was changed.');
    }
    // An invited person cannot join a read-only workspace either (a page without a session, so no banner).
    const invitee = new DashboardClient(env);
    await invitee.get(`/dashboard/invitations/${w.invitationToken}`);
    const joined = await invitee.post(`/dashboard/invitations/${w.invitationToken}`, { name: 'Ivy Invitee', password: 'long enough password' });
    expect(joined.status).toBe(403);
    expect(alertOf(joined.text)).toContain('This workspace is read-only');
    expect(await orgSnapshot(env.container, w.org.id)).toEqual(before);
  });

  it('a refused form sent from a page goes back to that page with the refusal shown once; a reload posts nothing', async () => {
    const before = await orgSnapshot(env.container, w.org.id);
    await owner.get('/dashboard/projects');
    const res = await owner.post('/dashboard/projects', { name: 'Typed during the grace period', description: '', status: 'active', _from: '/dashboard/projects?status=active' });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/projects?status=active');
    const page = await owner.follow(res);
    expect(page.status).toBe(200);
    expect(alertOf(page.text)).toContain('This workspace is read-only since its subscription was cancelled');
    // The deletion day in the page's words, never the API's timestamp.
    expect(alertOf(page.text)).toMatch(/It will be deleted on \d{1,2} [A-Z][a-z]{2} \d{4}\./);
    expect(alertOf(page.text)).not.toMatch(/\d{4}-\d{2}-\d{2}T/);
    // What was typed comes back (DASHBOARD 1), though the form is no longer offered.
    expect(page.text).toMatch(/<label for="typed-0">Name<\/label><textarea id="typed-0" readonly rows="1">Typed during the grace period<\/textarea>/);
    // Shown once; the address is a GET, so reloading it changes nothing.
    const reloaded = await owner.get(res.location!);
    expect(alertOf(reloaded.text)).toBe('');
    expect(reloaded.text).not.toContain('Typed during the grace period');
    expect(await orgSnapshot(env.container, w.org.id)).toEqual(before);
    // A `_from` outside the dashboard is not followed: the refusal is the page itself.
    await owner.get('/dashboard/projects');
    const elsewhere = await owner.post('/dashboard/projects', { name: 'x', description: '', status: 'active', _from: 'https://evil.example/dashboard' });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.location).toBeUndefined();
  });

  it('a role that cannot act keeps its forbidden page first', async () => {
    const viewer = await DashboardClient.signedIn(env, w.org.id, w.viewer.userId);
    await viewer.get('/dashboard/projects');
    const edit = await viewer.post(`${P(w)}`, { name: 'Sneaky', description: '', status: 'active' });
    expect(edit.status).toBe(403);
    expect(textOf(edit.text)).toContain('Your role (viewer) does not allow this action');
    expect(textOf(edit.text)).not.toContain('since its subscription was cancelled');
    const create = await viewer.post('/dashboard/projects', { name: 'Sneaky', status: 'active' });
    expect(create.status).toBe(403);
    expect(alertOf(create.text)).toContain('Your role (viewer) does not allow this action');
    const member = await DashboardClient.signedIn(env, w.org.id, w.member.userId);
    expect((await member.get(`${P(w)}/delete`)).status).toBe(403);
    expect(textOf((await member.get(`${P(w)}/delete`)).text)).toContain('Your role (member) does not allow this action');
  });

  it('signing in, account settings, revoking a key, deleting a subscription, the audit log download and signing out still work', async () => {
    const db = env.container.database.db;
    // Sign in with the form.
    const browser = new DashboardClient(env);
    await browser.get('/dashboard/login');
    const signedIn = await browser.post('/dashboard/login', { email: ownerEmail, password: PASSWORD, next: '/dashboard/account' });
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe('/dashboard/account');
    expect(bannerOf((await browser.get('/dashboard/account')).text)).toEqual(expectedBanner());

    // Account settings.
    const named = await browser.post('/dashboard/account/name', { name: 'Olive Renamed' });
    expect(named.status).toBe(303);
    expect((await env.container.services.users.get(w.org.id, w.org.ownerId)).name).toBe('Olive Renamed');
    await browser.get('/dashboard/account');
    const changed = await browser.post('/dashboard/account/password', { current_password: PASSWORD, new_password: 'owner password 2' });
    expect(changed.status).toBe(303);

    // Revoking a key: the confirmation, then the revocation; the key is refused from then on.
    expect((await browser.get(`/dashboard/api-keys/${w.readKey.keyId}/revoke`)).status).toBe(200);
    const revoked = await browser.post(`/dashboard/api-keys/${w.readKey.keyId}/revoke`);
    expect(revoked.status).toBe(303);
    expect((await env.request('GET', '/v1/projects', { key: w.readKey.key })).status).toBe(401);

    // Deleting a subscription.
    expect((await browser.get(`/dashboard/webhooks/${w.spareWebhookId}/delete`)).status).toBe(200);
    const deleted = await browser.post(`/dashboard/webhooks/${w.spareWebhookId}/delete`);
    expect(deleted.status).toBe(303);
    expect(await db.selectFrom('webhooks').select('id').where('org_id', '=', w.org.id).where('id', '=', w.spareWebhookId).execute()).toEqual([]);

    // The audit log's download is a read (its own audit row is allowed).
    await browser.get('/dashboard/audit-log');
    const download = await browser.post('/dashboard/audit-log/export', { format: 'csv', action: '', actor: '' });
    expect(download.status).toBe(200);
    expect(download.text).toContain('webhook.deleted');

    // Signing out ends the session.
    await browser.get('/dashboard');
    const out = await browser.post('/dashboard/logout');
    expect(out.status).toBe(303);
    expect((await browser.get('/dashboard')).status).toBe(303);
  });

  it('resuming gives the forms back on the next click, and the banner goes', async () => {
    await resumeSubscription(env.container, w.org.id);
    // The password change above ended the owner's other sessions: a new one.
    owner = await DashboardClient.signedIn(env, w.org.id, w.org.ownerId);
    const page = await owner.get('/dashboard/projects');
    expect(bannerOf(page.text)).toBeNull();
    const created = await owner.post('/dashboard/projects', { name: 'After resuming', description: '', status: 'active' });
    expect(created.status).toBe(303);
  });
});
