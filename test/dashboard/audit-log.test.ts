import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toIso } from '../../src/lib/time.js';
import { cliActor } from '../../src/services/access/actor.js';
import { CSV_COLUMNS, type AuditEntryView, type AuditListFilter } from '../../src/services/audit/audit-service.js';
import { DashboardClient, textOf, type PageResponse } from '../helpers/dashboard.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const PAGE = '/dashboard/audit-log';
const EXPORT = '/dashboard/audit-log/export';
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** One row of the "Audit log" table, each cell as its text. */
interface Row {
  time: string;
  actor: string;
  action: string;
  target: string;
  source: string;
  ip: string;
  outcome: string;
  changes: string;
  request: string;
}

const SOURCES: Record<string, string> = { 'via the API': 'api', 'via the dashboard': 'dashboard', 'from the command line': 'cli', 'by the service': 'system' };

const COLUMNS = ['time', 'actor', 'action', 'target', 'changes', 'request'] as const;

function rowsOf(html: string): Row[] {
  const caption = html.search(/<caption[^>]*>Audit log<\/caption>/);
  if (caption < 0) throw new Error('no "Audit log" table on the page');
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html.slice(caption))![1]!;
  const rows: Row[] = [];
  for (const [, tr] of body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)) {
    const cells = [...tr!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => textOf(m[1]!));
    if (cells.length !== COLUMNS.length) continue; // the "no entries" row
    const row = Object.fromEntries(COLUMNS.map((c, i) => [c, cells[i]])) as unknown as Row;
    // The action in words, then, for a person, where it came from ("Project created via the API"); its code,
    // the source, the IP and the outcome open under "More".
    const source = /\bSource (\w+)/.exec(row.request)![1]!;
    const words = / (via the API|via the dashboard|from the command line|by the service)(?: · Failure)?$/.exec(row.action)?.[1];
    if (words !== undefined) expect(SOURCES[words]).toBe(source);
    else expect(['cli', 'system']).toContain(source);
    row.action = /\bAction code (\S+)/.exec(row.request)![1]!;
    row.source = source;
    row.ip = /\bIP (\S+)/.exec(row.request)?.[1] ?? '';
    row.outcome = /\bOutcome (\w+)/.exec(row.request)?.[1] ?? '';
    rows.push(row);
  }
  return rows;
}

/** The href of a link by its text, with the HTML escaping of `&` undone. */
function linkHref(html: string, text: string): string | null {
  const match = new RegExp(`<a href="([^"]+)"[^>]*>${text}</a>`).exec(html);
  return match ? match[1]!.replace(/&amp;/g, '&') : null;
}

/** A datetime-local value (minutes, no zone) for an instant; the page reads it as UTC. */
const localValue = (ms: number) => toIso(ms).slice(0, 16);

describe.each(testDialects())('dashboard audit log (%s)', (dialect) => {
  let env: TestEnv;
  const clock = new ManualClock();
  const tick = (ms = 1000) => clock.advance(ms);

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock });
  });
  afterAll(async () => env?.close());

  const db = () => env.container.database.db;

  async function emailOf(org: TestOrg, userId: string): Promise<string> {
    const user = await env.container.store.repos.users.findById(org.id, userId);
    return user!.email;
  }

  async function signedIn(org: TestOrg, role: 'owner' | 'admin' | 'member' | 'viewer') {
    const browser = new DashboardClient(env);
    const userId = role === 'owner' ? org.ownerId : (await org.member(role)).userId;
    await browser.signInAs(org.id, userId);
    return { browser, userId };
  }

  async function createProject(org: TestOrg, name: string, key = org.ownerKey, headers?: Record<string, string>): Promise<string> {
    const res = await env.request('POST', '/v1/projects', { key, body: { name }, headers });
    expect(res.status).toBe(201);
    tick();
    return res.body.id as string;
  }

  /** Every entry the service lists for this filter, newest first: what the page and the files must show. */
  async function serviceEntries(orgId: string, filter: AuditListFilter = {}): Promise<AuditEntryView[]> {
    const all: AuditEntryView[] = [];
    let cursor: string | undefined;
    do {
      const page = await env.container.services.audit.list(cliActor(orgId), filter, { limit: 100, cursor });
      all.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    return all;
  }

  const exportedRows = (orgId: string) =>
    db().selectFrom('audit_log').selectAll().where('org_id', '=', orgId).where('action', '=', 'audit_log.exported').orderBy('seq').execute();

  function expectFilterError(res: PageResponse, message: string, field: string) {
    expect(res.status).toBe(400);
    expect(res.text).toContain('role="alert"');
    expect(textOf(res.text)).toContain(message);
    expect(res.text).toMatch(new RegExp(`id="${field}"[^>]*aria-invalid="true"`));
    expect(res.text).not.toMatch(/<caption[^>]*>Audit log<\/caption>/);
  }

  it('shows owners and admins the rows of API and dashboard changes, with actor, source and request', async () => {
    const org = await env.createOrg();
    const ownerEmail = await emailOf(org, org.ownerId);
    await createProject(org, 'Via API', org.ownerKey, { 'user-agent': 'Api-Client/2', 'x-request-id': 'req-from-api-1' });

    const owner = await signedIn(org, 'owner');
    await owner.browser.get('/dashboard/projects');
    const created = await owner.browser.post('/dashboard/projects', { name: 'Via dashboard', description: 'Q4', status: 'draft' }, { headers: { 'user-agent': 'Browser/1' } });
    expect(created.status).toBe(303);
    tick();

    const admin = await signedIn(org, 'admin');
    for (const { browser } of [owner, admin]) {
      const page = await browser.get(PAGE);
      expect(page.status).toBe(200);
      expect(page.text).toMatch(/<caption[^>]*>Audit log<\/caption>/);
      expect(page.text).toMatch(/<a href="\/dashboard\/audit-log" aria-current="page">Audit log<\/a>/);
      expect(page.text).toMatch(/<form[^>]*role="search"/);
      for (const label of ['Action', 'Actor', 'Target', 'From', 'To']) expect(page.text).toContain(`>${label}</label>`);
      // Filters in words (DASHBOARD 8): actions and people chosen by name, days picked.
      expect(page.text).toMatch(/<select id="action" name="action">/);
      expect(page.text).toContain('<option value="project.">All project actions</option>');
      expect(page.text).toContain('<option value="member.removed">Member removed</option>');
      expect(page.text).toMatch(/<select id="actor" name="actor">[^]*<option value="system">The service<\/option>/);
      expect(page.text).toMatch(/<input id="from" name="from" type="date"/);
      expect(textOf(page.text)).toContain('UTC');

      const rows = rowsOf(page.text);
      // Newest first, exactly as the service lists them.
      expect(rows.map((r) => r.action)).toEqual((await serviceEntries(org.id)).map((e) => e.action));

      const viaApi = rows.find((r) => r.action === 'project.created' && r.target.startsWith('Via API'))!;
      expect(viaApi.source).toBe('api');
      // People by name, keys by name: no ids, no e-mails (DASHBOARD 1).
      expect(viaApi.actor).toMatch(/^Olive Owner with the API key “.+”$/);
      expect(viaApi.actor).not.toContain(ownerEmail);
      expect(viaApi.target).toBe('Via API Project');
      expect(viaApi.ip).toBe('127.0.0.1');
      expect(viaApi.outcome).toBe('Success');
      expect(viaApi.changes).toBe('Name: Via API Status: active Visibility: organization');
      expect(viaApi.request).toContain('Api-Client/2');
      expect(viaApi.request).toContain('req-from-api-1');
      expect(viaApi.time).toMatch(/^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC$/);

      const viaDashboard = rows.find((r) => r.action === 'project.created' && r.target.startsWith('Via dashboard'))!;
      expect(viaDashboard.source).toBe('dashboard');
      expect(viaDashboard.actor).toBe('Olive Owner');
      expect(viaDashboard.changes).toBe('Name: Via dashboard Description: Q4 Status: draft Visibility: organization');
      expect(viaDashboard.request).toContain('Browser/1');
      expect(rows.indexOf(viaDashboard)).toBeLessThan(rows.indexOf(viaApi));

      expect(page.text).toContain('>Download CSV</button>');
      expect(page.text).toContain('>Download JSON Lines</button>');
    }
  });

  it('refuses members and viewers the page and the export with the 403 page, and hides the link', async () => {
    const org = await env.createOrg();
    await createProject(org, 'Secret plans');
    const owner = await signedIn(org, 'owner');
    expect((await owner.browser.get('/dashboard/projects')).text).toContain('href="/dashboard/audit-log"');

    for (const role of ['member', 'viewer'] as const) {
      const { browser } = await signedIn(org, role);
      const projects = await browser.get('/dashboard/projects');
      expect(projects.status).toBe(200);
      expect(projects.text).not.toContain('href="/dashboard/audit-log"');
      expect(projects.text).not.toContain('>Audit log<');

      for (const url of [PAGE, `${PAGE}?action=project.`, `${PAGE}?from=garbage`]) {
        const page = await browser.get(url);
        expect(page.status).toBe(403);
        expect(page.headers['content-type']).toMatch(/^text\/html/);
        expect(textOf(page.text)).toContain('You cannot do that');
        expect(page.text).not.toContain('Secret plans');
      }

      const forms: Record<string, string>[] = [{ format: 'csv' }, { format: 'jsonl', action: 'project.' }, { format: 'csv', from: 'garbage' }];
      for (const fields of forms) {
        const res = await browser.post(EXPORT, fields);
        expect(res.status).toBe(403);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.headers['content-disposition']).toBeUndefined();
        expect(res.text).not.toContain('Secret plans');
      }
    }
    expect(await exportedRows(org.id)).toEqual([]);
  });

  it('narrows the rows by action, actor and time, and lists bad filters with status 400', async () => {
    const org = await env.createOrg();
    const admin = await org.member('admin');
    const adminEmail = await emailOf(org, admin.userId);
    const t0 = clock.now();
    await createProject(org, 'Early');
    clock.advance(DAY_MS);
    const t1 = clock.now();
    const late = await createProject(org, 'Late', admin.key);
    expect((await env.request('PUT', `/v1/projects/${late}`, { key: org.ownerKey, body: { description: 'changed' } })).status).toBe(200);
    tick();
    const { browser } = await signedIn(org, 'owner');

    const all = rowsOf((await browser.get(PAGE)).text);
    const rowsFor = async (query: Record<string, string>) => {
      const page = await browser.get(`${PAGE}?${new URLSearchParams(query)}`);
      expect(page.status).toBe(200);
      return rowsOf(page.text);
    };
    const summary = (rows: Row[]) => rows.map((r) => `${r.action} ${r.target.split(' ')[0]}`);

    const projectRows = await rowsFor({ action: 'project.' });
    expect(summary(projectRows)).toEqual(['project.updated Late', 'project.created Late', 'project.created Early']);
    expect(all.length).toBeGreaterThan(projectRows.length);
    expect(all.some((r) => !r.action.startsWith('project.'))).toBe(true);

    expect(summary(await rowsFor({ action: 'project.updated' }))).toEqual(['project.updated Late']);
    // A prefix without its dot is a prefix too (CONTRACT 13).
    expect(summary(await rowsFor({ action: 'project' }))).toEqual(summary(projectRows));
    const none = await browser.get(`${PAGE}?action=projects`);
    expect(rowsOf(none.text)).toEqual([]);
    expect(textOf(none.text)).toContain('No entries match these filters.');

    const byAdmin = await rowsFor({ actor: adminEmail.split('@')[0]!.toUpperCase() });
    expect(summary(byAdmin)).toEqual(['project.created Late']);
    expect(byAdmin[0]!.actor).toMatch(/^admin \d+ with the API key “wsk_[^”]+…”$/);
    expect(summary(await rowsFor({ target: late }))).toEqual(['project.updated Late', 'project.created Late']);

    const middle = localValue(t0 + HOUR_MS);
    expect(summary(await rowsFor({ action: 'project.', from: middle }))).toEqual(['project.updated Late', 'project.created Late']);
    expect(summary(await rowsFor({ action: 'project.', to: middle }))).toEqual(['project.created Early']);
    // Inclusive from, exclusive to, with seconds as a browser sends them when the step allows.
    expect(summary(await rowsFor({ action: 'project.created', from: toIso(t1).slice(0, 19), to: toIso(t1 + 1000).slice(0, 19) }))).toEqual(['project.created Late']);

    // The filters stay in the form, and the downloads carry them.
    const filtered = await browser.get(`${PAGE}?${new URLSearchParams({ action: 'project.', from: middle })}`);
    expect(filtered.text).toContain('<option value="project." selected>All project actions</option>');
    // A code the list does not hold, typed into the address, is applied and shown as typed.
    expect((await browser.get(`${PAGE}?action=projects`)).text).toContain('<option value="projects" selected>Starting with “projects”</option>');
    expect(filtered.text).toMatch(new RegExp(`id="from"[^>]*value="${middle}"`));
    for (const format of ['csv', 'jsonl']) {
      expect(filtered.text).toContain(
        `<input type="hidden" name="format" value="${format}"/><input type="hidden" name="action" value="project."/><input type="hidden" name="from" value="${middle}"/>`,
      );
    }

    const backwards = await browser.get(`${PAGE}?${new URLSearchParams({ from: localValue(t1), to: localValue(t0) })}`);
    expectFilterError(backwards, 'To must be later than from', 'to');
    expect(backwards.text).toMatch(/id="from"[^>]*value="/);
    expectFilterError(await browser.get(`${PAGE}?from=yesterday`), 'From must be a date, or a date and time', 'from');
    expectFilterError(await browser.get(`${PAGE}?to=2026-02-30T10:00`), 'To must be a date, or a date and time', 'to');
    expectFilterError(await browser.get(`${PAGE}?actor=${'a'.repeat(201)}`), 'Actor must be at most 200 characters', 'actor');
    const staleCursor = await browser.get(`${PAGE}?cursor=bogus`);
    expect(staleCursor.status).toBe(400);
    expect(textOf(staleCursor.text)).toContain('This page link is no longer valid');
  });

  it('visits every row through the "Older" links, keeping the filters', async () => {
    const org = await env.createOrg();
    const names = Array.from({ length: 55 }, (_, i) => `Bulk ${String(i + 1).padStart(2, '0')}`);
    for (const name of names) await createProject(org, name);
    const { browser } = await signedIn(org, 'owner');

    const walk = async (start: string) => {
      const pages: Row[][] = [];
      let url: string | null = start;
      let first: PageResponse | null = null;
      while (url) {
        const page = await browser.get(url);
        expect(page.status).toBe(200);
        first ??= page;
        if (pages.length > 0) expect(linkHref(page.text, 'Newer')).toBe(start);
        pages.push(rowsOf(page.text));
        url = linkHref(page.text, 'Older');
        expect(pages.length).toBeLessThan(10);
      }
      expect(linkHref(first!.text, 'Newer')).toBeNull();
      return pages;
    };

    const filtered = await walk(`${PAGE}?action=project.created`);
    expect(filtered.map((p) => p.length)).toEqual([50, 5]);
    expect(filtered.flat().map((r) => r.target.replace(/ Project$/, ''))).toEqual([...names].reverse());

    const everything = (await walk(PAGE)).flat();
    expect(everything.map((r) => r.action)).toEqual((await serviceEntries(org.id)).map((e) => e.action));
    expect(everything.length).toBeGreaterThan(55);
  });

  it('downloads exactly the filtered rows as CSV and as JSON Lines, each download audited', async () => {
    const org = await env.createOrg();
    const ownerEmail = await emailOf(org, org.ownerId);
    const formula = await createProject(org, '=cmd()');
    const plain = await createProject(org, 'Plain');
    expect((await env.request('PUT', `/v1/projects/${plain}`, { key: org.ownerKey, body: { description: 'changed' } })).status).toBe(200);
    tick();
    const { browser } = await signedIn(org, 'owner');
    await browser.get(`${PAGE}?action=project.created`);

    const csv = await browser.post(EXPORT, { format: 'csv', action: 'project.created' }, { headers: { 'user-agent': 'Browser/1' } });
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="audit-log-\d{4}-\d{2}-\d{2}T\d{6}Z\.csv"$/);
    expect(csv.headers['cache-control']).toBe('no-store');
    const lines = csv.text.split('\r\n');
    expect(lines.pop()).toBe('');
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    // Every cell before `changes` (the last column) is free of commas and quotes here, so a split reads them.
    const records = lines.slice(1).map((line) => line.split(',').slice(0, CSV_COLUMNS.length - 1));
    const column = (name: (typeof CSV_COLUMNS)[number]) => records.map((r) => r[CSV_COLUMNS.indexOf(name)]);
    expect(column('action')).toEqual(['project.created', 'project.created']);
    expect(column('target_id')).toEqual([plain, formula]);
    expect(column('target_label')).toEqual(['Plain', "'=cmd()"]);
    expect(column('source')).toEqual(['api', 'api']);

    const [exported] = await exportedRows(org.id);
    expect(exported).toMatchObject({ actor_id: org.ownerId, actor_label: ownerEmail, source: 'dashboard', user_agent: 'Browser/1', target_id: null });
    expect(exported!.session_id).toMatch(/^sess_/);
    expect(JSON.parse(exported!.changes!)).toEqual({ format: { old: null, new: 'csv' }, filter: { old: null, new: { action: 'project.created' } } });

    const filter = { action: 'project.', actor: ownerEmail.slice(0, 6) };
    const expected = await serviceEntries(org.id, filter);
    expect(expected.map((e) => e.action)).toEqual(['project.updated', 'project.created', 'project.created']);
    const jsonl = await browser.post(EXPORT, { format: 'jsonl', ...filter });
    expect(jsonl.status).toBe(200);
    expect(jsonl.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(jsonl.headers['content-disposition']).toMatch(/^attachment; filename="audit-log-\d{4}-\d{2}-\d{2}T\d{6}Z\.jsonl"$/);
    expect(jsonl.headers['cache-control']).toBe('no-store');
    expect(jsonl.text.endsWith('\n')).toBe(true);
    const objects = jsonl.text.trimEnd().split('\n').map((line) => JSON.parse(line) as AuditEntryView);
    expect(objects).toEqual(expected);
    expect(await exportedRows(org.id)).toHaveLength(2);
  });

  it('refuses an export without the CSRF token or with a bad filter, and writes no audit row', async () => {
    const org = await env.createOrg();
    await createProject(org, 'Quiet');
    const { browser } = await signedIn(org, 'owner');
    await browser.get(PAGE);

    const forged = await browser.post(EXPORT, { format: 'csv' }, { csrf: null });
    expect(forged.status).toBe(403);
    expect(forged.headers['content-disposition']).toBeUndefined();
    const wrongToken = await browser.post(EXPORT, { format: 'csv' }, { csrf: 'x'.repeat(43) });
    expect(wrongToken.status).toBe(403);

    const backwards = await browser.post(EXPORT, { format: 'csv', from: '2026-12-01T00:00', to: '2026-11-01T00:00' });
    expectFilterError(backwards, 'To must be later than from', 'to');
    expect(backwards.headers['content-disposition']).toBeUndefined();
    expectFilterError(await browser.post(EXPORT, { format: 'jsonl', from: 'soon' }), 'From must be a date, or a date and time', 'from');
    const badFormat = await browser.post(EXPORT, { format: 'xml' });
    expect(badFormat.status).toBe(400);
    expect(textOf(badFormat.text)).toContain('format must be one of: csv, jsonl');

    expect(await exportedRows(org.id)).toEqual([]);
  });

  it('shows names and changed values as text, never as HTML', async () => {
    const org = await env.createOrg();
    await createProject(org, '<script>alert(1)</script>');
    const { browser } = await signedIn(org, 'owner');
    const page = await browser.get(PAGE);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<script>alert(1)');
    expect(page.text).toContain('&lt;script>alert(1)&lt;/script>');
    const row = rowsOf(page.text).find((r) => r.action === 'project.created')!;
    expect(row.target).toBe('<script>alert(1)</script> Project');
    expect(row.changes).toBe('Name: <script>alert(1)</script> Status: active Visibility: organization');
  });

  it('keeps the names a row was written with after a rename or a deletion, and shows times in the page format', async () => {
    const org = await env.createOrg();
    const member = await org.member('member');
    const { services, store } = env.container;
    const actor = cliActor(org.id);
    const project = await services.projects.create(actor, { name: 'Apollo' });
    const workflow = await services.workflows.create(actor, project.id, { name: 'Shipment', steps: [{ type: 'task', title: 'Pack', assignee_id: member.userId }] });
    await services.workflows.startRun(actor, workflow.id);
    for (const key of await services.runs.claimDue('audit-test', 30_000, 10)) await services.runs.advance('audit-test', key);
    const due = Date.UTC(2031, 0, 2, 23, 59, 59, 999);
    const task = await services.tasks.create(actor, project.id, { title: 'Book venue', due_at: due });
    await services.tasks.assign(actor, task.id, member.userId);
    const before = (await store.repos.users.findById(org.id, member.userId))!;
    // Renamed afterwards, and the run's workflow deleted: the rows keep what they said.
    await store.repos.users.update(org.id, member.userId, { name: 'Someone Else' });
    const runTask = (await services.tasks.listForProject(actor, project.id)).find((t) => t.run_id !== null)!;
    await services.runs.cancel(actor, runTask.run_id!);
    await services.workflows.remove(actor, workflow.id);

    const entries = await serviceEntries(org.id);
    const assigned = entries.find((e) => e.action === 'task.assigned' && e.target?.id === task.id)!;
    expect(assigned.changes!.assignee_id).toEqual({ old: null, new: member.userId, new_label: before.name });
    const fromRun = entries.find((e) => e.action === 'task.created' && e.target?.id === runTask.id)!;
    expect(fromRun.changes!.run_id).toMatchObject({ new: runTask.run_id, new_label: 'Run #1 of Shipment' });

    const { browser } = await signedIn(org, 'owner');
    const rows = rowsOf((await browser.get(PAGE)).text);
    const shown = rows.find((r) => r.action === 'task.assigned' && r.target.startsWith('Book venue'))!;
    expect(shown.changes).toBe(`Assignee: ${before.name}`);
    expect(rows.find((r) => r.action === 'task.created' && r.target.startsWith('Pack'))!.changes).toContain('Run: Run #1 of Shipment');
    const created = rows.find((r) => r.action === 'task.created' && r.target.startsWith('Book venue'))!;
    expect(created.changes).toBe('Title: Book venue Due: 2 Jan 2031, 23:59 UTC');
    for (const row of rows) {
      expect(row.changes).not.toMatch(/\d{4}-\d{2}-\d{2}T/);
      expect(row.changes).not.toContain(member.userId);
    }
  });
});
