import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/db/schema.js';
import { EVENT_TYPES } from '../../src/schemas/events.js';
import { DashboardClient, invitationPageStatus, noticeOf, textOf, type PageResponse } from '../helpers/dashboard.js';
import { decodeQuotedPrintable, latestInvitationToken, outboxMessages } from '../helpers/mail-outbox.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/** The rows of the table with this caption, as text per row. */
function tableRows(html: string, caption: string): string[] {
  const table = new RegExp(`<table><caption[^>]*>${caption}</caption>([\\s\\S]*?)</table>`).exec(html);
  if (!table) throw new Error(`no table "${caption}"`);
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table[1]!)![1]!;
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => textOf(m[1]!));
}

/** The error summary at the top of a page (role="alert"), as text; '' when there is none. */
function alertOf(html: string): string {
  const summary = /<div class="error-summary" role="alert"[^>]*>([\s\S]*?)<\/div>/.exec(html);
  return summary ? textOf(summary[1]!) : '';
}

type Member = { userId: string; key: string; keyId: string; email: string };

describe.each(testDialects())('dashboard: members (%s)', (dialect) => {
  let env: TestEnv;
  let counter = 0;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
  });
  afterAll(async () => env?.close());

  const db = () => env.container.database.db;


  /** An organisation with one member of each role, and a webhook listening to every event. */
  async function team(name = 'Team') {
    const org = await env.createOrg(name);
    const add = async (role: Role): Promise<Member> => {
      const m = await org.member(role);
      const row = await db().selectFrom('users').select('email').where('id', '=', m.userId).executeTakeFirstOrThrow();
      return { ...m, email: row.email };
    };
    const ownerEmail = (await db().selectFrom('users').select('email').where('id', '=', org.ownerId).executeTakeFirstOrThrow()).email;
    const owner: Member = { userId: org.ownerId, key: org.ownerKey, keyId: '', email: ownerEmail };
    const hook = await env.request('POST', '/v1/webhooks', { key: org.ownerKey, body: { url: 'https://127.0.0.1:9/hook', events: [...EVENT_TYPES] } });
    expect(hook.status).toBe(201);
    return { org, owner, admin: await add('admin'), member: await add('member'), viewer: await add('viewer'), add };
  }

  const browserFor = (org: TestOrg, userId: string) => DashboardClient.signedIn(env, org.id, userId);

  const sessionIdOf = async (browser: DashboardClient): Promise<string> => browser.sessionId!;

  /** Everything a member change could touch, to prove a refusal changed none of it. */
  async function snapshot(orgId: string) {
    const [users, keys, sessions, invitations, audit, events, deliveries] = await Promise.all([
      db().selectFrom('users').select(['id', 'email', 'role', 'status', 'updated_at']).where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('api_keys').select(['id', 'revoked_at']).where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('sessions').select(['id']).where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('invitations').select(['id', 'used_at']).where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('audit_log').select('id').where('org_id', '=', orgId).orderBy('id').execute(),
      db().selectFrom('events').select('id').where('org_id', '=', orgId).execute(),
      db().selectFrom('deliveries').select('id').where('org_id', '=', orgId).execute(),
    ]);
    return { users, keys, sessions, invitations, audit, events, deliveries, mails: outboxMessages(env.dataDir).length };
  }

  async function newestAudit(orgId: string) {
    return db().selectFrom('audit_log').selectAll().where('org_id', '=', orgId).orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow();
  }

  const userRow = (id: string) => db().selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  const freshEmail = () => `new${++counter}.${dialect}@example.com`;

  async function expectAuditByDashboard(orgId: string, browser: DashboardClient, actorId: string, action: string, targetId: string) {
    const row = await newestAudit(orgId);
    expect(row).toMatchObject({
      action,
      actor_type: 'user',
      actor_id: actorId,
      api_key_id: null,
      session_id: await sessionIdOf(browser),
      source: 'dashboard',
      target_type: 'user',
      target_id: targetId,
      outcome: 'success',
    });
    return row;
  }

  /** A refused POST: the status, the page (HTML with the error listed), and nothing changed. */
  async function expectRefused(orgId: string, send: () => Promise<PageResponse>, status: number, message?: RegExp): Promise<PageResponse> {
    const before = await snapshot(orgId);
    const res = await send();
    expect(res.status, textOf(res.text).slice(0, 400)).toBe(status);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    if (message) expect(textOf(res.text)).toMatch(message);
    expect(await snapshot(orgId)).toEqual(before);
    return res;
  }

  describe('reading', () => {
    it('warns an admin on the confirmation that removing their own row is removing themself', async () => {
      const t = await team('Self');
      const browser = await browserFor(t.org, t.admin.userId);
      const own = await browser.get(`/dashboard/members/${t.admin.userId}/remove`);
      expect(own.status).toBe(200);
      expect(textOf(own.text)).toContain('This is you. You lose access to Self at once and are signed out');
      const other = await browser.get(`/dashboard/members/${t.member.userId}/remove`);
      expect(textOf(other.text)).not.toContain('This is you.');
    });

    it('shows the table "Members" (name, email, role, status) to every role, invited users included', async () => {
      const t = await team('Readers & Co');
      const invitedEmail = freshEmail();
      expect((await env.request('POST', '/v1/users', { key: t.org.ownerKey, body: { email: invitedEmail, role: 'viewer' } })).status).toBe(201);
      for (const who of [t.owner, t.admin, t.member, t.viewer]) {
        const res = await (await browserFor(t.org, who.userId)).get('/dashboard/members');
        expect(res.status).toBe(200);
        expect(res.text).toContain('<title>Members · Readers &amp; Co · Workspace</title>');
        expect(res.text).toMatch(/<a href="\/dashboard\/members" aria-current="page">Members<\/a>/);
        for (const h of ['Name', 'Email', 'Role', 'Status']) expect(res.text).toContain(`<th scope="col">${h}</th>`);
        const rows = tableRows(res.text, 'Members');
        expect(rows).toHaveLength(5);
        expect(rows.find((r) => r.includes(t.owner.email))).toMatch(who === t.owner ? /^Olive Owner \(you\) owner\d+@example\.com .*Owner.* Active/ : /^Olive Owner owner\d+@example\.com .*Owner.* Active/);
        expect(rows.find((r) => r.includes(t.viewer.email))).toContain('Viewer');
        expect(rows.find((r) => r.includes(invitedEmail))).toMatch(/No name yet .*Viewer.* Invited Link expires \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC/);
        expect(res.text).not.toMatch(/\sstyle=/);
      }
    });

    it('shows viewers and members the table without any form; admins and owners the forms with their exact names', async () => {
      const t = await team();
      for (const who of [t.member, t.viewer]) {
        const res = await (await browserFor(t.org, who.userId)).get('/dashboard/members');
        expect(res.text).not.toContain('Invite member');
        expect(res.text).not.toContain('Send invitation');
        expect(res.text).not.toContain('Save role');
        expect(res.text).not.toContain('<select');
        expect(res.text).not.toMatch(/\/remove"/);
        // The only form is the navigation's "Sign out".
        expect(res.text.match(/<form /g)).toHaveLength(1);
      }
      for (const who of [t.owner, t.admin]) {
        const res = await (await browserFor(t.org, who.userId)).get('/dashboard/members');
        expect(res.text).toContain('<h2 id="invite-title">Invite member</h2>');
        expect(res.text).toContain('<label for="invite-email">Email</label>');
        expect(res.text).toMatch(/<input id="invite-email" name="email" type="email"/);
        expect(res.text).toContain('<label for="invite-role">Role</label>');
        expect(res.text).toContain('<button type="submit">Send invitation</button>');
        // One "Role" select per row, each with its own id and a label naming it just "Role".
        // The only owner's row has none: the last-owner rule (for the owner) or the owner rule (for an admin).
        const ids = [...res.text.matchAll(/<label for="(role-[^"]+)" class="visually-hidden">Role<\/label>/g)].map((m) => m[1]!);
        expect(ids).toHaveLength(3);
        expect(new Set(ids).size).toBe(3);
        for (const id of ids) expect(res.text).toContain(`<select id="${id}" name="role"`);
        expect(res.text.match(/>Save role<\/button>/g)).toHaveLength(3);
        for (const m of [t.admin, t.member, t.viewer]) {
          expect(res.text).toContain(`<a href="/dashboard/members/${m.userId}/remove">Remove</a>`);
          expect(res.text).toContain(`action="/dashboard/members/${m.userId}/role"`);
        }
        expect(res.text).not.toContain(`/dashboard/members/${t.owner.userId}/remove"`);
        expect(res.text).not.toContain(`action="/dashboard/members/${t.owner.userId}/role"`);
        const ownerRow = tableRows(res.text, 'Members').find((r) => r.includes(t.owner.email))!;
        expect(ownerRow).toContain(who === t.owner ? 'The only owner keeps the owner role' : 'Only an owner can change or remove an owner.');
        // An admin is offered no "Owner" anywhere; an owner is.
        expect(res.text.includes('<option value="owner"')).toBe(who === t.owner);
      }
    });

    it('pages through every member with "Next page" links (keyset, 50 a page)', async () => {
      const org = await env.createOrg('Crowd');
      const ids = new Set([org.ownerId]);
      for (let i = 0; i < 54; i++) {
        const user = await env.container.services.admin.addUser({ orgId: org.id, email: `crowd${i}.${dialect}@example.com`, role: 'member', name: `Crowd ${i}` });
        ids.add(user.id);
      }
      const browser = await browserFor(org, org.ownerId);
      const first = await browser.get('/dashboard/members');
      expect(tableRows(first.text, 'Members')).toHaveLength(50);
      expect(first.text).not.toContain('First page');
      const next = /<a href="(\/dashboard\/members\?cursor=[^"]+)">Next page<\/a>/.exec(first.text)?.[1];
      expect(next).toBeDefined();
      const second = await browser.get(next!.replace(/&amp;/g, '&'));
      expect(second.status).toBe(200);
      const secondRows = tableRows(second.text, 'Members');
      expect(secondRows).toHaveLength(5);
      expect(second.text).not.toContain('Next page');
      expect(second.text).toContain('<a href="/dashboard/members">First page</a>');
      const seen = [...first.text.matchAll(/action="\/dashboard\/members\/([^/"]+)\/role"/g), ...second.text.matchAll(/action="\/dashboard\/members\/([^/"]+)\/role"/g)].map((m) => m[1]!);
      // Every member but the only owner has a role form; the owner (first user) is last, newest first.
      expect(seen).toHaveLength(54);
      expect(new Set([...seen, org.ownerId])).toEqual(ids);
      expect(secondRows.at(-1)).toMatch(/^Olive Owner \(you\)/);
      expect((await browser.get('/dashboard/members?cursor=not-a-cursor')).status).toBe(400);
    });

    it('takes notices only from the session: text in the address is refused, never echoed', async () => {
      const t = await team();
      const res = await (await browserFor(t.org, t.viewer.userId)).get('/dashboard/members?done=%3Cem%3Eowned%3C%2Fem%3E');
      expect(res.status).toBe(400);
      expect(res.text).not.toContain('owned');
      expect(res.text).not.toContain('class="notice"');
    });
  });

  describe('inviting', () => {
    it('an admin invites: 303 to "Invitation sent.", the same e-mail as the API, audited with the session, no event', async () => {
      const t = await team();
      const browser = await browserFor(t.org, t.admin.userId);
      await browser.get('/dashboard/members');
      const email = freshEmail();
      const before = await snapshot(t.org.id);
      const res = await browser.post('/dashboard/members/invite', { email, role: 'member' });
      expect(res.status).toBe(303);
      expect(res.location).toBe('/dashboard/members');
      const page = await browser.follow(res);
      expect(noticeOf(page.text)).toBe(`Invitation sent to ${email}.`);
      // Shown once: a reload shows the list only, and sends nothing again.
      expect(noticeOf((await browser.get('/dashboard/members')).text)).toBe('');
      expect(tableRows(page.text, 'Members').find((r) => r.includes(email))).toMatch(/Member.* Invited/);

      const user = await db().selectFrom('users').selectAll().where('org_id', '=', t.org.id).where('email', '=', email).executeTakeFirstOrThrow();
      expect(user).toMatchObject({ role: 'member', status: 'invited', name: null });
      const token = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email);
      expect(await invitationPageStatus(env, token)).toBe(200);
      const row = await expectAuditByDashboard(t.org.id, browser, t.admin.userId, 'member.invited', user.id);
      expect(JSON.parse(row.changes!)).toEqual({ role: { old: null, new: 'member' } });

      const after = await snapshot(t.org.id);
      expect(after.audit).toHaveLength(before.audit.length + 1);
      expect(after.mails).toBe(before.mails + 1);
      expect(after.events).toEqual(before.events);
      expect(after.deliveries).toEqual(before.deliveries);
      // The same invitation through the API fires no event either.
      expect((await env.request('POST', '/v1/users', { key: t.admin.key, body: { email: freshEmail(), role: 'member' } })).status).toBe(201);
      expect((await snapshot(t.org.id)).events).toEqual(before.events);
    });

    it('an owner invites an owner; re-inviting an invited user re-issues the link with the new role', async () => {
      const t = await team();
      const browser = await browserFor(t.org, t.owner.userId);
      await browser.get('/dashboard/members');
      const email = freshEmail();
      expect((await browser.post('/dashboard/members/invite', { email, role: 'owner' })).status).toBe(303);
      const first = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email);
      const user = await db().selectFrom('users').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
      expect(user.role).toBe('owner');
      expect((await browser.post('/dashboard/members/invite', { email: email.toUpperCase(), role: 'viewer' })).status).toBe(303);
      const again = await db().selectFrom('users').selectAll().where('email_normalized', '=', email).execute();
      expect(again).toHaveLength(1);
      expect(again[0]).toMatchObject({ id: user.id, role: 'viewer', status: 'invited' });
      expect(await invitationPageStatus(env, first)).toBe(404);
    });

    it.each([
      ['an invalid e-mail', 'not-an-email', 'member', 400, /Email must be a valid e-mail address/, 'invite-email'],
      ['an e-mail without a dot in the domain', 'someone@localhost', 'member', 400, /Email must be a valid e-mail address/, 'invite-email'],
      ['an e-mail over 254 characters', `${'a'.repeat(243)}@example.com`, 'member', 400, /Email must be at most 254 characters/, 'invite-email'],
      ['an empty e-mail', '', 'viewer', 400, /Email must be a valid e-mail address/, 'invite-email'],
    ])('refuses %s: 400, shown at the top and on the field, nothing changed', async (_label, email, role, status, message, field) => {
      const t = await team();
      const browser = await browserFor(t.org, t.admin.userId);
      await browser.get('/dashboard/members');
      const res = await expectRefused(t.org.id, () => browser.post('/dashboard/members/invite', { email, role }), status, message);
      expect(alertOf(res.text)).toMatch(message);
      expect(res.text).toMatch(new RegExp(`<input id="${field}"[^>]*aria-invalid="true"[^>]*aria-describedby="[^"]*${field}-error"`));
      expect(res.text).toMatch(/<caption[^>]*>Members<\/caption>/);
    });

    it('refuses the e-mail of an active member: 409 on the page, nothing changed', async () => {
      const t = await team();
      const browser = await browserFor(t.org, t.admin.userId);
      await browser.get('/dashboard/members');
      const res = await expectRefused(t.org.id, () => browser.post('/dashboard/members/invite', { email: t.member.email.toUpperCase(), role: 'viewer' }), 409);
      expect(alertOf(res.text)).toMatch(/belongs to an active member/);
      expect(res.text).toMatch(/<input id="invite-email"[^>]*aria-invalid="true"/);
      // What was typed is kept.
      expect(res.text).toContain(`value="${t.member.email.toUpperCase()}"`);
    });

    it('refuses an admin granting owner by invitation: 403 on the page, nothing changed', async () => {
      const t = await team();
      const browser = await browserFor(t.org, t.admin.userId);
      await browser.get('/dashboard/members');
      const res = await expectRefused(t.org.id, () => browser.post('/dashboard/members/invite', { email: freshEmail(), role: 'owner' }), 403);
      expect(alertOf(res.text)).toMatch(/only an owner may grant the owner role/i);
      expect(res.text).toMatch(/<select id="invite-role" name="role" aria-invalid="true"/);
    });

    it('refuses a forged invitation from a member or a viewer: 403, nothing changed, no mail', async () => {
      const t = await team();
      for (const who of [t.member, t.viewer]) {
        const browser = await browserFor(t.org, who.userId);
        await browser.get('/dashboard/members');
        const res = await expectRefused(t.org.id, () => browser.post('/dashboard/members/invite', { email: freshEmail(), role: 'viewer' }), 403);
        expect(alertOf(res.text)).toMatch(/does not allow/);
        expect(res.text).not.toContain('Send invitation');
      }
    });

    it('refuses an invitation without the CSRF token or from another site: 403, nothing changed', async () => {
      const t = await team();
      const browser = await browserFor(t.org, t.owner.userId);
      await browser.get('/dashboard/members');
      await expectRefused(t.org.id, () => browser.post('/dashboard/members/invite', { email: freshEmail(), role: 'member' }, { csrf: null }), 403);
      await expectRefused(t.org.id, () => browser.post('/dashboard/members/invite', { email: freshEmail(), role: 'member' }, { headers: { 'sec-fetch-site': 'cross-site' } }), 403);
    });
  });

  describe('changing roles', () => {
    it('an admin changes a member to viewer: 303 to "Role saved.", audited with the session, no event; applies at the next click', async () => {
      const t = await team();
      const browser = await browserFor(t.org, t.admin.userId);
      await browser.get('/dashboard/members');
      const before = await snapshot(t.org.id);
      const res = await browser.post(`/dashboard/members/${t.member.userId}/role`, { role: 'viewer' });
      expect(res.status).toBe(303);
      expect(res.location).toBe('/dashboard/members');
      expect(noticeOf((await browser.follow(res)).text)).toMatch(/^member \d+ is now a Viewer\.$/);
      expect((await userRow(t.member.userId))!.role).toBe('viewer');
      const row = await expectAuditByDashboard(t.org.id, browser, t.admin.userId, 'member.role_changed', t.member.userId);
      expect(JSON.parse(row.changes!)).toEqual({ role: { old: 'member', new: 'viewer' } });
      const after = await snapshot(t.org.id);
      expect(after.audit).toHaveLength(before.audit.length + 1);
      expect(after.events).toEqual(before.events);
      expect(after.deliveries).toEqual(before.deliveries);
      // The member's key now acts as a viewer.
      expect((await env.request('POST', '/v1/projects', { key: t.member.key, body: { name: 'x' } })).status).toBe(403);
    });

    it('a role change applies to the changed user at their next click', async () => {
      const t = await team();
      const adminBrowser = await browserFor(t.org, t.admin.userId);
      expect((await adminBrowser.get('/dashboard/members')).text).toContain('Send invitation');
      const owner = await browserFor(t.org, t.owner.userId);
      await owner.get('/dashboard/members');
      expect((await owner.post(`/dashboard/members/${t.admin.userId}/role`, { role: 'member' })).status).toBe(303);
      const page = await adminBrowser.get('/dashboard/members');
      expect(page.text).not.toContain('Send invitation');
      await expectRefused(t.org.id, () => adminBrowser.post(`/dashboard/members/${t.viewer.userId}/role`, { role: 'member' }), 403);
    });

    it('saving the same role changes nothing and writes no audit row', async () => {
      const t = await team();
      const browser = await browserFor(t.org, t.owner.userId);
      await browser.get('/dashboard/members');
      const before = await snapshot(t.org.id);
      expect((await browser.post(`/dashboard/members/${t.member.userId}/role`, { role: 'member' })).status).toBe(303);
      expect(await snapshot(t.org.id)).toEqual(before);
    });

    it('refuses an admin granting owner, or changing an owner: 403 shown on the page and on the row, nothing changed', async () => {
      const t = await team();
      const browser = await browserFor(t.org, t.admin.userId);
      await browser.get('/dashboard/members');
      const grant = await expectRefused(t.org.id, () => browser.post(`/dashboard/members/${t.member.userId}/role`, { role: 'owner' }), 403);
      expect(alertOf(grant.text)).toMatch(/only an owner may grant the owner role/i);
      expect(grant.text).toContain(`<a href="#role-${t.member.userId}">`);
      expect(grant.text).toContain(`<select id="role-${t.member.userId}" name="role" aria-invalid="true" aria-describedby="role-${t.member.userId}-error">`);
      expect(grant.text).toMatch(/<caption[^>]*>Members<\/caption>/);
      // The owner's row offers an admin no control; a forged post is refused all the same, listed at the top.
      const demote = await expectRefused(t.org.id, () => browser.post(`/dashboard/members/${t.owner.userId}/role`, { role: 'admin' }), 403);
      expect(alertOf(demote.text)).toMatch(/only an owner may/i);
      expect(demote.text).not.toContain(`<select id="role-${t.owner.userId}"`);
    });

    it('shows the last-owner guard on the page: 409, nothing changed; with a second owner the change goes through', async () => {
      const t = await team();
      const browser = await browserFor(t.org, t.owner.userId);
      await browser.get('/dashboard/members');
      const res = await expectRefused(t.org.id, () => browser.post(`/dashboard/members/${t.owner.userId}/role`, { role: 'admin' }), 409);
      expect(alertOf(res.text)).toMatch(/at least one active owner/);
      // The only owner is offered no way to demote themself; the forged post above is refused by the service.
      expect(res.text).not.toContain(`<select id="role-${t.owner.userId}"`);
      expect((await browser.post(`/dashboard/members/${t.admin.userId}/role`, { role: 'owner' })).status).toBe(303);
      expect((await browser.post(`/dashboard/members/${t.owner.userId}/role`, { role: 'admin' })).status).toBe(303);
      expect((await userRow(t.owner.userId))!.role).toBe('admin');
    });

    it('refuses a forged role change from a member or a viewer: 403 page, nothing changed', async () => {
      const t = await team();
      for (const who of [t.member, t.viewer]) {
        const browser = await browserFor(t.org, who.userId);
        await browser.get('/dashboard/members');
        const res = await expectRefused(t.org.id, () => browser.post(`/dashboard/members/${t.viewer.userId}/role`, { role: 'admin' }), 403);
        expect(alertOf(res.text)).toMatch(/does not allow/);
        await expectRefused(t.org.id, () => browser.post(`/dashboard/members/${who.userId}/role`, { role: 'owner' }), 403);
      }
    });

    it('answers 404 for an unknown user or another organisation\'s, and 403 without the CSRF token', async () => {
      const t = await team();
      const other = await env.createOrg('Other');
      const browser = await browserFor(t.org, t.owner.userId);
      await browser.get('/dashboard/members');
      await expectRefused(t.org.id, () => browser.post('/dashboard/members/user_doesnotexist0000000000/role', { role: 'viewer' }), 404);
      await expectRefused(other.id, () => browser.post(`/dashboard/members/${other.ownerId}/role`, { role: 'viewer' }), 404);
      await expectRefused(t.org.id, () => browser.post(`/dashboard/members/${t.member.userId}/role`, { role: 'viewer' }, { csrf: null }), 403);
      await expectRefused(t.org.id, () => browser.post(`/dashboard/members/${t.member.userId}/role`, { role: 'superuser' }), 400);
    });
  });

  describe('invitations on the page', () => {
    it('names the inviter in the mail; "Resend invitation" sends a new link (the old one dies); "Cancel invitation" confirms, then deletes the invitation', async () => {
      const t = await team('Inviters');
      const browser = await browserFor(t.org, t.admin.userId);
      await browser.get('/dashboard/members');
      const email = freshEmail();
      expect((await browser.post('/dashboard/members/invite', { email, role: 'viewer' })).status).toBe(303);
      const adminRow = await db().selectFrom('users').select(['name', 'email']).where('id', '=', t.admin.userId).executeTakeFirstOrThrow();
      const mail = outboxMessages(env.dataDir).filter((m) => m.raw.includes(`To: ${email}`)).at(-1)!.raw;
      expect(decodeQuotedPrintable(mail)).toContain(`${adminRow.name} (${adminRow.email}) invited you to join Inviters`);
      const first = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email);
      const invited = await db().selectFrom('users').select('id').where('org_id', '=', t.org.id).where('email', '=', email).executeTakeFirstOrThrow();

      // The row says when the link expires and offers both actions.
      const page = await browser.get('/dashboard/members');
      const row = tableRows(page.text, 'Members').find((r) => r.includes(email))!;
      expect(row).toMatch(/Invited Link expires \d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC — Resend invitation Cancel invitation$/);

      const resent = await browser.post(`/dashboard/members/${invited.id}/resend`);
      expect(resent.status).toBe(303);
      expect(noticeOf((await browser.follow(resent)).text)).toBe(`Invitation sent to ${email} again. The earlier link no longer works.`);
      const second = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email);
      expect(second).not.toBe(first);
      expect(await invitationPageStatus(env, first)).toBe(404);
      expect(await invitationPageStatus(env, second)).toBe(200);
      // An active member has nothing to resend: refused, nothing sent.
      const mails = outboxMessages(env.dataDir).length;
      await browser.get('/dashboard/members');
      expect((await browser.post(`/dashboard/members/${t.member.userId}/resend`)).status).toBe(409);
      expect(outboxMessages(env.dataDir)).toHaveLength(mails);
      // Members and viewers may not.
      const viewerBrowser = await browserFor(t.org, t.viewer.userId);
      await viewerBrowser.get('/dashboard/members');
      expect((await viewerBrowser.post(`/dashboard/members/${invited.id}/resend`)).status).toBe(403);

      const confirm = await browser.get(`/dashboard/members/${invited.id}/remove`);
      expect(confirm.status).toBe(200);
      expect(confirm.text).toContain('<title>Cancel invitation · Inviters · Workspace</title>');
      expect(confirm.text).toContain('<button type="submit" class="button danger">Cancel invitation</button>');
      const cancelled = await browser.post(`/dashboard/members/${invited.id}/remove`);
      expect(cancelled.status).toBe(303);
      expect(noticeOf((await browser.follow(cancelled)).text)).toBe(`Invitation of ${email} cancelled.`);
      expect(await userRow(invited.id)).toBeUndefined();
      expect(await invitationPageStatus(env, second)).toBe(404);
    });

    it('explains the roles under the table', async () => {
      const t = await team();
      const text = textOf((await (await browserFor(t.org, t.viewer.userId)).get('/dashboard/members')).text);
      expect(text).toContain('Roles Owner everything, including billing');
      expect(text).toContain('Viewer reads everything and changes nothing.');
    });
  });

  describe('removing', () => {
    it('an admin removes a member through the confirmation page: sessions end and keys stop at once, audited, no event', async () => {
      const t = await team();
      const victimBrowser = await browserFor(t.org, t.member.userId);
      expect((await victimBrowser.get('/dashboard/members')).status).toBe(200);
      expect((await env.request('GET', '/v1/projects', { key: t.member.key })).status).toBe(200);

      const browser = await browserFor(t.org, t.admin.userId);
      const confirm = await browser.get(`/dashboard/members/${t.member.userId}/remove`);
      expect(confirm.status).toBe(200);
      expect(confirm.text).toContain('<title>Remove member · Team · Workspace</title>');
      expect(textOf(confirm.text)).toContain(t.member.email);
      expect(confirm.text).toContain(`<form method="post" action="/dashboard/members/${t.member.userId}/remove"`);
      expect(confirm.text).toContain('<button type="submit" class="button danger">Remove member</button>');
      // Opening the confirmation changes nothing.
      expect((await env.request('GET', '/v1/projects', { key: t.member.key })).status).toBe(200);

      const before = await snapshot(t.org.id);
      const res = await browser.post(`/dashboard/members/${t.member.userId}/remove`);
      expect(res.status).toBe(303);
      expect(res.location).toBe('/dashboard/members');
      const page = await browser.follow(res);
      expect(noticeOf(page.text)).toMatch(/^member \d+ removed from Team\.$/);
      expect(tableRows(page.text, 'Members').some((r) => r.includes(t.member.email))).toBe(false);

      expect(await userRow(t.member.userId)).toBeUndefined();
      const denied = await env.request('GET', '/v1/projects', { key: t.member.key });
      expect(denied.status).toBe(401);
      const kicked = await victimBrowser.get('/dashboard/members');
      expect(kicked.status).toBe(303);
      expect(kicked.location).toMatch(/^\/dashboard\/login/);

      const row = await expectAuditByDashboard(t.org.id, browser, t.admin.userId, 'member.removed', t.member.userId);
      expect(JSON.parse(row.changes!)).toEqual({ role: { old: 'member', new: null }, status: { old: 'active', new: null } });
      const after = await snapshot(t.org.id);
      expect(after.audit).toHaveLength(before.audit.length + 1);
      expect(after.events).toEqual(before.events);
      expect(after.deliveries).toEqual(before.deliveries);

      // The removed e-mail can be invited again, from the dashboard.
      expect((await browser.post('/dashboard/members/invite', { email: t.member.email, role: 'viewer' })).status).toBe(303);
      const again = await db().selectFrom('users').selectAll().where('org_id', '=', t.org.id).where('email', '=', t.member.email).executeTakeFirstOrThrow();
      expect(again).toMatchObject({ role: 'viewer', status: 'invited' });
      expect(again.id).not.toBe(t.member.userId);
      expect(latestInvitationToken(env.dataDir, env.config.publicBaseUrl, t.member.email)).toBeTruthy();
    });

    it('removes an invited user: the link dies', async () => {
      const t = await team();
      const email = freshEmail();
      const invited = await env.request('POST', '/v1/users', { key: t.org.ownerKey, body: { email, role: 'member' } });
      const token = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email);
      const browser = await browserFor(t.org, t.admin.userId);
      await browser.get(`/dashboard/members/${invited.body.id}/remove`);
      expect((await browser.post(`/dashboard/members/${invited.body.id}/remove`)).status).toBe(303);
      expect(await invitationPageStatus(env, token)).toBe(404);
    });

    it('an owner removes an admin and another owner', async () => {
      const t = await team();
      const second = await t.add('owner');
      const browser = await browserFor(t.org, t.owner.userId);
      await browser.get('/dashboard/members');
      for (const victim of [t.admin, second]) {
        expect((await browser.post(`/dashboard/members/${victim.userId}/remove`)).status).toBe(303);
        expect((await env.request('GET', '/v1/projects', { key: victim.key })).status).toBe(401);
      }
    });

    it('refuses an admin removing an owner: 403 shown on the members page, nothing changed', async () => {
      const t = await team();
      const browser = await browserFor(t.org, t.admin.userId);
      // No confirmation for a removal the owner rule refuses; a forged post is refused by the service.
      const confirm = await browser.get(`/dashboard/members/${t.owner.userId}/remove`);
      expect(confirm.status).toBe(403);
      expect(textOf(confirm.text)).toContain('Only an owner can change or remove an owner.');
      await browser.get('/dashboard/members');
      const res = await expectRefused(t.org.id, () => browser.post(`/dashboard/members/${t.owner.userId}/remove`), 403);
      expect(alertOf(res.text)).toMatch(/only an owner may .*remove an owner/i);
      expect(res.text).toMatch(/<caption[^>]*>Members<\/caption>/);
      expect((await env.request('GET', '/v1/projects', { key: t.owner.key })).status).toBe(200);
    });

    it('refuses removing the last active owner (the owner themselves): 409 on the page, still signed in', async () => {
      const t = await team();
      const browser = await browserFor(t.org, t.owner.userId);
      await browser.get(`/dashboard/members/${t.owner.userId}/remove`);
      const res = await expectRefused(t.org.id, () => browser.post(`/dashboard/members/${t.owner.userId}/remove`), 409);
      expect(alertOf(res.text)).toMatch(/at least one active owner/);
      expect((await browser.get('/dashboard/members')).status).toBe(200);
    });

    it('an owner may remove themselves when another active owner remains: their session ends', async () => {
      const t = await team();
      await t.add('owner');
      const browser = await browserFor(t.org, t.owner.userId);
      await browser.get('/dashboard/members');
      expect((await browser.post(`/dashboard/members/${t.owner.userId}/remove`)).status).toBe(303);
      expect((await browser.get('/dashboard/members')).status).toBe(303);
    });

    it('answers 403 to members and viewers: the confirmation page and a forged POST, nothing changed', async () => {
      const t = await team();
      for (const who of [t.member, t.viewer]) {
        const browser = await browserFor(t.org, who.userId);
        await browser.get('/dashboard/members');
        const confirm = await browser.get(`/dashboard/members/${t.viewer.userId}/remove`);
        expect(confirm.status).toBe(403);
        expect(confirm.text).not.toContain('Remove member</button>');
        await expectRefused(t.org.id, () => browser.post(`/dashboard/members/${t.viewer.userId}/remove`), 403);
        await expectRefused(t.org.id, () => browser.post(`/dashboard/members/${who.userId}/remove`), 403);
      }
      expect((await env.request('GET', '/v1/projects', { key: t.viewer.key })).status).toBe(200);
    });

    it('answers 404 for an unknown user or another organisation\'s, and 403 without the CSRF token', async () => {
      const t = await team();
      const other = await env.createOrg('Other');
      const stranger = await other.member('member');
      const browser = await browserFor(t.org, t.owner.userId);
      expect((await browser.get('/dashboard/members/user_doesnotexist0000000000/remove')).status).toBe(404);
      expect((await browser.get(`/dashboard/members/${stranger.userId}/remove`)).status).toBe(404);
      expect((await browser.get('/dashboard/members/bad%00id/remove')).status).toBe(404);
      await browser.get('/dashboard/members');
      await expectRefused(t.org.id, () => browser.post('/dashboard/members/user_doesnotexist0000000000/remove'), 404);
      await expectRefused(other.id, () => browser.post(`/dashboard/members/${stranger.userId}/remove`), 404);
      await expectRefused(t.org.id, () => browser.post(`/dashboard/members/${t.member.userId}/remove`, {}, { csrf: null }), 403);
      await expectRefused(t.org.id, () => browser.post(`/dashboard/members/${t.member.userId}/remove`, {}, { headers: { origin: 'https://evil.example' } }), 403);
      expect((await env.request('GET', '/v1/projects', { key: stranger.key })).status).toBe(200);
    });
  });

  describe('each role against each action', () => {
    const roles = ['owner', 'admin', 'member', 'viewer'] as const;
    it.each(roles)('%s', async (role) => {
      const t = await team();
      const actor = { owner: t.owner, admin: t.admin, member: t.member, viewer: t.viewer }[role];
      const allowed = role === 'owner' || role === 'admin';
      const browser = await browserFor(t.org, actor.userId);
      const page = await browser.get('/dashboard/members');
      expect(page.text.includes('Send invitation')).toBe(allowed);
      expect(page.text.includes('Save role')).toBe(allowed);

      const target = await t.add('viewer');
      const actions: [string, () => Promise<PageResponse>][] = [
        ['invite', () => browser.post('/dashboard/members/invite', { email: freshEmail(), role: 'member' })],
        ['change role', () => browser.post(`/dashboard/members/${target.userId}/role`, { role: 'member' })],
        ['remove', () => browser.post(`/dashboard/members/${target.userId}/remove`)],
      ];
      for (const [name, send] of actions) {
        if (allowed) {
          const res = await send();
          expect(res.status, `${role} ${name}`).toBe(303);
        } else {
          await expectRefused(t.org.id, send, 403);
        }
      }
      if (allowed) expect(await userRow(target.userId)).toBeUndefined();
      else expect((await userRow(target.userId))!.role).toBe('viewer');
    });
  });
});
