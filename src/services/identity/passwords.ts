import { createHmac, randomBytes } from 'node:crypto';
import type { Store } from '../../db/store.js';
import { formatPasswordHash, parsePasswordHash, safeEqual, scryptAsync } from '../../lib/crypto.js';

/**
 * Typed input beyond this never matches: it bounds what one attempt can cost (the doors refuse longer fields, and
 * no password can be set longer than the account rules allow). The check still costs one derivation.
 */
export const MAX_PASSWORD_INPUT = 4096;

/** The key derivation (scrypt); injectable so a test can count derivations, which is what a sign-in costs. */
export type PasswordKdf = (password: string, salt: Buffer) => Promise<Buffer>;

/** What a password check found: which hashes matched, and the keys it derived (by salt), for reuse. */
export interface PasswordMatch {
  matched: boolean[];
  keys: Map<string, Buffer>;
}

/**
 * Password hashes of one person's accounts share a salt. One e-mail may belong to several organisations, each
 * with its own account and password (DASHBOARD 2), and sign-in checks the password against all of them; with a
 * salt per account that cost one scrypt per account, so a wrong password took twice as long for an address with
 * accounts in two organisations (security review F7). With one salt per address, a check derives one key and
 * compares it with every hash: the cost no longer depends on how many accounts share the address.
 *
 * The salt of an address is the salt of its oldest account that has a password. Every new password of the
 * address (set by a link, changed, chosen when accepting an invitation) is hashed with it; hashes written
 * before (a salt each) are rewritten with it at their next successful sign-in. The stored form is unchanged
 * (`scrypt$N$salt$key`), so earlier releases read every hash. Two accounts of one person with one password
 * have equal hashes: that tells a reader of the database nothing a guess would not, as one derivation tests a
 * guess against both either way.
 */
export function createPasswordHasher({ store, kdf = scryptAsync }: { store: Store; kdf?: PasswordKdf }) {
  // Stands in for the salt of an address with no password at all, so that an unknown address costs one
  // derivation like a known one; per process, and the same for the same address while it runs.
  const standInKey = randomBytes(32);
  const standInSalt = (emailNormalized: string) => createHmac('sha256', standInKey).update(emailNormalized).digest().subarray(0, 16);

  /** The address's salt: that of its oldest account with a password, in any organisation; null when none has one. */
  async function sharedSalt(emailNormalized: string): Promise<Buffer | null> {
    for (const stored of await store.repos.users.passwordHashesByEmailAnyOrg(emailNormalized)) {
      const parsed = parsePasswordHash(stored);
      if (parsed) return parsed.salt;
    }
    return null;
  }

  async function keyFor(password: string, salt: Buffer, keys: Map<string, Buffer>): Promise<Buffer> {
    const text = salt.toString('base64url');
    let key = keys.get(text);
    if (!key) {
      key = await kdf(password, salt);
      keys.set(text, key);
    }
    return key;
  }

  async function match(password: string, emailNormalized: string, hashes: readonly string[]): Promise<PasswordMatch> {
    const keys = new Map<string, Buffer>();
    const matched: boolean[] = [];
    if (password.length > MAX_PASSWORD_INPUT) {
      await kdf(password.slice(0, MAX_PASSWORD_INPUT), standInSalt(emailNormalized));
      return { matched: hashes.map(() => false), keys };
    }
    for (const stored of hashes) {
      const parsed = parsePasswordHash(stored);
      matched.push(parsed !== null && safeEqual((await keyFor(password, parsed.salt, keys)).toString('base64url'), parsed.keyText));
    }
    if (keys.size === 0) await kdf(password, standInSalt(emailNormalized));
    return { matched, keys };
  }

  return {
    /** A new password of an account with this address, under the address's salt (a new random one for its first). */
    async hash(password: string, emailNormalized: string): Promise<string> {
      const salt = (await sharedSalt(emailNormalized)) ?? randomBytes(16);
      return formatPasswordHash(salt, await kdf(password, salt));
    },

    /**
     * Which of these stored hashes (the accounts of one address) the password matches: one derivation per
     * distinct salt, which is one once the address's hashes share theirs; one against a stand-in when there is
     * no hash at all.
     */
    match,

    /**
     * After a password matched: the hash to store instead of `stored` when it was made with another salt than
     * the address's (a hash from before salts were shared), or null when it already has it.
     */
    async rehash(password: string, emailNormalized: string, stored: string, found: PasswordMatch): Promise<string | null> {
      const salt = await sharedSalt(emailNormalized);
      const parsed = parsePasswordHash(stored);
      if (!salt || !parsed || parsed.salt.equals(salt)) return null;
      return formatPasswordHash(salt, await keyFor(password, salt, found.keys));
    },

    /** One account's password (the account page, "Confirm it's you"); one derivation also when it has none. */
    async verify(password: string, emailNormalized: string, stored: string | null): Promise<boolean> {
      const found = await match(password, emailNormalized, stored === null ? [] : [stored]);
      return found.matched[0] === true;
    },
  };
}

export type PasswordHasher = ReturnType<typeof createPasswordHasher>;
