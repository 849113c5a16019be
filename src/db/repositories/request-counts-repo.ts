import type { RepoContext } from './executor.js';

/** API requests per organisation and UTC day; only the usage service writes here (docs/decisions.md). */
export function requestCountsRepository({ db }: RepoContext) {
  return {
    /**
     * Adds `count` to the organisation's figure for `day`, creating the row on first use. One statement, so
     * several API processes flushing at once each add their share without reading first.
     */
    async add(orgId: string, day: string, count: number): Promise<void> {
      await db
        .insertInto('request_counts')
        .values({ org_id: orgId, day, count })
        .onConflict((oc) => oc.columns(['org_id', 'day']).doUpdateSet((eb) => ({ count: eb('request_counts.count', '+', eb.ref('excluded.count')) })))
        .execute();
    },

    /** The stored days from `fromDay` to `toDay` (both 'YYYY-MM-DD', inclusive) that have a row. */
    async range(orgId: string, fromDay: string, toDay: string): Promise<{ day: string; count: number }[]> {
      const rows = await db
        .selectFrom('request_counts')
        .select(['day', 'count'])
        .where('org_id', '=', orgId)
        .where('day', '>=', fromDay)
        .where('day', '<=', toDay)
        .orderBy('day')
        .execute();
      return rows.map((r) => ({ day: r.day, count: Number(r.count) }));
    },
  };
}

export type RequestCountsRepository = ReturnType<typeof requestCountsRepository>;
