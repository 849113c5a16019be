import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/lib/crypto.js';
import { EVENT_TYPES } from '../../src/schemas/events.js';
import { DashboardClient, noticeOf, tableRows, textOf, type FormFields, type PageResponse } from '../helpers/dashboard.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/** The secret shown once on the answer to "Create key". */
function newKeyOf(html: string): string | null {
  return /<input id="new-key"[^>]*\svalue="([^"]+)"/.exec(html)?.[1] ?? null;
}

describe.each(testDialects())('dashboard: API keys (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let other: TestOrg;
  let admin: { userId: string; key: string; keyId: string };
  let member: { userId: string; key: string; keyId: string };
  let viewer: { userId: string; key: string; keyId: string };

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Keys & Co');
    other = await env.createOrg('Elsewhere');
    admin = await org.member('admin');
    member = await org.member('member');
    viewer = await org.member('viewer');
    // A subscription to every event: any event a key change fired would show up as a delivery.
    const hook = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://127.0.0.1:9/hook', events: [...EVENT_TYPES] } });
    expect(hook.status).toBe(201);
  });
  afterAll(async () => env?.close());

  const db = () => env.container.database.db;

  const browserFor = (userId: string) => DashboardClient.signedIn(env, org.id, userId);

  /** The id of the browser's session, as the audit log must record it. */
  const sessionIdOf = async (browser: DashboardClient): Promise<string> => browser.sessionId!;

  async function snapshot(orgId = org.id) {
    const [keys, audit, events, deliveries] = await Promise.all([
      db().selectFrom('api_keys').select(['id', 'user_id', 'scope', 'name', 'revoked_at']).where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('audit_log').select('id').where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('events').select('id').where('org_id', '=', orgId).execute(),
      db().selectFrom('deliveries').select('id').where('org_id', '=', orgId).execute(),
    ]);
    return { keys, audit, events, deliveries };
  }

  async function newestAudit(orgId = org.id) {
    return db().selectFrom('audit_log').selectAll().where('org_id', '=', orgId).orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow();
  }

  async function create(browser: DashboardClient, fields: FormFields): Promise<PageResponse> {
    await browser.get('/dashboard/api-keys');
    return browser.post('/dashboard/api-keys', fields);
  }

  /** Creates a key through the form; `res` is the page the 303 leads to, where the key is shown once. */
  async function createKey(browser: DashboardClient, fields: FormFields): Promise<{ key: string; id: string; res: PageResponse }> {
    const posted = await create(browser, fields);
    expect(posted.status, textOf(posted.text)).toBe(303);
    expect(posted.location).toBe('/dashboard/api-keys');
    const res = await browser.follow(posted);
    const key = newKeyOf(res.text);
    expect(key).toMatch(/^wsk_/);
    const row = await db().selectFrom('api_keys').select('id').where('key_hash', '=', sha256Hex(key!)).executeTakeFirstOrThrow();
    return { key: key!, id: row.id, res };
  }

  const storedScope = async (id: string) => (await db().selectFrom('api_keys').select('scope').where('id', '=', id).executeTakeFirstOrThrow()).scope;

  it('shows the page to every role: the table, and the create form with its exact names', async () => {
    for (const userId of [org.ownerId, admin.userId, member.userId, viewer.userId]) {
      const browser = await browserFor(userId);
      const res = await browser.get('/dashboard/api-keys');
      expect(res.status).toBe(200);
      expect(res.text).toContain('<title>API keys · Keys &amp; Co · Workspace</title>');
      expect(res.text).toMatch(/<caption[^>]*>API keys<\/caption>/);
      expect(res.text).toMatch(/<a href="\/dashboard\/api-keys" aria-current="page">API keys<\/a>/);
      expect(res.text).toContain('<h2 id="create-key-title">Create API key</h2>');
      expect(res.text).toContain('<label for="name">Name</label>');
      expect(res.text).toContain('<legend>Access</legend>');
      for (const label of ['Full access', 'Read only', 'Restricted']) expect(res.text).toMatch(new RegExp(`<input type="radio" name="access" value="[a-z]+"[^>]*/> ${label}</label>`));
      for (const [name, legend] of [['projects', 'Projects'], ['users', 'Users'], ['webhooks', 'Webhooks']] as const) {
        expect(res.text).toContain(`<legend>${legend}</legend>`);
        expect(res.text).toContain(`<input type="radio" name="${name}" value="none" checked/> None</label>`);
        expect(res.text).toContain(`<input type="radio" name="${name}" value="read"/> Read</label>`);
        expect(res.text).toContain(`<input type="radio" name="${name}" value="write"/> Write</label>`);
      }
      expect(res.text).toContain('<button type="submit">Create key</button>');
      expect(res.text).not.toContain('id="new-key"');
      expect(res.text).not.toMatch(/\sstyle=/);
      expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
    }
  });

  it('lists a member their own keys only, without an owner column; admins and owners every key with its owner', async () => {
    const memberPage = await (await browserFor(member.userId)).get('/dashboard/api-keys');
    const memberRows = tableRows(memberPage.text, 'API keys');
    expect(memberRows).toHaveLength(1);
    const memberPrefix = (await db().selectFrom('api_keys').select('key_prefix').where('id', '=', member.keyId).executeTakeFirstOrThrow()).key_prefix;
    expect(memberPrefix).toBe(member.key.slice(0, 12));
    expect(memberRows[0]).toContain(`${memberPrefix}…`);
    expect(memberRows[0]).toContain('Full access');
    // Last used, then Expires: never used, and no expiry.
    expect(memberRows[0]).toMatch(/ Never Never /);
    expect(memberPage.text).not.toContain('<th scope="col">Owner</th>');
    expect(memberPage.text).not.toContain(admin.key.slice(0, 12));
    // The secret itself is never on the page, only its prefix.
    expect(memberPage.text).not.toContain(member.key);

    for (const userId of [admin.userId, org.ownerId]) {
      const page = await (await browserFor(userId)).get('/dashboard/api-keys');
      expect(page.text).toContain('<th scope="col">Owner</th>');
      const text = textOf(page.text);
      for (const key of [org.ownerKey, admin.key, member.key, viewer.key]) expect(text).toContain(`${key.slice(0, 12)}…`);
      // Owners by name (DASHBOARD 1: people as names).
      for (const name of ['Olive Owner', 'admin \\d+', 'member \\d+', 'viewer \\d+']) expect(text).toMatch(new RegExp(name));
      // Never another organisation's keys.
      expect(text).not.toContain(other.ownerKey.slice(0, 12));
    }
  });

  it('creates a full-access key: shown once after the redirect with a Copy button, gone on reload, audited with the session, no event', async () => {
    const browser = await browserFor(member.userId);
    const before = await snapshot();
    const { key, id, res } = await createKey(browser, { name: 'Deploy bot', access: 'full', projects: 'none', users: 'none', webhooks: 'none' });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(noticeOf(res.text)).toBe('API key "Deploy bot" created.');
    // A reload shows the list: neither the key nor the notice again, and no second key.
    const reloaded = await browser.get('/dashboard/api-keys');
    expect(newKeyOf(reloaded.text)).toBeNull();
    expect(reloaded.text).not.toContain(key);
    expect(noticeOf(reloaded.text)).toBe('');
    expect((await snapshot()).keys).toHaveLength(before.keys.length + 1);
    // The slot holds the key sealed with the session's token: the database never has it readable.
    const sessions = await db().selectFrom('sessions').select('flash').where('org_id', '=', org.id).execute();
    for (const row of sessions) expect(row.flash ?? '').not.toContain(key.slice(4, 20));
    expect(res.text).toContain('<label for="new-key">Your new API key</label>');
    expect(res.text).toMatch(/<input id="new-key" type="text" value="wsk_[^"]+" readonly/);
    expect(res.text).toContain('<button type="button" data-copy-target="new-key" hidden>Copy</button>');
    // The table below already lists the new key.
    const rows = tableRows(res.text, 'API keys');
    expect(rows.find((r) => r.includes('Deploy bot'))).toContain(`${key.slice(0, 12)}… Full access`);

    expect(await storedScope(id)).toBe('full');
    const stored = await db().selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(stored.user_id).toBe(member.userId);
    expect(stored.key_hash).toBe(sha256Hex(key));
    expect(JSON.stringify(stored)).not.toContain(key);

    // It works at once, within the member's role.
    expect((await env.request('GET', '/v1/projects', { key })).status).toBe(200);
    expect((await env.request('POST', '/v1/projects', { key, body: { name: 'By the new key' } })).status).toBe(201);
    expect((await env.request('POST', '/v1/users', { key, body: { email: 'x@example.com', role: 'viewer' } })).status).toBe(403);

    // Never shown again.
    const reload = await browser.get('/dashboard/api-keys');
    expect(reload.text).not.toContain(key);
    expect(reload.text).not.toContain('id="new-key"');
    expect(textOf(reload.text)).toContain(`${key.slice(0, 12)}…`);

    const after = await snapshot();
    expect(after.keys).toHaveLength(before.keys.length + 1);
    const audit = await db().selectFrom('audit_log').selectAll().where('action', '=', 'api_key.created').where('target_id', '=', id).executeTakeFirstOrThrow();
    expect(audit).toMatchObject({
      org_id: org.id,
      actor_type: 'user',
      actor_id: member.userId,
      api_key_id: null,
      session_id: await sessionIdOf(browser),
      source: 'dashboard',
      target_type: 'api_key',
      outcome: 'success',
    });
    expect(audit.changes).not.toContain(key);
    // Creating a key is no webhook event (the project the key created is, through the API).
    const projectEvents = await db().selectFrom('events').select('type').where('org_id', '=', org.id).execute();
    expect(projectEvents.length - before.events.length).toBe(1);
    expect(projectEvents.map((e) => e.type)).toContain('project.created');
  });

  it.each([
    [{ access: 'read' }, 'read', 'Read only'],
    [{ access: 'restricted', projects: 'read', users: 'none', webhooks: 'write' }, 'projects:read,webhooks', 'Restricted: Projects Read, Webhooks Write'],
    [{ access: 'restricted', users: 'write' }, 'users', 'Restricted: Users Write'],
    [{ access: 'restricted', projects: 'read', users: 'read', webhooks: 'read' }, 'projects:read,users:read,webhooks:read', 'Restricted: Projects Read, Users Read, Webhooks Read'],
    [{ access: 'restricted', projects: 'write', users: 'write', webhooks: 'write' }, 'projects,users,webhooks', 'Restricted: Projects Write, Users Write, Webhooks Write'],
    [{ access: 'full', projects: 'read', webhooks: 'write' }, 'full', 'Full access'],
    [{ access: 'read', users: 'write' }, 'read', 'Read only'],
  ])('maps %j to the scope %s and shows it as "%s"', async (fields, scope, words) => {
    const browser = await browserFor(org.ownerId);
    const name = `map ${scope} ${Math.random().toString(36).slice(2, 8)}`;
    const { id, res } = await createKey(browser, { name, ...fields } as FormFields);
    expect(await storedScope(id)).toBe(scope);
    expect(tableRows(res.text, 'API keys').find((r) => r.includes(name))).toContain(words);
  });

  it('gives a restricted key exactly its scope within the role', async () => {
    const browser = await browserFor(admin.userId);
    const { key } = await createKey(browser, { name: 'scoped', access: 'restricted', projects: 'read', webhooks: 'write' });
    expect((await env.request('GET', '/v1/projects', { key })).status).toBe(200);
    expect((await env.request('POST', '/v1/projects', { key, body: { name: 'nope' } })).status).toBe(403);
    expect((await env.request('GET', '/v1/users', { key })).status).toBe(403);
    expect((await env.request('GET', '/v1/webhooks', { key })).status).toBe(200);
  });

  it('lets a viewer create a full-access key that still acts as a viewer', async () => {
    const { key } = await createKey(await browserFor(viewer.userId), { name: 'viewer key', access: 'full' });
    expect((await env.request('GET', '/v1/projects', { key })).status).toBe(200);
    expect((await env.request('POST', '/v1/projects', { key, body: { name: 'nope' } })).status).toBe(403);
  });

  it('refuses Restricted with every kind None: 400, the error at the top and on the field, nothing created', async () => {
    const browser = await browserFor(member.userId);
    const before = await snapshot();
    const attempts: FormFields[] = [
      { name: 'empty', access: 'restricted', projects: 'none', users: 'none', webhooks: 'none' },
      { name: 'empty', access: 'restricted' },
    ];
    for (const fields of attempts) {
      const res = await create(browser, fields);
      expect(res.status).toBe(400);
      expect(res.text).toMatch(/<div class="error-summary" role="alert"[^>]*>[\s\S]*Choose Read or Write for at least one of Projects, Users and Webhooks/);
      expect(res.text).toContain('<fieldset class="radios" id="access" aria-invalid="true" aria-describedby="access-error">');
      expect(res.text).toContain('id="access-error"');
      // What was chosen is kept, and no key is shown.
      expect(res.text).toContain('<input type="radio" name="access" value="restricted" checked/>');
      expect(res.text).toContain('value="empty"');
      expect(res.text).not.toContain('id="new-key"');
      expect(res.text).toMatch(/<caption[^>]*>API keys<\/caption>/);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a form without an access choice and a name over 255 characters, nothing created', async () => {
    const browser = await browserFor(member.userId);
    const before = await snapshot();
    const noAccess = await create(browser, { name: 'no access' });
    expect(noAccess.status).toBe(400);
    expect(noAccess.text).toContain('aria-describedby="access-error"');
    const longName = await create(browser, { name: 'n'.repeat(256), access: 'full' });
    expect(longName.status).toBe(400);
    expect(longName.text).toMatch(/<input id="name"[^>]*aria-invalid="true"[^>]*aria-describedby="name-hint name-error"/);
    expect(textOf(longName.text)).toContain('Name must be at most 255 characters');
    // A value no form of ours sends is refused by the schema.
    const forged = await create(browser, { name: 'x', access: 'everything' });
    expect(forged.status).toBe(400);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a create without the CSRF token or from another site: 403, nothing created', async () => {
    const browser = await browserFor(member.userId);
    await browser.get('/dashboard/api-keys');
    const before = await snapshot();
    const missing = await browser.post('/dashboard/api-keys', { name: 'csrf', access: 'full' }, { csrf: null });
    expect(missing.status).toBe(403);
    expect(missing.text).not.toContain('id="new-key"');
    const wrong = await browser.post('/dashboard/api-keys', { name: 'csrf', access: 'full' }, { csrf: 'forged-token' });
    expect(wrong.status).toBe(403);
    const crossSite = await browser.post('/dashboard/api-keys', { name: 'csrf', access: 'full' }, { headers: { 'sec-fetch-site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    expect(await snapshot()).toEqual(before);
  });

  it('revokes through a confirmation page: 303 with "Key revoked.", the key answers 401, audited with the session', async () => {
    const browser = await browserFor(member.userId);
    const { key, id } = await createKey(browser, { name: 'to revoke', access: 'full' });
    expect((await env.request('GET', '/v1/projects', { key })).status).toBe(200);

    const list = await browser.get('/dashboard/api-keys');
    expect(list.text).toContain(`<a href="/dashboard/api-keys/${id}/revoke">Revoke</a>`);
    const confirm = await browser.get(`/dashboard/api-keys/${id}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain(`<form method="post" action="/dashboard/api-keys/${id}/revoke"`);
    expect(confirm.text).toContain('<button type="submit" class="button danger">Revoke key</button>');
    expect(textOf(confirm.text)).toContain('to revoke');
    expect(confirm.text).not.toContain(key);
    // Opening the confirmation changes nothing.
    expect((await env.request('GET', '/v1/projects', { key })).status).toBe(200);

    const before = await snapshot();
    const res = await browser.post(`/dashboard/api-keys/${id}/revoke`);
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/api-keys');
    const after = await browser.follow(res);
    expect(noticeOf(after.text)).toMatch(/^API key "to revoke" \(wsk_[A-Za-z0-9_-]{8}…\) revoked\.$/);
    expect(noticeOf((await browser.get('/dashboard/api-keys')).text)).toBe('');
    expect(tableRows(after.text, 'API keys').some((r) => r.includes('to revoke'))).toBe(false);

    const denied = await env.request('GET', '/v1/projects', { key });
    expect(denied.status).toBe(401);
    expect(denied.body.error.code).toBe('unauthorized');

    const audit = await newestAudit();
    expect(audit).toMatchObject({
      action: 'api_key.revoked',
      actor_id: member.userId,
      session_id: await sessionIdOf(browser),
      api_key_id: null,
      source: 'dashboard',
      target_id: id,
    });
    const changed = await snapshot();
    expect(changed.audit).toHaveLength(before.audit.length + 1);
    expect(changed.events).toEqual(before.events);
    expect(changed.deliveries).toEqual(before.deliveries);

    // Gone from the list, so its confirmation page is a 404 now.
    expect((await browser.get(`/dashboard/api-keys/${id}/revoke`)).status).toBe(404);
  });

  it("answers 404 to a member opening or revoking another member's key, with the key still working", async () => {
    const browser = await browserFor(member.userId);
    await browser.get('/dashboard/api-keys');
    const before = await snapshot();
    const foreignKeyId = (await db().selectFrom('api_keys').select('id').where('org_id', '=', other.id).executeTakeFirstOrThrow()).id;
    for (const keyId of [admin.keyId, viewer.keyId, foreignKeyId]) {
      const page = await browser.get(`/dashboard/api-keys/${keyId}/revoke`);
      expect(page.status).toBe(404);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      const post = await browser.post(`/dashboard/api-keys/${keyId}/revoke`);
      expect(post.status).toBe(404);
    }
    for (const id of ['key_doesnotexist00000000000', 'not%00an-id']) {
      expect((await browser.get(`/dashboard/api-keys/${id}/revoke`)).status).toBe(404);
      expect((await browser.post(`/dashboard/api-keys/${id}/revoke`)).status).toBe(404);
    }
    expect(await snapshot()).toEqual(before);
    for (const key of [admin.key, viewer.key]) expect((await env.request('GET', '/v1/projects', { key })).status).toBe(200);
  });

  it("lets admins and owners revoke any key of the organisation, but not another organisation's", async () => {
    for (const [revoker, role] of [
      [admin.userId, 'admin'],
      [org.ownerId, 'owner'],
    ] as const) {
      const victim = await org.member('member');
      const browser = await browserFor(revoker);
      const confirm = await browser.get(`/dashboard/api-keys/${victim.keyId}/revoke`);
      expect(confirm.status, role).toBe(200);
      expect(textOf(confirm.text)).toMatch(/belonging to member \d+\)/);
      expect((await browser.post(`/dashboard/api-keys/${victim.keyId}/revoke`)).status).toBe(303);
      expect((await env.request('GET', '/v1/projects', { key: victim.key })).status).toBe(401);
      const audit = await newestAudit();
      expect(audit).toMatchObject({ action: 'api_key.revoked', actor_id: revoker, target_id: victim.keyId, source: 'dashboard' });
    }
    const foreign = await other.member('admin');
    const browser = await browserFor(org.ownerId);
    await browser.get('/dashboard/api-keys');
    expect((await browser.get(`/dashboard/api-keys/${foreign.keyId}/revoke`)).status).toBe(404);
    expect((await browser.post(`/dashboard/api-keys/${foreign.keyId}/revoke`)).status).toBe(404);
    expect((await env.request('GET', '/v1/projects', { key: foreign.key })).status).toBe(200);
  });

  it('refuses a revoke without the CSRF token: 403, the key keeps working', async () => {
    const browser = await browserFor(member.userId);
    const { key, id } = await createKey(browser, { name: 'csrf revoke', access: 'read' });
    const before = await snapshot();
    expect((await browser.post(`/dashboard/api-keys/${id}/revoke`, {}, { csrf: null })).status).toBe(403);
    expect((await browser.post(`/dashboard/api-keys/${id}/revoke`, {}, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
    expect(await snapshot()).toEqual(before);
    expect((await env.request('GET', '/v1/projects', { key })).status).toBe(200);
  });

  it('shows when a key was last used', async () => {
    const browser = await browserFor(viewer.userId);
    const { key, id } = await createKey(browser, { name: 'used key', access: 'read' });
    expect((await env.request('GET', '/v1/projects', { key })).status).toBe(200);
    // The write happens off the request path, right after it.
    for (let i = 0; i < 50; i++) {
      const row = await db().selectFrom('api_keys').select('last_used_at').where('id', '=', id).executeTakeFirstOrThrow();
      if (row.last_used_at !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const page = await browser.get('/dashboard/api-keys');
    const row = tableRows(page.text, 'API keys').find((r) => r.includes('used key'))!;
    expect(row).not.toMatch(/Never Never/);
    // Created and last used moments ago: the exact time, and "(just now)" under it, both on the page.
    const time = '\\d{1,2} [A-Z][a-z]{2} \\d{4}, \\d\\d:\\d\\d UTC \\(just now\\)';
    expect(row).toMatch(new RegExp(` ${time} ${time} Never Revoke$`));
    expect(page.text).toMatch(/<time datetime="[^"]+" title="\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d:\d\d UTC">\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC<\/time><span class="relative"> \(just now\)<\/span>/);
  });

  it('takes notices only from the session: text in the address is refused, never echoed', async () => {
    const browser = await browserFor(member.userId);
    const unknown = await browser.get('/dashboard/api-keys?done=%3Cb%3Ehello%3C%2Fb%3E');
    expect(unknown.status).toBe(400);
    expect(unknown.text).not.toContain('hello');
    expect(unknown.text).not.toContain('class="notice"');
  });
});
