import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { createSecretBox, keyIdOf, parseSecretKeys } from '../../src/lib/secret-box.js';
import { testDialects } from '../helpers/test-env.js';
import { waitFor, type ReceivedRequest } from '../helpers/https-receiver.js';
import { cliJson, runCli, startServe, type ServeProcess } from '../helpers/cli.js';
import { serveFixture, stopServe } from '../helpers/serve-fixture.js';

const KEY = randomBytes(32).toString('base64');
const OTHER_KEY = randomBytes(32).toString('base64');

function headersOf(request: ReceivedRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') out[name] = value;
  return out;
}

describe('secret box', () => {
  it('seals with the key id beside the value, opens under an older key, refuses a value no key opens', () => {
    const [current, older] = [randomBytes(32), randomBytes(32)];
    const box = createSecretBox([current, older]);
    const sealed = box.seal('whsec_abc');
    expect(sealed).toMatch(new RegExp(`^wsk1:${keyIdOf(current)}:`));
    expect(sealed).not.toContain('abc');
    expect(box.seal('whsec_abc')).not.toBe(sealed); // a fresh IV each time
    expect(box.open(sealed)).toBe('whsec_abc');
    expect(box.isCurrent(sealed)).toBe(true);
    const old = createSecretBox([older]).seal('old secret 0123456789');
    expect(box.open(old)).toBe('old secret 0123456789');
    expect(box.isCurrent(old)).toBe(false);
    expect(box.isCurrent('plain secret')).toBe(false);
    expect(box.open('plain secret')).toBe('plain secret');
    expect(() => createSecretBox([randomBytes(32)]).open(sealed)).toThrow(/not hold/);
    const damaged = sealed.slice(0, -4) + (sealed.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    expect(() => createSecretBox([current]).open(damaged)).toThrow(/does not open/);
    expect(() => createSecretBox([]).open(sealed)).toThrow(/not set/);
  });

  it('parses WEBHOOK_SECRETS_KEY: 32 bytes of base64 each, comma-separated', () => {
    expect(parseSecretKeys(`${KEY},${OTHER_KEY}`)).toHaveLength(2);
    expect(parseSecretKeys('c2hvcnQ=')).toMatch(/32 bytes/);
    expect(parseSecretKeys('not base64!')).toMatch(/base64/);
    expect(parseSecretKeys(' , ')).toMatch(/at least one/);
  });
});

describe.each(testDialects())('webhook secrets at rest (%s)', (dialect) => {
  const f = serveFixture(dialect, { env: { LOG_LEVEL: 'info' } });
  let serve: ServeProcess | null = null;
  afterAll(() => stop());

  async function stop() {
    await stopServe(serve);
    serve = null;
  }

  /** Every byte the database keeps: the SQLite file with its WAL and shared memory, or a pg_dump of the database. */
  function storedBytes(): Buffer {
    if (dialect === 'postgres') return execFileSync('pg_dump', ['--no-owner', f.world.env.DATABASE_URL!], { maxBuffer: 256 * 1024 * 1024 });
    const files = fs.readdirSync(f.world.dataDir).filter((file) => file.startsWith('workspace.db'));
    return Buffer.concat(files.map((file) => fs.readFileSync(path.join(f.world.dataDir, file))));
  }

  let key = '';
  const api = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${serve!.address}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  const plainSecret = 'plain-secret-kept-before-the-key-0001';
  const chosenSecret = 'chosen-secret-under-the-key-0002';
  let plainHook = '';

  it('without a key, secrets are stored as given and the log says so at start', async () => {
    key = (await cliJson(['org', 'create', '--name', 'Vault', '--owner-email', 'vault@example.com'], f.env)).api_key.key;
    serve = await startServe(f.env);
    expect(serve.lines.some((l) => l.includes('WEBHOOK_SECRETS_KEY is not set'))).toBe(true);
    const res = await api('POST', '/v1/webhooks', { url: f.receiver.url('/plain'), events: ['project.created'], secret: plainSecret });
    expect(res.status).toBe(201);
    plainHook = String(res.body.id);
    await stop();
    expect(storedBytes().includes(plainSecret)).toBe(true);
  });

  it('with WEBHOOK_SECRETS_KEY, existing secrets are sealed at start and no secret bytes remain in the database', async () => {
    serve = await startServe({ ...f.env, WEBHOOK_SECRETS_KEY: KEY });
    expect(serve.lines.some((l) => l.includes('webhook secrets sealed'))).toBe(true);
    // New secrets, a generated one through an idempotent request (its stored response holds the secret), a rotation.
    const created = await api('POST', '/v1/webhooks', { url: f.receiver.url('/sealed'), events: ['project.created'] }, { 'idempotency-key': 'create-sealed-1' });
    expect(created.status).toBe(201);
    const generated = String(created.body.secret);
    const replayed = await api('POST', '/v1/webhooks', { url: f.receiver.url('/sealed'), events: ['project.created'] }, { 'idempotency-key': 'create-sealed-1' });
    expect(replayed.body.secret).toBe(generated);
    const chosen = await api('POST', '/v1/webhooks', { url: f.receiver.url('/chosen'), events: ['project.created'], secret: chosenSecret });
    const rotated = await api('POST', `/v1/webhooks/${plainHook}/rotate-secret`, { previous_expires_in: 3600 });
    expect(rotated.status).toBe(200);
    const newPlainSecret = String(rotated.body.secret);

    // Deliveries still verify with every secret.
    expect((await api('POST', '/v1/projects', { name: 'Sealed' })).status).toBe(201);
    const at = (p: string) => waitFor(`a delivery at ${p}`, () => f.receiver.at(p)[0]);
    const [plain, sealed, chosenReq] = [await at('/plain'), await at('/sealed'), await at('/chosen')];
    expect(() => new Webhook(newPlainSecret).verify(plain.body.toString(), headersOf(plain))).not.toThrow();
    expect(() => new Webhook(Buffer.from(plainSecret), { format: 'raw' }).verify(plain.body.toString(), headersOf(plain))).not.toThrow();
    expect(() => new Webhook(generated).verify(sealed.body.toString(), headersOf(sealed))).not.toThrow();
    expect(() => new Webhook(Buffer.from(chosenSecret), { format: 'raw' }).verify(chosenReq.body.toString(), headersOf(chosenReq))).not.toThrow();
    expect(chosen.status).toBe(201);

    await stop();
    const bytes = storedBytes();
    for (const secret of [plainSecret, newPlainSecret, generated, chosenSecret]) {
      expect(bytes.includes(secret), `secret ${secret.slice(0, 12)}… in the stored bytes`).toBe(false);
      expect(bytes.includes(secret.slice(6)), 'its base64 part').toBe(false);
    }
    expect(bytes.includes(`wsk1:${keyIdOf(Buffer.from(KEY, 'base64'))}:`)).toBe(true);
  });

  it('a wrong key, or none, stops the process with a message naming WEBHOOK_SECRETS_KEY; nothing is sent', async () => {
    const sent = f.receiver.requests.length;
    for (const env of [{ ...f.env, WEBHOOK_SECRETS_KEY: OTHER_KEY }, f.env]) {
      const result = await runCli(['serve'], { ...env, PORT: '0' });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/WEBHOOK_SECRETS_KEY/);
      expect(result.stderr).not.toMatch(/at .*\.js:\d+/);
    }
    const bad = await runCli(['serve'], { ...f.env, PORT: '0', WEBHOOK_SECRETS_KEY: 'c2hvcnQ=' });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/WEBHOOK_SECRETS_KEY.*32 bytes/);
    expect(f.receiver.requests.length).toBe(sent);
  });

  it('a new key with the old one after it re-seals every secret under the new key (key rotation)', async () => {
    serve = await startServe({ ...f.env, WEBHOOK_SECRETS_KEY: `${OTHER_KEY},${KEY}` });
    expect(serve.lines.some((l) => l.includes('webhook secrets sealed'))).toBe(true);
    await stop();
    const text = storedBytes().toString('latin1');
    expect(text).toContain(`wsk1:${keyIdOf(Buffer.from(OTHER_KEY, 'base64'))}:`);
    expect(text).not.toContain(`wsk1:${keyIdOf(Buffer.from(KEY, 'base64'))}:`);
    // The old key is no longer needed.
    serve = await startServe({ ...f.env, WEBHOOK_SECRETS_KEY: OTHER_KEY });
    expect((await api('POST', '/v1/projects', { name: 'After rotation' })).status).toBe(201);
    await waitFor('a delivery after the key rotation', () => f.receiver.at('/chosen')[1]);
    const request = f.receiver.at('/chosen')[1]!;
    expect(() => new Webhook(Buffer.from(chosenSecret), { format: 'raw' }).verify(request.body.toString(), headersOf(request))).not.toThrow();
    await stop();
  });
});
