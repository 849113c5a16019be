import { randomBytes, randomFillSync } from 'node:crypto';

export type IdPrefix = 'org' | 'user' | 'proj' | 'wh' | 'key' | 'evt' | 'dlv' | 'inv' | 'wf' | 'task' | 'att' | 'req' | 'sess' | 'tok' | 'aud' | 'rpl' | 'run' | 'step' | 'exp' | 'pk' | 'sso' | 'dom' | 'idn' | 'inst' | 'grp' | 'sct' | 'app' | 'oag';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * `prefix_` followed by 24 base-36 characters drawn from 16 random bytes (about 124 bits), above the
 * contract's floor of 80 unguessable bits. Rejection sampling keeps every character uniform.
 */
export function newId(prefix: IdPrefix): string {
  for (let n = 0; n < ID_LENGTH; ) {
    if (poolOffset === POOL_SIZE) {
      randomFillSync(pool);
      poolOffset = 0;
    }
    const byte = pool[poolOffset++]!;
    // 252 = 36 * 7: bytes above it are dropped, so every character stays uniform.
    if (byte < 252) scratch[n++] = CODE_OF_BYTE[byte]!;
  }
  return `${prefix}_${scratch.toString('latin1', 0, ID_LENGTH)}`;
}

// Every request gets an id (X-Request-Id): one randomBytes call per id cost more than the rest of the
// id, so bytes come from a pool refilled from the same CSPRNG (as crypto.randomUUID does); each byte
// is used once. The characters are written into a scratch buffer and read out as one string (2.5x faster
// than appending 24 one-character strings; ids are made synchronously, so one buffer serves every call).
const ID_LENGTH = 24;
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;
const scratch = Buffer.alloc(ID_LENGTH);
/** The character code each accepted byte stands for. */
const CODE_OF_BYTE = Uint8Array.from({ length: 252 }, (_, byte) => ALPHABET.charCodeAt(byte % 36));

/** A random secret token in base64url, for keys, invitation links and webhook secrets. */
export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}
