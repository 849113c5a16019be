import { SEALED_PREFIX } from '../../lib/secret-box.js';
import type { Selectable, UpdateQueryBuilder, UpdateResult } from 'kysely';
import { isUniqueViolation } from '../database.js';
import type { DB, IdempotencyKeysTable } from '../schema.js';
import type { RepoContext } from './executor.js';

export type IdempotencyRow = Selectable<IdempotencyKeysTable>;

export function idempotencyRepository({ db }: RepoContext) {
  type Replace = UpdateQueryBuilder<DB, 'idempotency_keys', 'idempotency_keys', UpdateResult>;

  /** Overwrites the record of `row`'s key in place when `condition` still holds; true when it did. */
  async function replaceWhere(row: IdempotencyRow, condition: (query: Replace) => Replace): Promise<boolean> {
    const query = db
      .updateTable('idempotency_keys')
      .set(row)
      .where('org_id', '=', row.org_id)
      .where('api_key_id', '=', row.api_key_id)
      .where('key', '=', row.key);
    const result = await condition(query).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  return {
    /** Claims the key for a first request; returns the existing row when the key is taken. */
    async claim(row: IdempotencyRow): Promise<{ claimed: true } | { claimed: false; existing: IdempotencyRow | undefined }> {
      try {
        await db.insertInto('idempotency_keys').values(row).execute();
        return { claimed: true };
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        const existing = await db
          .selectFrom('idempotency_keys')
          .selectAll()
          .where('api_key_id', '=', row.api_key_id)
          .where('key', '=', row.key)
          .executeTakeFirst();
        return { claimed: false, existing };
      }
    },

    async complete(orgId: string, apiKeyId: string, key: string, status: number, body: string): Promise<void> {
      await db
        .updateTable('idempotency_keys')
        .set({ state: 'done', response_status: status, response_body: body })
        .where('org_id', '=', orgId)
        .where('api_key_id', '=', apiKeyId)
        .where('key', '=', key)
        .execute();
    },

    /** Stored responses not in the current form (as `secretsNotInFormAcrossOrgs`), for sealing at start. */
    async bodiesNotInFormAcrossOrgs(currentPrefix: string | null): Promise<{ org_id: string; api_key_id: string; key: string; response_body: string }[]> {
      const rows = await db
        .selectFrom('idempotency_keys')
        .select(['org_id', 'api_key_id', 'key', 'response_body'])
        .where('response_body', currentPrefix === null ? 'like' : 'not like', currentPrefix === null ? `${SEALED_PREFIX}%` : `${currentPrefix}%`)
        .execute();
      return rows.map((r) => ({ ...r, response_body: r.response_body! }));
    },

    /** Replaces a stored response's form only if it is still `was`. */
    async resealBody(orgId: string, apiKeyId: string, key: string, was: string, sealed: string): Promise<void> {
      await db
        .updateTable('idempotency_keys')
        .set({ response_body: sealed })
        .where('org_id', '=', orgId)
        .where('api_key_id', '=', apiKeyId)
        .where('key', '=', key)
        .where('response_body', '=', was)
        .execute();
    },

    async release(orgId: string, apiKeyId: string, key: string): Promise<void> {
      await db
        .deleteFrom('idempotency_keys')
        .where('org_id', '=', orgId)
        .where('api_key_id', '=', apiKeyId)
        .where('key', '=', key)
        .execute();
    },

    /** Replaces an expired record in place (same primary key). */
    async replaceExpired(row: IdempotencyRow, now: number): Promise<boolean> {
      return replaceWhere(row, (q) => q.where('expires_at', '<=', now));
    },

    /**
     * Takes over a claim whose request was abandoned (its process died before answering): only while the
     * row is still in flight and was claimed at or before `claimedBefore`, so one of several racing
     * retries wins and a live request's claim is never taken.
     */
    async takeOverAbandoned(row: IdempotencyRow, claimedBefore: number): Promise<boolean> {
      return replaceWhere(row, (q) => q.where('state', '=', 'in_flight').where('created_at', '<=', claimedBefore));
    },

    /** Housekeeping across organisations: drops records past their 24 hours. */
    async purgeExpired(now: number): Promise<number> {
      const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
