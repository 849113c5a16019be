import type { SecretBox } from '../../lib/secret-box.js';
import { createHash } from 'node:crypto';
import { errors, fieldError } from '../../errors.js';
import type { Clock } from '../../lib/time.js';
import type { Store } from '../../db/store.js';

const RETENTION_MS = 24 * 60 * 60 * 1000;
/** No request runs this long: a claim still in flight after it belongs to a process that died mid-request. */
export const ABANDONED_AFTER_MS = 2 * 60 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export type IdempotencyOutcome =
  | { kind: 'proceed' }
  | { kind: 'replay'; status: number; body: string };

/** JSON with object keys sorted, so the same body in another key order is the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function fingerprint(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method}\n${path}\n${canonicalJson(body ?? null)}`).digest('hex');
}

/**
 * Idempotency keys are scoped to the API key and kept 24 hours. The first request claims the key (a
 * row in state in_flight); its response is stored when it finishes. A 5xx or a 400 releases the key so
 * the client's retry (or corrected request) runs again.
 */
export function createIdempotencyService({ store, clock, box }: { store: Store; clock: Clock; box: SecretBox }) {
  return {
    validateKey(key: string): void {
      if (!KEY_PATTERN.test(key)) throw fieldError('Idempotency-Key', 'must be 1 to 255 printable ASCII characters');
    },

    async begin(orgId: string, apiKeyId: string, key: string, print: string): Promise<IdempotencyOutcome> {
      const now = clock.now();
      const row = {
        org_id: orgId,
        api_key_id: apiKeyId,
        key,
        fingerprint: print,
        state: 'in_flight',
        response_status: null,
        response_body: null,
        created_at: now,
        expires_at: now + RETENTION_MS,
      };
      const claim = await store.repos.idempotency.claim(row);
      if (claim.claimed) return { kind: 'proceed' };
      const existing = claim.existing;
      if (!existing || existing.expires_at <= now) {
        if (await store.repos.idempotency.replaceExpired(row, now)) return { kind: 'proceed' };
        throw errors.conflict('a request with this Idempotency-Key is still in progress');
      }
      if (existing.fingerprint !== print) throw errors.idempotencyKeyReused();
      if (existing.state !== 'done' || existing.response_status === null) {
        // The first attempt never answered (its process was killed): the retry runs it instead.
        if (existing.created_at <= now - ABANDONED_AFTER_MS && (await store.repos.idempotency.takeOverAbandoned(row, now - ABANDONED_AFTER_MS))) {
          return { kind: 'proceed' };
        }
        throw errors.conflict('a request with this Idempotency-Key is still in progress');
      }
      return { kind: 'replay', status: existing.response_status, body: existing.response_body === null ? '' : box.open(existing.response_body) };
    },

    async finish(orgId: string, apiKeyId: string, key: string, status: number, body: string): Promise<void> {
      // A 400 is a refused request (a field rule a service checks), not an executed one: like a schema
      // failure it stores nothing, so the corrected request can use the same key.
      if (status >= 500 || status === 400) await store.repos.idempotency.release(orgId, apiKeyId, key);
      // Sealed with WEBHOOK_SECRETS_KEY: a stored response may hold a signing secret or an API key, shown once.
      else await store.repos.idempotency.complete(orgId, apiKeyId, key, status, box.seal(body));
    },

    async purgeExpired(): Promise<number> {
      return store.repos.idempotency.purgeExpired(clock.now());
    },
  };
}

export type IdempotencyService = ReturnType<typeof createIdempotencyService>;
