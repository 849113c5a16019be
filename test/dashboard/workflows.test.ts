import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUtc } from '../../src/lib/time.js';
import { cliActor } from '../../src/services/access/actor.js';
import { DashboardClient, tableRows, textOf, type FormFields, type PageResponse } from '../helpers/dashboard.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const HOUR = 3_600_000;
const START = Date.UTC(2026, 10, 22, 9, 30);

/** A time as the pages show it: "2026-11-22 09:30 UTC". */
const minute = (ms: number) => formatUtc(ms);

/** The problems listed at the top of the page (role="alert"). */
function alertText(html: string): string {
  const summary = /<div class="error-summary" role="alert"[^>]*>([\s\S]*?)<\/div>/.exec(html);
  return summary ? textOf(summary[1]!) : '';
}

/** The polite notice after an action (role="status"). */
function noticeText(html: string): string {
  const notice = /<div class="notice" role="status">([\s\S]*?)<\/div>/.exec(html);
  return notice ? textOf(notice[1]!) : '';
}

/** The error shown beside a field, if any. */
function fieldError(html: string, id: string): string | null {
  const match = new RegExp(`<p class="error-message" id="${id}-error">([^<]*)</p>`).exec(html);
  return match ? textOf(match[1]!) : null;
}

/** The value of the selected option of a select, or of a text input, as rendered. */
function selected(html: string, id: string): string | null {
  const select = new RegExp(`<select id="${id}"[^>]*>([\\s\\S]*?)</select>`).exec(html);
  if (select) {
    // An empty value renders as a bare `value` attribute.
    const option = /<option value(?:="([^"]*)")? selected/.exec(select[1]!);
    return option ? (option[1] ?? '') : null;
  }
  const input = new RegExp(`<input id="${id}"[^>]*\\svalue="([^"]*)"`).exec(html);
  return input ? textOf(input[1]!) : null;
}

describe.each(testDialects())('dashboard: workflows, runs and my tasks (%s)', (dialect) => {
  const clock = new ManualClock(START);
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;
  let admin: { userId: string };
  let assignee: { userId: string };
  let bystander: { userId: string };
  let viewer: { userId: string };
  let foreigner: { userId: string };

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
    org = await env.createOrg('Flow & Co');
    other = await env.createOrg('Elsewhere');
    admin = await org.member('admin');
    assignee = await org.member('member');
    bystander = await org.member('member');
    viewer = await org.member('viewer');
    foreigner = await other.member('member');
  });
  afterAll(async () => env?.close());

  const services = () => env.container.services;
  const db = () => env.container.database.db;
  const browserFor = (userId: string, orgId = org.id) => DashboardClient.signedIn(env, orgId, userId);
  const wfPath = (projectId: string, workflowId: string) => `/dashboard/projects/${projectId}/workflows/${workflowId}`;
  const nameOf = async (userId: string) => (await env.container.store.repos.users.findById(org.id, userId))!;

  /** A fresh project with a workflow (built through the service) in `o`. */
  async function makeWorkflow(steps: { type: string; title?: string; assignee_id?: string; due_in?: string; duration?: string }[] = [], o = org) {
    const actor = cliActor(o.id);
    const project = await services().projects.create(actor, { name: `Project ${Math.random().toString(36).slice(2, 8)}` });
    const workflow = await services().workflows.create(actor, project.id, { name: 'Release', description: 'Ship it', steps });
    return { projectId: project.id, workflowId: workflow.id, path: wfPath(project.id, workflow.id) };
  }

  /** The engine's work, by hand: every due run moved on as far as it goes now. */
  async function drive(): Promise<number> {
    const keys = await services().runs.claimDue('test-worker', 30_000, 100);
    for (const key of keys) expect(await services().runs.advance('test-worker', key)).toBe(true);
    return keys.length;
  }

  /** Everything a refused form must leave as it was. */
  async function snapshot(orgId = org.id) {
    const [workflows, runs, tasks, audit, events] = await Promise.all([
      db().selectFrom('workflows').select(['id', 'name', 'description', 'steps', 'version', 'updated_at']).where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('workflow_runs').select(['id', 'status', 'error_code']).where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('tasks').select(['id', 'status', 'decision', 'assignee_id']).where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('audit_log').select('id').where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('events').select('id').where('org_id', '=', orgId).orderBy('id').execute(),
    ]);
    return { workflows, runs, tasks, audit, events };
  }

  async function addStep(browser: DashboardClient, path: string, fields: FormFields): Promise<PageResponse> {
    await browser.get(path);
    return browser.post(`${path}/steps`, fields);
  }

  /** "Run workflow" on the page; returns the new run's id from the redirect. */
  async function runWorkflow(browser: DashboardClient, path: string): Promise<string> {
    await browser.get(path);
    const res = await browser.post(`${path}/run`);
    expect(res.status, alertText(res.text)).toBe(303);
    const runId = /^\/dashboard\/runs\/(run_[A-Za-z0-9]+)$/.exec(res.location ?? '')?.[1];
    expect(runId, res.location).toBeDefined();
    return runId!;
  }

  describe('the workflow page', () => {
    it('shows the workflow, its steps and the forms with their exact names to members and above', async () => {
      const { path } = await makeWorkflow([{ type: 'task', title: 'Draft notes', assignee_id: assignee.userId, due_in: '1d 12h' }, { type: 'wait', duration: '90m' }]);
      const res = await (await browserFor(assignee.userId)).get(path);
      expect(res.status).toBe(200);
      expect(res.text).toContain('<title>Workflow Release · Flow &amp; Co · Workspace</title>');
      expect(res.text).toMatch(/<a href="\/dashboard\/projects" aria-current="page">Projects<\/a>/);
      expect(textOf(res.text)).toContain('Ship it');
      expect(textOf(res.text)).toContain('version 1');
      const member = await nameOf(assignee.userId);
      expect(tableRows(res.text, 'Steps')).toEqual([`1 Task Draft notes ${member.name} Due 1 day 12 hours after it starts Edit Move down Remove step`, '2 Wait — — 1 hour 30 minutes Edit Move up Remove step']);
      for (const header of ['Step', 'Type', 'Title', 'Assignee', 'Due / wait', 'Actions']) expect(res.text).toContain(`<th scope="col">${header}</th>`);
      expect(res.text).toContain('<h2 id="add-step-title">Add step</h2>');
      expect(res.text).toContain('<label for="type">Step type</label>');
      expect(res.text).toContain('<select id="type" name="type"><option value="task" selected>Task</option><option value="approval">Approval</option><option value="wait">Wait</option></select>');
      expect(res.text).toContain('<label for="title">Title</label>');
      expect(res.text).toContain('<label for="assignee_id">Assignee</label>');
      expect(res.text).toContain('<select id="assignee_id" name="assignee_id"><option value selected>Unassigned</option>');
      expect(res.text).toContain(`<option value="${assignee.userId}">${member.name}</option>`);
      // Sorted by name, people by their names (DASHBOARD 1).
      const select = /<select id="assignee_id" name="assignee_id">([\s\S]*?)<\/select>/.exec(res.text)![1]!;
      const labels = [...select.matchAll(/<option value="user_[^"]+">([^<]+)<\/option>/g)].map((m) => m[1]!);
      expect(labels.length).toBeGreaterThan(2);
      expect(labels).toEqual([...labels].sort((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' })));
      expect(labels.join(' ')).not.toContain('@');
      expect(res.text).not.toContain(foreigner.userId);
      expect(res.text).toContain('<label for="due_in">Due in</label>');
      expect(res.text).toContain('<label for="duration">Duration</label>');
      expect(res.text).toContain('e.g. 30m, 2h, 3d; up to 30 days');
      // A workflow with steps: "Run workflow" is the primary button, "Add step" secondary.
      expect(res.text).toContain('<button type="submit" class="secondary">Add step</button>');
      expect(res.text).toContain('Run workflow</button>');
      expect(res.text).toContain('<button type="submit">Save workflow</button>');
      expect(tableRows(res.text, 'Runs')).toEqual(['This workflow has not run yet.']);
      expect(res.text).not.toMatch(/\sstyle=/);
      expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
    });

    it('adds a Task, an Approval and a Wait step through the form, each in words in "Steps"', async () => {
      const { path, workflowId } = await makeWorkflow();
      const browser = await browserFor(assignee.userId);
      const task = await addStep(browser, path, { type: 'task', title: 'Review the draft', assignee_id: assignee.userId, due_in: '2d', duration: '' });
      expect(task.status, alertText(task.text)).toBe(303);
      expect(task.location).toBe(path);
      const approval = await addStep(browser, path, { type: 'approval', title: 'Sign off', assignee_id: admin.userId, due_in: '', duration: '' });
      expect(approval.status, alertText(approval.text)).toBe(303);
      const wait = await addStep(browser, path, { type: 'wait', title: '', assignee_id: '', due_in: '', duration: '3d' });
      expect(wait.status, alertText(wait.text)).toBe(303);

      // The session holds the latest outcome only, shown once.
      const page = await browser.get(path);
      expect(noticeText(page.text)).toBe('Step 3, Wait added.');
      expect(noticeText((await browser.get(path)).text)).toBe('');
      const [member, approver] = [await nameOf(assignee.userId), await nameOf(admin.userId)];
      expect(tableRows(page.text, 'Steps')).toEqual([
        `1 Task Review the draft ${member.name} Due 2 days after it starts Edit Move down Remove step`,
        `2 Approval Sign off ${approver.name} — Edit Move up Move down Remove step`,
        '3 Wait — — 3 days Edit Move up Remove step',
      ]);
      expect(textOf(page.text)).toContain('version 4');
      const workflow = await services().workflows.get(cliActor(org.id), workflowId);
      expect(workflow.steps.map(({ type, title, assignee_id, due_in_ms, duration_ms }) => ({ type, title, assignee_id, due_in_ms, duration_ms }))).toEqual([
        { type: 'task', title: 'Review the draft', assignee_id: assignee.userId, due_in_ms: 2 * 24 * HOUR, duration_ms: null },
        { type: 'approval', title: 'Sign off', assignee_id: admin.userId, due_in_ms: null, duration_ms: null },
        { type: 'wait', title: null, assignee_id: null, due_in_ms: null, duration_ms: 3 * 24 * HOUR },
      ]);
      // The same audit rows as any other door: one workflow.updated per step, by this user.
      const audit = await db().selectFrom('audit_log').select(['action', 'actor_id']).where('target_id', '=', workflowId).orderBy('seq').execute();
      expect(audit.map((a) => a.action)).toEqual(['workflow.created', 'workflow.updated', 'workflow.updated', 'workflow.updated']);
      expect(audit.slice(1).every((a) => a.actor_id === assignee.userId)).toBe(true);
    });

    it('shows each refused step on the page, on its field and at the top, with what was typed and nothing changed', async () => {
      const { path } = await makeWorkflow([{ type: 'wait', duration: '1h' }]);
      const browser = await browserFor(assignee.userId);
      const cases: [FormFields, string, string][] = [
        [{ type: 'task', title: '', assignee_id: '', due_in: '', duration: '' }, 'title', 'Title is required for a Task or Approval step'],
        [{ type: 'approval', title: 'x'.repeat(256), assignee_id: '', due_in: '', duration: '' }, 'title', 'Title must be 1 to 255 characters'],
        [{ type: 'task', title: 'Plan', assignee_id: foreigner.userId, due_in: '', duration: '' }, 'assignee_id', 'Assignee must be a member of this organisation'],
        [{ type: 'task', title: 'Plan', assignee_id: '', due_in: 'soon', duration: '' }, 'due_in', 'Due in must be a duration such as 30m, 2h, 3d or 1d 12h'],
        [{ type: 'approval', title: 'Plan', assignee_id: '', due_in: '2d', duration: '' }, 'due_in', 'Due in is only for Task steps'],
        [{ type: 'task', title: 'Plan', assignee_id: '', due_in: '', duration: '2h' }, 'duration', 'Duration is only for Wait steps'],
        [{ type: 'wait', title: '', assignee_id: '', due_in: '', duration: '' }, 'duration', 'Duration is required for a Wait step'],
        [{ type: 'wait', title: '', assignee_id: '', due_in: '', duration: '31d' }, 'duration', 'Duration must be between 1 second and 30 days'],
        [{ type: 'wait', title: '', assignee_id: assignee.userId, due_in: '', duration: '1h' }, 'assignee_id', 'Assignee is only for Task and Approval steps'],
        [{ type: 'loop', title: 'Plan', assignee_id: '', due_in: '', duration: '' }, 'type', 'Step type must be one of task, approval, wait'],
      ];
      for (const [fields, field, message] of cases) {
        const before = await snapshot();
        const res = await addStep(browser, path, fields);
        expect(res.status, `${JSON.stringify(fields)}: ${alertText(res.text)}`).toBe(400);
        expect(alertText(res.text)).toContain(message);
        expect(res.text).toContain(`<a href="#${field}">${message}</a>`);
        expect(fieldError(res.text, field)).toBe(message);
        expect(res.text).toMatch(new RegExp(`id="${field}"[^>]*aria-invalid="true"`));
        for (const name of ['title', 'due_in', 'duration']) expect(selected(res.text, name) ?? '').toBe(fields[name]);
        if (fields.type !== 'loop') expect(selected(res.text, 'type')).toBe(fields.type);
        if (fields.assignee_id !== foreigner.userId) expect(selected(res.text, 'assignee_id')).toBe(fields.assignee_id);
        expect(tableRows(res.text, 'Steps')).toHaveLength(1);
        expect(await snapshot()).toEqual(before);
      }
      // Independent problems are listed together.
      const both = await addStep(browser, path, { type: 'task', title: '', assignee_id: '', due_in: 'soon', duration: '1h' });
      expect(both.status).toBe(400);
      expect(alertText(both.text)).toBe('There is a problem Title is required for a Task or Approval step Duration is only for Wait steps Due in must be a duration such as 30m, 2h, 3d or 1d 12h');
    });

    it('refuses a 21st step with 409 on the page, nothing changed', async () => {
      const { path } = await makeWorkflow(Array.from({ length: 20 }, () => ({ type: 'wait', duration: '1m' })));
      const browser = await browserFor(assignee.userId);
      const before = await snapshot();
      const res = await addStep(browser, path, { type: 'wait', title: '', assignee_id: '', due_in: '', duration: '1m' });
      expect(res.status).toBe(409);
      expect(alertText(res.text)).toContain('A workflow has at most 20 steps.');
      expect(selected(res.text, 'duration')).toBe('1m');
      expect(await snapshot()).toEqual(before);
    });

    it('"Remove step" edits the definition only: a run already started keeps its copy', async () => {
      const { path, workflowId } = await makeWorkflow([
        { type: 'task', title: 'First', assignee_id: assignee.userId },
        { type: 'wait', duration: '1h' },
      ]);
      const browser = await browserFor(assignee.userId);
      const runId = await runWorkflow(browser, path);
      const workflow = await services().workflows.get(cliActor(org.id), workflowId);
      await browser.get(path);
      const removed = await browser.post(`${path}/steps/${workflow.steps[0]!.id}/remove`);
      expect(removed.status).toBe(303);
      expect(removed.location).toBe(path);
      const page = await browser.get(removed.location!);
      expect(noticeText(page.text)).toBe('Step 1, Task: First removed.');
      expect(tableRows(page.text, 'Steps')).toEqual(['1 Wait — — 1 hour Edit Remove step']);
      const run = await services().runs.get(cliActor(org.id), runId);
      expect(run.steps.map((s) => s.title)).toEqual(['First', null]);
      // A step id that is not (or no longer) in the workflow.
      expect((await browser.post(`${path}/steps/${workflow.steps[0]!.id}/remove`)).status).toBe(404);
    });

    it('renames the workflow with "Save workflow"; a refused name is shown on its field', async () => {
      const { path, workflowId } = await makeWorkflow();
      const browser = await browserFor(admin.userId);
      await browser.get(path);
      const saved = await browser.post(path, { name: 'Release train', description: '' });
      expect(saved.status).toBe(303);
      expect(saved.location).toBe(path);
      expect(noticeText((await browser.follow(saved)).text)).toBe('Workflow "Release train" saved.');
      expect(await services().workflows.get(cliActor(org.id), workflowId)).toMatchObject({ name: 'Release train', description: null, version: 2 });
      const before = await snapshot();
      await browser.get(path);
      const refused = await browser.post(path, { name: '', description: 'x' });
      expect(refused.status).toBe(400);
      expect(fieldError(refused.text, 'name')).toBe('Name must be 1 to 255 characters');
      expect(await snapshot()).toEqual(before);
    });

    it('"Delete workflow" asks first, refuses (409) while a run is active, then deletes', async () => {
      const { path, projectId, workflowId } = await makeWorkflow([{ type: 'task', title: 'Only', assignee_id: assignee.userId }]);
      const browser = await browserFor(assignee.userId);
      const runId = await runWorkflow(browser, path);
      const confirm = await browser.get(`${path}/delete`);
      expect(confirm.status).toBe(200);
      // While the run lasts the button is not offered: the page links to the run instead (a forged post is still refused).
      expect(confirm.text).not.toContain('Delete workflow</button>');
      expect(confirm.text).toContain(`<a href="/dashboard/runs/${runId}">Run #1</a> is still active`);
      expect((await browser.get(path)).text).not.toContain(`href="${path}/delete"`);
      const before = await snapshot();
      const refused = await browser.post(`${path}/delete`);
      expect(refused.status).toBe(409);
      expect(alertText(refused.text)).toContain('This workflow has 1 active run; cancel it first.');
      expect(await snapshot()).toEqual(before);

      await services().runs.cancel(cliActor(org.id), runId);
      expect((await browser.get(path)).text).toContain(`href="${path}/delete"`);
      expect((await browser.get(`${path}/delete`)).text).toContain('<button type="submit" class="button danger">Delete workflow</button>');
      const deleted = await browser.post(`${path}/delete`);
      expect(deleted.status).toBe(303);
      expect(deleted.location).toBe(`/dashboard/projects/${projectId}`);
      expect(noticeText((await browser.follow(deleted)).text)).toBe('Workflow "Release" deleted.');
      expect(await db().selectFrom('workflows').select('id').where('id', '=', workflowId).execute()).toEqual([]);
      expect((await browser.get(path)).status).toBe(404);
    });

    it('answers "Run workflow" on a workflow without steps with 409 on the page; no run is made', async () => {
      const { path } = await makeWorkflow();
      const browser = await browserFor(assignee.userId);
      await browser.get(path);
      const before = await snapshot();
      const res = await browser.post(`${path}/run`);
      expect(res.status).toBe(409);
      expect(alertText(res.text)).toContain('This workflow has no steps; add a step before running it.');
      expect(await snapshot()).toEqual(before);
    });

    it('lists runs newest first, 20 a page, with "Older" and "Newest"; a broken page link is a 400', async () => {
      const { path, workflowId } = await makeWorkflow([{ type: 'wait', duration: '1h' }]);
      const ids: string[] = [];
      for (let i = 0; i < 22; i++) {
        ids.push((await services().workflows.startRun(cliActor(org.id), workflowId)).id);
        clock.advance(1000);
      }
      const browser = await browserFor(viewer.userId);
      const first = await browser.get(path);
      const rows = tableRows(first.text, 'Runs');
      expect(rows).toHaveLength(20);
      // Each run is named by when it started (to the second), linked to its page.
      const runLinks = (html: string) => [...html.matchAll(/<a href="\/dashboard\/runs\/(run_[A-Za-z0-9]+)">/g)].map((m) => m[1]!);
      expect(runLinks(first.text)).toEqual(ids.slice(2).reverse());
      expect(rows[0]).toMatch(/^#22 \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d:\d\d UTC Queued Command line — Step 1 of 1 —$/);
      expect(first.text).toContain(`<a href="/dashboard/runs/${ids[21]}">`);
      expect(first.text).not.toContain('>Newest</a>');
      const older = /<a href="([^"]+\?cursor=[^"]+)">Older<\/a>/.exec(first.text)?.[1];
      expect(older).toBeDefined();
      const second = await browser.get(older!);
      expect(runLinks(second.text)).toEqual([ids[1], ids[0]]);
      expect(second.text).toContain(`<a href="${path}">Newest</a>`);
      expect(second.text).not.toContain('>Older</a>');
      const broken = await browser.get(`${path}?cursor=nonsense`);
      expect(broken.status).toBe(400);
      expect(alertText(broken.text)).toContain('This page link is no longer valid.');
      expect(tableRows(broken.text, 'Runs')).toHaveLength(20);
      // Leave nothing active for the other tests' engine passes.
      for (const id of ids) await services().runs.cancel(cliActor(org.id), id);
    });
  });

  describe('a run from start to finish', () => {
    it('runs Task → Wait → Approval: My tasks, "Mark done", the timer, "Reject" with a reason; workflow.failed exact', async () => {
      const { path, projectId, workflowId } = await makeWorkflow([
        { type: 'task', title: 'Write notes', assignee_id: assignee.userId, due_in: '1d' },
        { type: 'wait', duration: '2h' },
        { type: 'approval', title: 'Sign off', assignee_id: assignee.userId },
      ]);
      let owner = await browserFor(org.ownerId);
      const t0 = clock.now();
      const runId = await runWorkflow(owner, path);
      const runPath = `/dashboard/runs/${runId}`;
      const member = await nameOf(assignee.userId);

      let page = await owner.get(runPath);
      expect(page.status).toBe(200);
      expect(page.text).toContain('<title>Run #1 of Release · Flow &amp; Co · Workspace</title>');
      expect(noticeText(page.text)).toBe('Run #1 of "Release" started. This page follows it step by step.');
      // An active run's page follows it: a fragment the script polls, and a refresh without script.
      expect(page.text).toContain(`data-progress-url="${runPath}/progress"`);
      expect(page.text).toContain('<noscript><meta http-equiv="refresh" content="15"/></noscript>');
      expect(page.text).toContain(`<a href="${path}">Release</a>`);
      expect(textOf(page.text)).toContain('Status Queued · step 1 of 3');
      expect(textOf(page.text)).toContain('Started by Olive Owner');
      expect(tableRows(page.text, 'Steps')).toEqual(['1 Task Write notes Not started —', '2 Wait — Not started —', '3 Approval Sign off Not started —']);
      expect(page.text).toMatch(new RegExp(`<section class="danger-zone"[^]*<a href="${runPath}/cancel" class="button danger-outline">Cancel run</a>`));

      // The worker starts step 1: a task for the assignee.
      expect(await drive()).toBeGreaterThanOrEqual(1);
      page = await owner.get(runPath);
      expect(textOf(page.text)).toContain('Status Waiting · step 1 of 3');
      // The owner (an admin) may decide it too, so the button shows on the run page.
      expect(tableRows(page.text, 'Steps')[0]).toBe(`1 Task Write notes Waiting for ${member.name} Open Mark done`);

      let mine = await browserFor(assignee.userId);
      let tasks = await mine.get('/dashboard/tasks');
      expect(tasks.status).toBe(200);
      expect(tasks.text).toMatch(/<a href="\/dashboard\/tasks" aria-current="page">My tasks<\/a>/);
      const project = await services().projects.get(cliActor(org.id), projectId);
      const row = tableRows(tasks.text, 'My tasks').find((r) => r.startsWith('Write notes'));
      // How far off the due date is depends on the real clock (this test's is manual), so only its place is checked.
      expect(row).toMatch(new RegExp(`^Write notes ${project.name} To-do ${minute(t0 + 24 * HOUR)} \\(?[A-Za-z0-9 ]+\\)? Run #1 of Release, step 1 Mark done$`));
      expect(tasks.text).toContain(`<a href="/dashboard/projects/${projectId}">${project.name}</a>`);
      expect(tasks.text).toContain(`<a href="${runPath}">Run #1 of Release, step 1</a>`);
      const taskId = (await services().runs.get(cliActor(org.id), runId)).steps[0]!.task_id!;
      expect(tasks.text).toContain(`action="/dashboard/tasks/${taskId}/done"`);

      // "Mark done": back to My tasks with the notice; the task is gone from the list.
      const done = await mine.post(`/dashboard/tasks/${taskId}/done`, { back: '/dashboard/tasks' });
      expect(done.status).toBe(303);
      expect(done.location).toBe('/dashboard/tasks');
      tasks = await mine.get(done.location!);
      expect(noticeText(tasks.text)).toBe('Task "Write notes" marked done.');
      expect(tableRows(tasks.text, 'My tasks').some((r) => r.startsWith('Write notes'))).toBe(false);

      // Finishing the task records the step at once; the worker then starts the Wait.
      page = await owner.get(runPath);
      expect(tableRows(page.text, 'Steps')[0]).toBe('1 Task Write notes Done Done');
      await drive();
      page = await owner.get(runPath);
      expect(textOf(page.text)).toContain('Status Waiting · step 2 of 3');
      expect(tableRows(page.text, 'Steps')[1]).toBe(`2 Wait — Waiting until ${minute(t0 + 2 * HOUR)} —`);

      // Two hours later the timer fires and the approval waits for its approver.
      await drive();
      expect(textOf((await owner.get(runPath)).text)).toContain('Status Waiting · step 2 of 3');
      clock.advance(2 * HOUR);
      await drive();
      // Sessions idle out after 2 hours: both people sign in again.
      owner = await browserFor(org.ownerId);
      mine = await browserFor(assignee.userId);
      page = await owner.get(runPath);
      expect(tableRows(page.text, 'Steps').slice(1)).toEqual(['2 Wait — Elapsed —', `3 Approval Sign off Waiting for ${member.name} Open Approve Reject`]);
      const approvalId = (await services().runs.get(cliActor(org.id), runId)).steps[2]!.task_id!;

      // "Reject" from the run page: a confirmation with an optional reason, back to the run.
      tasks = await mine.get('/dashboard/tasks');
      expect(tableRows(tasks.text, 'My tasks').find((r) => r.startsWith('Sign off'))).toBe(`Sign off ${project.name} Approval No due date Run #1 of Release, step 3 Approve Reject`);
      const confirm = await mine.get(`/dashboard/tasks/${approvalId}/reject?back=${encodeURIComponent(runPath)}`);
      expect(confirm.status).toBe(200);
      expect(confirm.text).toContain('<label for="reason">Reason</label>');
      expect(confirm.text).toContain('<button type="submit" class="button danger">Reject</button>');
      expect(confirm.text).toContain(`<input type="hidden" name="back" value="${runPath}"/>`);
      const rejected = await mine.post(`/dashboard/tasks/${approvalId}/reject`, { back: runPath, reason: 'Not ready' });
      expect(rejected.status).toBe(303);
      expect(rejected.location).toBe(runPath);
      clock.advance(60_000);
      await drive();

      page = await mine.get(rejected.location!);
      expect(noticeText(page.text)).toBe('Task "Sign off" rejected.');
      const error = `Approval "Sign off" was rejected by ${member.name ?? member.email}: Not ready`;
      expect(textOf(page.text)).toContain('Status Failed');
      expect(textOf(page.text)).toContain(`Error ${error}.`);
      expect(textOf(page.text)).not.toContain('approval_rejected');
      expect(tableRows(page.text, 'Steps')[2]).toBe('3 Approval Sign off Rejected Rejected');
      expect(page.text).not.toContain('>Cancel run</a>');

      const run = await services().runs.get(cliActor(org.id), runId);
      expect(run).toMatchObject({ status: 'failed', error, error_code: 'approval_rejected' });
      const events = await db().selectFrom('events').select(['type', 'body']).where('org_id', '=', org.id).where('type', '=', 'workflow.failed').execute();
      const failed = events.map((e) => JSON.parse(e.body) as { event: string; timestamp: string; data: unknown }).filter((e) => (e.data as { run_id: string }).run_id === runId);
      expect(failed).toHaveLength(1);
      expect(failed[0]!.data).toEqual({
        workflow_id: workflowId,
        project_id: projectId,
        run_id: runId,
        status: 'failed',
        started_at: new Date(t0).toISOString(),
        finished_at: new Date(t0 + 2 * HOUR + 60_000).toISOString(),
        error,
        error_code: 'approval_rejected',
      });
      // And the "Runs" table of the workflow says so.
      const list = await owner.get(path);
      expect(list.text).toContain(`<a href="/dashboard/runs/${runId}">`);
      expect(tableRows(list.text, 'Runs')[0]).toContain(` Failed Olive Owner`);
      expect(tableRows(list.text, 'Runs')[0]).toContain(`Step 3 of 3 ${error}`);
    });

    it('"Approve" and a completed run: every step in words, workflow.completed', async () => {
      const { path } = await makeWorkflow([{ type: 'approval', title: 'Go?', assignee_id: assignee.userId }]);
      const owner = await browserFor(org.ownerId);
      const runId = await runWorkflow(owner, path);
      await drive();
      const taskId = (await services().runs.get(cliActor(org.id), runId)).steps[0]!.task_id!;
      const mine = await browserFor(assignee.userId);
      await mine.get('/dashboard/tasks');
      // A "Mark done" on an approval (a forged form) is the wrong action: 409 on My tasks, nothing changed.
      const before = await snapshot();
      const wrong = await mine.post(`/dashboard/tasks/${taskId}/done`, { back: '/dashboard/tasks' });
      expect(wrong.status).toBe(409);
      expect(alertText(wrong.text)).toContain('This task is an approval: approve or reject it.');
      expect(await snapshot()).toEqual(before);

      // A reason over the service's bound: the confirmation again, with the problem on its field.
      const long = await mine.post(`/dashboard/tasks/${taskId}/reject`, { back: '/dashboard/tasks', reason: 'x'.repeat(10_001) });
      expect(long.status).toBe(400);
      expect(fieldError(long.text, 'reason')).toBe('Reason must be at most 10,000 characters');
      expect(long.text).toContain('<button type="submit" class="button danger">Reject</button>');
      expect(await snapshot()).toEqual(before);

      // An unsafe `back` returns to My tasks.
      const approved = await mine.post(`/dashboard/tasks/${taskId}/approve`, { back: 'https://evil.example/dashboard' });
      expect(approved.status).toBe(303);
      expect(approved.location).toBe('/dashboard/tasks');
      expect(noticeText((await mine.get(approved.location!)).text)).toMatch(/^Task ".+" approved\.$/);
      await drive();
      const page = await owner.get(`/dashboard/runs/${runId}`);
      expect(textOf(page.text)).toContain('Status Completed');
      expect(tableRows(page.text, 'Steps')).toEqual(['1 Approval Go? Approved Done']);
      const completed = await db().selectFrom('events').select('body').where('org_id', '=', org.id).where('type', '=', 'workflow.completed').execute();
      expect(completed.some((e) => e.body.includes(runId))).toBe(true);

      // Finished already: a second decision is a 409 on My tasks.
      await mine.get('/dashboard/tasks');
      const again = await mine.post(`/dashboard/tasks/${taskId}/approve`, { back: '/dashboard/tasks' });
      expect(again.status).toBe(409);
      expect(alertText(again.text)).toContain('This task is already done.');
      expect(again.text).toMatch(/<caption[^>]*>My tasks<\/caption>/);
      expect((await mine.get(`/dashboard/tasks/${taskId}/reject`)).status).toBe(409);
    });

    it('"Cancel run" asks first, then cancels: the run fails as cancelled, its task with it; again is a 409', async () => {
      const { path } = await makeWorkflow([{ type: 'task', title: 'Pending work', assignee_id: assignee.userId }]);
      const browser = await browserFor(assignee.userId);
      const runId = await runWorkflow(browser, path);
      await drive();
      const runPath = `/dashboard/runs/${runId}`;
      const confirm = await browser.get(`${runPath}/cancel`);
      expect(confirm.status).toBe(200);
      expect(confirm.text).toContain('<title>Cancel run · Flow &amp; Co · Workspace</title>');
      expect(confirm.text).toContain(`<form method="post" action="${runPath}/cancel" class="inline-form">`);
      expect(confirm.text).toContain('<button type="submit" class="button danger">Cancel run</button>');
      expect(confirm.text).toContain(`<a href="${runPath}">Back to the run</a>`);

      const cancelled = await browser.post(`${runPath}/cancel`);
      expect(cancelled.status).toBe(303);
      expect(cancelled.location).toBe(runPath);
      const page = await browser.get(cancelled.location!);
      expect(noticeText(page.text)).toBe('Run cancelled.');
      expect(textOf(page.text)).toContain('Status Cancelled');
      const canceller = await nameOf(assignee.userId);
      expect(textOf(page.text)).toContain(`cancelled by ${canceller.name ?? canceller.email}`);
      expect(tableRows(page.text, 'Steps')).toEqual(['1 Task Pending work Cancelled Cancelled']);
      expect(page.text).not.toContain('>Cancel run</a>');
      expect(await services().runs.get(cliActor(org.id), runId)).toMatchObject({ status: 'cancelled', error_code: 'cancelled' });
      expect(tableRows((await browser.get('/dashboard/tasks')).text, 'My tasks').some((r) => r.startsWith('Pending work'))).toBe(false);

      const before = await snapshot();
      await browser.get(runPath);
      const again = await browser.post(`${runPath}/cancel`);
      expect(again.status).toBe(409);
      expect(alertText(again.text)).toContain('This run has already been cancelled.');
      expect((await browser.get(`${runPath}/cancel`)).status).toBe(409);
      expect(await snapshot()).toEqual(before);
    });
  });

  describe('who may do what', () => {
    it('shows a viewer the pages without forms and answers 403 to every POST, nothing changed', async () => {
      const { path, workflowId } = await makeWorkflow([{ type: 'task', title: 'Look', assignee_id: assignee.userId }]);
      const runId = (await services().workflows.startRun(cliActor(org.id), workflowId)).id;
      await drive();
      const stepId = (await services().workflows.get(cliActor(org.id), workflowId)).steps[0]!.id;
      const taskId = (await services().runs.get(cliActor(org.id), runId)).steps[0]!.task_id!;
      const browser = await browserFor(viewer.userId);

      const page = await browser.get(path);
      expect(page.status).toBe(200);
      expect(tableRows(page.text, 'Steps')).toEqual([`1 Task Look ${(await nameOf(assignee.userId)).name} —`]);
      for (const hidden of ['Add step', 'Run workflow', 'Remove step', 'Save workflow', 'Delete workflow', '<form method="post" action="/dashboard/projects']) {
        expect(page.text).not.toContain(hidden);
      }
      const run = await browser.get(`/dashboard/runs/${runId}`);
      expect(run.status).toBe(200);
      expect(run.text).not.toContain('Cancel run');
      expect(run.text).not.toContain('Mark done');
      expect((await browser.get(`/dashboard/runs/${runId}/cancel`)).status).toBe(403);
      expect((await browser.get(`${path}/delete`)).status).toBe(403);
      expect((await browser.get(`/dashboard/tasks/${taskId}/reject`)).status).toBe(403);

      const before = await snapshot();
      const posts: [string, FormFields][] = [
        [`${path}/steps`, { type: 'wait', duration: '1h' }],
        [`${path}/steps/${stepId}/remove`, {}],
        [`${path}/run`, {}],
        [path, { name: 'Renamed', description: '' }],
        [`${path}/delete`, {}],
        [`/dashboard/runs/${runId}/cancel`, {}],
        [`/dashboard/tasks/${taskId}/done`, { back: '/dashboard/tasks' }],
      ];
      for (const [url, fields] of posts) {
        await browser.get('/dashboard/tasks');
        const res = await browser.post(url, fields);
        expect(res.status, url).toBe(403);
        expect(textOf(res.text)).toContain('You cannot do that');
      }
      expect(await snapshot()).toEqual(before);
      await services().runs.cancel(cliActor(org.id), runId);
    });

    it('refuses "Mark done" and "Reject" to a member who is not the assignee (403); an admin may decide', async () => {
      const { path } = await makeWorkflow([{ type: 'task', title: 'Theirs', assignee_id: assignee.userId }]);
      const owner = await browserFor(org.ownerId);
      const runId = await runWorkflow(owner, path);
      await drive();
      const taskId = (await services().runs.get(cliActor(org.id), runId)).steps[0]!.task_id!;

      const someone = await browserFor(bystander.userId);
      const runPage = await someone.get(`/dashboard/runs/${runId}`);
      expect(runPage.text).not.toContain('Mark done');
      expect(tableRows((await someone.get('/dashboard/tasks')).text, 'My tasks').some((r) => r.startsWith('Theirs'))).toBe(false);
      const before = await snapshot();
      const refused = await someone.post(`/dashboard/tasks/${taskId}/done`, { back: '/dashboard/tasks' });
      expect(refused.status).toBe(403);
      expect(textOf(refused.text)).toContain('Only the assignee or an admin can finish this task');
      expect((await someone.get(`/dashboard/tasks/${taskId}/reject`)).status).toBe(403);
      expect(await snapshot()).toEqual(before);

      const boss = await browserFor(admin.userId);
      await boss.get(`/dashboard/runs/${runId}`);
      const done = await boss.post(`/dashboard/tasks/${taskId}/done`, { back: `/dashboard/runs/${runId}` });
      expect(done.status).toBe(303);
      expect(done.location).toBe(`/dashboard/runs/${runId}`);
      await drive();
      expect((await services().runs.get(cliActor(org.id), runId)).status).toBe('completed');
    });

    it("answers 404 pages for another organisation's run, workflow and task, another project's workflow, and bad ids", async () => {
      const foreign = await makeWorkflow([{ type: 'task', title: 'Foreign', assignee_id: foreigner.userId }], other);
      const foreignRun = (await services().workflows.startRun(cliActor(other.id), foreign.workflowId)).id;
      await drive();
      const foreignTask = (await services().runs.get(cliActor(other.id), foreignRun)).steps[0]!.task_id!;
      const own = await makeWorkflow([{ type: 'wait', duration: '1h' }]);
      const browser = await browserFor(org.ownerId);
      const before = await snapshot(other.id);
      for (const url of [
        `/dashboard/runs/${foreignRun}`,
        `/dashboard/runs/${foreignRun}/cancel`,
        foreign.path,
        wfPath(own.projectId, foreign.workflowId),
        wfPath(foreign.projectId, own.workflowId),
        `/dashboard/runs/run_nothing`,
        `/dashboard/runs/${encodeURIComponent('run_%00')}`,
        `/dashboard/tasks/${foreignTask}/reject`,
      ]) {
        const res = await browser.get(url);
        expect(res.status, url).toBe(404);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(textOf(res.text)).toContain('Page not found');
        expect(res.text).not.toContain('Foreign');
      }
      await browser.get('/dashboard/tasks');
      for (const url of [`/dashboard/runs/${foreignRun}/cancel`, `/dashboard/tasks/${foreignTask}/done`, `${wfPath(own.projectId, foreign.workflowId)}/run`]) {
        expect((await browser.post(url, url.includes('/tasks/') ? { back: '/dashboard/tasks' } : {})).status, url).toBe(404);
      }
      expect(await snapshot(other.id)).toEqual(before);
      await services().runs.cancel(cliActor(other.id), foreignRun);
    });

    it('refuses every form without its CSRF token (403), nothing changed', async () => {
      const { path, workflowId } = await makeWorkflow([{ type: 'task', title: 'Guarded', assignee_id: assignee.userId }]);
      const runId = (await services().workflows.startRun(cliActor(org.id), workflowId)).id;
      await drive();
      const taskId = (await services().runs.get(cliActor(org.id), runId)).steps[0]!.task_id!;
      const browser = await browserFor(assignee.userId);
      await browser.get(path);
      const before = await snapshot();
      for (const [url, fields] of [
        [`${path}/steps`, { type: 'wait', duration: '1h' }],
        [`${path}/run`, {}],
        [`/dashboard/runs/${runId}/cancel`, {}],
        [`/dashboard/tasks/${taskId}/done`, { back: '/dashboard/tasks' }],
        [`/dashboard/tasks/${taskId}/reject`, { back: '/dashboard/tasks', reason: '' }],
      ] as [string, FormFields][]) {
        const res = await browser.post(url, fields, { csrf: null });
        expect(res.status, url).toBe(403);
        const crossSite = await browser.post(url, fields, { headers: { 'sec-fetch-site': 'cross-site' } });
        expect(crossSite.status, url).toBe(403);
      }
      expect(await snapshot()).toEqual(before);
      await services().runs.cancel(cliActor(org.id), runId);
    });
  });
});
