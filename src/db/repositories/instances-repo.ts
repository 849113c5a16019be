import type { ServiceInstanceRow } from '../schema.js';
import type { RepoContext } from './executor.js';

/**
 * The `serve` processes sharing this database, each with its last heartbeat. Not organisation data: one row per
 * process, across organisations, so every method here is about processes, not tenants.
 */
export function instancesRepository({ db }: RepoContext) {
  return {
    async upsert(row: ServiceInstanceRow): Promise<void> {
      await db
        .insertInto('service_instances')
        .values(row)
        .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: row.seen_at, shared_limits: row.shared_limits }))
        .execute();
    },

    /** Instances seen since `since`, oldest first. */
    async seenSince(since: number): Promise<ServiceInstanceRow[]> {
      return db.selectFrom('service_instances').selectAll().where('seen_at', '>=', since).orderBy('started_at').execute();
    },

    async remove(id: string): Promise<void> {
      await db.deleteFrom('service_instances').where('id', '=', id).execute();
    },

    /** Rows of processes that stopped without saying so (killed): gone after `before`. */
    async pruneSeenBefore(before: number): Promise<number> {
      const result = await db.deleteFrom('service_instances').where('seen_at', '<', before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
