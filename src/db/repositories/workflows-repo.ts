import type { Updateable } from 'kysely';
import type { WorkflowRow, WorkflowsTable } from '../schema.js';
import type { RepoContext } from './executor.js';

export type { WorkflowRow };

export function workflowsRepository({ db, dialect }: RepoContext) {
  return {
    async insert(row: Omit<WorkflowRow, 'seq'>): Promise<WorkflowRow> {
      return db.insertInto('workflows').values(row).returningAll().executeTakeFirstOrThrow();
    },

    async findById(orgId: string, workflowId: string): Promise<WorkflowRow | undefined> {
      return db.selectFrom('workflows').selectAll().where('org_id', '=', orgId).where('id', '=', workflowId).executeTakeFirst();
    },

    /** For read-modify-write of the steps: PostgreSQL locks the row; SQLite's write transaction holds the database. */
    async findByIdForUpdate(orgId: string, workflowId: string): Promise<WorkflowRow | undefined> {
      let query = db.selectFrom('workflows').selectAll().where('org_id', '=', orgId).where('id', '=', workflowId);
      if (dialect === 'postgres') query = query.forUpdate();
      return query.executeTakeFirst();
    },

    async listForProject(orgId: string, projectId: string): Promise<WorkflowRow[]> {
      return db.selectFrom('workflows').selectAll().where('org_id', '=', orgId).where('project_id', '=', projectId).orderBy('seq').execute();
    },

    /** The users a project's workflow steps name as assignees (the check before the project goes private). */
    async stepAssignees(orgId: string, projectId: string): Promise<string[]> {
      const rows = await db.selectFrom('workflows').select('steps').where('org_id', '=', orgId).where('project_id', '=', projectId).execute();
      return rows.flatMap((r) => (JSON.parse(r.steps) as { assignee_id?: string | null }[]).flatMap((s) => (s.assignee_id ? [s.assignee_id] : [])));
    },

    /** A page of a project's workflows, newest first (workflows_org_project_seq_idx). */
    async pageForProject(orgId: string, projectId: string, limit: number, beforeSeq: number | null): Promise<WorkflowRow[]> {
      let query = db.selectFrom('workflows').selectAll().where('org_id', '=', orgId).where('project_id', '=', projectId);
      if (beforeSeq !== null) query = query.where('seq', '<', beforeSeq);
      return query.orderBy('seq', 'desc').limit(limit).execute();
    },

    async update(orgId: string, workflowId: string, changes: Updateable<WorkflowsTable>): Promise<WorkflowRow | undefined> {
      return db
        .updateTable('workflows')
        .set(changes)
        .where('org_id', '=', orgId)
        .where('id', '=', workflowId)
        .returningAll()
        .executeTakeFirst();
    },

    async delete(orgId: string, workflowId: string): Promise<void> {
      await db.deleteFrom('workflows').where('org_id', '=', orgId).where('id', '=', workflowId).execute();
    },
  };
}
