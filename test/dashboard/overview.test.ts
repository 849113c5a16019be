import { cliActor } from '../../src/services/access/actor.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAttempt } from '../helpers/attempts.js';
import { DashboardClient, tableRows, textOf } from '../helpers/dashboard.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const at = (day: number, hour: number, minute = 0) => Date.UTC(2026, 10, day, hour, minute);

/** The chart image: `role="img"` and its accessible name. */
function chartLabels(html: string): string[] {
  return [...html.matchAll(/<svg class="chart-svg"[^>]*\brole="img"[^>]*\baria-label="([^"]+)"/g)].map((m) => m[1]!);
}

/** DASHBOARD 3, `/dashboard`: counts, the webhook health chart (last 24 h), requests per day (last 30 days). */
describe.each(testDialects())('dashboard: overview (%s)', (dialect) => {
  const clock = new ManualClock(at(22, 9, 30));
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
    org = await env.createOrg('Acme');
    other = await env.createOrg('Other');
    const hook = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://127.0.0.1:9/hook', events: ['project.created'] } });
    const otherHook = await env.request('POST', '/v1/webhooks', { key: other.ownerKey, body: { url: 'https://127.0.0.1:9/hook', events: ['project.created'] } });
    for (let i = 0; i < 197; i++) await recordAttempt(env, org.id, hook.body.id, at(22, i % 2 === 0 ? 9 : 3, 5), 'success');
    for (let i = 0; i < 3; i++) await recordAttempt(env, org.id, hook.body.id, at(22, 9, 10), 'failure');
    await recordAttempt(env, other.id, otherHook.body.id, at(22, 9, 1), 'failure');
    // Earlier days as the flushes of other processes left them; today's requests are counted below.
    await env.container.store.repos.requestCounts.add(org.id, '2026-11-20', 1200);
    await env.container.store.repos.requestCounts.add(other.id, '2026-11-21', 5000);
    for (let i = 0; i < 3; i++) expect((await env.request('GET', '/v1/projects', { key: org.ownerKey })).status).toBe(200);
  });
  afterAll(async () => env?.close());

  it('shows the webhook health chart with its summary and the table behind it', async () => {
    const browser = await DashboardClient.signedIn(env, org.id, org.ownerId);
    const res = await browser.get('/dashboard');
    expect(res.status).toBe(200);
    const text = textOf(res.text);
    expect(res.text).toContain('<h2 id="health-title">Webhook health (last 24 hours)</h2>');
    // Each seeded attempt is a delivery of its own: 197 of 200 delivered, their 3 failed attempts named.
    expect(text).toContain('98.5% delivered (197 of 200 deliveries); 3 failed attempts along the way');
    expect(chartLabels(res.text)).toContain('Delivery attempts per hour, last 24 hours (UTC), by outcome. 98.5% delivered (197 of 200 deliveries); 3 failed attempts along the way');

    const rows = tableRows(res.text, 'Deliveries per hour');
    expect(rows).toHaveLength(24);
    expect(rows[0]).toBe('21 Nov 2026, 10:00 UTC 0 0 0');
    expect(rows[17]).toBe('22 Nov 2026, 03:00 UTC 98 0 98');
    expect(rows[23]).toBe('22 Nov 2026, 09:00 UTC 99 3 102');
    expect(rows.filter((r) => r.endsWith(' 0 0 0'))).toHaveLength(22);
    // The legend names both outcomes; failures are hatched as well as coloured.
    expect(text).toContain('Delivered');
    expect(text).toContain('Failed');
    expect(res.text).toMatch(/<rect [^>]*fill="url\(#health-chart-hatch\)"/);
  });

  it('shows requests per day for the last 30 days, with what this process has not written yet', async () => {
    const browser = await DashboardClient.signedIn(env, org.id, org.ownerId);
    const res = await browser.get('/dashboard');
    expect(res.text).toContain('<h2 id="requests-title">Requests per day (last 30 days)</h2>');
    expect(textOf(res.text)).toContain('1,204 requests in the last 30 days');
    expect(chartLabels(res.text)).toContain('Requests per day, last 30 days (UTC): 1,204 requests');
    const rows = tableRows(res.text, 'Requests per day');
    expect(rows).toHaveLength(30);
    expect(rows[0]).toBe('24 Oct 2026 0');
    expect(rows[27]).toBe('20 Nov 2026 1,200');
    expect(rows[28]).toBe('21 Nov 2026 0');
    expect(rows[29]).toBe('22 Nov 2026 4'); // three reads and the subscription
    // The counts stay.
    expect(textOf(res.text)).toMatch(/Projects 0 Members 1 Webhook subscriptions 1/);
    expect(res.text).not.toMatch(/\sstyle=/);
  });

  it('is the same page for every role, and an organisation sees only its own figures', async () => {
    const viewer = await other.member('viewer');
    const browser = await DashboardClient.signedIn(env, other.id, viewer.userId);
    const res = await browser.get('/dashboard');
    expect(res.status).toBe(200);
    const text = textOf(res.text);
    expect(text).toContain('0% delivered (0 of 1 delivery); 1 failed attempt along the way');
    expect(text).toContain('5,001 requests in the last 30 days');
    expect(tableRows(res.text, 'Deliveries per hour')[23]).toBe('22 Nov 2026, 09:00 UTC 0 1 1');
  });

  it('says so when there is nothing yet', async () => {
    const fresh = await env.createOrg('Fresh');
    const browser = await DashboardClient.signedIn(env, fresh.id, fresh.ownerId);
    const res = await browser.get('/dashboard');
    expect(res.status).toBe(200);
    const text = textOf(res.text);
    expect(text).toContain('No deliveries in the last 24 hours');
    expect(text).toContain('0 requests in the last 30 days');
    expect(chartLabels(res.text)).toHaveLength(2);
    expect(tableRows(res.text, 'Requests per day').every((r) => r.endsWith(' 0'))).toBe(true);
    expect(text).toContain('Nothing to do: no open tasks are assigned to you.');
    expect(res.text).toContain('<a href="/dashboard/projects">Create your first project</a>');
  });

  it('opens with the person\'s own tasks: how many, how many overdue, and a link to My tasks', async () => {
    const team = await env.createOrg('Busy');
    const member = await team.member('member');
    const actor = cliActor(team.id);
    const project = await env.container.services.projects.create(actor, { name: 'Launch' });
    await env.container.services.tasks.create(actor, project.id, { title: 'Late', assignee_id: member.userId, due_at: clock.now() - 3 * 86_400_000 });
    await env.container.services.tasks.create(actor, project.id, { title: 'Later', assignee_id: member.userId });
    const browser = await DashboardClient.signedIn(env, team.id, member.userId);
    const res = await browser.get('/dashboard');
    expect(textOf(res.text)).toMatch(/Your tasks 2 open tasks assigned to you, 1 overdue ?\. Open My tasks/);
    expect(res.text).toContain('<a href="/dashboard/tasks">Open My tasks</a>');
    // A member sees the projects exist: no "first project" prompt.
    expect(res.text).not.toContain('Create your first project');
  });
});
