import type { Adapter, AdapterPayload } from 'oidc-provider';
import { sha256Hex } from '../lib/crypto.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { Store } from '../db/store.js';
import type { AppResource } from '../db/schema.js';

export interface AdapterDeps {
  store: Store;
  secretBox: SecretBox;
  now: () => number;
  /** Told when a grant ends inside the server (a refresh token or code used twice, a revoked token): instances drop cached principals. */
  grantEnded(grantId: string): Promise<void>;
  /** `{PUBLIC_BASE_URL}/mcp` and `/v1`, to name a grant's resource. */
  resources: Readonly<Record<AppResource, string>>;
}

/**
 * oidc-provider's storage (its Adapter interface) over the `oauth_*` tables, through the repository:
 * - `Client`: `oauth_clients`, a client secret sealed with WEBHOOK_SECRETS_KEY when one is configured;
 * - `Grant`: `oauth_grants`, the connected app the dashboard lists, in the user's organisation;
 * - everything else (codes, access and refresh tokens, sessions, interactions): `oauth_entries`, keyed by the
 *   SHA-256 of the id, so the table never holds a token that works. A token's value is its id.
 */
export function adapterFactory(deps: AdapterDeps): new (model: string) => Adapter {
  const repo = () => deps.store.repos.oauth;
  const seconds = (ms: number) => Math.floor(ms / 1000);

  return class OauthAdapter implements Adapter {
    constructor(readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const now = deps.now();
      if (this.model === 'Client') {
        const metadata = { ...payload } as Record<string, unknown>;
        if (typeof metadata.client_secret === 'string') metadata.client_secret = deps.secretBox.seal(metadata.client_secret);
        await repo().upsertClient({ id, name: clientName(payload), metadata: JSON.stringify(metadata), created_at: now });
        return;
      }
      const expiresAt = expiresIn ? now + expiresIn * 1000 : now + 365 * 86_400_000;
      if (this.model === 'Grant') {
        const resources = (payload.resources ?? {}) as Record<string, string>;
        const [indicator, scope] = Object.entries(resources)[0] ?? [deps.resources.mcp, ''];
        const resource: AppResource = indicator === deps.resources.v1 ? 'v1' : 'mcp';
        await repo().upsertGrant({
          id,
          user_id: String(payload.accountId),
          client_id: String(payload.clientId),
          resource,
          scope,
          payload: JSON.stringify(payload),
          created_at: now,
          expires_at: expiresAt,
        });
        return;
      }
      await repo().upsertEntry({
        id_hash: sha256Hex(id),
        model: this.model,
        grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
        uid: typeof payload.uid === 'string' ? payload.uid : null,
        payload: JSON.stringify(payload),
        expires_at: expiresAt,
      });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const now = deps.now();
      if (this.model === 'Client') {
        const row = await repo().findClient(id);
        if (!row) return undefined;
        const metadata = JSON.parse(row.metadata) as Record<string, unknown>;
        if (typeof metadata.client_secret === 'string') metadata.client_secret = deps.secretBox.open(metadata.client_secret);
        return metadata as AdapterPayload;
      }
      if (this.model === 'Grant') {
        const payload = await repo().findGrantPayload(id, now);
        return payload === undefined ? undefined : (JSON.parse(payload) as AdapterPayload);
      }
      const row = await repo().findEntry(this.model, sha256Hex(id), now);
      if (!row) return undefined;
      const payload = JSON.parse(row.payload) as AdapterPayload;
      return row.consumed_at === null ? payload : { ...payload, consumed: seconds(row.consumed_at) };
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const row = await repo().findEntryByUid(this.model, uid, deps.now());
      return row ? (JSON.parse(row.payload) as AdapterPayload) : undefined;
    }

    async findByUserCode(): Promise<AdapterPayload | undefined> {
      // The device flow is off.
      return undefined;
    }

    async consume(id: string): Promise<void> {
      await repo().consumeEntry(sha256Hex(id), deps.now());
    }

    async destroy(id: string): Promise<void> {
      if (this.model === 'Client') return repo().deleteClient(id);
      if (this.model === 'Grant') {
        if (await repo().revokeGrant(id, deps.now())) await deps.grantEnded(id);
        return;
      }
      const grantId = await repo().deleteEntry(sha256Hex(id));
      // A revoked access token must stop working on every instance: its principal is cached under its grant.
      if (grantId !== null && this.model === 'AccessToken') await deps.grantEnded(grantId);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      if (await repo().revokeGrant(grantId, deps.now())) await deps.grantEnded(grantId);
    }
  };
}

function clientName(payload: AdapterPayload): string {
  const name = typeof payload.client_name === 'string' ? payload.client_name.trim() : '';
  return name === '' ? 'Unnamed app' : name.slice(0, 200);
}
