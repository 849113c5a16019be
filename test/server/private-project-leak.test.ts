import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/access/actor.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';
import { DashboardClient } from '../helpers/dashboard.js';
import { runCli } from '../helpers/cli.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/**
 * CONTRACT 15's hard part: a private project is invisible everywhere. One private project with a workflow, a
 * run, tasks, events, deliveries and audit rows; for a member who is not its collaborator every list of the API,
 * every page of the dashboard (its HTML) and every list of the CLI (`--as` the member) is read, and neither the
 * project's name nor any of its ids appears in any of them. The same walk as a collaborator finds them, so the
 * check cannot pass by finding nothing anywhere.
 */
describe.each(testDialects())('a private project leaks nowhere (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let outsider: { userId: string; key: string };
  let insider: { userId: string; key: string };
  const secrets: string[] = [];
  let projectId: string;
  let workflowId: string;
  let runId: string;
  let webhookId: string;
  let privateDeliveryId: string;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Leakless');
    outsider = await org.member('member');
    insider = await org.member('viewer');
    const s = env.container.services;
    const cli = cliActor(org.id);
    const hook = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://127.0.0.1:9/hook', events: ['project.created', 'project.updated', 'task.assigned'] } });
    webhookId = hook.body.id;
    // Something visible, so the lists are not simply empty.
    await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Open house' } });

    const project = await s.projects.create(cli, { name: 'Acquisition Zephyr', description: 'Buying Zephyr Ltd', visibility: 'private' });
    projectId = project.id;
    await s.collaborators.put(cli, project.id, insider.userId, 'editor');
    await s.projects.update(cli, project.id, { description: 'Due diligence under way' });
    const workflow = await s.workflows.create(cli, project.id, { name: 'Diligence flow', steps: [{ type: 'task', title: 'Read the Zephyr books', assignee_id: insider.userId }] });
    workflowId = workflow.id;
    const run = await s.workflows.startRun(cli, workflow.id);
    runId = run.id;
    for (const key of await s.runs.claimDue('leak-test', 30_000, 100)) await s.runs.advance('leak-test', key);
    const task = await s.tasks.create(cli, project.id, { title: 'Negotiate the Zephyr price', assignee_id: insider.userId });
    const tasks = (await s.tasks.listForProject(cli, project.id)).map((t) => t.id);
    const events = (await s.events.list(cli, {}, { limit: 100 })).items.map((e) => JSON.parse(e) as { id: string; data: { project_id?: string } });
    const privateEvents = events.filter((e) => e.data.project_id === project.id).map((e) => e.id);
    expect(privateEvents.length).toBeGreaterThanOrEqual(3);
    const deliveries = await s.deliveries.list(cli, webhookId, { limit: 100 });
    privateDeliveryId = deliveries.items.find((d) => privateEvents.includes(d.event_id))!.id;
    secrets.push('Zephyr', project.id, workflow.id, run.id, task.id, ...tasks, ...privateEvents, privateDeliveryId);
  });
  afterAll(async () => env?.close());

  const leaks = (where: string, text: string) => secrets.filter((secret) => text.includes(secret)).map((secret) => `${where}: ${secret}`);

  const API_LISTS = [
    '/v1/projects?limit=100',
    '/v1/projects?limit=100&visibility=private',
    '/v1/tasks?limit=100',
    '/v1/tasks?limit=100&status=open',
    '/v1/events?limit=100',
    '/v1/users?limit=100',
    '/v1/webhooks?limit=100',
    '/v1/api-keys?limit=100',
    '/v1/organization',
  ];

  it('the API: every list leaves it out, and every id of it is 404', async () => {
    const found: string[] = [];
    for (const url of [...API_LISTS, `/v1/webhooks/${webhookId}/deliveries?limit=100`, `/v1/tasks?limit=100&project_id=${projectId}`]) {
      const res = await env.request('GET', url, { key: outsider.key });
      expect(res.status, url).toBe(200);
      found.push(...leaks(url, JSON.stringify(res.body)));
    }
    expect(found).toEqual([]);
    for (const url of [`/v1/projects/${projectId}`, `/v1/projects/${projectId}/collaborators`, `/v1/projects/${projectId}/tasks`, `/v1/projects/${projectId}/workflows`, `/v1/workflows/${workflowId}`, `/v1/workflows/${workflowId}/runs`, `/v1/runs/${runId}`, `/v1/webhooks/${webhookId}/deliveries/${privateDeliveryId}`]) {
      const res = await env.request('GET', url, { key: outsider.key });
      expect({ url, status: res.status, code: res.body?.error?.code }).toEqual({ url, status: 404, code: 'not_found' });
    }
    // A collaborator sees it all, through the very same lists.
    const seen = (await Promise.all(API_LISTS.map(async (url) => JSON.stringify((await env.request('GET', url, { key: insider.key })).body)))).join('\n');
    expect(secrets.filter((secret) => seen.includes(secret)).length).toBeGreaterThan(3);
  });

  it('the dashboard: no page shows it, counts leave it out, and its own pages are 404', async () => {
    const browser = await DashboardClient.signedIn(env, org.id, outsider.userId);
    const pages = ['/dashboard', '/dashboard/projects', '/dashboard/tasks', '/dashboard/members', '/dashboard/api-keys', '/dashboard/webhooks', `/dashboard/webhooks/${webhookId}`, '/dashboard/billing', '/dashboard/account'];
    const found: string[] = [];
    for (const url of pages) {
      const res = await browser.get(url);
      expect(res.status, url).toBe(200);
      found.push(...leaks(url, res.text));
    }
    expect(found).toEqual([]);
    const overview = await browser.get('/dashboard');
    expect(overview.text).toMatch(/Projects<\/a>\s*<\/dt>\s*<dd>1<\/dd>/);
    for (const url of [`/dashboard/projects/${projectId}`, `/dashboard/projects/${projectId}/workflows/${workflowId}`, `/dashboard/runs/${runId}`, `/dashboard/webhooks/${webhookId}/deliveries/${privateDeliveryId}`]) {
      const res = await browser.get(url);
      expect(res.status, url).toBe(404);
      expect(leaks(url, res.text)).toEqual([]);
    }
    const insiderBrowser = await DashboardClient.signedIn(env, org.id, insider.userId);
    const theirs = await insiderBrowser.get('/dashboard/projects');
    expect(theirs.text).toContain('Acquisition Zephyr');
    expect(theirs.text).toMatch(/Acquisition Zephyr<\/a><span class="badge private">Private<\/span>/);
    expect((await insiderBrowser.get('/dashboard/tasks')).text).toContain('Negotiate the Zephyr price');
    expect((await insiderBrowser.get('/dashboard')).text).toMatch(/Projects<\/a>\s*<\/dt>\s*<dd>2<\/dd>/);
  });

  it('the CLI: every list --as the member leaves it out; showing it is not found', async () => {
    const cliEnvironment = { DATA_DIR: env.dataDir, ...(env.config.databaseUrl ? { DATABASE_URL: env.config.databaseUrl } : {}) };
    const as = ['--org', org.id, '--as', outsider.userId, '--json', '--limit', '100'];
    const found: string[] = [];
    for (const command of [['project', 'list'], ['task', 'list'], ['events', 'list']]) {
      const result = await runCli([...command, ...as], cliEnvironment);
      expect(result.code, `${command.join(' ')}: ${result.stderr}`).toBe(0);
      found.push(...leaks(command.join(' '), result.stdout));
    }
    expect(found).toEqual([]);
    const shown = await runCli(['project', 'show', projectId, '--org', org.id, '--as', outsider.userId], cliEnvironment);
    expect(shown.code).not.toBe(0);
    expect(shown.stderr).toMatch(/not found/);
    const insiderList = await runCli(['project', 'list', '--org', org.id, '--as', insider.userId, '--json'], cliEnvironment);
    expect(JSON.parse(insiderList.stdout).data.map((p: Json) => p.id)).toContain(projectId);
  });
});
