import type { Store } from '../db/store.js';
import type { Actor } from './actor.js';

/** What the dashboard's overview shows of the actor's organisation. */
export function createOrganizationsService({ store }: { store: Store }) {
  return {
    async overview(actor: Actor): Promise<{ projects: number; members: number; webhooks: number }> {
      return store.repos.organizations.counts(actor.orgId);
    },
  };
}

export type OrganizationsService = ReturnType<typeof createOrganizationsService>;
