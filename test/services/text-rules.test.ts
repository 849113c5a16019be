import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileValidator, toDetails } from '../../src/http/validation.js';
import { invalidTextPaths, isStorableText, TEXT_RULE_MESSAGE } from '../../src/lib/text.js';
import { cliActor } from '../../src/services/access/actor.js';
import { DashboardClient, textOf, type FormFields, type PageResponse } from '../helpers/dashboard.js';
import { latestInvitationToken, outboxMessages } from '../helpers/mail-outbox.js';
import { createTestEnv, testDialects, type ApiResponse, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/** What the text rule refuses (CONTRACT 1), as JSON escapes put them on the wire. */
const BAD = [
  ['U+0000', '\u0000'],
  ['a lone high surrogate', '\ud800'],
  ['a lone low surrogate', '\udc00'],
] as const;

/** Text every database must store and give back exactly: accents, CJK, a surrogate pair, a ZWJ sequence. */
const UNICODE = 'naïve 日本 🎉';
const MORE_UNICODE = 'Zoë 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 👩‍👩‍👧 \u0001 \uffff end';

describe('the text rule', () => {
  it.each([
    ['', true],
    ['plain ASCII', true],
    [UNICODE, true],
    [MORE_UNICODE, true],
    ['\ud83c\udf89', true], // a pair alone
    ['x\ud83c\udf89', true], // a pair at the end
    ['\ud83c\udf89x', true], // a pair at the start
    ['\u0001\u001f\u007f\ufeff\ufffd', true], // other controls and specials are text
    ['\u0000', false],
    ['abc\u0000', false],
    ['\u0000abc', false],
    ['\ud800', false],
    ['\udc00', false],
    ['x\ud83c', false], // a high surrogate at the very end
    ['\udf89x', false], // a low surrogate at the very start
    ['\udf89\ud83c', false], // a pair the wrong way round
    ['\ud83c\ud83c\udf89', false], // high, then a full pair
    ['\ud83c\udf89\udf89', false], // a full pair, then a low one
    ['\ud83cx\udf89', false], // halves split apart
    [`${'a'.repeat(100_000)}\u0000`, false],
    [`${'日'.repeat(100_000)}\udfff`, false],
  ])('isStorableText(%j) is %s', (text, expected) => {
    expect(isStorableText(text)).toBe(expected);
  });

  it('names every offending string of a parsed value, nested, in arrays and in keys, in document order', () => {
    const value = {
      fine: 'ok 🎉',
      name: 'a\u0000b',
      steps: [{ title: 'one' }, { title: 'two\ud800' }, { title: 'three', notes: ['x', '\udc00'] }],
      'key\u0000': 'value',
      n: 1,
      b: true,
      z: null,
    };
    expect(invalidTextPaths(value)).toEqual([['name'], ['steps', 1, 'title'], ['steps', 2, 'notes', 1], ['key\u0000']]);
    expect(invalidTextPaths(['ok', ['\u0000']])).toEqual([[1, 0]]);
    expect(invalidTextPaths('\ud800')).toEqual([[]]);
    for (const clean of [{ a: 'b', c: [UNICODE, { d: MORE_UNICODE }] }, 'text', 42, null, undefined, true, [], {}]) {
      expect(invalidTextPaths(clean)).toEqual([]);
    }
  });

  it('walks a value nested far deeper than the call stack reaches, naming the full path', () => {
    let deep: unknown = 'bottom\u0000';
    for (let i = 0; i < 200_000; i++) deep = i % 2 === 0 ? [deep] : { k: deep };
    const paths = invalidTextPaths({ before: 'x\ud800', top: deep, after: ['\udc00'] });
    expect(paths).toHaveLength(3);
    expect(paths[0]).toEqual(['before']);
    expect(paths[1]).toEqual(['top', ...Array.from({ length: 200_000 }, (_, i) => (i % 2 === 0 ? 'k' : 0))]);
    expect(paths[2]).toEqual(['after', 0]);
  });

  it('adds its error to the schema errors of a body and a query string, not of params', () => {
    const schema = { type: 'object', properties: { name: { type: 'string', maxLength: 3 }, other: { type: 'integer' } }, additionalProperties: false };
    const body = compileValidator(schema, 'body');
    expect(body({ name: 'ab' })).toBe(true);
    expect(body({ name: 'ab\u0000', other: 'x' })).toBe(false);
    expect(toDetails(body.errors!, 'body')).toEqual([
      { field: 'name', message: TEXT_RULE_MESSAGE },
      { field: 'other', message: 'must be of type integer' },
    ]);
    // A string too long and breaking the rule: one detail for the field.
    expect(body({ name: 'abcd\ud800' })).toBe(false);
    expect(toDetails(body.errors!, 'body')).toEqual([{ field: 'name', message: TEXT_RULE_MESSAGE }]);

    const query = compileValidator(schema, 'querystring');
    expect(query({ name: 'ab', other: '5' })).toBe(true);
    expect(query({ name: '\u0000', other: '5x' })).toBe(false);
    expect(toDetails(query.errors!, 'querystring')).toEqual([
      { field: 'name', message: TEXT_RULE_MESSAGE },
      { field: 'other', message: 'must be of type integer' },
    ]);

    // Params answer 404 for such text (the preHandler), never 400.
    expect(compileValidator(schema, 'params')({ name: '\u0000' })).toBe(true);
  });
});

/** A path like `events.0` set to a value in a copy of a body. */
function withField(body: Record<string, unknown>, field: string, value: string): Record<string, unknown> {
  const copy = structuredClone(body);
  const keys = field.split('.');
  let target: Record<string, unknown> = copy;
  for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
  target[keys.at(-1)!] = value;
  return copy;
}

/** The valid value of a field with the offending character put inside it. */
function spoil(body: Record<string, unknown>, field: string, bad: string): string {
  let value: unknown = body;
  for (const key of field.split('.')) value = (value as Record<string, unknown>)[key];
  const text = String(value);
  return `${text.slice(0, 2)}${bad}${text.slice(2)}`;
}

function expectTextRefusal(res: ApiResponse, field: string): void {
  expect(res.status, res.text).toBe(400);
  expect(res.body.error.code).toBe('validation_failed');
  expect(res.body.error.details).toEqual([{ field, message: TEXT_RULE_MESSAGE }]);
  expect(res.body.error.message).toBe(`${field} ${TEXT_RULE_MESSAGE}`);
}

/** The tables a refused request must leave exactly as they were (volatile columns such as last_used_at aside). */
const TABLES = [
  'organizations',
  'users',
  'projects',
  'workflows',
  'tasks',
  'workflow_runs',
  'workflow_run_steps',
  'api_keys',
  'invitations',
  'webhooks',
  'events',
  'deliveries',
  'audit_log',
  'replay_jobs',
  'auth_tokens',
  'exports',
] as const;
const VOLATILE = new Set(['last_used_at', 'last_seen_at']);

describe.each(testDialects())('text rules (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let projectId: string;
  let userId: string;
  let webhookId: string;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Text & Co');
    const project = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Existing', description: 'keep' } });
    projectId = project.body.id;
    userId = (await org.member('member')).userId;
    const hook = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://hooks.example.com/in', events: ['project.created'] } });
    expect(hook.status).toBe(201);
    webhookId = hook.body.id;
  });
  afterAll(async () => env?.close());

  /** Every stored row of every table, as text: equal before and after means nothing was written. */
  async function snapshot(): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {};
    for (const table of TABLES) {
      const { rows } = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}`.execute(env.container.database.db);
      out[table] = rows.map((row) => JSON.stringify(Object.entries(row).filter(([column]) => !VOLATILE.has(column)))).sort();
    }
    return out;
  }

  async function invitationToken(): Promise<string> {
    const email = `invitee${Math.random().toString(36).slice(2, 10)}@example.com`;
    const invited = await env.request('POST', '/v1/users', { key: org.ownerKey, body: { email, role: 'member' } });
    expect(invited.status).toBe(201);
    await expect.poll(() => outboxMessages(env.dataDir).some((m) => m.raw.includes(`To: ${email}`))).toBe(true);
    return latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email);
  }

  describe('API routes that store text', () => {
    /** Each route, its valid body, and every field of it that is stored. */
    const ROUTES: { name: string; method: string; url: () => string | Promise<string>; body: Record<string, unknown>; fields: string[]; key?: 'none' }[] = [
      { name: 'create project', method: 'POST', url: () => '/v1/projects', body: { name: 'Roadmap', description: 'All of it', status: 'draft' }, fields: ['name', 'description', 'status'] },
      { name: 'update project', method: 'PUT', url: () => `/v1/projects/${projectId}`, body: { name: 'Renamed', description: 'Other', status: 'archived' }, fields: ['name', 'description', 'status'] },
      { name: 'invite user', method: 'POST', url: () => '/v1/users', body: { email: 'someone.new@example.com', role: 'member' }, fields: ['email', 'role'] },
      { name: 'change role', method: 'PUT', url: () => `/v1/users/${userId}`, body: { role: 'viewer' }, fields: ['role'] },
      {
        name: 'create webhook',
        method: 'POST',
        url: () => '/v1/webhooks',
        body: { url: 'https://hooks.example.com/other', events: ['project.created', 'project.updated'], secret: 'a-signing-secret-of-some-length' },
        fields: ['url', 'events.1', 'secret'],
      },
      { name: 'replay failed deliveries', method: 'POST', url: () => `/v1/webhooks/${webhookId}/replay-failed`, body: { since: '2026-01-01T00:00:00.000Z' }, fields: ['since'] },
      { name: 'accept invitation', method: 'POST', url: async () => `/invitations/${await invitationToken()}/accept`, body: { name: 'Ada Lovelace', password: 'analytical engine' }, fields: ['name', 'password'], key: 'none' },
    ];

    it.each(ROUTES)('$name: U+0000 and unpaired surrogates in any stored field are 400 naming it, nothing stored', async (route) => {
      const url = await route.url();
      const key = route.key === 'none' ? null : org.ownerKey;
      const before = await snapshot();
      for (const field of route.fields) {
        for (const [, bad] of BAD) {
          const body = withField(route.body, field, spoil(route.body, field, bad));
          const res = await env.request(route.method, url, { key, body });
          expectTextRefusal(res, field);
        }
      }
      // Every offending field at once, with the schema's own findings alongside.
      const all = route.fields.reduce((body, field, i) => withField(body, field, spoil(route.body, field, BAD[i % 3]![1])), route.body);
      const res = await env.request(route.method, url, { key, body: { ...all, unexpected: 'x' } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect((res.body.error.details as { field: string }[]).map((d) => d.field).sort()).toEqual([...route.fields, 'unexpected'].sort());
      expect(await snapshot()).toEqual(before);
    });

    it('names offending strings nested where the schema does not look (an unknown field)', async () => {
      const before = await snapshot();
      const res = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Fine', extra: { list: ['ok', 'x\ud800'] } } });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([
        { field: 'extra.list.1', message: TEXT_RULE_MESSAGE },
        { field: 'extra', message: 'is not an accepted field' },
      ]);
      expect(await snapshot()).toEqual(before);
    });

    it('stores a surrogate pair and other Unicode unchanged and reads it back the same', async () => {
      const created = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: UNICODE, description: MORE_UNICODE } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ name: UNICODE, description: MORE_UNICODE });
      const read = await env.request('GET', `/v1/projects/${created.body.id}`, { key: org.ownerKey });
      expect(read.body).toMatchObject({ name: UNICODE, description: MORE_UNICODE });
      const row = await env.container.database.db.selectFrom('projects').select(['name', 'description']).where('id', '=', created.body.id).executeTakeFirstOrThrow();
      expect(row).toEqual({ name: UNICODE, description: MORE_UNICODE });
      const listed = await env.request('GET', '/v1/projects?limit=100', { key: org.ownerKey });
      expect(listed.body.data.find((p: { id: string }) => p.id === created.body.id).name).toBe(UNICODE);

      // Sent as raw UTF-8 rather than JSON escapes (JSON allows no raw control character): the same text.
      const rawText = 'Zoë 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 👩‍👩‍👧 \uffff 日本';
      const raw = await env.request('PUT', `/v1/projects/${created.body.id}`, {
        key: org.ownerKey,
        payload: Buffer.from(`{"name":"${rawText}"}`, 'utf8'),
        headers: { 'content-type': 'application/json' },
      });
      expect(raw.status).toBe(200);
      expect(raw.body.name).toBe(rawText);

      const accepted = await env.request('POST', `/invitations/${await invitationToken()}/accept`, { body: { name: MORE_UNICODE, password: `pässwörd ${UNICODE}` } });
      expect(accepted.status).toBe(200);
      expect(accepted.body.name).toBe(MORE_UNICODE);
      const user = await env.request('GET', `/v1/users/${accepted.body.id}`, { key: org.ownerKey });
      expect(user.body.name).toBe(MORE_UNICODE);
    });
  });

  describe('bodies that are not UTF-8', () => {
    const json = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));

    it.each([
      ['a byte that never occurs in UTF-8', json('{"name":"a', [0xff], 'b"}')],
      ['an encoded lone surrogate (CESU-8)', json('{"name":"a', [0xed, 0xa0, 0x80], 'b"}')],
      ['an overlong NUL', json('{"name":"a', [0xc0, 0x80], 'b"}')],
      ['a sequence cut short', json('{"name":"a', [0xe6, 0x97], '"}')],
      ['Latin-1 rather than UTF-8', json('{"name":"na', [0xef], 've"}')],
    ])('%s is 400 invalid_json, nothing stored', async (_label, payload) => {
      const before = await snapshot();
      for (const [method, url] of [
        ['POST', '/v1/projects'],
        ['PUT', `/v1/projects/${projectId}`],
      ] as const) {
        const res = await env.request(method, url, { key: org.ownerKey, payload, headers: { 'content-type': 'application/json' } });
        expect(res.status, res.text).toBe(400);
        expect(res.body.error).toEqual({ code: 'invalid_json', message: 'request body is not valid UTF-8' });
      }
      expect(await snapshot()).toEqual(before);
    });

    it('keeps the empty body as no body', async () => {
      const empty = await env.request('POST', '/v1/projects', { key: org.ownerKey, payload: '', headers: { 'content-type': 'application/json' } });
      expect(empty.status).toBe(400);
      expect(empty.body.error).toEqual({ code: 'invalid_json', message: 'request body is empty; send a JSON object' });
      const doomed = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Doomed' } });
      const deleted = await env.request('DELETE', `/v1/projects/${doomed.body.id}`, { key: org.ownerKey, payload: '', headers: { 'content-type': 'application/json' } });
      expect(deleted.status).toBe(204);
    });
  });

  describe('path ids and query strings', () => {
    const IDS = ['proj_%00', 'proj_%00abc', 'proj_%ED%A0%80', 'proj_%ED%B0%80', 'proj_%ED%A0%80%ED%B0%80', 'proj_%C0%80', 'proj_%FF'];

    it('a path id holding U+0000 or an encoded lone surrogate is 404 on every route, never 500', async () => {
      const browser = await DashboardClient.signedIn(env, org.id, org.ownerId);
      const before = await snapshot();
      for (const id of IDS) {
        for (const [method, url, body] of [
          ['GET', `/v1/projects/${id}`],
          ['PUT', `/v1/projects/${id}`, { name: 'x' }],
          ['DELETE', `/v1/projects/${id}`],
          ['GET', `/v1/users/${id}`],
          ['PUT', `/v1/users/${id}`, { role: 'viewer' }],
          ['DELETE', `/v1/webhooks/${id}`],
          ['GET', `/v1/webhooks/${id}/deliveries`],
          ['GET', `/v1/webhooks/${webhookId}/deliveries/${id}`],
          ['POST', `/v1/webhooks/${webhookId}/deliveries/${id}/replay`],
          ['GET', `/v1/webhooks/${webhookId}/replay-jobs/${id}`],
          ['POST', `/invitations/${id}/accept`, { name: 'Ada', password: 'analytical engine' }],
        ] as [string, string, object?][]) {
          const res = await env.request(method, url, { key: org.ownerKey, ...(body ? { body } : {}) });
          expect(res.status, `${method} ${url}: ${res.text}`).toBe(404);
          expect(res.body.error.code).toBe('not_found');
        }
      }
      // A NUL routes, so authentication still answers first; bytes that are not UTF-8 never route (404 at once).
      expect((await env.request('GET', '/v1/projects/proj_%00')).status).toBe(401);
      expect((await env.request('GET', '/v1/projects/proj_%ED%A0%80')).status).toBe(404);
      // The dashboard's pages too.
      for (const id of ['proj_%00', 'proj_%ED%A0%80']) expect((await browser.get(`/dashboard/projects/${id}`)).status).toBe(404);
      expect(await snapshot()).toEqual(before);
    });

    it('a query parameter holding U+0000 is 400 validation_failed naming it; an encoded lone surrogate is never a 500', async () => {
      for (const [url, field] of [
        ['/v1/projects?cursor=%00', 'cursor'],
        ['/v1/projects?status=active%00', 'status'],
        ['/v1/users?cursor=abc%00', 'cursor'],
        ['/v1/webhooks?cursor=%00', 'cursor'],
        [`/v1/webhooks/${webhookId}/deliveries?id=dlv_%00`, 'id'],
        [`/v1/webhooks/${webhookId}/deliveries?event=project.created%00`, 'event'],
        [`/v1/webhooks/${webhookId}/deliveries?status=%00`, 'status'],
        [`/v1/webhooks/${webhookId}/deliveries?from=%00`, 'from'],
        [`/v1/webhooks/${webhookId}/deliveries?cursor=%00`, 'cursor'],
      ]) {
        expectTextRefusal(await env.request('GET', url!, { key: org.ownerKey }), field!);
      }
      // Percent-encoded bytes that are not UTF-8 stay as the literal text they are (never a lone surrogate).
      for (const url of ['/v1/projects?cursor=%ED%A0%80', '/v1/projects?cursor=%FF', `/v1/webhooks/${webhookId}/deliveries?id=%ED%B0%80`, '/v1/projects?status=%ED%A0%80']) {
        const res = await env.request('GET', url, { key: org.ownerKey });
        expect(res.status, `${url}: ${res.text}`).toBeLessThan(500);
        if (res.status === 200) continue;
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('validation_failed');
      }
    });
  });

  describe('dashboard forms', () => {
    let owner: DashboardClient;
    let taskId: string;
    let approvalId: string;
    let workflowPath: string;

    beforeAll(async () => {
      owner = await DashboardClient.signedIn(env, org.id, org.ownerId);
      const actor = cliActor(org.id);
      const services = env.container.services;
      const task = await services.tasks.create(actor, projectId, { title: 'Plain task', assignee_id: null, due_at: null });
      taskId = task.id;
      const workflow = await services.workflows.create(actor, projectId, { name: 'Release', description: 'Ship it', steps: [{ type: 'approval', title: 'Sign off', assignee_id: org.ownerId }] });
      workflowPath = `/dashboard/projects/${projectId}/workflows/${workflow.id}`;
      const run = await services.workflows.startRun(actor, workflow.id);
      for (const key of await services.runs.claimDue('test-worker', 30_000, 100)) await services.runs.advance('test-worker', key);
      approvalId = (await services.runs.get(actor, run.id)).steps[0]!.task_id!;
      expect(approvalId).toBeTruthy();
    });

    /** A person's way into a public form: its page first (the pre-session CSRF token), then the post. */
    async function publicClient(page: string): Promise<DashboardClient> {
      const client = new DashboardClient(env);
      const res = await client.get(page);
      expect(res.status, res.text).toBe(200);
      return client;
    }

    async function passwordLink(): Promise<string> {
      const link = await env.container.services.accounts.issuePasswordLink(cliActor(org.id), userId, 'reset');
      return new URL(link.url).pathname;
    }

    /** Each form, its valid fields, and every field a person types that the form sends on (stored or looked up). */
    // `accepts`: the status of the same form sent valid, afterwards, to show these are the form's real fields.
    const FORMS: { name: string; url: () => string | Promise<string>; fields: () => FormFields; text: string[]; accepts?: number; client?: (url: string) => Promise<DashboardClient> }[] = [
      { name: 'new project', url: () => '/dashboard/projects', fields: () => ({ name: 'Roadmap', description: 'All of it', status: 'draft' }), text: ['name', 'description', 'status'], accepts: 303 },
      { name: 'edit project', url: () => `/dashboard/projects/${projectId}`, fields: () => ({ name: 'Renamed', description: 'Other', status: 'active' }), text: ['name', 'description', 'status'], accepts: 303 },
      { name: 'delete project (typed name)', url: () => `/dashboard/projects/${projectId}/delete`, fields: () => ({ confirm_name: 'Existing' }), text: ['confirm_name'] },
      { name: 'new workflow', url: () => `/dashboard/projects/${projectId}/workflows`, fields: () => ({ name: 'Flow', description: 'Steps' }), text: ['name', 'description'], accepts: 303 },
      { name: 'new task', url: () => `/dashboard/projects/${projectId}/tasks`, fields: () => ({ title: 'Write', assignee_id: userId, due_date: '2030-01-01' }), text: ['title', 'assignee_id', 'due_date'], accepts: 303 },
      { name: 'assign task', url: () => `/dashboard/projects/${projectId}/tasks/${taskId}/assign`, fields: () => ({ assignee_id: userId }), text: ['assignee_id'], accepts: 303 },
      { name: 'save workflow', url: () => workflowPath, fields: () => ({ name: 'Release 2', description: 'Ship it again' }), text: ['name', 'description'], accepts: 303 },
      { name: 'add step', url: () => `${workflowPath}/steps`, fields: () => ({ type: 'task', title: 'Check', assignee_id: userId, due_in: '1d', duration: '' }), text: ['type', 'title', 'assignee_id', 'due_in'], accepts: 303 },
      { name: 'add wait step', url: () => `${workflowPath}/steps`, fields: () => ({ type: 'wait', duration: '2h' }), text: ['duration'], accepts: 303 },
      { name: 'reject approval', url: () => `/dashboard/tasks/${approvalId}/reject`, fields: () => ({ back: '/dashboard/tasks', reason: 'Not ready' }), text: ['reason', 'back'], accepts: 303 },
      { name: 'complete task', url: () => `/dashboard/tasks/${taskId}/done`, fields: () => ({ back: '/dashboard/tasks' }), text: ['back'], accepts: 303 },
      { name: 'account name', url: () => '/dashboard/account/name', fields: () => ({ name: 'Olive' }), text: ['name'], accepts: 303 },
      { name: 'account password', url: () => '/dashboard/account/password', fields: () => ({ current_password: 'whatever it was', new_password: 'a new password' }), text: ['current_password', 'new_password'] },
      { name: 'new API key', url: () => '/dashboard/api-keys', fields: () => ({ name: 'CI', access: 'restricted', projects: 'read', users: 'none', webhooks: 'write' }), text: ['name', 'access', 'projects'], accepts: 303 },
      { name: 'invite member', url: () => '/dashboard/members/invite', fields: () => ({ email: 'new.member@example.com', role: 'member' }), text: ['email', 'role'], accepts: 303 },
      { name: 'change role', url: () => `/dashboard/members/${userId}/role`, fields: () => ({ role: 'viewer' }), text: ['role'], accepts: 303 },
      { name: 'new webhook', url: () => '/dashboard/webhooks', fields: () => ({ url: 'https://hooks.example.com/x', events: ['project.created', 'project.deleted'], secret: 'a-signing-secret-of-some-length' }), text: ['url', 'events.1', 'secret'], accepts: 303 },
      { name: 'replay failed', url: () => `/dashboard/webhooks/${webhookId}/replay-failed`, fields: () => ({ since: '2026-01-01T00:00' }), text: ['since'], accepts: 303 },
      { name: 'audit export', url: () => '/dashboard/audit-log/export', fields: () => ({ format: 'csv', action: 'project.created', actor: 'someone', target: 'proj', from: '2026-01-01', to: '2026-02-01' }), text: ['format', 'action', 'actor', 'target', 'from', 'to'] },
      { name: 'cancel subscription (typed name)', url: () => '/dashboard/billing/cancel', fields: () => ({ confirm_name: 'Text & Co' }), text: ['confirm_name'] },
      {
        name: 'accept invitation',
        url: async () => `/dashboard/invitations/${await invitationToken()}`,
        fields: () => ({ name: 'Ada', password: 'analytical engine' }),
        text: ['name', 'password'], accepts: 303,
        client: publicClient,
      },
      { name: 'set password (reset link)', url: passwordLink, fields: () => ({ password: 'a brand new one' }), text: ['password'], accepts: 303, client: publicClient },
      { name: 'sign in', url: () => '/dashboard/login', fields: () => ({ email: 'owner@example.com', password: 'whatever', next: '/dashboard/projects' }), text: ['email', 'password', 'next'], client: publicClient },
      { name: 'forgot password', url: () => '/dashboard/forgot-password', fields: () => ({ email: 'owner@example.com' }), text: ['email'], accepts: 303, client: publicClient },
    ];

    function fieldValue(fields: FormFields, field: string): string {
      const [name, index] = field.split('.');
      const value = fields[name!]!;
      return Array.isArray(value) ? value[Number(index)]! : value;
    }

    function spoiled(fields: FormFields, field: string): FormFields {
      const [name, index] = field.split('.');
      const value = fieldValue(fields, field);
      const bad = `${value.slice(0, 2)}\u0000${value.slice(2)}`;
      const current = fields[name!]!;
      if (!Array.isArray(current)) return { ...fields, [name!]: bad };
      return { ...fields, [name!]: current.map((v, i) => (i === Number(index) ? bad : v)) };
    }

    function expectNamed(res: PageResponse, fields: string[]): void {
      expect(res.status, textOf(res.text)).toBe(400);
      expect(String(res.headers['content-type'])).toMatch(/^text\/html/);
      const text = textOf(res.text);
      expect(text).toContain('The form was not filled in as expected.');
      for (const field of fields) expect(text).toContain(`${field} ${TEXT_RULE_MESSAGE}`);
      expect(text).not.toContain('is not an accepted field');
    }

    it.each(FORMS)('$name: U+0000 in any field is the 400 page naming it, nothing stored', async (form) => {
      const url = await form.url();
      const client = form.client ? await form.client(url) : owner;
      if (!form.client) await client.get('/dashboard');
      const valid = form.fields();
      const before = await snapshot();
      for (const field of form.text) expectNamed(await client.post(url, spoiled(valid, field)), [field]);
      const all = form.text.reduce((fields, field) => spoiled(fields, field), valid);
      expectNamed(await client.post(url, all), form.text);
      expect(await snapshot()).toEqual(before);
      if (form.accepts) {
        const res = await client.post(url, valid);
        expect(res.status, textOf(res.text)).toBe(form.accepts);
      }
    });

    it('a NUL in a page query is the 400 page naming the parameter', async () => {
      for (const [url, field] of [
        ['/dashboard/projects?cursor=%00', 'cursor'],
        [`/dashboard/webhooks/${webhookId}?id=%00`, 'id'],
        ['/dashboard/audit-log?actor=a%00b', 'actor'],
      ]) {
        const res = await owner.get(url!);
        expect(res.status, url).toBe(400);
        expect(textOf(res.text)).toContain(`${field} ${TEXT_RULE_MESSAGE}`);
      }
    });

    it('stores a surrogate pair and other Unicode from a form unchanged', async () => {
      await owner.get('/dashboard/projects');
      const created = await owner.post('/dashboard/projects', { name: UNICODE, description: MORE_UNICODE, status: 'active' });
      expect(created.status, textOf(created.text)).toBe(303);
      const row = await env.container.database.db.selectFrom('projects').select(['id', 'name', 'description']).where('org_id', '=', org.id).where('name', '=', UNICODE).executeTakeFirstOrThrow();
      expect(row.description).toBe(MORE_UNICODE);
      const page = await owner.get(`/dashboard/projects/${row.id}`);
      expect(page.text).toContain(UNICODE);

      const renamed = await owner.post('/dashboard/account/name', { name: MORE_UNICODE });
      expect(renamed.status, textOf(renamed.text)).toBe(303);
      const me = await env.request('GET', `/v1/users/${org.ownerId}`, { key: org.ownerKey });
      expect(me.body.name).toBe(MORE_UNICODE);
    });
  });
});
