import { createHmac, hash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/** Hex SHA-256; secrets with at least 128 random bits need no salt or stretching to be stored safely. */
export function sha256Hex(value: string | Buffer): string {
  // The one-shot form: about half the cost of createHash().update().digest() for a key-sized input, and
  // it runs on every authenticated request.
  return hash('sha256', value, 'hex');
}

export function hmacSha256Hex(key: string, body: string | Buffer): string {
  return createHmac('sha256', key).update(body).digest('hex');
}

/** Constant-time comparison of two strings; unequal lengths compare unequal without leaking where. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

const SCRYPT_N = 16384;
const SCRYPT_KEYLEN = 64;

function scryptAsync(password: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, SCRYPT_KEYLEN, { N: SCRYPT_N, r: 8, p: 1 }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** `scrypt$N$salt$hash`, with a per-user random salt. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt);
  return `scrypt$${SCRYPT_N}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, , saltText, hashText] = stored.split('$');
  if (scheme !== 'scrypt' || !saltText || !hashText) return false;
  const key = await scryptAsync(password, Buffer.from(saltText, 'base64url'));
  return safeEqual(key.toString('base64url'), hashText);
}
