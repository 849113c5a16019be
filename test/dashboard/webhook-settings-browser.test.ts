import fs from 'node:fs';
import { Webhook } from 'standardwebhooks';
import type { Locator, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/lib/crypto.js';
import { assertAccessible } from '../helpers/axe.js';
import { CHROMIUM, followClick, screenshotIfAsked, signInThroughForm, suiteBrowser } from '../helpers/browser.js';
import { startDeliveryHarness, waitFor, type DeliveryHarness, type ReceivedRequest } from '../helpers/https-receiver.js';

/*
 * DASHBOARD 6's subscription settings in a real browser against a real HTTPS receiver: "Edit subscription"
 * (the next delivery goes to the new URL), "Rotate secret" (the secret shown once verifies the next delivery
 * with the standardwebhooks library), "Send test event" (the attempt's result on the page), and a subscription
 * the service disabled (410 Gone) flagged on the overview and in the table, then enabled from its page. Controls
 * by role and name; axe on every page. SCREENSHOTS=1 writes docs/screenshots/webhook-settings-*.png.
 */

const SKIP = !fs.existsSync(CHROMIUM) && !process.env.CI;
const OWNER_EMAIL = 'rosa@settings.example';
const OWNER_PASSWORD = 'settings owner password';

function plainHeaders(request: ReceivedRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') out[name] = value;
  return out;
}

describe.skipIf(SKIP)('webhook subscription settings in a browser (sqlite)', () => {
  const chrome = suiteBrowser();
  let harness: DeliveryHarness;
  let baseUrl = '';
  let apiKey = '';
  let page: Page;
  let webhookId = '';
  let orgId = '';
  let gone = false;

  beforeAll(async () => {
    harness = await startDeliveryHarness('sqlite', { WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms,50ms,50ms' }, { healthPollMs: 50 });
    harness.receiver.on('/v2', (_req, res) => void (gone ? res.writeHead(410).end('gone') : res.writeHead(200).end('ok')));
    const { env } = harness;
    baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
    const created = await env.container.services.admin.createOrganization({ name: 'Settings Co', ownerEmail: OWNER_EMAIL, ownerName: 'Rosa Owner' });
    apiKey = created.api_key.key;
    orgId = created.organization.id;
    await env.container.store.repos.users.update(created.organization.id, created.owner.id, { password_hash: await hashPassword(OWNER_PASSWORD) });
    const hook = await api('POST', '/v1/webhooks', { url: harness.receiver.url('/v1'), events: ['project.created'] });
    webhookId = hook.id;
    page = chrome.page;
    await signInThroughForm(page, baseUrl, OWNER_EMAIL, OWNER_PASSWORD);
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
  });

  async function api(method: string, url: string, body?: unknown) {
    const res = await fetch(`${baseUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return res.status === 204 ? null : await res.json();
  }

  const follow = (control: Locator): Promise<Response> => followClick(page, control);
  const heading = () => page.getByRole('heading', { level: 1 }).textContent();
  const openSubscription = () => page.goto(`${baseUrl}/dashboard/webhooks/${webhookId}`);

  it('"Edit subscription" changes the URL and events; the next delivery goes to the new URL', async () => {
    await openSubscription();
    await follow(page.getByRole('link', { name: 'Edit subscription' }));
    expect(await heading()).toBe('Edit subscription');
    await assertAccessible(page, 'edit subscription');
    await screenshotIfAsked(page, 'webhook-settings-edit.png');
    // A refused URL keeps the page, says why, changes nothing.
    await page.getByLabel('Endpoint URL').fill('http://insecure.example/hook');
    const refused = await follow(page.getByRole('button', { name: 'Save subscription' }));
    expect(refused.status()).toBe(400);
    expect(await page.getByRole('alert').textContent()).toMatch(/https/);
    expect((await api('GET', `/v1/webhooks/${webhookId}`)).url).toBe(harness.receiver.url('/v1'));

    await page.getByLabel('Endpoint URL').fill(harness.receiver.url('/v2'));
    await page.getByRole('checkbox', { name: 'task.assigned' }).check();
    await follow(page.getByRole('button', { name: 'Save subscription' }));
    expect(page.url()).toContain(`/dashboard/webhooks/${webhookId}`);
    expect(await page.locator('.notice').textContent()).toMatch(/^Subscription to https:\/\/\S+ saved\.$/);
    const read = await api('GET', `/v1/webhooks/${webhookId}`);
    expect(read).toMatchObject({ url: harness.receiver.url('/v2'), events: ['project.created', 'task.assigned'] });
    await api('POST', '/v1/projects', { name: 'After the edit' });
    await waitFor('a delivery at the new URL', () => harness.receiver.at('/v2')[0]);
    expect(harness.receiver.at('/v1')).toHaveLength(0);
  });

  it('"Rotate secret" confirms, shows the new secret once with when the old one stops; it verifies the next delivery', async () => {
    await openSubscription();
    await follow(page.getByRole('link', { name: 'Rotate secret' }));
    expect(await heading()).toBe('Rotate signing secret');
    await assertAccessible(page, 'rotate secret');
    await page.getByLabel('Keep the old secret valid for').selectOption({ label: '1 hour' });
    const shown = await follow(page.getByRole('button', { name: 'Rotate secret' }));
    expect(shown.headers()['cache-control']).toContain('no-store');
    const secret = await page.getByLabel('Signing secret', { exact: true }).inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(await page.getByRole('main').textContent()).toMatch(/keeps signing beside it until \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC, then stops/);
    await assertAccessible(page, 'rotated secret');
    // Reloading the subscription page never shows it again.
    await openSubscription();
    expect(await page.content()).not.toContain(secret.slice(6));

    const before = harness.receiver.at('/v2').length;
    await api('POST', '/v1/projects', { name: 'After the rotation' });
    const request = await waitFor('a delivery signed with the new secret', () => harness.receiver.at('/v2')[before]);
    expect(() => new Webhook(secret).verify(request.body.toString(), plainHeaders(request))).not.toThrow();
  });

  it('"Send test event" sends one and shows the attempt\'s result', async () => {
    await openSubscription();
    await follow(page.getByRole('link', { name: 'Send test event' }));
    expect(await heading()).toBe('Send test event');
    await assertAccessible(page, 'send test event');
    await page.getByLabel('Event').selectOption('task.assigned');
    await follow(page.getByRole('button', { name: 'Send test event' }));
    expect(page.url()).toMatch(/\/deliveries\/dlv_/);
    expect(await page.locator('.notice').textContent()).toMatch(/Test event delivered: the endpoint answered 200/);
    expect(await page.getByRole('main').textContent()).toContain('Test event');
    const last = harness.receiver.at('/v2').at(-1)!;
    expect(last.headers['x-service-test']).toBe('true');
    expect(JSON.parse(last.body.toString()).event).toBe('task.assigned');
    await screenshotIfAsked(page, 'webhook-settings-test.png');
    await assertAccessible(page, 'test event result');
  });

  it('a subscription disabled by a 410 is flagged on the overview and in the table, and enabled from its page', async () => {
    gone = true;
    await api('POST', '/v1/projects', { name: 'Gone' });
    await waitFor('disabled and announced', async () => {
      const row = await harness.env.container.store.repos.webhooks.findById(orgId, webhookId);
      return row?.status === 'disabled' && row.disabled_notified_at !== null;
    });
    await page.goto(`${baseUrl}/dashboard`);
    const warning = page.getByRole('status').filter({ hasText: 'needs attention' });
    expect(await warning.textContent()).toContain('Disabled');
    await screenshotIfAsked(page, 'webhook-settings-overview.png');
    await assertAccessible(page, 'overview with a disabled subscription');
    await follow(warning.getByRole('link', { name: harness.receiver.url('/v2') }));
    expect(page.url()).toContain(`/dashboard/webhooks/${webhookId}`);
    expect(await page.getByRole('heading', { name: 'This subscription is disabled' }).isVisible()).toBe(true);
    expect(await page.getByRole('main').textContent()).toContain('410 Gone');
    expect(await page.getByRole('link', { name: 'Send test event' }).count()).toBe(0);
    await screenshotIfAsked(page, 'webhook-settings-disabled.png');
    await assertAccessible(page, 'disabled subscription');

    await page.goto(`${baseUrl}/dashboard/webhooks`);
    const row = page.getByRole('table', { name: 'Webhook subscriptions' }).getByRole('row').filter({ hasText: harness.receiver.url('/v2') });
    expect(await row.textContent()).toContain('Disabled');

    gone = false;
    await openSubscription();
    await follow(page.getByRole('button', { name: 'Enable subscription' }));
    expect(await page.locator('.notice').textContent()).toMatch(/^Subscription to https:\/\/\S+ enabled: deliveries go out again\./);
    expect(await page.getByRole('heading', { name: 'This subscription is disabled' }).count()).toBe(0);
    expect((await api('GET', `/v1/webhooks/${webhookId}`)).status).toBe('active');
    await assertAccessible(page, 'enabled subscription');
  });
});
