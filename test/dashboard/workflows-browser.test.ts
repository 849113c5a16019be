import fs from 'node:fs';
import type { Locator, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/index.js';
import { hashPassword } from '../../src/lib/crypto.js';
import { assertAccessible } from '../helpers/axe.js';
import { CHROMIUM, followClick, screenshotIfAsked, signInThroughForm, suiteBrowser } from '../helpers/browser.js';
import { startDeliveryHarness, waitFor, type DeliveryHarness } from '../helpers/https-receiver.js';

/*
 * DASHBOARD 7 in a real browser, with the worker running (deliveries and runs) and a real HTTPS receiver:
 * a workflow built in the page with a Task step, run, the task marked done in "My tasks", and the receiver
 * gets `task.assigned` then `workflow.completed` with the run's id; an Approval rejected from "My tasks"
 * fails its run with `error_code: approval_rejected`. Controls are found by role and accessible name only;
 * every page is checked with axe and watched for CSP refusals. SQLite is enough: the pages are the same
 * whatever the database.
 *
 * SCREENSHOTS=1 also writes docs/screenshots/workflow-*.png.
 */

const SKIP = !fs.existsSync(CHROMIUM) && !process.env.CI;
const OWNER_EMAIL = 'flo@flows.example';
const OWNER_PASSWORD = 'workflow owner password';
const SECRET = 'whsec_browser_workflows_0123456789';
const PATHNAME = '/flows';

interface Envelope {
  event: string;
  data: Record<string, unknown>;
}

describe.skipIf(SKIP)('workflow pages in a browser (sqlite)', () => {
  const chrome = suiteBrowser();
  let harness: DeliveryHarness;
  let baseUrl = '';
  let ownerId = '';
  let page: Page;
  let projectUrl = '';

  beforeAll(async () => {
    harness = await startDeliveryHarness('sqlite', {});
    harness.receiver.on(PATHNAME, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
    const { env } = harness;
    baseUrl = await env.app.listen({ port: 0, host: '127.0.0.1' });
    const created = await env.container.services.admin.createOrganization({ name: 'Flows Ltd', ownerEmail: OWNER_EMAIL, ownerName: 'Flo Owner' });
    ownerId = created.owner.id;
    await env.container.store.repos.users.update(created.organization.id, ownerId, { password_hash: await hashPassword(OWNER_PASSWORD) });
    const hook = await env.request('POST', '/v1/webhooks', {
      key: created.api_key.key,
      body: { url: harness.receiver.url(PATHNAME), events: ['task.assigned', 'workflow.completed', 'workflow.failed'], secret: SECRET },
    });
    expect(hook.status).toBe(201);
    const project = await env.request('POST', '/v1/projects', { key: created.api_key.key, body: { name: 'Launch' } });
    expect(project.status).toBe(201);
    projectUrl = `${baseUrl}/dashboard/projects/${(project.body as { id: string }).id}`;

    page = chrome.page;

    await signInThroughForm(page, baseUrl, OWNER_EMAIL, OWNER_PASSWORD);
  }, 60_000);

  afterAll(async () => {
    await harness?.close();
  });

  const follow = (control: Locator): Promise<Response> => followClick(page, control);

  const screenshot = (file: string): Promise<void> => screenshotIfAsked(page, file);

  /** The events the receiver got, verified with the subscription's secret, in arrival order. */
  function received(): Envelope[] {
    return harness.receiver.at(PATHNAME).map((request) => {
      expect(verifySignature(request.body, request.headers['x-service-signature'], SECRET)).toBe(true);
      return JSON.parse(request.body.toString('utf8')) as Envelope;
    });
  }

  /** Builds a workflow on the project page with one step of the given type assigned to the owner, then runs it. */
  async function buildAndRun(name: string, stepType: 'Task' | 'Approval', title: string): Promise<string> {
    await page.goto(projectUrl);
    if (!(await page.getByLabel('Workflow name').isVisible())) await page.getByText('New workflow', { exact: true }).click();
    await page.getByLabel('Workflow name').fill(name);
    await follow(page.getByRole('button', { name: 'Create workflow' }));
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toContain(name);
    await assertAccessible(page, 'workflow');
    await page.getByLabel('Step type').selectOption({ label: stepType });
    await page.getByLabel('Title').fill(title);
    // An approval's assignee is its approver: the field says so where the page's script runs.
    await page.getByLabel(stepType === 'Approval' ? 'Approver' : 'Assignee').selectOption({ value: ownerId });
    await follow(page.getByRole('button', { name: 'Add step' }));
    const steps = page.getByRole('table', { name: 'Steps' });
    expect(await steps.textContent()).toContain(title);
    await screenshot('workflow.png');
    await follow(page.getByRole('button', { name: 'Run workflow' }));
    const runId = /\/dashboard\/runs\/([^/?#]+)/.exec(page.url())?.[1];
    expect(runId).toMatch(/^run_/);
    return runId!;
  }

  /** Opens "My tasks" from the navigation and returns the row of the task with this title. */
  async function myTaskRow(title: string): Promise<Locator> {
    await follow(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'My tasks', exact: true }));
    await assertAccessible(page, 'my tasks');
    const row = page.getByRole('table', { name: 'My tasks' }).getByRole('row').filter({ hasText: title });
    await waitFor(`"${title}" in My tasks`, async () => {
      if ((await row.count()) === 1) return true;
      await page.reload();
      return false;
    });
    return row;
  }

  it('builds a workflow with a Task step, runs it, marks the task done: task.assigned then workflow.completed', async () => {
    const runId = await buildAndRun('Ship the release', 'Task', 'Write the release notes');
    await assertAccessible(page, 'run');
    const row = await myTaskRow('Write the release notes');
    await screenshot('my-tasks.png');
    await follow(row.getByRole('button', { name: 'Mark done' }));
    expect(await page.getByRole('table', { name: 'My tasks' }).getByRole('row').filter({ hasText: 'Write the release notes' }).count()).toBe(0);

    await waitFor('workflow.completed', () => received().some((e) => e.event === 'workflow.completed' && e.data.run_id === runId));
    const events = received().filter((e) => e.data.run_id === runId);
    expect(events.map((e) => e.event)).toEqual(['task.assigned', 'workflow.completed']);
    expect(events[0]!.data).toMatchObject({ title: 'Write the release notes', assignee_id: ownerId, previous_assignee_id: null, assigned_by: null, run_id: runId });
    expect(events[1]!.data).toMatchObject({ run_id: runId, status: 'completed' });

    await page.goto(`${baseUrl}/dashboard/runs/${runId}`);
    expect(await page.getByRole('main').textContent()).toMatch(/Completed/);
    await assertAccessible(page, 'finished run');
    await screenshot('workflow-run.png');
  });

  it('rejects an approval from "My tasks": workflow.failed with error_code approval_rejected', async () => {
    const runId = await buildAndRun('Go live', 'Approval', 'Approve the launch');
    const row = await myTaskRow('Approve the launch');
    await follow(row.getByRole('link', { name: 'Reject' }));
    await assertAccessible(page, 'reject');
    await page.getByLabel(/Reason/).fill('not this week');
    await follow(page.getByRole('button', { name: 'Reject' }));

    await waitFor('workflow.failed', () => received().some((e) => e.event === 'workflow.failed' && e.data.run_id === runId));
    const failed = received().find((e) => e.event === 'workflow.failed' && e.data.run_id === runId)!;
    expect(failed.data).toMatchObject({ run_id: runId, status: 'failed', error_code: 'approval_rejected' });
    expect(failed.data.error).toBe(`Approval "Approve the launch" was rejected by Flo Owner: not this week`);

    await page.goto(`${baseUrl}/dashboard/runs/${runId}`);
    const main = (await page.getByRole('main').textContent()) ?? '';
    expect(main).toMatch(/Failed/);
    expect(main).toContain('not this week');
    await assertAccessible(page, 'failed run');
  });
});
