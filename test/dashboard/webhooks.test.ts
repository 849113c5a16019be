import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUtc } from '../../src/lib/time.js';
import { cliActor } from '../../src/services/access/actor.js';
import { EVENT_TYPES } from '../../src/schemas/events.js';
import { recordAttempt, recordDeliveries } from '../helpers/attempts.js';
import { DashboardClient, noticeOf, tableRows, textOf, type FormFields, type PageResponse } from '../helpers/dashboard.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const at = (day: number, hour: number, minute = 0) => Date.UTC(2026, 10, day, hour, minute);

/** The secret shown once on the answer to "Create subscription". */
function newSecretOf(html: string): string | null {
  return /<input id="new-secret"[^>]*\svalue="([^"]*)"/.exec(html)?.[1] ?? null;
}

/** The `value` of the input with this id, as rendered (entities undone for the common characters). */
function valueOf(html: string, id: string): string | null {
  const raw = new RegExp(`<input id="${id}"[^>]*\\svalue="([^"]*)"`).exec(html)?.[1];
  return raw === undefined ? null : textOf(raw);
}

/** The events whose checkbox is ticked. */
function checkedEvents(html: string): string[] {
  return [...html.matchAll(/<input type="checkbox" name="events" value="([^"]+)" checked/g)].map((m) => m[1]!);
}

/** The problems listed at the top of the page (role="alert"). */
function alertText(html: string): string {
  const summary = /<div class="error-summary" role="alert"[^>]*>([\s\S]*?)<\/div>/.exec(html);
  return summary ? textOf(summary[1]!) : '';
}

describe.each(testDialects())('dashboard: webhooks (%s)', (dialect) => {
  // 09:30 on 22 November: the "Delivered (24 h)" window is 21 Nov 10:00 to 22 Nov 10:00.
  const clock = new ManualClock(at(22, 9, 30));
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;
  let admin: { userId: string };
  let member: { userId: string };
  let viewer: { userId: string };
  let foreignHook: string;

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
    org = await env.createOrg('Hooks & Co');
    other = await env.createOrg('Elsewhere');
    admin = await org.member('admin');
    member = await org.member('member');
    viewer = await org.member('viewer');
    const res = await env.request('POST', '/v1/webhooks', { key: other.ownerKey, body: { url: 'https://127.0.0.1:9/foreign', events: ['project.created'] } });
    expect(res.status).toBe(201);
    foreignHook = res.body.id;
  });
  afterAll(async () => env?.close());

  const db = () => env.container.database.db;
  const browserFor = (userId: string, orgId = org.id) => DashboardClient.signedIn(env, orgId, userId);

  async function subscribe(o: TestOrg, url: string, events: string[] = ['project.created']): Promise<string> {
    const res = await env.request('POST', '/v1/webhooks', { key: o.ownerKey, body: { url, events } });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  /** Everything a refused create or delete must leave as it was. */
  async function snapshot(orgId = org.id) {
    const [webhooks, audit, events, deliveries] = await Promise.all([
      db().selectFrom('webhooks').select(['id', 'url', 'events', 'secret']).where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('audit_log').select('id').where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('events').select('id').where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('deliveries').select(['id', 'status']).where('org_id', '=', orgId).orderBy('id').execute(),
    ]);
    return { webhooks, audit, events, deliveries };
  }

  async function create(browser: DashboardClient, fields: FormFields): Promise<PageResponse> {
    await browser.get('/dashboard/webhooks');
    return browser.post('/dashboard/webhooks', fields);
  }

  /** A successful create: the page's secret and the subscription it belongs to. */
  async function createHook(browser: DashboardClient, fields: FormFields): Promise<{ secret: string; id: string; res: PageResponse }> {
    const posted = await create(browser, fields);
    expect(posted.status, alertText(posted.text) || textOf(posted.text)).toBe(303);
    expect(posted.location).toBe('/dashboard/webhooks');
    const res = await browser.follow(posted);
    const secret = newSecretOf(res.text);
    expect(secret).not.toBeNull();
    const id = /<a href="\/dashboard\/webhooks\/(wh_[A-Za-z0-9]+)" class="webhook-url">/.exec(res.text)?.[1];
    expect(id).toBeDefined();
    return { secret: textOf(secret!), id: id!, res };
  }

  it('a failing subscription says the day the service will disable it, in the page\'s format', async () => {
    const hook = await env.container.services.webhooks.create(cliActor(org.id), { url: 'https://failing.hooks.example/x', events: ['project.created'] });
    const since = Date.UTC(2026, 10, 20, 8, 0);
    await db().updateTable('webhooks').set({ failing_since: since }).where('id', '=', hook.id).execute();
    const browser = await browserFor(admin.userId);
    const page = await browser.get(`/dashboard/webhooks/${hook.id}`);
    const disableAfter = env.config.webhookDisableAfterMs;
    const expected =
      disableAfter === null
        ? 'The service never disables it by itself.'
        : `Without a successful delivery first, the service disables the subscription on ${formatUtc(since + disableAfter)} .`;
    expect(textOf(page.text)).toContain(expected);
    await env.container.services.webhooks.remove(cliActor(org.id), hook.id);
  });

  describe('the list', () => {
    it('shows every role the table; only admins and owners get the form, with its exact names', async () => {
      for (const [userId, writes] of [
        [org.ownerId, true],
        [admin.userId, true],
        [member.userId, false],
        [viewer.userId, false],
      ] as const) {
        const res = await (await browserFor(userId)).get('/dashboard/webhooks');
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.text).toContain('<title>Webhooks · Hooks &amp; Co · Workspace</title>');
        expect(res.text).toMatch(/<a href="\/dashboard\/webhooks" aria-current="page">Webhooks<\/a>/);
        expect(res.text).toMatch(/<caption[^>]*>Webhook subscriptions<\/caption>/);
        for (const header of ['URL', 'Events', 'Created', 'Delivered (24 h)']) expect(res.text).toContain(`<th scope="col">${header}</th>`);
        expect(res.text.includes('<th scope="col">Actions</th>')).toBe(writes);
        expect(res.text.includes('<h2 id="add-subscription-title">Add subscription</h2>')).toBe(writes);
        expect(res.text.includes('<form method="post" action="/dashboard/webhooks">')).toBe(writes);
        if (writes) {
          expect(res.text).toContain('<label for="url">Endpoint URL</label>');
          expect(res.text).toContain('<legend>Events</legend>');
          for (const event of EVENT_TYPES) expect(res.text).toContain(`<label class="checkbox"><input type="checkbox" name="events" value="${event}"/> ${event}</label>`);
          expect(res.text).toContain('<label for="secret">Signing secret (optional)</label>');
          expect(res.text).toContain('<button type="submit">Create subscription</button>');
        } else {
          expect(res.text).not.toContain('Endpoint URL');
          expect(res.text).not.toContain('name="events"');
          expect(res.text).not.toContain('Create subscription');
          expect(textOf(res.text)).toContain('Admins and owners add and delete subscriptions.');
        }
        expect(res.text).not.toContain('id="new-secret"');
        expect(res.text).not.toMatch(/\sstyle=/);
        expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
      }
    });

    it("lists the organisation's subscriptions newest first, linked to their pages, with their 24 h delivered share", async () => {
      const fresh = await env.createOrg('Health');
      const quiet = await subscribe(fresh, 'https://hooks.example.com/quiet', ['task.assigned', 'project.created']);
      const busy = await subscribe(fresh, 'https://hooks.example.com/busy?a=1&b=2', [...EVENT_TYPES]);
      const mixed = await subscribe(fresh, 'https://hooks.example.com/mixed');
      const huge = await subscribe(fresh, 'https://hooks.example.com/huge');
      // Attempts as the worker records them: 2 of 3 in the window; the ones outside it do not count.
      await recordAttempt(env, fresh.id, mixed, at(22, 9, 5), 'success');
      await recordAttempt(env, fresh.id, mixed, at(21, 10, 0), 'success');
      await recordAttempt(env, fresh.id, mixed, at(22, 8, 59), 'failure');
      await recordAttempt(env, fresh.id, mixed, at(21, 9, 59), 'failure'); // before the window
      await recordAttempt(env, fresh.id, quiet, at(20, 12, 0), 'success'); // two days ago: no attempts now
      await recordAttempt(env, fresh.id, busy, at(22, 9, 0), 'failure');
      // Larger counts: deliveries written in bulk, as many as the worker would leave.
      await recordDeliveries(env, fresh.id, huge, at(22, 9), 'delivered', 1_500);
      await recordDeliveries(env, fresh.id, huge, at(22, 4), 'delivered', 498);
      await recordDeliveries(env, fresh.id, huge, at(22, 4), 'failed', 2);

      const res = await (await browserFor(fresh.ownerId, fresh.id)).get('/dashboard/webhooks');
      expect(res.status).toBe(200);
      const rows = tableRows(res.text, 'Webhook subscriptions');
      expect(rows).toHaveLength(4);
      expect(rows[0]).toMatch(/^https:\/\/hooks\.example\.com\/huge Active project\.created 22 Nov 2026, 09:30 UTC 99\.9% \(1,998 of 2,000\) Delete$/);
      expect(rows[1]).toBe('https://hooks.example.com/mixed Active project.created 22 Nov 2026, 09:30 UTC 66.7% (2 of 3) Delete');
      expect(rows[2]).toBe(`https://hooks.example.com/busy?a=1&b=2 Active ${EVENT_TYPES.join(', ')} 22 Nov 2026, 09:30 UTC 0% (0 of 1) Delete`);
      expect(rows[3]).toBe('https://hooks.example.com/quiet Active task.assigned, project.created 22 Nov 2026, 09:30 UTC No deliveries Delete');
      for (const id of [quiet, busy, mixed, huge]) {
        expect(res.text).toContain(`<a href="/dashboard/webhooks/${id}">`);
        expect(res.text).toContain(`<a href="/dashboard/webhooks/${id}/delete">Delete</a>`);
      }
      // The URL as typed (escaped), with line-break opportunities where people expect them.
      const link = new RegExp(`<a href="/dashboard/webhooks/${busy}">([\\s\\S]*?)</a>`).exec(res.text)![1]!;
      expect(link).toBe('https://<wbr/>hooks<wbr/>.example<wbr/>.com/<wbr/>busy<wbr/>?a<wbr/>=1<wbr/>&amp;b<wbr/>=2');
      // The figures are the service's, for the same window.
      const stats = await env.container.services.deliveryStats.perWebhook(cliActor(fresh.id));
      expect(stats.get(mixed)).toEqual({ delivered: 2, failed: 1, pending: 0, cancelled: 0, total: 3 });
      // Nobody else's subscriptions, and never a secret.
      expect(res.text).not.toContain('foreign');
      const secrets = await db().selectFrom('webhooks').select('secret').where('org_id', '=', fresh.id).execute();
      for (const { secret } of secrets) expect(res.text).not.toContain(secret);
    });

    it('says so when there are no subscriptions', async () => {
      const empty = await env.createOrg('Empty');
      const res = await (await browserFor(empty.ownerId, empty.id)).get('/dashboard/webhooks');
      expect(tableRows(res.text, 'Webhook subscriptions')).toEqual(['No webhook subscriptions yet.']);
      expect(res.text).not.toContain('class="pager"');
    });

    it('shows every subscription: 100 a page, "Older" to the rest and "Newest" back; a broken page link is a 400 with the first page', async () => {
      const many = await env.createOrg('Many');
      const actor = cliActor(many.id);
      for (let i = 0; i < 102; i++) await env.container.services.webhooks.create(actor, { url: `https://hooks.example.com/n${i}`, events: ['project.created'] });
      const browser = await browserFor(many.ownerId, many.id);
      const first = await browser.get('/dashboard/webhooks');
      const firstRows = tableRows(first.text, 'Webhook subscriptions');
      expect(firstRows).toHaveLength(100);
      expect(firstRows[0]).toContain('/n101 ');
      expect(first.text).not.toContain('>Newest</a>');
      const older = /<a href="(\/dashboard\/webhooks\?cursor=[^"]+)">Older<\/a>/.exec(first.text)?.[1];
      expect(older).toBeDefined();

      const second = await browser.get(older!);
      expect(second.status).toBe(200);
      expect(tableRows(second.text, 'Webhook subscriptions').map((r) => r.split(' ')[0])).toEqual(['https://hooks.example.com/n1', 'https://hooks.example.com/n0']);
      expect(second.text).toContain('<a href="/dashboard/webhooks">Newest</a>');
      expect(second.text).not.toContain('>Older</a>');

      for (const cursor of ['nonsense', 'YzE6MA']) {
        const broken = await browser.get(`/dashboard/webhooks?cursor=${cursor}`);
        expect(broken.status).toBe(400);
        expect(alertText(broken.text)).toContain('This page link is no longer valid. Start again from the newest subscriptions.');
        expect(tableRows(broken.text, 'Webhook subscriptions')).toHaveLength(100);
      }
      // A query parameter no link of ours has.
      expect((await browser.get('/dashboard/webhooks?limit=5')).status).toBe(400);
    });

    it('takes notices only from the session: text in the address is refused, never echoed', async () => {
      const browser = await browserFor(member.userId);
      const unknown = await browser.get('/dashboard/webhooks?done=%3Cb%3Ehello%3C%2Fb%3E');
      expect(unknown.status).toBe(400);
      expect(unknown.text).not.toContain('hello');
      expect(unknown.text).not.toContain('class="notice"');
    });
  });

  describe('creating a subscription', () => {
    it('shows a given secret once after the redirect (no-store, with a Copy button), never on reload, stores exactly it, audits without it, fires no event', async () => {
      const browser = await browserFor(admin.userId);
      const before = await snapshot();
      const given = 'my signing secret ~!"#$%&\'<>';
      const { secret, id, res } = await createHook(browser, { url: 'https://hooks.example.com/given', events: ['task.assigned', 'project.created'], secret: given });
      expect(res.headers['cache-control']).toBe('no-store');
      const reloaded = await browser.get('/dashboard/webhooks');
      expect(newSecretOf(reloaded.text)).toBeNull();
      expect(noticeOf(reloaded.text)).toBe('');
      expect((await snapshot()).webhooks).toHaveLength(before.webhooks.length + 1);
      expect(secret).toBe(given);
      expect(res.text).toContain('<label for="new-secret">Signing secret</label>');
      expect(res.text).toMatch(/<input id="new-secret" type="text" value="[^"]+" readonly/);
      expect(res.text).toContain('<button type="button" data-copy-target="new-secret" hidden>Copy</button>');
      expect(noticeOf(res.text)).toBe('Subscription to https://hooks.example.com/given created.');
      expect(textOf(res.text)).toContain('Events go to https://hooks.example.com/given');
      // "Signing secret" names one field on this page: the create form is a link away.
      expect(res.text).not.toContain('Signing secret (optional)');
      expect(res.text).toContain('<a href="/dashboard/webhooks">Add another subscription</a>');
      // The table already lists it.
      expect(tableRows(res.text, 'Webhook subscriptions')[0]).toBe('https://hooks.example.com/given Active task.assigned, project.created 22 Nov 2026, 09:30 UTC No deliveries Delete');

      const stored = await env.container.store.repos.webhooks.findById(org.id, id);
      expect(stored).toMatchObject({ url: 'https://hooks.example.com/given', secret: given });
      expect(JSON.parse(stored!.events)).toEqual(['task.assigned', 'project.created']);

      const audit = await db().selectFrom('audit_log').selectAll().where('action', '=', 'webhook.created').where('target_id', '=', id).executeTakeFirstOrThrow();
      expect(audit).toMatchObject({
        org_id: org.id,
        actor_type: 'user',
        actor_id: admin.userId,
        api_key_id: null,
        session_id: browser.sessionId,
        source: 'dashboard',
        target_type: 'webhook',
        target_label: 'https://hooks.example.com/given',
        outcome: 'success',
      });
      expect(JSON.parse(audit.changes!)).toEqual({
        url: { old: null, new: 'https://hooks.example.com/given' },
        events: { old: null, new: ['task.assigned', 'project.created'] },
        secret: { old: null, new: 'given' },
      });
      expect(audit.changes).not.toContain(given);

      const after = await snapshot();
      expect(after.webhooks).toHaveLength(before.webhooks.length + 1);
      expect(after.audit).toHaveLength(before.audit.length + 1);
      expect(after.events).toEqual(before.events);
      expect(after.deliveries).toEqual(before.deliveries);

      // Never shown again: not on the list, not on the API.
      const reload = await browser.get('/dashboard/webhooks');
      expect(reload.text).not.toContain('id="new-secret"');
      expect(reload.text).not.toContain(res.text.match(/value="([^"]+)" readonly/)![1]);
      expect(textOf(reload.text)).not.toContain(given);
      expect((await env.request('GET', '/v1/webhooks?limit=100', { key: org.ownerKey })).text).not.toContain('my signing secret');
    });

    it('generates a secret when the field is left empty, and the subscription signs with it', async () => {
      for (const userId of [org.ownerId, admin.userId]) {
        const browser = await browserFor(userId);
        const { secret, id } = await createHook(browser, { url: `https://hooks.example.com/generated-${userId}`, events: ['project.created'], secret: '' });
        expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
        const stored = await env.container.store.repos.webhooks.findById(org.id, id);
        expect(stored?.secret).toBe(secret);
        const audit = await db().selectFrom('audit_log').select('changes').where('action', '=', 'webhook.created').where('target_id', '=', id).executeTakeFirstOrThrow();
        expect(JSON.parse(audit.changes!).secret).toEqual({ old: null, new: 'generated' });
        // A second one gets another secret.
        const again = await createHook(browser, { url: `https://hooks.example.com/generated-${userId}`, events: ['project.created'] });
        expect(again.secret).toMatch(/^whsec_/);
        expect(again.secret).not.toBe(secret);
      }
    });

    it('accepts one event, or all six, and drops nothing else', async () => {
      const browser = await browserFor(org.ownerId);
      const one = await createHook(browser, { url: 'https://hooks.example.com/one', events: 'workflow.failed' });
      expect(JSON.parse((await env.container.store.repos.webhooks.findById(org.id, one.id))!.events)).toEqual(['workflow.failed']);
      const all = await createHook(browser, { url: 'https://hooks.example.com/all', events: [...EVENT_TYPES] });
      expect(JSON.parse((await env.container.store.repos.webhooks.findById(org.id, all.id))!.events)).toEqual([...EVENT_TYPES]);
    });

    const valid = { url: 'https://hooks.example.com/in', events: ['project.created', 'task.assigned'], secret: 'a valid secret of 24 ch' };
    const refusals: [string, FormFields, 'url' | 'events' | 'secret', string][] = [
      ['an http:// URL', { ...valid, url: 'http://hooks.example.com/in' }, 'url', 'Endpoint URL must be an absolute https:// URL'],
      ['a URL without a scheme', { ...valid, url: 'hooks.example.com/in' }, 'url', 'Endpoint URL must be an absolute https:// URL'],
      ['a URL with user-info', { ...valid, url: 'https://user:pass@hooks.example.com/in' }, 'url', 'Endpoint URL must not contain user-info (user:password@)'],
      ['a URL with a space', { ...valid, url: 'https://hooks.example.com/a b' }, 'url', 'Endpoint URL must not contain spaces or control characters'],
      ['a URL of 2,049 characters', { ...valid, url: `https://hooks.example.com/${'a'.repeat(2049 - 26)}` }, 'url', 'Endpoint URL must be at most 2048 characters'],
      ['no URL', { ...valid, url: '' }, 'url', 'Enter the endpoint URL'],
      ['no event', { url: valid.url, secret: valid.secret }, 'events', 'Choose at least one event'],
      ['an event no form offers', { ...valid, events: ['project.created', 'project.archived'] }, 'events', `Events must be one of: ${EVENT_TYPES.join(', ')}`],
      ['a secret of 15 characters', { ...valid, secret: 's'.repeat(15) }, 'secret', 'Signing secret must be at least 16 characters'],
      ['a secret of 257 characters', { ...valid, secret: 's'.repeat(257) }, 'secret', 'Signing secret must be at most 256 characters'],
      ['a secret with a non-ASCII character', { ...valid, secret: 'abcdefghijklmnopé' }, 'secret', 'Signing secret must contain printable ASCII characters only'],
    ];

    it.each(refusals)('refuses %s: 400, the error at the top and on the field, what was typed kept, nothing created', async (_name, fields, field, message) => {
      const browser = await browserFor(org.ownerId);
      const before = await snapshot();
      const res = await create(browser, fields);
      expect(res.status).toBe(400);
      expect(alertText(res.text)).toBe(`There is a problem ${message}`);
      expect(res.text).toContain(`<a href="#${field}">`);
      expect(res.text).toContain(`<p class="error-message" id="${field}-error">${message.replace(/&/g, '&amp;')}</p>`);
      if (field === 'events') {
        expect(res.text).toContain('<fieldset class="checkboxes" id="events" aria-invalid="true" aria-describedby="events-hint events-error">');
      } else {
        expect(res.text).toMatch(new RegExp(`<input id="${field}"[^>]*aria-invalid="true" aria-describedby="${field}-hint ${field}-error"`));
      }
      // The form again, as it was typed (the secret too: see the page's comment), and no secret shown as created.
      expect(valueOf(res.text, 'url') ?? '').toBe(fields.url ?? '');
      expect(valueOf(res.text, 'secret') ?? '').toBe(fields.secret ?? '');
      const posted = fields.events === undefined ? [] : [fields.events].flat();
      expect(checkedEvents(res.text)).toEqual(EVENT_TYPES.filter((e) => posted.includes(e)));
      expect(res.text).not.toContain('id="new-secret"');
      expect(res.text).toMatch(/<caption[^>]*>Webhook subscriptions<\/caption>/);
      expect(await snapshot()).toEqual(before);
    });

    it('takes "Rate limit (per second)" and "Deliver in order", shows them on the subscription, and edits them', async () => {
      const browser = await browserFor(org.ownerId);
      const form = await browser.get('/dashboard/webhooks');
      expect(form.text).toContain('<label for="rate_limit">Rate limit (per second)</label>');
      expect(form.text).toContain('<input type="checkbox" name="ordering" value="fifo" aria-describedby="ordering-hint"/> Deliver in order</label>');
      const { id } = await createHook(browser, { url: 'https://hooks.example.com/paced', events: ['project.created'], rate_limit: '25', ordering: 'fifo' });
      const stored = (await env.container.store.repos.webhooks.findById(org.id, id))!;
      expect({ rate_limit: stored.rate_limit, ordering: stored.ordering }).toEqual({ rate_limit: 25, ordering: 'fifo' });
      const page = await browser.get(`/dashboard/webhooks/${id}`);
      expect(textOf(page.text)).toContain('At most 25 attempts started per second; delivered in order, one at a time.');
      const edit = await browser.get(`/dashboard/webhooks/${id}/edit`);
      expect(valueOf(edit.text, 'rate_limit')).toBe('25');
      expect(edit.text).toContain('<input type="checkbox" name="ordering" value="fifo" checked aria-describedby="ordering-hint"/>');
      // Emptied and unchecked: no limit, no order.
      const saved = await browser.post(`/dashboard/webhooks/${id}/edit`, { url: 'https://hooks.example.com/paced', events: ['project.created'], rate_limit: '' });
      expect(saved.status).toBe(303);
      const after = (await env.container.store.repos.webhooks.findById(org.id, id))!;
      expect({ rate_limit: after.rate_limit, ordering: after.ordering }).toEqual({ rate_limit: null, ordering: 'none' });
      expect(textOf((await browser.get(`/dashboard/webhooks/${id}`)).text)).toContain('No rate limit; deliveries go out side by side, in no set order.');
    });

    it.each(['0', '1001', '2.5', 'ten', '-3'])('refuses a rate limit of %j on create and edit: 400 on the field, what was typed kept, nothing changed', async (typed) => {
      const browser = await browserFor(org.ownerId);
      const message = 'Rate limit (per second) must be a whole number from 1 to 1,000, or empty for no limit';
      const before = await snapshot();
      const res = await create(browser, { url: 'https://hooks.example.com/paced', events: ['project.created'], rate_limit: typed, ordering: 'fifo' });
      expect(res.status).toBe(400);
      expect(alertText(res.text)).toBe(`There is a problem ${message}`);
      expect(res.text).toContain(`<p class="error-message" id="rate_limit-error">${message}</p>`);
      expect(valueOf(res.text, 'rate_limit')).toBe(typed);
      expect(res.text).toContain('name="ordering" value="fifo" checked');
      expect(await snapshot()).toEqual(before);
      const id = await subscribe(org, 'https://hooks.example.com/kept');
      await browser.get(`/dashboard/webhooks/${id}/edit`);
      const edit = await browser.post(`/dashboard/webhooks/${id}/edit`, { url: 'https://hooks.example.com/kept', events: ['project.created'], rate_limit: typed });
      expect(edit.status).toBe(400);
      expect(res.text).toContain(`<p class="error-message" id="rate_limit-error">${message}</p>`);
      expect((await env.container.store.repos.webhooks.findById(org.id, id))!.rate_limit).toBeNull();
    });

    it('lists every problem of one form at once', async () => {
      const browser = await browserFor(admin.userId);
      const before = await snapshot();
      const res = await create(browser, { url: 'http://hooks.example.com/in', secret: 'short' });
      expect(res.status).toBe(400);
      expect(alertText(res.text)).toBe('There is a problem Endpoint URL must be an absolute https:// URL Choose at least one event Signing secret must be at least 16 characters');
      expect(await snapshot()).toEqual(before);
    });

    it('refuses what no form of ours sends (an unknown field, a field far too long) with the 400 page, nothing created', async () => {
      const browser = await browserFor(org.ownerId);
      const before = await snapshot();
      for (const fields of [
        { ...valid, active: 'true' },
        { ...valid, url: `https://hooks.example.com/${'a'.repeat(5000)}` },
        { ...valid, events: Array.from({ length: 40 }, () => 'project.created') },
      ]) {
        const res = await create(browser, fields);
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(textOf(res.text)).toContain('The form was not filled in as expected.');
        expect(res.text).not.toContain('id="new-secret"');
      }
      expect(await snapshot()).toEqual(before);
    });

    it('refuses a create without the CSRF token, with a forged one, or from another site: 403, nothing created', async () => {
      const browser = await browserFor(org.ownerId);
      await browser.get('/dashboard/webhooks');
      const before = await snapshot();
      for (const res of [
        await browser.post('/dashboard/webhooks', valid, { csrf: null }),
        await browser.post('/dashboard/webhooks', valid, { csrf: 'forged-token' }),
        await browser.post('/dashboard/webhooks', valid, { headers: { 'sec-fetch-site': 'cross-site' } }),
        await browser.post('/dashboard/webhooks', valid, { headers: { origin: 'https://evil.example' } }),
      ]) {
        expect(res.status).toBe(403);
        expect(textOf(res.text)).toContain('This form has expired or was sent from another site.');
        expect(res.text).not.toContain('id="new-secret"');
      }
      expect(await snapshot()).toEqual(before);
    });

    it('answers a member or viewer 403 (valid form or not), nothing created', async () => {
      // Signing in is audited: the browsers first, then what must not change.
      const browsers = [await browserFor(member.userId), await browserFor(viewer.userId)];
      const before = await snapshot();
      for (const browser of browsers) {
        for (const fields of [valid, { url: 'http://nope' }]) {
          const res = await create(browser, fields);
          expect(res.status).toBe(403);
          expect(res.headers['content-type']).toMatch(/^text\/html/);
          expect(textOf(res.text)).toMatch(/You cannot do that [Yy]our role \((member|viewer)\) does not allow this action/);
          expect(res.text).not.toContain('id="new-secret"');
        }
      }
      expect(await snapshot()).toEqual(before);
    });

    it('without a session, sends a POST to the sign-in page and creates nothing', async () => {
      const before = await snapshot();
      const res = await new DashboardClient(env).post('/dashboard/webhooks', valid, { csrf: null });
      expect(res.status).toBe(303);
      expect(res.location).toBe('/dashboard/login');
      expect(await snapshot()).toEqual(before);
    });
  });

  describe('deleting a subscription', () => {
    it('goes through a confirmation page, then deletes, cancels its pending deliveries, audits, and says so', async () => {
      const browser = await browserFor(admin.userId);
      const { id } = await createHook(browser, { url: 'https://127.0.0.1:9/to-delete', events: ['project.created'] });
      const keep = await subscribe(org, 'https://127.0.0.1:9/keep');
      // No worker runs here: the project's event leaves a pending delivery to each subscription.
      expect((await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Fires an event' } })).status).toBe(201);
      const pending = await db().selectFrom('deliveries').select(['id', 'webhook_id', 'status']).where('webhook_id', 'in', [id, keep]).execute();
      expect(pending.map((d) => d.status)).toEqual(['pending', 'pending']);

      const list = await browser.get('/dashboard/webhooks');
      expect(list.text).toContain(`<a href="/dashboard/webhooks/${id}/delete">Delete</a>`);
      const confirm = await browser.get(`/dashboard/webhooks/${id}/delete`);
      expect(confirm.status).toBe(200);
      expect(confirm.text).toContain('<title>Delete webhook subscription · Hooks &amp; Co · Workspace</title>');
      expect(confirm.text).toMatch(/<a href="\/dashboard\/webhooks" aria-current="page">Webhooks<\/a>/);
      expect(textOf(confirm.text)).toContain('Delete the subscription to https://127.0.0.1:9/to-delete (project.created)?');
      expect(confirm.text).toContain(`<form method="post" action="/dashboard/webhooks/${id}/delete" class="inline-form">`);
      expect(confirm.text).toContain('<button type="submit" class="button danger">Delete subscription</button>');
      expect(confirm.text).toContain(`<a href="/dashboard/webhooks/${id}">Keep the subscription</a>`);
      // Opening the confirmation changes nothing.
      const before = await snapshot();
      expect(await env.container.store.repos.webhooks.findById(org.id, id)).toBeDefined();

      const res = await browser.post(`/dashboard/webhooks/${id}/delete`);
      expect(res.status).toBe(303);
      expect(res.location).toBe('/dashboard/webhooks');
      const after = await browser.follow(res);
      expect(noticeOf(after.text)).toBe('Subscription to https://127.0.0.1:9/to-delete deleted. Its deliveries that had not gone out yet were cancelled.');
      expect(tableRows(after.text, 'Webhook subscriptions').some((r) => r.includes('/to-delete'))).toBe(false);
      expect(tableRows(after.text, 'Webhook subscriptions').some((r) => r.includes('/keep'))).toBe(true);

      expect(await env.container.store.repos.webhooks.findById(org.id, id)).toBeUndefined();
      const statuses = Object.fromEntries(
        (await db().selectFrom('deliveries').select(['webhook_id', 'status']).where('webhook_id', 'in', [id, keep]).execute()).map((d) => [d.webhook_id, d.status]),
      );
      expect(statuses).toEqual({ [id]: 'cancelled', [keep]: 'pending' });
      const audit = await db().selectFrom('audit_log').selectAll().where('action', '=', 'webhook.deleted').where('target_id', '=', id).executeTakeFirstOrThrow();
      expect(audit).toMatchObject({ actor_id: admin.userId, session_id: browser.sessionId, api_key_id: null, source: 'dashboard', target_label: 'https://127.0.0.1:9/to-delete' });
      const changed = await snapshot();
      expect(changed.audit).toHaveLength(before.audit.length + 1);
      expect(changed.events).toEqual(before.events);

      // Gone: its confirmation page and a second delete are 404 pages.
      expect((await browser.get(`/dashboard/webhooks/${id}/delete`)).status).toBe(404);
      const twice = await browser.post(`/dashboard/webhooks/${id}/delete`);
      expect(twice.status).toBe(404);
      expect(twice.headers['content-type']).toMatch(/^text\/html/);
    });

    it('lets the owner delete too', async () => {
      const id = await subscribe(org, 'https://127.0.0.1:9/owner-deletes');
      const browser = await browserFor(org.ownerId);
      expect((await browser.get(`/dashboard/webhooks/${id}/delete`)).status).toBe(200);
      expect((await browser.post(`/dashboard/webhooks/${id}/delete`)).status).toBe(303);
      expect(await env.container.store.repos.webhooks.findById(org.id, id)).toBeUndefined();
    });

    it('answers a member or viewer 403 on the confirmation page and the delete, the subscription kept', async () => {
      const id = await subscribe(org, 'https://127.0.0.1:9/members-cannot');
      const browsers = [await browserFor(member.userId), await browserFor(viewer.userId)];
      const before = await snapshot();
      for (const browser of browsers) {
        const confirm = await browser.get(`/dashboard/webhooks/${id}/delete`);
        expect(confirm.status).toBe(403);
        expect(confirm.text).not.toContain('Delete subscription');
        await browser.get('/dashboard/webhooks');
        const res = await browser.post(`/dashboard/webhooks/${id}/delete`);
        expect(res.status).toBe(403);
        expect(textOf(res.text)).toMatch(/[Yy]our role \((member|viewer)\) does not allow this action/);
      }
      expect(await snapshot()).toEqual(before);
    });

    it("answers 404 for another organisation's subscription, an unknown id or a malformed one, nothing deleted", async () => {
      const browser = await browserFor(org.ownerId);
      await browser.get('/dashboard/webhooks');
      const before = await snapshot();
      const foreignBefore = await snapshot(other.id);
      for (const id of [foreignHook, 'wh_doesnotexist0000000000000', 'not%00an-id', 'x'.repeat(129)]) {
        const page = await browser.get(`/dashboard/webhooks/${id}/delete`);
        expect(page.status, id).toBe(id.length > 128 ? 400 : 404);
        expect(page.headers['content-type']).toMatch(/^text\/html/);
        const post = await browser.post(`/dashboard/webhooks/${id}/delete`);
        expect(post.status, id).toBe(id.length > 128 ? 400 : 404);
      }
      expect(await snapshot()).toEqual(before);
      expect(await snapshot(other.id)).toEqual(foreignBefore);
      expect(await env.container.store.repos.webhooks.findById(other.id, foreignHook)).toBeDefined();
    });

    it('refuses a delete without the CSRF token or from another site: 403, the subscription kept', async () => {
      const id = await subscribe(org, 'https://127.0.0.1:9/csrf-delete');
      const browser = await browserFor(org.ownerId);
      await browser.get(`/dashboard/webhooks/${id}/delete`);
      const before = await snapshot();
      expect((await browser.post(`/dashboard/webhooks/${id}/delete`, {}, { csrf: null })).status).toBe(403);
      expect((await browser.post(`/dashboard/webhooks/${id}/delete`, {}, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
      expect(await snapshot()).toEqual(before);
    });
  });

  describe('with private networks not allowed (the default)', () => {
    let strict: TestEnv;
    let strictOrg: TestOrg;

    beforeAll(async () => {
      strict = await createTestEnv(dialect, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' } });
      strictOrg = await strict.createOrg('Strict');
    });
    afterAll(async () => strict?.close());

    it.each([
      ['https://10.0.0.1/', 'Endpoint URL must point to a public address; 10.0.0.1 is private network'],
      ['https://127.0.0.1:8443/hook', 'Endpoint URL must point to a public address; 127.0.0.1 is loopback'],
      ['https://[::1]/hook', 'Endpoint URL must point to a public address; ::1 is loopback'],
    ])('refuses %s as the API does: 400 on the field, nothing created', async (url, message) => {
      const browser = await DashboardClient.signedIn(strict, strictOrg.id, strictOrg.ownerId);
      await browser.get('/dashboard/webhooks');
      const res = await browser.post('/dashboard/webhooks', { url, events: 'project.created' });
      expect(res.status).toBe(400);
      expect(alertText(res.text)).toBe(`There is a problem ${message}`);
      expect(res.text).toContain(`<p class="error-message" id="url-error">${message}</p>`);
      expect(valueOf(res.text, 'url')).toBe(url);
      const api = await strict.request('POST', '/v1/webhooks', { key: strictOrg.ownerKey, body: { url, events: ['project.created'] } });
      expect(api.status).toBe(400);
      expect(`Endpoint URL ${api.body.error.details[0].message}`).toBe(message);
      expect(await strict.container.database.db.selectFrom('webhooks').select('id').where('org_id', '=', strictOrg.id).execute()).toEqual([]);
    });
  });
  describe('subscription settings (DASHBOARD 6)', () => {
    it('offers Edit, Rotate and Send test event to admins and owners only; the other roles get 403 pages and forged posts change nothing', async () => {
      const hook = (await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://127.0.0.1:9/settings', events: ['project.created'] } })).body.id as string;
      const page = `/dashboard/webhooks/${hook}`;
      const adminPage = await (await browserFor(admin.userId)).get(page);
      for (const name of ['Edit subscription', 'Rotate secret', 'Send test event']) expect(adminPage.text).toContain(`>${name}</a>`);
      expect(textOf(adminPage.text)).toContain('Active');
      const before = await db().selectFrom('webhooks').selectAll().where('id', '=', hook).executeTakeFirstOrThrow();
      for (const user of [member, viewer]) {
        const browser = await browserFor(user.userId);
        const read = await browser.get(page);
        expect(read.status).toBe(200);
        for (const name of ['Edit subscription', 'Rotate secret', 'Send test event', 'Enable subscription']) expect(read.text).not.toContain(name);
        for (const step of ['edit', 'rotate-secret', 'test']) expect((await browser.get(`${page}/${step}`)).status, step).toBe(403);
        const csrf = read.text.match(/name="_csrf" value="([^"]+)"/)?.[1] ?? null;
        for (const [step, fields] of [['edit', { url: 'https://127.0.0.1:9/forged', events: 'project.created' }], ['rotate-secret', { previous_expires_in: '0' }], ['test', { event: 'project.created' }], ['enable', {}]] as const) {
          expect((await browser.post(`${page}/${step}`, fields, { csrf })).status, step).toBe(403);
        }
      }
      expect(await db().selectFrom('webhooks').selectAll().where('id', '=', hook).executeTakeFirstOrThrow()).toEqual(before);
      expect(await db().selectFrom('deliveries').select('id').where('webhook_id', '=', hook).execute()).toEqual([]);
      // Another organisation's subscription is a 404 page, whatever the step.
      for (const step of ['edit', 'rotate-secret', 'test']) expect((await (await browserFor(admin.userId)).get(`/dashboard/webhooks/${foreignHook}/${step}`)).status).toBe(404);
    });

    it('rotates after the confirmation step: the new secret shown once (no-store), the old one valid for the chosen time', async () => {
      const hook = (await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://127.0.0.1:9/rotating', events: ['project.created'], secret: 'the-old-secret-0123' } })).body.id as string;
      const browser = await browserFor(admin.userId);
      const confirm = await browser.get(`/dashboard/webhooks/${hook}/rotate-secret`);
      expect(textOf(confirm.text)).toContain('Keep the old secret valid for');
      const bad = await browser.post(`/dashboard/webhooks/${hook}/rotate-secret`, { previous_expires_in: '12' });
      expect(bad.status).toBe(400);
      expect((await db().selectFrom('webhooks').select('secret').where('id', '=', hook).executeTakeFirstOrThrow()).secret).toBe('the-old-secret-0123');
      const posted = await browser.post(`/dashboard/webhooks/${hook}/rotate-secret`, { previous_expires_in: '3600' });
      expect(posted.status).toBe(303);
      expect(posted.location).toBe(`/dashboard/webhooks/${hook}/rotated`);
      const done = await browser.follow(posted);
      expect(done.status).toBe(200);
      // Shown once: the same address again goes to the subscription, without the secret, and rotates nothing.
      const again = await browser.get(posted.location!);
      expect(again.status).toBe(303);
      expect(again.location).toBe(`/dashboard/webhooks/${hook}`);
      expect(String(done.headers['cache-control'])).toContain('no-store');
      const secret = done.text.match(/id="new-secret" type="text" value="([^"]+)"/)?.[1];
      expect(secret).toMatch(/^whsec_/);
      const row = await db().selectFrom('webhooks').selectAll().where('id', '=', hook).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ secret, secret_previous: 'the-old-secret-0123', secret_previous_expires_at: clock.now() + 3_600_000 });
      expect(textOf(done.text)).toContain('keeps signing beside it until');
      expect((await browser.get(`/dashboard/webhooks/${hook}`)).text).not.toContain(secret!);
    });
  });
});
