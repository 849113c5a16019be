import { sql } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import { ConfigError } from '../../config.js';
import type { Database } from '../database.js';
import type { Store } from '../store.js';
import { SecretBoxError, type SecretBox } from '../../lib/secret-box.js';

export interface SecretsAtRestReport {
  /** Stored values rewritten under the current key (plain ones, and ones sealed under an older key). */
  sealed: number;
  /** Stored values read because they were not in the current form (each opened, then sealed if a key is set). */
  checked: number;
}

/**
 * At the start of `serve` and `worker` (CONTRACT 12, WEBHOOK_SECRETS_KEY): every stored signing secret, and
 * every stored idempotent response (which may hold a secret or an API key shown once), must open with the
 * configured key(s), or the process stops with a message naming the variable, rather than send webhooks
 * signed with the wrong bytes. With a key, values stored plain or under an older key are sealed under the
 * current one. On SQLite the rewrite runs with `secure_delete` and is followed by a truncating checkpoint, so
 * the plain bytes are left neither in the file's free space nor in its WAL. Without a key, the log says
 * that secrets are stored as given.
 */
export async function prepareSecretsAtRest(deps: { store: Store; database: Pick<Database, 'db' | 'dialect'>; box: SecretBox; log: FastifyBaseLogger }): Promise<SecretsAtRestReport> {
  const { store, database, box, log } = deps;
  // Only values not in the current form are read: on a start with nothing to seal, no secret leaves the database.
  const secrets = await store.repos.webhooks.secretsNotInFormAcrossOrgs(box.currentPrefix);
  const bodies = await store.repos.idempotency.bodiesNotInFormAcrossOrgs(box.currentPrefix);
  const work: { value: string; reseal: (sealed: string) => Promise<unknown> }[] = [];
  for (const row of secrets) {
    for (const column of ['secret', 'secret_previous'] as const) {
      const value = row[column];
      if (value !== null) work.push({ value, reseal: (sealed) => store.repos.webhooks.resealSecret(row.org_id, row.id, column, value, sealed) });
    }
  }
  // Authenticator apps' secrets are sealed with the same key (DASHBOARD 11).
  for (const row of await store.repos.secondFactors.totpSecretsNotInFormAcrossOrgs(box.currentPrefix)) {
    work.push({ value: row.secret, reseal: (sealed) => store.repos.secondFactors.resealTotpSecret(row.org_id, row.user_id, row.secret, sealed) });
  }
  // So are single sign-on client secrets (DASHBOARD 12).
  for (const row of await store.repos.sso.secretsNotInFormAcrossOrgs(box.currentPrefix)) {
    work.push({ value: row.client_secret, reseal: (sealed) => store.repos.sso.resealSecret(row.org_id, row.client_secret, sealed) });
  }
  for (const row of bodies) {
    work.push({ value: row.response_body, reseal: (sealed) => store.repos.idempotency.resealBody(row.org_id, row.api_key_id, row.key, row.response_body, sealed) });
  }
  // Every value is opened first: one that no key opens stops the start before anything is rewritten.
  const opened: { plain: string; reseal: (sealed: string) => Promise<unknown> }[] = [];
  for (const item of work) {
    let plain: string;
    try {
      plain = box.open(item.value);
    } catch (err) {
      if (err instanceof SecretBoxError) throw new ConfigError('WEBHOOK_SECRETS_KEY', `does not open the stored webhook secrets: ${err.message}. Set the key they were sealed with (older keys may follow the current one, comma-separated).`);
      throw err;
    }
    if (!box.isCurrent(item.value)) opened.push({ plain, reseal: item.reseal });
  }
  if (!box.sealing) {
    log.info('WEBHOOK_SECRETS_KEY is not set: webhook signing secrets are stored as given (set it to store them encrypted; docs/deployment.md)');
    return { sealed: 0, checked: work.length };
  }
  if (opened.length > 0) {
    const sqlite = database.dialect === 'sqlite';
    if (sqlite) await sql`pragma secure_delete = on`.execute(database.db);
    try {
      for (const item of opened) await item.reseal(box.seal(item.plain));
    } finally {
      if (sqlite) await sql`pragma secure_delete = fast`.execute(database.db);
    }
    if (sqlite) {
      const { rows } = await sql<{ busy: number }>`pragma wal_checkpoint(truncate)`.execute(database.db);
      if (rows[0]?.busy) log.warn('webhook secrets sealed, but another process held the database: the WAL still holds the old pages until its next checkpoint');
    }
    log.info({ sealed: opened.length, key_id: box.keyId }, 'webhook secrets sealed under WEBHOOK_SECRETS_KEY');
  } else {
    log.info({ key_id: box.keyId }, 'webhook secrets are sealed under WEBHOOK_SECRETS_KEY');
  }
  return { sealed: opened.length, checked: work.length };
}
