import type { Selectable } from 'kysely';
import type { DB, DeliveryAttemptRow, RunStepRow, TaskRow } from '../schema.js';
import type { RepoContext } from './executor.js';

/** The tables an export walks, each by its `seq`. */
export type ExportTable = 'projects' | 'project_collaborators' | 'users' | 'api_keys' | 'scim_tokens' | 'scim_groups' | 'oauth_grants' | 'webhooks' | 'workflows' | 'workflow_runs' | 'tasks' | 'deliveries' | 'audit_log';

export const EXPORT_TABLES: readonly ExportTable[] = ['projects', 'project_collaborators', 'users', 'api_keys', 'scim_tokens', 'scim_groups', 'oauth_grants', 'webhooks', 'workflows', 'workflow_runs', 'tasks', 'deliveries', 'audit_log'];

export type ExportTableRow<T extends ExportTable> = Selectable<DB[T]>;

/**
 * The reads of a data export (DASHBOARD 9): one organisation's rows in keyset pages by `seq`, each table
 * bounded by the highest `seq` it had when the export began, so rows written during the build are left
 * out and every page costs the same however deep it is. Read on the root connection, one statement per
 * page: no transaction is held for the length of a build.
 */
export function exportReadsRepository(ctx: RepoContext) {
  const { db } = ctx;

  return {
    /** The highest `seq` of the organisation's rows in each table (0 when it has none): the export's snapshot. */
    async snapshot(orgId: string): Promise<Record<ExportTable, number>> {
      const entries = await Promise.all(
        EXPORT_TABLES.map(async (table) => {
          const row = await db
            .selectFrom(table as 'projects')
            .select((eb) => eb.fn.max('seq').as('max'))
            .where('org_id', '=', orgId)
            .executeTakeFirst();
          return [table, row?.max == null ? 0 : Number(row.max)] as const;
        }),
      );
      return Object.fromEntries(entries) as Record<ExportTable, number>;
    },

    /** Up to `limit` rows with `afterSeq < seq <= upToSeq`, in `seq` order. */
    async page<T extends ExportTable>(table: T, orgId: string, afterSeq: number, upToSeq: number, limit: number): Promise<ExportTableRow<T>[]> {
      const rows = await db
        .selectFrom(table as 'projects')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('seq', '>', afterSeq)
        .where('seq', '<=', upToSeq)
        .orderBy('seq')
        .limit(limit)
        .execute();
      return rows as unknown as ExportTableRow<T>[];
    },

    /** The names of these registered apps (clients are global: the grants being exported name them). */
    async appNames(clientIds: readonly string[]): Promise<Map<string, string>> {
      if (clientIds.length === 0) return new Map();
      const rows = await db.selectFrom('oauth_clients').select(['id', 'name']).where('id', 'in', [...new Set(clientIds)]).execute();
      return new Map(rows.map((r) => [r.id, r.name]));
    },

    /** The members and project mappings of these SCIM groups. */
    async scimGroupParts(orgId: string, groupIds: readonly string[]) {
      if (groupIds.length === 0) return { members: [], projects: [] };
      const [members, projects] = await Promise.all([
        db.selectFrom('scim_group_members').select(['group_id', 'user_id']).where('org_id', '=', orgId).where('group_id', 'in', groupIds).orderBy('seq').execute(),
        db.selectFrom('scim_group_projects').select(['group_id', 'project_id', 'role']).where('org_id', '=', orgId).where('group_id', 'in', groupIds).orderBy('seq').execute(),
      ]);
      return { members, projects };
    },

    /** The steps of these runs, by run then position. */
    async runSteps(orgId: string, runIds: readonly string[]): Promise<RunStepRow[]> {
      if (runIds.length === 0) return [];
      return db
        .selectFrom('workflow_run_steps')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('run_id', 'in', runIds)
        .orderBy('run_id')
        .orderBy('position')
        .execute();
    },

    async tasks(orgId: string, taskIds: readonly string[]): Promise<TaskRow[]> {
      if (taskIds.length === 0) return [];
      return db.selectFrom('tasks').selectAll().where('org_id', '=', orgId).where('id', 'in', taskIds).execute();
    },

    /** Every attempt of these deliveries, oldest first. */
    async attempts(orgId: string, deliveryIds: readonly string[]): Promise<DeliveryAttemptRow[]> {
      if (deliveryIds.length === 0) return [];
      return db
        .selectFrom('delivery_attempts')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('delivery_id', 'in', deliveryIds)
        .orderBy('seq')
        .execute();
    },

    /** The body (the exact payload sent) of each of these events. */
    async eventBodies(orgId: string, eventIds: readonly string[]): Promise<Map<string, string>> {
      if (eventIds.length === 0) return new Map();
      const rows = await db.selectFrom('events').select(['id', 'body']).where('org_id', '=', orgId).where('id', 'in', eventIds).execute();
      return new Map(rows.map((r) => [r.id, r.body]));
    },
  };
}

export type ExportReadsRepository = ReturnType<typeof exportReadsRepository>;
