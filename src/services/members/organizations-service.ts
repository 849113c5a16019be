import type { Store } from '../../db/store.js';
import { errors } from '../../errors.js';
import { toIso } from '../../lib/time.js';
import { projectViewer } from '../access/project-access.js';
import type { Actor } from '../access/actor.js';

/** GET /v1/organization (CONTRACT 13). A workspace being deleted is read-only to whoever can still reach it. */
export interface OrganizationView {
  id: string;
  name: string;
  state: 'active' | 'read_only';
  deletion_at: string | null;
  /** Since when the owner requires two-step verification of every member (DASHBOARD 11); null when not. */
  two_step_required_at: string | null;
  created_at: string;
}

/** The actor's organisation: its state for the API, its counts for the dashboard's overview. */
export function createOrganizationsService({ store }: { store: Store }) {
  return {
    async get(actor: Actor): Promise<OrganizationView> {
      const row = await store.repos.organizations.findById(actor.orgId);
      if (!row) throw errors.notFound('organization');
      return {
        id: row.id,
        name: row.name,
        state: row.state === 'active' ? 'active' : 'read_only',
        deletion_at: row.deletion_at === null ? null : toIso(row.deletion_at),
        two_step_required_at: row.two_step_required_at === null ? null : toIso(row.two_step_required_at),
        created_at: toIso(row.created_at),
      };
    },

    async overview(actor: Actor): Promise<{ projects: number; members: number; webhooks: number }> {
      return store.repos.organizations.counts(actor.orgId, projectViewer(actor));
    },
  };
}

export type OrganizationsService = ReturnType<typeof createOrganizationsService>;
