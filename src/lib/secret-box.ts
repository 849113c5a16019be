import { createCipheriv, createDecipheriv, hash, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets at rest (CONTRACT 12, `WEBHOOK_SECRETS_KEY`). With a key, a stored secret is
 * `wsk1:<key id>:<iv>:<ciphertext>:<tag>` (AES-256-GCM, base64url parts): a leaked database file, backup or
 * dump holds no secret that signs. The key id (the first 8 hex digits of the key's SHA-256) stands beside each
 * value, so values sealed under an older key are recognised: the operator gives old keys after the current
 * one (`WEBHOOK_SECRETS_KEY=new,old`) and the values are sealed again under the new one at start.
 * Without a key, values are stored as given.
 */
export interface SecretBox {
  /** Whether values are sealed (a key is configured). */
  readonly sealing: boolean;
  /** The current key's id; null without a key. */
  readonly keyId: string | null;
  /** The stored form of a secret: sealed under the current key, or the secret itself without a key. */
  seal(secret: string): string;
  /** The secret from its stored form; throws SecretBoxError for a value no configured key opens. */
  open(stored: string): string;
  /** True when `stored` is in the form `seal` would write now (so it needs no rewriting at start). */
  isCurrent(stored: string): boolean;
  /** How every value `seal` writes now begins (`wsk1:<key id>:`); null without a key (values are plain). */
  readonly currentPrefix: string | null;
}

export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

/** How every sealed value begins. */
export const SEALED_PREFIX = 'wsk1:';
const PREFIX = SEALED_PREFIX;

export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

export function keyIdOf(key: Buffer): string {
  return hash('sha256', key, 'hex').slice(0, 8);
}

/** The key id a sealed value names, or null for a plain one. */
export function sealedKeyId(stored: string): string | null {
  return isSealed(stored) ? (stored.split(':')[1] ?? null) : null;
}

/** Parses `WEBHOOK_SECRETS_KEY`: one or more comma-separated base64 keys of 32 bytes each, the current first. */
export function parseSecretKeys(text: string): Buffer[] | string {
  const parts = text.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (parts.length === 0) return 'must hold at least one key';
  const keys: Buffer[] = [];
  for (const part of parts) {
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(part)) return 'must be base64 (32 random bytes: `openssl rand -base64 32`), comma-separated for older keys';
    const key = Buffer.from(part, 'base64');
    if (key.length !== 32) return `must be 32 bytes in base64 (\`openssl rand -base64 32\`); one value decodes to ${key.length} bytes`;
    keys.push(key);
  }
  return keys;
}

/** Keys: the current one first, then older ones that may still open stored values. None: values stay plain. */
export function createSecretBox(keys: readonly Buffer[]): SecretBox {
  if (keys.length === 0) {
    return {
      sealing: false,
      keyId: null,
      seal: (secret) => secret,
      open(stored) {
        if (isSealed(stored)) throw new SecretBoxError(`a webhook secret is sealed under key ${sealedKeyId(stored)}, but WEBHOOK_SECRETS_KEY is not set`);
        return stored;
      },
      isCurrent: (stored) => !isSealed(stored),
      currentPrefix: null,
    };
  }
  const byId = new Map(keys.map((key) => [keyIdOf(key), key] as const));
  const current = keys[0]!;
  const currentId = keyIdOf(current);
  // Opened values are kept: the worker opens the same few secrets for every attempt (bounded, oldest out).
  const opened = new Map<string, string>();
  return {
    sealing: true,
    keyId: currentId,
    seal(secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return `${PREFIX}${currentId}:${iv.toString('base64url')}:${ciphertext.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}`;
    },
    open(stored) {
      // A plain value is what an unset key stored: it is sealed at start, and opens as is until then.
      if (!isSealed(stored)) return stored;
      const cached = opened.get(stored);
      if (cached !== undefined) return cached;
      const [, id, iv, ciphertext, tag] = stored.split(':');
      const key = id === undefined ? undefined : byId.get(id);
      if (!key || iv === undefined || ciphertext === undefined || tag === undefined) {
        throw new SecretBoxError(`a webhook secret is sealed under key ${id ?? '?'}, which WEBHOOK_SECRETS_KEY does not hold (its keys: ${[...byId.keys()].join(', ')})`);
      }
      let secret: string;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        secret = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretBoxError(`a webhook secret sealed under key ${id} does not open with it (damaged value)`);
      }
      if (opened.size >= 10_000) opened.delete(opened.keys().next().value!);
      opened.set(stored, secret);
      return secret;
    },
    isCurrent: (stored) => sealedKeyId(stored) === currentId,
    currentPrefix: `${PREFIX}${currentId}:`,
  };
}
