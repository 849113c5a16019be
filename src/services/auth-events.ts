/**
 * Announces changes that affect authentication (a revoked key, a user's role or status), so any cache of
 * principals can drop the entry before the next request, on every instance. Services call these after
 * their transaction commits. The default does nothing (no cache without a shared channel).
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
