/**
 * Announces changes that affect authentication (a revoked key, a user's role or status, an organisation's
 * state), so every cache of principals has dropped the entry before the call returns, on every instance.
 * Services call these after their transaction commits. Which implementation runs depends on the mode
 * (docs/decisions.md, "Issue 11"): Redis pub/sub with acknowledgements, PostgreSQL LISTEN/NOTIFY with
 * acknowledgements, or nothing at all on SQLite, where every change bumps a counter in its own
 * transaction (migration 008) and each request checks it.
 */
export interface AuthEvents {
  keyRevoked(keyId: string): Promise<void>;
  userChanged(userId: string): Promise<void>;
  /** The organisation's lifecycle state changed (cancelled, resumed, deletion begun). */
  orgChanged(orgId: string): Promise<void>;
}

export const noopAuthEvents: AuthEvents = {
  async keyRevoked() {},
  async userChanged() {},
  async orgChanged() {},
};

export type AuthInvalidation =
  | { kind: 'key'; keyId: string }
  | { kind: 'user'; userId: string }
  | { kind: 'org'; orgId: string }
  | { kind: 'reset' };

/** What a principal cache needs: whether it may be trusted right now, and the invalidations. */
export interface AuthInvalidationSource {
  /**
   * Called before every use of the cache. True when every change committed before this call has been
   * applied to the cache (a source may deliver pending invalidations synchronously from here); false
   * while changes could be missed (the channel is down): the cache must then be bypassed.
   */
  listening(): boolean;
  /** `reset` is sent whenever the source loses track (channel lost or re-established): drop everything. */
  subscribe(listener: (invalidation: AuthInvalidation) => void): () => void;
}
