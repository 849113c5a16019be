import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { seqColumn } from './helpers.js';

/**
 * Workflows become real (DASHBOARD 7): a workflow holds its ordered steps (JSON) and a version; a run
 * copies the steps into `workflow_run_steps` when it starts and is advanced by the workers under a lease;
 * tasks gain a status, a kind (to-do or approval) with its decision, a due date and the run step they
 * belong to. The CLI stand-in's rows are kept: its workflows get no steps (version 1) and lose the
 * `status` column, which recorded the stand-in's last reported outcome; its tasks become open to-dos.
 */
export function workflowRunsMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('workflows').addColumn('description', 'text').execute();
      await db.schema.alterTable('workflows').addColumn('steps', 'text', (c) => c.notNull().defaultTo('[]')).execute();
      await db.schema.alterTable('workflows').addColumn('version', 'integer', (c) => c.notNull().defaultTo(1)).execute();
      await db.schema.alterTable('workflows').dropColumn('status').execute();

      await db.schema.alterTable('tasks').addColumn('run_id', 'text').execute();
      await db.schema.alterTable('tasks').addColumn('run_step', 'integer').execute();
      await db.schema.alterTable('tasks').addColumn('description', 'text').execute();
      await db.schema.alterTable('tasks').addColumn('kind', 'text', (c) => c.notNull().defaultTo('todo')).execute();
      await db.schema.alterTable('tasks').addColumn('status', 'text', (c) => c.notNull().defaultTo('open')).execute();
      await db.schema.alterTable('tasks').addColumn('decision', 'text').execute();
      await db.schema.alterTable('tasks').addColumn('due_at', 'bigint').execute();
      await db.schema.alterTable('tasks').addColumn('completed_by', 'text').execute();
      await db.schema.alterTable('tasks').addColumn('completed_at', 'bigint').execute();
      // "My tasks": a user's open tasks, oldest first.
      await db.schema.createIndex('tasks_assignee_idx').on('tasks').columns(['org_id', 'assignee_id', 'status', 'seq']).execute();

      await db.schema
        .createTable('workflow_runs')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('workflow_id', 'text', (c) => c.notNull())
        .addColumn('workflow_name', 'text', (c) => c.notNull())
        .addColumn('workflow_version', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('current_step', 'integer', (c) => c.notNull())
        .addColumn('step_count', 'integer', (c) => c.notNull())
        .addColumn('started_by', 'text')
        .addColumn('started_by_label', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('error_code', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('started_at', 'bigint')
        .addColumn('finished_at', 'bigint')
        .addColumn('wake_at', 'bigint')
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', 'bigint')
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('workflow_runs_workflow_idx').on('workflow_runs').columns(['org_id', 'workflow_id', 'seq']).execute();
      // The active-runs cap counts by status; the project's deletion finds its runs.
      await db.schema.createIndex('workflow_runs_status_idx').on('workflow_runs').columns(['org_id', 'status']).execute();
      await db.schema.createIndex('workflow_runs_project_idx').on('workflow_runs').columns(['org_id', 'project_id']).execute();
      // The workers' queue: only runs with something to do are in it (a run waiting for a person is not).
      await sql`CREATE INDEX workflow_runs_due_idx ON workflow_runs (wake_at) WHERE wake_at IS NOT NULL`.execute(db);

      await db.schema
        .createTable('workflow_run_steps')
        .addColumn('org_id', 'text', (c) => c.notNull())
        .addColumn('run_id', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('step_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('title', 'text')
        .addColumn('assignee_id', 'text')
        .addColumn('due_in_ms', 'bigint')
        .addColumn('duration_ms', 'bigint')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('outcome', 'text')
        .addColumn('task_id', 'text')
        .addColumn('started_at', 'bigint')
        .addColumn('finished_at', 'bigint')
        .addPrimaryKeyConstraint('workflow_run_steps_pk', ['run_id', 'position'])
        .execute();
    },
  };
}
