import type { Selectable } from 'kysely';
import type { WorkflowsTable } from '../schema.js';
import type { RepoContext } from './executor.js';

export type WorkflowRow = Selectable<WorkflowsTable>;

export function workflowsRepository({ db }: RepoContext) {
  return {
    async insert(row: Omit<WorkflowRow, 'seq'>): Promise<WorkflowRow> {
      return db.insertInto('workflows').values(row).returningAll().executeTakeFirstOrThrow();
    },

    async findById(orgId: string, workflowId: string): Promise<WorkflowRow | undefined> {
      return db
        .selectFrom('workflows')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('id', '=', workflowId)
        .executeTakeFirst();
    },

    async listForProject(orgId: string, projectId: string): Promise<WorkflowRow[]> {
      return db
        .selectFrom('workflows')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('project_id', '=', projectId)
        .orderBy('seq')
        .execute();
    },

    async setStatus(orgId: string, workflowId: string, status: string, at: number): Promise<WorkflowRow | undefined> {
      return db
        .updateTable('workflows')
        .set({ status, updated_at: at })
        .where('org_id', '=', orgId)
        .where('id', '=', workflowId)
        .returningAll()
        .executeTakeFirst();
    },
  };
}
