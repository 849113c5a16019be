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

/** The one expensive step of every password check: scrypt (N 16384, r 8, p 1) of the password with a salt. */
export function scryptAsync(password: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, SCRYPT_KEYLEN, { N: SCRYPT_N, r: 8, p: 1 }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** `scrypt$N$salt$hash`: the one stored form, whichever salt it was made with. */
export function formatPasswordHash(salt: Buffer, key: Buffer): string {
  return `scrypt$${SCRYPT_N}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** The salt and key of a stored hash, or null for anything that is not one. */
export function parsePasswordHash(stored: string): { saltText: string; salt: Buffer; keyText: string } | null {
  const [scheme, , saltText, keyText] = stored.split('$');
  if (scheme !== 'scrypt' || !saltText || !keyText) return null;
  return { saltText, salt: Buffer.from(saltText, 'base64url'), keyText };
}

/** A hash with a random salt of its own (the services share a salt per address: services/identity/passwords.ts). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  return formatPasswordHash(salt, await scryptAsync(password, salt));
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parsePasswordHash(stored);
  if (!parsed) return false;
  const key = await scryptAsync(password, parsed.salt);
  return safeEqual(key.toString('base64url'), parsed.keyText);
}
