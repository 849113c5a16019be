import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/access/actor.js';
import { DashboardClient, noticeOf, tableRows, textOf, type FormFields, type PageResponse } from '../helpers/dashboard.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/** The problems listed at the top of the page (role="alert"). */
function alertText(html: string): string {
  const summary = /<div class="error-summary" role="alert"[^>]*>([\s\S]*?)<\/div>/.exec(html);
  return summary ? textOf(summary[1]!) : '';
}

/** The raw HTML of the row of the table with this caption that holds the text. */
function rowHtml(html: string, caption: string, text: string): string {
  const table = new RegExp(`<table><caption[^>]*>${caption}</caption>([\\s\\S]*?)</table>`).exec(html);
  if (!table) throw new Error(`no table "${caption}"`);
  const rows = [...table[1]!.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1]!).filter((r) => textOf(r).includes(text));
  if (rows.length !== 1) throw new Error(`${rows.length} rows of "${caption}" hold "${text}"`);
  return rows[0]!;
}

interface EventEnvelope {
  event: string;
  data: Record<string, unknown>;
}

describe.each(testDialects())('dashboard: the project page (%s)', (dialect) => {
  const clock = new ManualClock(Date.UTC(2026, 2, 10, 9, 0));
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;
  let admin: { userId: string };
  let member: { userId: string };
  let viewer: { userId: string };

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
    org = await env.createOrg('Projects & Co');
    other = await env.createOrg('Elsewhere');
    admin = await org.member('admin');
    member = await org.member('member');
    viewer = await org.member('viewer');
  });
  afterAll(async () => env?.close());

  const db = () => env.container.database.db;
  const services = () => env.container.services;
  const browserFor = (userId: string, orgId = org.id) => DashboardClient.signedIn(env, orgId, userId);
  const pageOf = (projectId: string) => `/dashboard/projects/${projectId}`;

  async function newProject(name: string, o: TestOrg = org): Promise<string> {
    clock.advance(1000);
    const res = await env.request('POST', '/v1/projects', { key: o.ownerKey, body: { name, description: 'About it' } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  async function events(type: string): Promise<EventEnvelope[]> {
    const rows = await db().selectFrom('events').select('body').where('org_id', '=', org.id).where('type', '=', type).orderBy('seq').execute();
    return rows.map((r) => JSON.parse(r.body) as EventEnvelope);
  }

  /** Everything a refused form must leave as it was. */
  async function snapshot(projectId: string) {
    const [project, workflows, tasks, audit, evts] = await Promise.all([
      db().selectFrom('projects').selectAll().where('id', '=', projectId).execute(),
      db().selectFrom('workflows').select(['id', 'name', 'version']).where('project_id', '=', projectId).orderBy('id').execute(),
      db().selectFrom('tasks').select(['id', 'title', 'assignee_id', 'status']).where('project_id', '=', projectId).orderBy('id').execute(),
      db().selectFrom('audit_log').select('id').where('org_id', '=', org.id).orderBy('id').execute(),
      db().selectFrom('events').select('id').where('org_id', '=', org.id).orderBy('id').execute(),
    ]);
    return { project, workflows, tasks, audit, events: evts };
  }

  async function post(browser: DashboardClient, projectId: string, path: string, fields: FormFields): Promise<PageResponse> {
    await browser.get(pageOf(projectId));
    return browser.post(`${pageOf(projectId)}${path}`, fields);
  }

  /** Runs the engine by hand until nothing is due. */
  async function drainRuns(): Promise<void> {
    for (;;) {
      const keys = await services().runs.claimDue('test-worker', 30_000, 10);
      if (keys.length === 0) return;
      for (const key of keys) await services().runs.advance('test-worker', key);
    }
  }

  it('shows the project, its workflows and its tasks, linked from the projects list', async () => {
    const projectId = await newProject('Launch <plan>');
    const actor = cliActor(org.id);
    const gone = await org.member('member');
    const wf = await services().workflows.create(actor, projectId, {
      name: 'Release',
      steps: [{ type: 'task', title: 'Write notes', assignee_id: member.userId }],
    });
    const plain = await services().tasks.create(actor, projectId, { title: 'Book the room', assignee_id: admin.userId, due_at: Date.UTC(2026, 11, 31, 23, 59, 59, 999) });
    await services().tasks.create(actor, projectId, { title: 'Nobody yet' });
    const orphan = await services().tasks.create(actor, projectId, { title: 'Old chore', assignee_id: gone.userId });
    await services().tasks.resolve(actor, orphan.id, { action: 'done' });
    await services().users.remove(actor, gone.userId);
    const run = await services().workflows.startRun(actor, wf.id);
    await drainRuns();

    const browser = await browserFor(viewer.userId);
    const list = await browser.get('/dashboard/projects');
    expect(list.text).toContain(`<a href="/dashboard/projects/${projectId}">Launch &lt;plan></a>`);

    const page = await browser.get(pageOf(projectId));
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h1>Launch &lt;plan></h1>');
    const main = textOf(page.text);
    expect(main).toContain('Status Active');
    expect(main).toContain('About it');
    expect(page.text).toMatch(/<caption[^>]*>Workflows<\/caption>/);
    expect(page.text).toMatch(/<caption[^>]*>Tasks<\/caption>/);
    expect(tableRows(page.text, 'Workflows')).toEqual([expect.stringMatching(/^Release 1 1 10 Mar 2026, 09:00 UTC$/)]);
    expect(page.text).toContain(`<a href="/dashboard/projects/${projectId}/workflows/${wf.id}">Release</a>`);

    // Open tasks in "Tasks"; the finished ones apart, under their own table.
    const rows = tableRows(page.text, 'Tasks');
    expect(rows).toHaveLength(3);
    expect(rows.find((r) => r.startsWith('Write notes'))).toMatch(/^Write notes Open To-do member \d+ No due date Run #1 of Release, step 1$/);
    // The due date says how far off it is (against the real clock; this test's clock is manual).
    expect(rows.find((r) => r.startsWith('Book the room'))).toMatch(/^Book the room Open To-do admin \d+ 31 Dec 2026 (.+ )?—$/);
    expect(rows.find((r) => r.startsWith('Nobody yet'))).toBe('Nobody yet Open To-do Unassigned No due date —');
    expect(tableRows(page.text, 'Done and cancelled tasks')).toEqual(['Old chore Done To-do Removed member No due date —']);
    const fromRun = rowHtml(page.text, 'Tasks', 'Write notes');
    expect(fromRun).toContain(`<a href="/dashboard/runs/${run.id}">Run #1 of Release, step 1</a>`);
    expect(plain.assignee_id).toBe(admin.userId);
  });

  it('saves the edit form: project.updated fires and the audit row is the dashboard\'s', async () => {
    const projectId = await newProject('Before');
    const browser = await browserFor(member.userId);
    const before = (await events('project.updated')).length;
    clock.advance(60_000);
    const res = await post(browser, projectId, '', { name: 'After', description: '', status: 'draft' });
    expect(res.status).toBe(303);
    expect(res.location).toBe(pageOf(projectId));
    expect(noticeOf((await browser.follow(res)).text)).toBe('Project "After" saved.');

    const updated = await events('project.updated');
    expect(updated).toHaveLength(before + 1);
    expect(updated.at(-1)!.data).toMatchObject({
      project_id: projectId,
      name: 'After',
      description: null,
      status: 'draft',
      previous: { name: 'Before', description: 'About it', status: 'active' },
    });
    const [audit] = await db()
      .selectFrom('audit_log')
      .selectAll()
      .where('org_id', '=', org.id)
      .where('action', '=', 'project.updated')
      .where('target_id', '=', projectId)
      .execute();
    expect(audit).toMatchObject({ actor_type: 'user', actor_id: member.userId, source: 'dashboard', target_label: 'After' });
    expect(JSON.parse(audit!.changes!)).toEqual({
      name: { old: 'Before', new: 'After' },
      description: { old: 'About it', new: null },
      status: { old: 'active', new: 'draft' },
    });

    const page = await browser.get(res.location!);
    expect(noticeOf(page.text)).toBe('');
    expect(page.text).toContain('<h1>After</h1>');

    // The same values again: nothing changes, no event.
    const again = await post(browser, projectId, '', { name: 'After', description: '', status: 'draft' });
    expect(again.status).toBe(303);
    expect(await events('project.updated')).toHaveLength(before + 1);
  });

  it('lists the API rules at the top and on the fields, and changes nothing', async () => {
    const projectId = await newProject('Strict');
    const browser = await browserFor(member.userId);
    const before = await snapshot(projectId);

    const res = await post(browser, projectId, '', { name: '', description: 'x'.repeat(1001), status: 'bogus' });
    expect(res.status).toBe(400);
    const alert = alertText(res.text);
    expect(alert).toContain('Enter a name.');
    expect(alert).toContain('Description must be at most 1000 characters.');
    expect(alert).toContain('Status must be one of: active, archived, draft');
    expect(res.text).toMatch(/id="name"[^>]*aria-invalid="true"/);
    expect(res.text).toMatch(/id="status"[^>]*aria-invalid="true"/);
    expect(res.text).toMatch(/<textarea id="description"[^>]*aria-invalid="true"/);
    // The typed values are shown again.
    expect(res.text).toMatch(/<textarea id="description"[^>]*>x{1001}<\/textarea>/);

    const long = await post(browser, projectId, '', { name: 'n'.repeat(256), status: 'active' });
    expect(long.status).toBe(400);
    expect(alertText(long.text)).toContain('Name must be at most 255 characters');
    expect(await snapshot(projectId)).toEqual(before);
  });

  it('archives with one button, which then disappears', async () => {
    const projectId = await newProject('Old news');
    const browser = await browserFor(member.userId);
    const page = await browser.get(pageOf(projectId));
    expect(page.text).toContain('Archive project');
    const res = await browser.post(`${pageOf(projectId)}/archive`);
    expect(res.status).toBe(303);
    expect(res.location).toBe(pageOf(projectId));
    const row = await db().selectFrom('projects').select('status').where('id', '=', projectId).executeTakeFirst();
    expect(row?.status).toBe('archived');
    expect((await events('project.updated')).at(-1)!.data).toMatchObject({ project_id: projectId, status: 'archived', previous: { status: 'active' } });
    const after = await browser.follow(res);
    expect(noticeOf(after.text)).toBe('Project "Old news" archived.');
    expect(after.text).not.toContain('Archive project');
    expect(textOf(after.text)).toContain('Status Archived');
    // Archived: "Unarchive project" instead, and no create form; the services refuse new work all the same.
    expect(after.text).toContain('>Unarchive project</button>');
    for (const name of ['Create workflow', 'Create task']) expect(after.text).not.toContain(`>${name}</button>`);
    const forged = await browser.post(`${pageOf(projectId)}/tasks`, { title: 'Late', assignee_id: '', due_date: '' });
    expect(forged.status).toBe(409);
    expect(alertText(forged.text)).toContain('This project is archived; unarchive it before adding workflows, tasks or runs.');
    expect(await db().selectFrom('tasks').select('id').where('project_id', '=', projectId).execute()).toEqual([]);
    const unarchived = await browser.post(`${pageOf(projectId)}/unarchive`);
    expect(noticeOf((await browser.follow(unarchived)).text)).toBe('Project "Old news" unarchived: it takes new workflows, tasks and runs again.');
    expect((await db().selectFrom('projects').select('status').where('id', '=', projectId).executeTakeFirst())?.status).toBe('active');
  });

  it('deletes only after the project name is typed: workflows, runs and tasks go with it', async () => {
    const projectId = await newProject('Doomed');
    const actor = cliActor(org.id);
    const wf = await services().workflows.create(actor, projectId, { name: 'Flow', steps: [{ type: 'task', title: 'Step task', assignee_id: member.userId }] });
    await services().tasks.create(actor, projectId, { title: 'Loose task' });
    await services().workflows.startRun(actor, wf.id);
    await drainRuns();
    const browser = await browserFor(admin.userId);

    const page = await browser.get(pageOf(projectId));
    expect(page.text).toContain(`href="/dashboard/projects/${projectId}/delete"`);
    const confirm = await browser.get(`${pageOf(projectId)}/delete`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toMatch(/<label for="confirm-name"[^>]*>Project name<\/label>/);
    expect(textOf(confirm.text)).toContain('Delete project');

    const before = await snapshot(projectId);
    expect(before.tasks).toHaveLength(2);
    const wrong = await browser.post(`${pageOf(projectId)}/delete`, { confirm_name: 'doomed' });
    expect(wrong.status).toBe(400);
    expect(alertText(wrong.text)).toContain("Project name does not match the project's name");
    expect(wrong.text).toMatch(/id="confirm-name"[^>]*aria-invalid="true"/);
    const empty = await browser.post(`${pageOf(projectId)}/delete`, {});
    expect(empty.status).toBe(400);
    expect(await snapshot(projectId)).toEqual(before);

    const res = await browser.post(`${pageOf(projectId)}/delete`, { confirm_name: 'Doomed' });
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/projects');
    expect(noticeOf((await browser.follow(res)).text)).toBe('Project "Doomed" deleted, with its workflows, runs and tasks.');
    const count = async (table: 'projects' | 'workflows' | 'tasks' | 'workflow_runs') =>
      (await db().selectFrom(table).select('id').where(table === 'projects' ? 'id' : 'project_id', '=', projectId).execute()).length;
    expect([await count('projects'), await count('workflows'), await count('tasks'), await count('workflow_runs')]).toEqual([0, 0, 0, 0]);
    expect((await events('project.deleted')).at(-1)!.data).toMatchObject({ project_id: projectId, name: 'Doomed' });
    expect((await browser.get(pageOf(projectId))).status).toBe(404);
  });

  it('shows a viewer no forms and refuses every post with 403, changing nothing', async () => {
    const projectId = await newProject('Read only');
    const task = await services().tasks.create(cliActor(org.id), projectId, { title: 'Look only', assignee_id: member.userId });
    const browser = await browserFor(viewer.userId);
    const page = await browser.get(pageOf(projectId));
    expect(page.status).toBe(200);
    for (const control of ['Save project', 'Archive project', 'Delete project', 'Create workflow', 'Create task', '>Assign<', 'Mark done', 'Workflow name', 'Task title']) {
      expect(page.text, control).not.toContain(control);
    }
    const before = await snapshot(projectId);
    const attempts: [string, FormFields][] = [
      ['', { name: 'Mine', status: 'active' }],
      ['/archive', {}],
      ['/delete', { confirm_name: 'Read only' }],
      ['/workflows', { name: 'Sneaky flow' }],
      ['/tasks', { title: 'Sneaky task' }],
      [`/tasks/${task.id}/assign`, { assignee_id: viewer.userId }],
    ];
    for (const [path, fields] of attempts) {
      const res = await browser.post(`${pageOf(projectId)}${path}`, fields);
      expect(res.status, path).toBe(403);
    }
    expect((await browser.get(`${pageOf(projectId)}/delete`)).status).toBe(403);
    expect(await snapshot(projectId)).toEqual(before);
  });

  it('lets a member do everything but delete', async () => {
    const projectId = await newProject('Members only');
    const browser = await browserFor(member.userId);
    const page = await browser.get(pageOf(projectId));
    expect(page.text).not.toContain('Delete project');
    expect(page.text).toContain('Save project');
    expect((await browser.get(`${pageOf(projectId)}/delete`)).status).toBe(403);
    const res = await browser.post(`${pageOf(projectId)}/delete`, { confirm_name: 'Members only' });
    expect(res.status).toBe(403);
    expect(await db().selectFrom('projects').select('id').where('id', '=', projectId).execute()).toHaveLength(1);
  });

  it('creates a workflow and goes to its page; a bad name is shown with nothing created', async () => {
    const projectId = await newProject('With flows');
    const browser = await browserFor(member.userId);
    const before = await snapshot(projectId);
    const bad = await post(browser, projectId, '/workflows', { name: '', description: '' });
    expect(bad.status).toBe(400);
    expect(alertText(bad.text)).toContain('Workflow name must be 1 to 255 characters');
    expect(bad.text).toMatch(/id="workflow-name"[^>]*aria-invalid="true"/);
    expect(await snapshot(projectId)).toEqual(before);

    const res = await post(browser, projectId, '/workflows', { name: 'Onboarding', description: 'New hires' });
    expect(res.status).toBe(303);
    const [wf] = await db().selectFrom('workflows').selectAll().where('project_id', '=', projectId).execute();
    expect(wf).toMatchObject({ name: 'Onboarding', description: 'New hires', version: 1 });
    expect(res.location).toBe(`/dashboard/projects/${projectId}/workflows/${wf!.id}`);
    const audit = await db().selectFrom('audit_log').select(['actor_id', 'source']).where('action', '=', 'workflow.created').where('target_id', '=', wf!.id).execute();
    expect(audit).toEqual([{ actor_id: member.userId, source: 'dashboard' }]);
  });

  it('creates a task with an assignee: task.assigned with assigned_by the signed-in user', async () => {
    const projectId = await newProject('With tasks');
    const browser = await browserFor(member.userId);
    const page = await browser.get(pageOf(projectId));
    // Every member is offered, invited ones included.
    const invited = await services().users.invite(cliActor(org.id), { email: 'invitee@example.com', role: 'member' });
    const again = await browser.get(pageOf(projectId));
    expect(again.text).toContain(`<option value="${invited.id}">invitee@example.com (invited)</option>`);
    expect(page.text).toMatch(/<select id="task-assignee" name="assignee_id"[^>]*><option value(?:="")? selected>Unassigned<\/option>/);

    const before = (await events('task.assigned')).length;
    const res = await browser.post(`${pageOf(projectId)}/tasks`, { title: 'Order pizza', assignee_id: admin.userId, due_date: '2026-04-01' });
    expect(res.status).toBe(303);
    expect(res.location).toBe(pageOf(projectId));
    expect(noticeOf((await browser.follow(res)).text)).toBe('Task "Order pizza" created.');
    const [task] = await db().selectFrom('tasks').selectAll().where('project_id', '=', projectId).execute();
    expect(task).toMatchObject({ title: 'Order pizza', assignee_id: admin.userId, status: 'open', kind: 'todo', due_at: Date.UTC(2026, 3, 1, 23, 59, 59, 999) });
    const assigned = await events('task.assigned');
    expect(assigned).toHaveLength(before + 1);
    expect(assigned.at(-1)!.data).toEqual({
      task_id: task!.id,
      project_id: projectId,
      title: 'Order pizza',
      assignee_id: admin.userId,
      previous_assignee_id: null,
      assigned_by: member.userId,
      workflow_id: null,
      run_id: null,
      due_at: '2026-04-01T23:59:59.999Z',
    });
    const shown = await browser.get(res.location!);
    expect(tableRows(shown.text, 'Tasks')[0]).toMatch(/^Order pizza Open To-do admin \d+ 1 Apr 2026 .*—/);

    // Without an assignee: no event.
    const plain = await browser.post(`${pageOf(projectId)}/tasks`, { title: 'Later', assignee_id: '', due_date: '' });
    expect(plain.status).toBe(303);
    expect(await events('task.assigned')).toHaveLength(before + 1);

    const snap = await snapshot(projectId);
    const bad = await post(browser, projectId, '/tasks', { title: '', assignee_id: 'user_nobody', due_date: '2026-02-30' });
    expect(bad.status).toBe(400);
    const alert = alertText(bad.text);
    expect(alert).toContain('Task title must be 1 to 255 characters');
    expect(alert).toContain('Due date must be a date such as 2026-12-31');
    expect(bad.text).toMatch(/id="task-title"[^>]*aria-invalid="true"/);
    expect(bad.text).toMatch(/id="task-due"[^>]*aria-invalid="true"/);
    const stranger = await post(browser, projectId, '/tasks', { title: 'Fine', assignee_id: other.ownerId, due_date: '' });
    expect(stranger.status).toBe(400);
    expect(alertText(stranger.text)).toContain('Assignee must be a member of this organisation');
    expect(stranger.text).toMatch(/<select id="task-assignee"[^>]*aria-invalid="true"/);
    expect(await snapshot(projectId)).toEqual(snap);
  });

  it('assigns from the row: a new assignee fires task.assigned, the same one or clearing does not', async () => {
    const projectId = await newProject('Assigning');
    const otherProject = await newProject('Not this one');
    const task = await services().tasks.create(cliActor(org.id), projectId, { title: 'Pass it on' });
    const browser = await browserFor(member.userId);
    const page = await browser.get(pageOf(projectId));
    const row = rowHtml(page.text, 'Tasks', 'Pass it on');
    expect(row).toMatch(new RegExp(`<label for="assignee-${task.id}" class="visually-hidden">Assignee</label>`));
    expect(row).toMatch(/<button type="submit" class="button secondary">Assign<\/button>/);
    // A member who is neither the assignee nor an admin gets no "Mark done" (the service would refuse it).
    expect(row).not.toContain('Mark done');

    const assignPath = `/tasks/${task.id}/assign`;
    const before = (await events('task.assigned')).length;
    const res = await post(browser, projectId, assignPath, { assignee_id: member.userId });
    expect(res.status).toBe(303);
    expect(res.location).toBe(pageOf(projectId));
    expect((await services().tasks.get(cliActor(org.id), task.id)).assignee_id).toBe(member.userId);
    const assigned = await events('task.assigned');
    expect(assigned).toHaveLength(before + 1);
    expect(assigned.at(-1)!.data).toMatchObject({ task_id: task.id, assignee_id: member.userId, previous_assignee_id: null, assigned_by: member.userId });

    // Now the assignee: "Mark done" appears in the row, returning here.
    const mine = await browser.follow(res);
    expect(noticeOf(mine.text)).toBe('Task "Pass it on" assigned to member 3.'.replace('member 3', (await services().users.names(org.id, [member.userId])).get(member.userId)!));
    const myRow = rowHtml(mine.text, 'Tasks', 'Pass it on');
    expect(myRow).toContain(`action="/dashboard/tasks/${task.id}/done"`);
    expect(myRow).toContain(`name="back" value="/dashboard/projects/${projectId}"`);
    expect(myRow).toMatch(new RegExp(`<option value="${member.userId}" selected>`));

    // Text in the address is never a notice.
    expect(textOf((await browser.get(`${pageOf(projectId)}?done=%3Cb%3Ehi`)).text)).not.toContain('<b>hi');

    const same = await post(browser, projectId, assignPath, { assignee_id: member.userId });
    expect(same.status).toBe(303);
    expect(await events('task.assigned')).toHaveLength(before + 1);

    const reassigned = await post(browser, projectId, assignPath, { assignee_id: admin.userId });
    expect(reassigned.status).toBe(303);
    expect((await events('task.assigned')).at(-1)!.data).toMatchObject({ assignee_id: admin.userId, previous_assignee_id: member.userId });

    const cleared = await post(browser, projectId, assignPath, { assignee_id: '' });
    expect(cleared.status).toBe(303);
    expect((await services().tasks.get(cliActor(org.id), task.id)).assignee_id).toBeNull();
    expect(await events('task.assigned')).toHaveLength(before + 2);

    const stranger = await post(browser, projectId, assignPath, { assignee_id: other.ownerId });
    expect(stranger.status).toBe(400);
    expect(alertText(stranger.text)).toContain('Assignee must be a member of this organisation');
    expect(stranger.text).toMatch(new RegExp(`id="assignee-${task.id}"[^>]*aria-invalid="true"`));

    // Through another project's path the task is not found; a finished task cannot be assigned.
    expect((await post(browser, otherProject, assignPath, { assignee_id: member.userId })).status).toBe(404);
    await services().tasks.resolve(cliActor(org.id), task.id, { action: 'cancel' });
    const finished = await post(browser, projectId, assignPath, { assignee_id: member.userId });
    expect(finished.status).toBe(409);
    expect(alertText(finished.text)).toContain('This task is cancelled; only open tasks can be assigned.');
    expect(rowHtml(finished.text, 'Done and cancelled tasks', 'Pass it on')).not.toContain('Assign<');
  });

  it('answers 404 for another organisation\'s project, an unknown id and a malformed one', async () => {
    const foreign = await newProject('Theirs', other);
    const browser = await browserFor(admin.userId);
    for (const path of [pageOf(foreign), pageOf('proj_doesnotexist'), '/dashboard/projects/bad%20id', `${pageOf(foreign)}/delete`]) {
      const res = await browser.get(path);
      expect(res.status, path).toBe(404);
      expect(res.text, path).not.toContain('Theirs');
    }
    await browser.get('/dashboard/projects');
    const before = await snapshot(foreign);
    const attempts: [string, FormFields][] = [
      ['', { name: 'Taken', status: 'archived' }],
      ['/archive', {}],
      ['/workflows', { name: 'Taken' }],
      ['/tasks', { title: 'Taken' }],
    ];
    for (const [path, fields] of attempts) {
      const res = await browser.post(`${pageOf(foreign)}${path}`, fields);
      expect(res.status, path).toBe(404);
    }
    expect((await browser.post(`${pageOf(foreign)}/delete`, { confirm_name: 'Theirs' })).status).toBe(404);
    expect(await snapshot(foreign)).toEqual(before);
  });

  it('refuses a post without the CSRF token, changing nothing', async () => {
    const projectId = await newProject('Guarded');
    const browser = await browserFor(admin.userId);
    await browser.get(pageOf(projectId));
    const before = await snapshot(projectId);
    for (const [path, fields] of [
      ['', { name: 'Forged', status: 'active' }],
      ['/archive', {}],
      ['/tasks', { title: 'Forged' }],
      ['/workflows', { name: 'Forged' }],
      ['/delete', { confirm_name: 'Guarded' }],
    ] as [string, FormFields][]) {
      const res = await browser.post(`${pageOf(projectId)}${path}`, fields, { csrf: null });
      expect(res.status, path).toBe(403);
    }
    expect(await snapshot(projectId)).toEqual(before);
  });
});
