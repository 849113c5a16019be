import { sql, type Kysely, type Migration } from 'kysely';

/**
 * Runs numbered per workflow (issue 34, DASHBOARD 1: "Run #3 of Customer shipment"; `number` in the API's run
 * object). A run gets the workflow's highest number plus one when it starts, under the organisation's lock
 * that already serialises run starts; the unique index refuses a duplicate all the same. Runs that exist are
 * numbered in the order they started. The column is nullable so release N-1, which does not set it, can still
 * start runs during a rolling upgrade; those read as number 0 until they finish.
 */
export function runNumbersMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('workflow_runs').addColumn('number', 'integer').execute();
      await sql`UPDATE workflow_runs SET number = (SELECT count(*) FROM workflow_runs r WHERE r.workflow_id = workflow_runs.workflow_id AND r.seq <= workflow_runs.seq)`.execute(db);
      await db.schema.createIndex('workflow_runs_workflow_number_idx').on('workflow_runs').columns(['workflow_id', 'number']).unique().execute();
    },
  };
}
