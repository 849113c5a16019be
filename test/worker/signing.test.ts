import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signBody, verifySignature } from '../../src/index.js';

const secret = 'whsec_test-secret-0123456789';
const body = Buffer.from('{"event":"project.created","timestamp":"2026-11-22T09:30:00.000Z","data":{"name":"Å"}}', 'utf8');
const good = createHmac('sha256', secret).update(body).digest('hex');

describe('verifySignature (package entry)', () => {
  it('accepts the hex HMAC-SHA256 of the exact bytes, as Buffer, Uint8Array or string', () => {
    expect(signBody(secret, body)).toBe(good);
    expect(verifySignature(body, good, secret)).toBe(true);
    expect(verifySignature(new Uint8Array(body), good, secret)).toBe(true);
    expect(verifySignature(body.toString('utf8'), good, secret)).toBe(true);
    expect(verifySignature(body, good.toUpperCase(), secret)).toBe(true);
    expect(verifySignature(body, [good], secret)).toBe(true);
  });

  it('refuses other bytes, another secret, and missing or malformed headers', () => {
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(body.toString())).replace('Å', '\\u00c5'));
    expect(verifySignature(reserialised, good, secret)).toBe(false);
    expect(verifySignature(Buffer.concat([body, Buffer.from(' ')]), good, secret)).toBe(false);
    expect(verifySignature(body, good, `${secret}x`)).toBe(false);
    for (const header of [undefined, null, '', 'sha256=' + good, good.slice(0, 63), `${good}00`, 'z'.repeat(64), []]) {
      expect(verifySignature(body, header as string | undefined, secret)).toBe(false);
    }
  });
});
