import { randomBytes, randomFillSync } from 'node:crypto';

export type IdPrefix = 'org' | 'user' | 'proj' | 'wh' | 'key' | 'evt' | 'dlv' | 'inv' | 'wf' | 'task' | 'att' | 'req' | 'sess' | 'tok' | 'aud' | 'rpl' | 'run' | 'step' | 'exp';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * `prefix_` followed by 24 base-36 characters drawn from 16 random bytes (about 124 bits), above the
 * contract's floor of 80 unguessable bits. Rejection sampling keeps every character uniform.
 */
export function newId(prefix: IdPrefix): string {
  let out = `${prefix}_`;
  for (let n = 0; n < 24; ) {
    const byte = nextRandomByte();
    if (byte >= 252) continue; // 252 = 36 * 7: keep the distribution uniform
    out += ALPHABET[byte % 36];
    n++;
  }
  return out;
}

// Every request gets an id (X-Request-Id): one randomBytes call per id cost more than the rest of the
// id, so bytes come from a pool refilled from the same CSPRNG (as crypto.randomUUID does); each byte
// is used once.
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;

function nextRandomByte(): number {
  if (poolOffset === POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** A random secret token in base64url, for keys, invitation links and webhook secrets. */
export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}
