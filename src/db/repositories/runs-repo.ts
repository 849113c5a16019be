import { sql, type Updateable } from 'kysely';
import type { RunRow, RunStepRow, WorkflowRunStepsTable, WorkflowRunsTable } from '../schema.js';
import type { RepoContext } from './executor.js';

const ACTIVE: readonly RunRow['status'][] = ['queued', 'running', 'waiting'];

/** Runs of a read-only workspace pause (DASHBOARD 10): the engine neither claims them nor waits for them. */
const organizationActive = sql<boolean>`NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = workflow_runs.org_id AND o.state <> 'active')`;

/**
 * Workflow runs and their steps (migration 006). The organisation-scoped methods serve the services;
 * the `...AcrossOrgs` ones are the run engine's, which serves every organisation.
 */
export function runsRepository(ctx: RepoContext) {
  const { db, dialect } = ctx;

  /** Work for the workers: the store wakes them (on every process) once this commits. */
  const wakeWorkers = () => {
    if (ctx.unit) ctx.unit.workCreated += 1;
  };

  return {
    async insert(run: Omit<RunRow, 'seq'>, steps: readonly RunStepRow[]): Promise<RunRow> {
      const row = await db.insertInto('workflow_runs').values(run).returningAll().executeTakeFirstOrThrow();
      await db.insertInto('workflow_run_steps').values([...steps]).execute();
      if (run.wake_at !== null) wakeWorkers();
      return row;
    },

    /** How people name runs ("Run #3 of Customer shipment"): number and workflow name, for a bounded list. */
    async labels(orgId: string, runIds: readonly string[]): Promise<Pick<RunRow, 'id' | 'number' | 'workflow_name'>[]> {
      if (runIds.length === 0) return [];
      return db.selectFrom('workflow_runs').select(['id', 'number', 'workflow_name']).where('org_id', '=', orgId).where('id', 'in', [...runIds]).execute();
    },

    /** The number the workflow's next run gets; the caller holds the organisation's lock. */
    async nextNumber(orgId: string, workflowId: string): Promise<number> {
      const row = await db
        .selectFrom('workflow_runs')
        .select((eb) => eb.fn.max('number').as('last'))
        .where('org_id', '=', orgId)
        .where('workflow_id', '=', workflowId)
        .executeTakeFirst();
      return Number(row?.last ?? 0) + 1;
    },

    async findById(orgId: string, runId: string): Promise<RunRow | undefined> {
      return db.selectFrom('workflow_runs').selectAll().where('org_id', '=', orgId).where('id', '=', runId).executeTakeFirst();
    },

    /** Serialises every change to one run (a person's and a worker's): PostgreSQL locks the row. */
    async findByIdForUpdate(orgId: string, runId: string): Promise<RunRow | undefined> {
      let query = db.selectFrom('workflow_runs').selectAll().where('org_id', '=', orgId).where('id', '=', runId);
      if (dialect === 'postgres') query = query.forUpdate();
      return query.executeTakeFirst();
    },

    async steps(orgId: string, runId: string): Promise<RunStepRow[]> {
      return db.selectFrom('workflow_run_steps').selectAll().where('org_id', '=', orgId).where('run_id', '=', runId).orderBy('position').execute();
    },

    async step(orgId: string, runId: string, position: number): Promise<RunStepRow | undefined> {
      return db
        .selectFrom('workflow_run_steps')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('run_id', '=', runId)
        .where('position', '=', position)
        .executeTakeFirst();
    },

    /** A workflow's runs, newest first, keyset on seq. */
    async listForWorkflow(orgId: string, workflowId: string, limit: number, beforeSeq: number | null): Promise<RunRow[]> {
      let query = db.selectFrom('workflow_runs').selectAll().where('org_id', '=', orgId).where('workflow_id', '=', workflowId);
      if (beforeSeq !== null) query = query.where('seq', '<', beforeSeq);
      return query.orderBy('seq', 'desc').limit(limit).execute();
    },

    /** The newest active run of a workflow, if any: what stands in the way of deleting it. */
    async newestActiveForWorkflow(orgId: string, workflowId: string): Promise<RunRow | undefined> {
      return db
        .selectFrom('workflow_runs')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('workflow_id', '=', workflowId)
        .where('status', 'in', ACTIVE)
        .orderBy('seq', 'desc')
        .limit(1)
        .executeTakeFirst();
    },

    async countActive(orgId: string): Promise<number> {
      const row = await db
        .selectFrom('workflow_runs')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('org_id', '=', orgId)
        .where('status', 'in', ACTIVE)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async countActiveForWorkflow(orgId: string, workflowId: string): Promise<number> {
      const row = await db
        .selectFrom('workflow_runs')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('org_id', '=', orgId)
        .where('workflow_id', '=', workflowId)
        .where('status', 'in', ACTIVE)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /**
     * Changes a run. A `wake_at` not after the change's own `updated_at` makes the run due now, so the
     * workers are woken after commit; a later one (a Wait) is found by their timers, and waking every loop
     * of every process for it cost about a fifth of the engine's throughput (docs/benchmarks.md).
     */
    async update(orgId: string, runId: string, changes: Updateable<WorkflowRunsTable>): Promise<void> {
      await db.updateTable('workflow_runs').set(changes).where('org_id', '=', orgId).where('id', '=', runId).execute();
      const wake = changes.wake_at;
      if (typeof wake === 'number' && (typeof changes.updated_at !== 'number' || wake <= changes.updated_at)) wakeWorkers();
    },

    async updateStep(orgId: string, runId: string, position: number, changes: Updateable<WorkflowRunStepsTable>): Promise<void> {
      await db
        .updateTable('workflow_run_steps')
        .set(changes)
        .where('org_id', '=', orgId)
        .where('run_id', '=', runId)
        .where('position', '=', position)
        .execute();
    },

    /** Removes runs and their steps: a project's (its deletion) or a workflow's. */
    async deleteWhere(orgId: string, where: { projectId: string } | { workflowId: string }): Promise<void> {
      const runs = db
        .selectFrom('workflow_runs')
        .select('id')
        .where('org_id', '=', orgId)
        .$if('projectId' in where, (q) => q.where('project_id', '=', (where as { projectId: string }).projectId))
        .$if('workflowId' in where, (q) => q.where('workflow_id', '=', (where as { workflowId: string }).workflowId));
      await db.deleteFrom('workflow_run_steps').where('org_id', '=', orgId).where('run_id', 'in', runs).execute();
      await db
        .deleteFrom('workflow_runs')
        .where('org_id', '=', orgId)
        .$if('projectId' in where, (q) => q.where('project_id', '=', (where as { projectId: string }).projectId))
        .$if('workflowId' in where, (q) => q.where('workflow_id', '=', (where as { workflowId: string }).workflowId))
        .execute();
    },

    // ---- the run engine's ----

    /**
     * Leases up to `limit` runs that are due and not leased by a live worker, oldest due first. On
     * PostgreSQL `FOR UPDATE SKIP LOCKED` lets concurrent claimers take disjoint sets; SQLite has one writer.
     */
    async claimDueAcrossOrgs(input: { owner: string; now: number; leaseMs: number; limit: number }): Promise<{ org_id: string; id: string }[]> {
      const { owner, now, leaseMs, limit } = input;
      const due = sql`SELECT seq FROM workflow_runs
        WHERE wake_at <= ${now} AND (lease_expires_at IS NULL OR lease_expires_at <= ${now}) AND ${organizationActive}
        ORDER BY wake_at LIMIT ${limit}${dialect === 'postgres' ? sql` FOR UPDATE SKIP LOCKED` : sql``}`;
      const claimed = await sql<{ org_id: string; id: string }>`
        UPDATE workflow_runs SET lease_owner = ${owner}, lease_expires_at = ${now + leaseMs}
        WHERE seq IN (${due}) RETURNING org_id, id`.execute(db);
      return claimed.rows;
    },

    /** The run, if this worker still holds its lease (another worker may have taken it after expiry). */
    async findLeasedForUpdate(orgId: string, runId: string, owner: string): Promise<RunRow | undefined> {
      let query = db
        .selectFrom('workflow_runs')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('id', '=', runId)
        .where('lease_owner', '=', owner);
      if (dialect === 'postgres') query = query.forUpdate();
      return query.executeTakeFirst();
    },

    /**
     * When the earliest queued or timed run can next be claimed (null: none): its wake time, or the end of
     * a lease still held on it (by another worker, a dead one's, or this one's after a failed advance), so
     * the engine sleeps until then instead of re-polling a due but leased run every few milliseconds.
     */
    async nextDueAtAcrossOrgs(): Promise<number | null> {
      const row = await db
        .selectFrom('workflow_runs')
        .select(sql<number | null>`min(CASE WHEN lease_expires_at > wake_at THEN lease_expires_at ELSE wake_at END)`.as('at'))
        .where('wake_at', 'is not', null)
        .where(organizationActive)
        .executeTakeFirst();
      return row?.at == null ? null : Number(row.at);
    },

    /** SQLite runs one worker: leases left by a killed process are returned at start. */
    async releaseAllLeasesAcrossOrgs(): Promise<number> {
      const result = await db
        .updateTable('workflow_runs')
        .set({ lease_owner: null, lease_expires_at: null })
        .where('lease_owner', 'is not', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

export type RunsRepository = ReturnType<typeof runsRepository>;
