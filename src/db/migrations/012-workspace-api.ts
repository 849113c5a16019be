import type { Kysely, Migration } from 'kysely';

/**
 * The whole workspace through /v1 (issue 30, CONTRACT 13): the new lists walk newest first by `seq` under
 * their filters, so each gets the index that keeps a page's cost flat at any depth: a project's workflows,
 * a project's tasks, a user's tasks whatever their status, and the events of a type. Events are kept for
 * EVENT_RETENTION by time, whatever their deliveries, so pruning finds them by `occurred_at`.
 * A subscription's test event (example data) is marked, to be left out of the list. Only indexes and a
 * column with a default: release N-1 reads and writes the same rows.
 */
export function workspaceApiMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('events').addColumn('test', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.createIndex('workflows_org_project_seq_idx').on('workflows').columns(['org_id', 'project_id', 'seq']).execute();
      await db.schema.createIndex('tasks_org_project_seq_idx').on('tasks').columns(['org_id', 'project_id', 'seq']).execute();
      await db.schema.createIndex('tasks_org_assignee_seq_idx').on('tasks').columns(['org_id', 'assignee_id', 'seq']).execute();
      await db.schema.createIndex('events_org_type_seq_idx').on('events').columns(['org_id', 'type', 'seq']).execute();
      await db.schema.createIndex('events_occurred_idx').on('events').column('occurred_at').execute();
    },
  };
}
