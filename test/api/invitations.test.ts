import net from 'node:net';
import { pino } from 'pino';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex, verifyPassword } from '../../src/lib/crypto.js';
import { invitationTokens, latestInvitationToken, outboxMessages } from '../helpers/mail-outbox.js';
import { createTestEnv, testDialects, type ApiResponse, type TestEnv, type TestOrg } from '../helpers/test-env.js';

const HOUR = 60 * 60 * 1000;
const START = Date.UTC(2026, 10, 22, 9, 30, 0, 0);

/** A real SMTP server on 127.0.0.1 that keeps every message it receives. */
async function startSmtpServer(): Promise<{ url: string; messages: { to: string[]; raw: string }[]; close(): Promise<void> }> {
  const messages: { to: string[]; raw: string }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        messages.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as net.AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, messages, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** A port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A logger at info level whose output the test reads back, one parsed JSON object per line. */
function captureLogger() {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  return { logger, lines, entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe.each(testDialects())('invitations (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let time = START;
  const clock = { now: () => time };
  let counter = 0;

  beforeAll(async () => {
    env = await createTestEnv(dialect, { clock, env: { PUBLIC_BASE_URL: 'https://app.example.test' } });
    org = await env.createOrg('Acme');
  });
  afterAll(async () => env?.close());

  /** Invites a fresh address; returns the user and the token of the e-mail it was sent. */
  async function inviteNew(role = 'member', target: TestEnv = env, key = org.ownerKey): Promise<{ user: ApiResponse['body']; email: string; token: string }> {
    const email = `invitee${++counter}@example.com`;
    const res = await target.request('POST', '/v1/users', { key, body: { email, role } });
    expect(res.status).toBe(201);
    return { user: res.body, email, token: latestInvitationToken(target.dataDir, target.config.publicBaseUrl, email) };
  }

  const accept = (token: string, body: unknown = { name: 'Ada Lovelace', password: 'analytical engine' }) =>
    env.request('POST', `/invitations/${token}/accept`, { body });
  /** The e-mailed link: a redirect to the dashboard's invitation page, then that page. */
  async function openLink(token: string, target: TestEnv = env): Promise<ApiResponse> {
    const link = await target.request('GET', `/invitations/${token}`);
    expect(link.status).toBe(303);
    expect(link.headers.location).toBe(`/dashboard/invitations/${encodeURIComponent(token)}`);
    expect(link.headers['referrer-policy']).toBe('no-referrer');
    expect(link.headers['cache-control']).toBe('no-store');
    return target.request('GET', String(link.headers.location));
  }
  const readUser = async (id: string) => (await env.request('GET', `/v1/users/${id}`, { key: org.ownerKey })).body;
  const invitationRows = (userId: string) =>
    env.container.database.db.selectFrom('invitations').selectAll().where('user_id', '=', userId).orderBy('seq').execute();

  describe('rejections', () => {
    it('refuses invalid accept bodies, naming the fields, and leaves the user invited and the link usable', async () => {
      const { user, token } = await inviteNew();
      const cases: [unknown, { field: string; message: string }[]][] = [
        [{ name: 'Ada', password: 'short' }, [{ field: 'password', message: 'must be at least 8 characters' }]],
        [{ password: 'long enough' }, [{ field: 'name', message: 'is required' }]],
        [{ name: '', password: 'long enough' }, [{ field: 'name', message: 'must be at least 1 characters' }]],
        [{ name: 'Ada', password: 'long enough', role: 'owner' }, [{ field: 'role', message: 'is not an accepted field' }]],
        [{ name: 'a'.repeat(256), password: 'x'.repeat(1025) }, [
          { field: 'name', message: 'must be at most 255 characters' },
          { field: 'password', message: 'must be at most 1024 characters' },
        ]],
        [{ name: 7, password: 12345678 }, [
          { field: 'name', message: 'must be of type string' },
          { field: 'password', message: 'must be of type string' },
        ]],
      ];
      for (const [body, details] of cases) {
        const res = await accept(token, body);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('validation_failed');
        expect(res.body.error.details).toEqual(details);
      }
      const empty = await env.request('POST', `/invitations/${token}/accept`, { headers: { 'content-type': 'application/json' } });
      expect(empty.status).toBe(400);
      expect(empty.body.error.code).toBe('invalid_json');
      const form = await env.request('POST', `/invitations/${token}/accept`, { payload: 'name=Ada', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(form.status).toBe(415);
      expect(form.body.error.code).toBe('unsupported_media_type');

      expect(await readUser(user.id)).toEqual(user);
      expect((await invitationRows(user.id))[0]!.used_at).toBeNull();
      expect((await accept(token)).status).toBe(200);
    });

    it('answers 404 for an unknown token, on the accept endpoint and on the page', async () => {
      for (const token of ['nope', 'A'.repeat(43), 'x'.repeat(100)]) {
        const res = await accept(token);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
        const page = await openLink(token);
        expect(page.status).toBe(404);
        expect(page.headers['content-type']).toMatch(/^text\/html/);
        expect(page.text).toContain('Invitation not found');
      }
    });

    it('answers 410 after 72 hours and the user stays invited; a re-invite gives a working link', async () => {
      const { user, email, token } = await inviteNew();
      time += 72 * HOUR - 1;
      expect((await openLink(token)).status).toBe(200);
      time += 1;
      const res = await accept(token);
      expect(res.status).toBe(410);
      expect(res.body.error.code).toBe('invitation_expired');
      expect(await readUser(user.id)).toEqual(user);
      expect((await invitationRows(user.id))[0]!.used_at).toBeNull();

      const page = await openLink(token);
      expect(page.status).toBe(410);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.text).toContain('This invitation has expired');
      expect(page.text).toMatch(/ask an administrator of the organisation to invite you again/i);

      const again = await env.request('POST', '/v1/users', { key: org.ownerKey, body: { email, role: 'viewer' } });
      expect(again.status).toBe(201);
      expect(again.body.id).toBe(user.id);
      const fresh = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email);
      // The superseded link is dead (404), no longer merely expired.
      expect((await accept(token)).status).toBe(404);
      const accepted = await accept(fresh);
      expect(accepted.status).toBe(200);
      expect(accepted.body).toMatchObject({ id: user.id, status: 'active', role: 'viewer' });
    });
  });

  describe('links and acceptance', () => {
    it('writes an .eml to the invitee that carries the link', async () => {
      const before = outboxMessages(env.dataDir).length;
      const { email, token } = await inviteNew('admin');
      const messages = outboxMessages(env.dataDir);
      expect(messages).toHaveLength(before + 1);
      const { file, raw } = messages.at(-1)!;
      expect(file).toMatch(/^\d{8}T\d{9}Z-\d{8}-[0-9a-f]{12}\.eml$/);
      expect(raw).toMatch(new RegExp(`^To: ${email}$`, 'm'));
      expect(raw).toMatch(/^Subject: You're invited to join Acme$/m);
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes
      expect(invitationTokens(raw, 'https://app.example.test')).toEqual([token]);
    });

    it('stores only the SHA-256 of the token, valid for 72 hours', async () => {
      const { user, token } = await inviteNew();
      const rows = await invitationRows(user.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.token_hash).toBe(sha256Hex(token));
      expect(JSON.stringify(rows)).not.toContain(token);
      expect(rows[0]!.expires_at - rows[0]!.created_at).toBe(72 * HOUR);
    });

    it('accepts once: the user becomes active with the name, the second accept is 404', async () => {
      const { user, token } = await inviteNew('viewer');
      time += 1000;
      const res = await accept(token, { name: 'Ada Lovelace', password: 'analytical engine' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...user, name: 'Ada Lovelace', status: 'active', updated_at: new Date(time).toISOString() });
      expect(await readUser(user.id)).toEqual(res.body);

      const second = await accept(token, { name: 'Mallory', password: 'another password' });
      expect(second.status).toBe(404);
      expect(second.body.error.code).toBe('not_found');
      expect((await readUser(user.id)).name).toBe('Ada Lovelace');
      expect((await openLink(token)).status).toBe(404);
    });

    it('lets exactly one of two concurrent accepts win', async () => {
      const { user, token } = await inviteNew();
      const results = await Promise.all([
        accept(token, { name: 'First', password: 'password one' }),
        accept(token, { name: 'Second', password: 'password two' }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 404]);
      const winner = results.find((r) => r.status === 200)!;
      expect((await readUser(user.id)).name).toBe(winner.body.name);
    });

    it('stores the password as salted scrypt, never in clear', async () => {
      const password = 'same password for both';
      const a = await inviteNew();
      const b = await inviteNew();
      expect((await accept(a.token, { name: 'A', password })).status).toBe(200);
      expect((await accept(b.token, { name: 'B', password })).status).toBe(200);
      const rows = await env.container.database.db.selectFrom('users').select(['id', 'password_hash']).where('id', 'in', [a.user.id, b.user.id]).execute();
      const hashes = rows.map((r) => r.password_hash!);
      for (const hash of hashes) {
        expect(hash).toMatch(/^scrypt\$16384\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/);
        expect(hash).not.toContain(password);
        expect(await verifyPassword(password, hash)).toBe(true);
        expect(await verifyPassword('wrong password', hash)).toBe(false);
      }
      expect(hashes[0]).not.toBe(hashes[1]);
    });

    it('serves the dashboard form (no inline script or style) with everything interpolated escaped', async () => {
      const evil = await env.createOrg('<script>alert(1)</script> & "Co"');
      const email = `o'brien${++counter}@example.com`;
      const invited = await env.request('POST', '/v1/users', { key: evil.ownerKey, body: { email, role: 'member' } });
      expect(invited.status).toBe(201);
      const token = latestInvitationToken(env.dataDir, env.config.publicBaseUrl, email);
      const page = await openLink(token);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers['referrer-policy']).toBe('no-referrer');
      expect(page.headers['cache-control']).toBe('no-store');
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(page.text).toContain('Join &lt;script>alert(1)&lt;/script> &amp; &quot;Co&quot;');
      expect(page.text).not.toContain('<script>alert(1)');
      expect(page.text).toContain(`value="o'brien${counter}@example.com"`);
      expect(page.text).not.toMatch(/(src|href)=["']?(https?:)?\/\//); // no external assets
      expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
      expect(page.text).not.toMatch(/\sstyle=/);
      expect(page.text).toContain('<form method="post" id="accept"');
      expect(page.text).not.toContain(token); // the form posts back to the page's own address
    });

    it('documents the invitation acceptance in the OpenAPI document, not the page the link opens', async () => {
      const doc = (await env.request('GET', '/openapi.json')).body;
      const named = (ref: { $ref: string }) => doc.components.schemas[ref.$ref.split('/').pop()!];
      // The link is a browser page (a redirect to the dashboard's form), not an API operation.
      expect(doc.paths['/invitations/{token}']).toBeUndefined();
      const acceptOp = doc.paths['/invitations/{token}/accept'].post;
      expect(acceptOp.operationId).toBe('acceptInvitation');
      expect(acceptOp.tags).toEqual(['Invitations']);
      expect(acceptOp.security).toEqual([]);
      expect(acceptOp.parameters).toEqual([expect.objectContaining({ in: 'path', name: 'token', required: true })]);
      const body = named(acceptOp.requestBody.content['application/json'].schema);
      expect(body).toMatchObject({ additionalProperties: false, required: ['name', 'password'] });
      expect(body.properties.password).toMatchObject({ minLength: 8, maxLength: 1024 });
      expect(Object.keys(acceptOp.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '410']));
      expect(named(acceptOp.responses['200'].content['application/json'].schema).required).toEqual(
        ['id', 'email', 'name', 'role', 'status', 'created_at', 'updated_at'],
      );
    });
  });

  describe('SMTP', () => {
    it('sends the invitation through a real SMTP server', async () => {
      const smtp = await startSmtpServer();
      const smtpEnv = await createTestEnv(dialect, { env: { SMTP_URL: smtp.url, PUBLIC_BASE_URL: 'https://mail.example.test' } });
      try {
        const smtpOrg = await smtpEnv.createOrg('Mailed');
        const res = await smtpEnv.request('POST', '/v1/users', { key: smtpOrg.ownerKey, body: { email: 'smtp-invitee@example.com', role: 'member' } });
        expect(res.status).toBe(201);
        expect(smtp.messages).toHaveLength(1);
        expect(smtp.messages[0]!.to).toEqual(['smtp-invitee@example.com']);
        const [token] = invitationTokens(smtp.messages[0]!.raw, 'https://mail.example.test');
        expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(outboxMessages(smtpEnv.dataDir)).toEqual([]);

        const accepted = await smtpEnv.request('POST', `/invitations/${token}/accept`, { body: { name: 'Sam', password: 'via smtp ok' } });
        expect(accepted.status).toBe(200);
        expect(accepted.body).toMatchObject({ id: res.body.id, status: 'active', name: 'Sam' });
      } finally {
        await smtpEnv.close();
        await smtp.close();
      }
    });

    it('keeps the invitation and answers 201 when the mail server is down, logging the user id but no token', async () => {
      const log = captureLogger();
      const downEnv = await createTestEnv(dialect, { logger: log.logger, env: { SMTP_URL: `smtp://127.0.0.1:${await closedPort()}` } });
      try {
        const downOrg = await downEnv.createOrg('Offline');
        const res = await downEnv.request('POST', '/v1/users', { key: downOrg.ownerKey, body: { email: 'unlucky@example.com', role: 'viewer' } });
        expect(res.status).toBe(201);
        expect(res.body.status).toBe('invited');
        const read = await downEnv.request('GET', `/v1/users/${res.body.id}`, { key: downOrg.ownerKey });
        expect(read.body).toEqual(res.body);
        const rows = await downEnv.container.database.db.selectFrom('invitations').selectAll().where('user_id', '=', res.body.id).execute();
        expect(rows).toHaveLength(1);

        const errors = log.entries().filter((entry) => entry.level === 50);
        expect(errors).toHaveLength(1);
        expect(errors[0]).toMatchObject({ userId: res.body.id, orgId: downOrg.id, msg: expect.stringMatching(/invitation e-mail could not be sent/) });
        // Only the hash is stored; nothing in the log may let anyone rebuild the link.
        expect(log.lines.join('')).not.toMatch(/invitations\/[A-Za-z0-9_-]/);
      } finally {
        await downEnv.close();
      }
    });
  });

  it('keeps invitation links out of the request log', async () => {
    const log = captureLogger();
    const logged = await createTestEnv(dialect, { logger: log.logger });
    try {
      const loggedOrg = await logged.createOrg('Logged');
      const invited = await logged.request('POST', '/v1/users', { key: loggedOrg.ownerKey, body: { email: 'quiet@example.com', role: 'member' } });
      expect(invited.status).toBe(201);
      const token = latestInvitationToken(logged.dataDir, logged.config.publicBaseUrl, 'quiet@example.com');
      expect((await openLink(token, logged)).status).toBe(200);
      expect((await logged.request('POST', `/invitations/${token}/accept`, { body: { name: 'Q' } })).status).toBe(400);
      expect((await logged.request('POST', `/invitations/${token}/accept`, { body: { name: 'Q', password: 'quiet please' } })).status).toBe(200);
      // Other requests are logged as usual, so the absence below is not an empty log.
      expect(log.entries().some((entry) => entry.url === '/v1/users' && entry.statusCode === 201)).toBe(true);
      expect(log.lines.join('')).not.toContain(token);
      // The dashboard's invitation page is logged like any page, with the token masked.
      expect(log.lines.join('')).toContain('/dashboard/invitations/[redacted]');
    } finally {
      await logged.close();
    }
  });
});
