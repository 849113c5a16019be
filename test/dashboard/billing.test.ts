import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUtc } from '../../src/lib/time.js';
import { GRACE_PERIOD_MS } from '../../src/services/lifecycle/lifecycle-service.js';
import { DashboardClient, textOf, type PageResponse } from '../helpers/dashboard.js';
import { outboxMessages } from '../helpers/mail-outbox.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/*
 * DASHBOARD 3 and 10: /dashboard/billing. Every member sees the plan and the state; only the owner cancels
 * (typing the organisation's name on the confirmation step) and resumes, through the lifecycle service, so
 * the audit rows and the owners' e-mails are the CLI's. Stripe is configured in this world so that the
 * "Manage billing" form shows for an organisation billed through Stripe and for no other.
 */

const PAGE = '/dashboard/billing';
const CANCEL = '/dashboard/billing/cancel';
const RESUME = '/dashboard/billing/resume';

/** The problems listed at the top of the page (role="alert"). */
function alertText(html: string): string {
  const summary = /<div class="error-summary" role="alert"[^>]*>([\s\S]*?)<\/div>/.exec(html);
  return summary ? textOf(summary[1]!) : '';
}

/** The `<dl class="facts">` of the page as label → text. */
function facts(html: string): Record<string, string> {
  const list = /<dl class="facts">([\s\S]*?)<\/dl>/.exec(html);
  if (!list) throw new Error('no facts on the page');
  return Object.fromEntries([...list[1]!.matchAll(/<dt>([\s\S]*?)<\/dt>\s*<dd>([\s\S]*?)<\/dd>/g)].map((m) => [textOf(m[1]!), textOf(m[2]!)]));
}

/** The UTC minute a `<Time>` shows for an instant. */
const shown = (ms: number) => formatUtc(ms);

describe.each(testDialects())('dashboard: billing (%s)', (dialect) => {
  const clock = new ManualClock(Date.UTC(2026, 3, 1, 8, 0));
  let env: TestEnv;

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock, env: { STRIPE_SECRET_KEY: 'sk_test_billingpage', STRIPE_WEBHOOK_SECRET: 'whsec_billingpage' } });
  });
  afterAll(async () => env?.close());

  const db = () => env.container.database.db;

  /** An organisation with a second owner and one member of every other role. */
  async function world(name: string) {
    const org = await env.createOrg(name);
    const [owner2, admin, member, viewer] = [await org.member('owner'), await org.member('admin'), await org.member('member'), await org.member('viewer')];
    return { org, owner2, admin, member, viewer };
  }

  const browserFor = (org: TestOrg, userId: string) => DashboardClient.signedIn(env, org.id, userId);

  async function orgRow(orgId: string) {
    return db().selectFrom('organizations').select(['name', 'state', 'cancelled_at', 'deletion_at', 'updated_at']).where('id', '=', orgId).executeTakeFirstOrThrow();
  }

  async function auditRows(orgId: string) {
    return db().selectFrom('audit_log').selectAll().where('org_id', '=', orgId).where('action', 'like', 'subscription.%').orderBy('seq').execute();
  }

  async function ownerEmails(orgId: string): Promise<string[]> {
    const rows = await db().selectFrom('users').select('email').where('org_id', '=', orgId).where('role', '=', 'owner').orderBy('email').execute();
    return rows.map((r) => r.email);
  }

  /** Cancellation e-mails in the outbox for this organisation's name, by recipient. */
  function cancellationMailsTo(name: string): string[] {
    return outboxMessages(env.dataDir)
      .filter((m) => m.raw.includes(`Subject: ${name}: subscription cancelled, workspace read-only`))
      .map((m) => /^To: (.+)$/m.exec(m.raw)![1]!.trim())
      .sort();
  }

  /** Everything a refused form must leave as it was. */
  async function snapshot(orgId: string) {
    return { org: await orgRow(orgId), audit: await auditRows(orgId) };
  }

  async function cancelWith(browser: DashboardClient, typed: string): Promise<PageResponse> {
    const confirm = await browser.get(CANCEL);
    expect(confirm.status).toBe(200);
    return browser.post(CANCEL, { confirm_name: typed });
  }

  it('shows every member the plan and the state; only the owner gets "Cancel subscription"', async () => {
    const { org, admin, member, viewer } = await world('Plan & <Co>');
    for (const userId of [admin.userId, member.userId, viewer.userId]) {
      const page = await (await browserFor(org, userId)).get(PAGE);
      expect(page.status).toBe(200);
      expect(page.text).toContain('<title>Billing · Plan &amp; &lt;Co> · Workspace</title>');
      expect(page.text).toContain('<h1>Billing</h1>');
      expect(page.text).toContain('<a href="/dashboard/billing" aria-current="page">Billing</a>');
      expect(facts(page.text)).toEqual({
        Plan: 'Workspace subscription',
        Billing: 'Managed by the operator',
        State: 'Active',
        Created: shown(clock.now()),
      });
      expect(page.text).not.toContain('Cancel subscription');
      expect(page.text).not.toContain('Resume subscription');
      expect(page.text).not.toContain('Manage billing');
      expect(textOf(page.text)).toContain('Only an owner can cancel or resume the subscription.');
    }

    const owner = await browserFor(org, org.ownerId);
    const page = await owner.get(PAGE);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<section class="danger-zone"[^]*<a href="\/dashboard\/billing\/cancel" class="button danger-outline">Cancel subscription<\/a>/);
    expect(page.text).not.toContain('Resume subscription');
    // Stripe is configured, but this organisation is not billed through it: nothing to manage there.
    expect(page.text).not.toContain('/dashboard/billing/portal');
    expect(textOf(page.text)).not.toContain('Only an owner');
  });

  it('the confirmation step explains the 30 days and the deletion, and asks for "Organisation name"', async () => {
    const { org } = await world('Explained');
    const owner = await browserFor(org, org.ownerId);
    const page = await owner.get(CANCEL);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Cancel subscription</h1>');
    const text = textOf(page.text);
    expect(page.text).toContain('Cancel the subscription of <strong>Explained</strong>?');
    expect(text).toContain('read-only at once');
    expect(text).toContain(`After 30 days, on ${shown(clock.now() + GRACE_PERIOD_MS)} , the workspace is deleted permanently`);
    expect(page.text).toMatch(/<label for="confirm-name">Organisation name<\/label>/);
    expect(page.text).toMatch(/<input id="confirm-name" name="confirm_name" type="text"[^>]*required/);
    expect(page.text).toMatch(/<form method="post" action="\/dashboard\/billing\/cancel">/);
    expect(page.text).toContain('<button type="submit" class="button danger">Cancel subscription</button>');
    expect(page.text).toContain('<a href="/dashboard/billing">Keep the subscription</a>');
  });

  it('a wrong or empty name cancels nothing: the error is on the field and in the alert list, no mail', async () => {
    const { org } = await world('Exact Name Ltd');
    const owner = await browserFor(org, org.ownerId);
    const before = await snapshot(org.id);
    for (const [typed, message] of [
      ['exact name ltd', "Organisation name does not match the organisation's name."],
      ['Exact Name Ltd ', "Organisation name does not match the organisation's name."],
      ['', "Type the organisation's name to cancel the subscription."],
    ] as const) {
      clock.advance(1000);
      const res = await cancelWith(owner, typed);
      expect(res.status, typed).toBe(400);
      expect(res.text).toContain('<h1>Cancel subscription</h1>');
      expect(alertText(res.text)).toBe(`There is a problem ${message}`);
      expect(textOf(/<a href="#confirm-name">([\s\S]*?)<\/a>/.exec(res.text)?.[1] ?? '')).toBe(message);
      expect(textOf(/<p class="error-message" id="confirm-name-error">([\s\S]*?)<\/p>/.exec(res.text)?.[1] ?? '')).toBe(message);
      expect(res.text).toMatch(/<input id="confirm-name"[^>]*aria-invalid="true"[^>]*aria-describedby="confirm-name-hint confirm-name-error"/);
      // What was typed is kept, escaped.
      if (typed) expect(res.text).toContain(`value="${typed}"`);
    }
    expect(await snapshot(org.id)).toEqual(before);
    expect(cancellationMailsTo('Exact Name Ltd')).toEqual([]);
  });

  it('the owner cancels with the exact name: read-only with the deletion date, an audit row, every owner mailed', async () => {
    const { org, admin } = await world('Leaving & <Sons>');
    const owner = await browserFor(org, org.ownerId);
    clock.advance(60_000);
    const cancelledAt = clock.now();
    const res = await cancelWith(owner, 'Leaving & <Sons>');
    expect(res.status).toBe(303);
    expect(res.location).toBe(PAGE);

    expect(await orgRow(org.id)).toMatchObject({ state: 'read_only', cancelled_at: cancelledAt, deletion_at: cancelledAt + GRACE_PERIOD_MS });
    const audit = await auditRows(org.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      action: 'subscription.cancelled',
      actor_type: 'user',
      actor_id: org.ownerId,
      source: 'dashboard',
      session_id: owner.sessionId,
      target_type: 'organization',
      target_id: org.id,
      target_label: 'Leaving & <Sons>',
      occurred_at: cancelledAt,
    });
    expect(JSON.parse(audit[0]!.changes!)).toEqual({
      state: { old: 'active', new: 'read_only' },
      deletion_at: { old: null, new: new Date(cancelledAt + GRACE_PERIOD_MS).toISOString() },
    });
    const owners = await ownerEmails(org.id);
    expect(owners).toHaveLength(2);
    expect(cancellationMailsTo('Leaving & <Sons>')).toEqual(owners);

    const page = await owner.get(res.location!);
    expect(page.status).toBe(200);
    expect(textOf(page.text)).toContain('The subscription was cancelled.');
    expect(facts(page.text)).toMatchObject({
      State: 'Read-only: the subscription is cancelled',
      'Cancelled at': shown(cancelledAt),
      'Deletion date': shown(cancelledAt + GRACE_PERIOD_MS),
    });
    expect(page.text).toContain(`<time datetime="${new Date(cancelledAt + GRACE_PERIOD_MS).toISOString()}" title=`);
    expect(page.text).toMatch(/<form method="post" action="\/dashboard\/billing\/resume" class="inline-form"><input type="hidden" name="_csrf" value="[^"]+"\/><input type="hidden" name="_from" value="\/dashboard\/billing"\/><button type="submit" class="button">Resume subscription<\/button><\/form>/);
    // The banner links the owner to it on every page.
    expect(page.text).toContain('<a href="/dashboard/billing">Resume subscription</a>');
    expect(page.text).not.toContain(`href="${CANCEL}"`);

    // Any member sees the state and the date, and no control.
    const adminPage = await (await browserFor(org, admin.userId)).get(PAGE);
    expect(facts(adminPage.text)).toMatchObject({ State: 'Read-only: the subscription is cancelled', 'Deletion date': shown(cancelledAt + GRACE_PERIOD_MS) });
    expect(adminPage.text).not.toContain('Resume subscription');
    expect(textOf(adminPage.text)).toContain('unless an owner resumes the subscription before then');

    // Nothing left to confirm: the confirmation step goes back to the page.
    const again = await owner.get(CANCEL);
    expect(again.status).toBe(303);
    expect(again.location).toBe(PAGE);
  });

  it('cancelling again is a conflict shown on the page, not a fault; nothing changes', async () => {
    const { org } = await world('Twice');
    const owner = await browserFor(org, org.ownerId);
    expect((await cancelWith(owner, 'Twice')).status).toBe(303);
    const before = await snapshot(org.id);
    await owner.get(PAGE);
    clock.advance(1000);
    const res = await owner.post(CANCEL, { confirm_name: 'Twice' });
    expect(res.status).toBe(409);
    expect(res.text).toContain('<h1>Billing</h1>');
    expect(alertText(res.text)).toBe('There is a problem The subscription is already cancelled.');
    expect(res.text).toContain('Resume subscription');
    expect(await snapshot(org.id)).toEqual(before);
    expect(cancellationMailsTo('Twice')).toHaveLength(2);
  });

  it('the owner resumes: active again, dates cleared, an audit row; resuming an active workspace is an error on the page', async () => {
    const { org } = await world('Coming Back');
    const owner = await browserFor(org, org.ownerId);
    expect((await cancelWith(owner, 'Coming Back')).status).toBe(303);
    const deletionAt = (await orgRow(org.id)).deletion_at;
    await owner.get(PAGE);
    // Later the same session (well within its idle time).
    clock.advance(60 * 60_000);
    const res = await owner.post(RESUME);
    expect(res.status).toBe(303);
    expect(res.location).toBe(PAGE);
    expect(await orgRow(org.id)).toMatchObject({ state: 'active', cancelled_at: null, deletion_at: null });
    const audit = await auditRows(org.id);
    expect(audit.map((a) => a.action)).toEqual(['subscription.cancelled', 'subscription.resumed']);
    expect(audit[1]).toMatchObject({ actor_id: org.ownerId, source: 'dashboard', occurred_at: clock.now() });
    expect(JSON.parse(audit[1]!.changes!)).toEqual({
      state: { old: 'read_only', new: 'active' },
      deletion_at: { old: new Date(deletionAt!).toISOString(), new: null },
    });

    const page = await owner.get(res.location!);
    expect(textOf(page.text)).toContain('The subscription was resumed. The workspace is active again.');
    expect(facts(page.text)).toMatchObject({ State: 'Active' });
    expect(facts(page.text)).not.toHaveProperty('Deletion date');
    expect(page.text).toContain(`href="${CANCEL}"`);

    // The API writes again.
    expect((await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'After resuming' } })).status).toBe(201);

    // Resuming what is active: the conflict on the page, nothing changed.
    const before = await snapshot(org.id);
    const again = await owner.post(RESUME);
    expect(again.status).toBe(409);
    expect(again.text).toContain('<h1>Billing</h1>');
    expect(alertText(again.text)).toBe('There is a problem The subscription is not cancelled.');
    expect(await snapshot(org.id)).toEqual(before);
  });

  it('admins, members and viewers: no controls, and a POST of either form or the confirmation page is a 403 page; nothing changes', async () => {
    const { org, admin, member, viewer } = await world('Owners Only');
    for (const userId of [admin.userId, member.userId, viewer.userId]) {
      const browser = await browserFor(org, userId);
      await browser.get(PAGE);
      const before = await snapshot(org.id);
      const confirm = await browser.get(CANCEL);
      expect(confirm.status).toBe(403);
      expect(confirm.text).toContain('Only an owner can cancel or resume the subscription');
      for (const [url, fields] of [[CANCEL, { confirm_name: 'Owners Only' }], [CANCEL, { confirm_name: 'wrong' }], [RESUME, {}]] as const) {
        const res = await browser.post(url, fields);
        expect(res.status, `${url} ${JSON.stringify(fields)}`).toBe(403);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.text).toContain('<h1>You cannot do that</h1>');
      }
      expect(await snapshot(org.id)).toEqual(before);
    }

    // Read-only too: only the owner resumes.
    const owner = await browserFor(org, org.ownerId);
    expect((await cancelWith(owner, 'Owners Only')).status).toBe(303);
    const before = await snapshot(org.id);
    const adminBrowser = await browserFor(org, admin.userId);
    await adminBrowser.get(PAGE);
    expect((await adminBrowser.post(RESUME)).status).toBe(403);
    expect(await snapshot(org.id)).toEqual(before);
  });

  it('refuses the forms without the CSRF token or from another site: 403, nothing changed', async () => {
    const { org } = await world('Forged');
    const owner = await browserFor(org, org.ownerId);
    await owner.get(CANCEL);
    const before = await snapshot(org.id);
    expect((await owner.post(CANCEL, { confirm_name: 'Forged' }, { csrf: null })).status).toBe(403);
    expect((await owner.post(CANCEL, { confirm_name: 'Forged' }, { headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(403);
    expect(await snapshot(org.id)).toEqual(before);
  });

  it('an organisation billed through Stripe shows its owner "Manage billing", posting to the portal route', async () => {
    const { org, admin } = await world('Striped');
    await db().updateTable('organizations').set({ stripe_customer_id: 'cus_billingpage', stripe_subscription_id: 'sub_billingpage' }).where('id', '=', org.id).execute();
    const page = await (await browserFor(org, org.ownerId)).get(PAGE);
    expect(facts(page.text)).toMatchObject({ Billing: 'Billed through Stripe', State: 'Active' });
    expect(page.text).toMatch(/<form method="post" action="\/dashboard\/billing\/portal" class="inline-form"><input type="hidden" name="_csrf" value="[^"]+"\/><input type="hidden" name="_from" value="\/dashboard\/billing"\/><button type="submit" class="button">Manage billing<\/button><\/form>/);
    const adminPage = await (await browserFor(org, admin.userId)).get(PAGE);
    expect(adminPage.text).not.toContain('Manage billing');

    // Cancelling happens at Stripe: the page offers no local "Cancel subscription", and a forged post is refused with nothing changed.
    expect(page.text).not.toContain('>Cancel subscription<');
    const owner = await browserFor(org, org.ownerId);
    await owner.get(PAGE);
    const refused = await owner.post(CANCEL, { confirm_name: 'Striped' });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('billed through Stripe');
    expect((await orgRow(org.id)).state).toBe('active');
  });

  it('signed out: the page sends to sign-in and the forms change nothing', async () => {
    const { org } = await world('Anonymous');
    const anonymous = new DashboardClient(env);
    const page = await anonymous.get(PAGE);
    expect(page.status).toBe(303);
    expect(page.location).toBe(`/dashboard/login?next=${encodeURIComponent(PAGE)}`);
    const post = await anonymous.post(CANCEL, { confirm_name: 'Anonymous' }, { csrf: 'x' });
    expect([303, 403]).toContain(post.status);
    expect((await orgRow(org.id)).state).toBe('active');
  });
});
