import type { Store } from '../../db/store.js';
import { errors } from '../../errors.js';
import type { Clock } from '../../lib/time.js';
import { authorize, type Actor } from '../access/actor.js';
import { requireProject, requireScope, requireUnderProject, requireWritableUpFront } from '../access/project-access.js';
import { advanceRun, finishRun, isActiveRun, personName } from './run-transitions.js';
import { runName } from '../shared/run-name.js';
import { toRun, toRunStep, type Run, type RunDetail } from './runs-view.js';

export interface RunsServiceDeps {
  store: Store;
  clock: Clock;
}

/**
 * Workflow runs: what people see and do ("Cancel run"), and what the workers call to move due runs on.
 * A worker leases a batch of due runs, then advances each in its own transaction, only while it still
 * holds the lease: a lease that expired (a stalled or killed worker) lets another worker take the run,
 * and the first worker's late transaction then finds the run no longer its own and does nothing.
 */
export function createRunsService({ store, clock }: RunsServiceDeps) {
  return {
    /** "Run #3 of Customer shipment" for each run of a bounded list (My tasks); a deleted run is left out. */
    async names(actor: Actor, runIds: readonly string[]): Promise<Map<string, string>> {
      authorize(actor, 'workflows', 'read');
      const rows = await store.repos.runs.labels(actor.orgId, [...new Set(runIds)]);
      return new Map(rows.map((r) => [r.id, runName(r.number ?? 0, r.workflow_name)]));
    },

    async get(actor: Actor, runId: string): Promise<RunDetail> {
      requireScope(actor, 'workflows', 'read');
      const run = await store.repos.runs.findById(actor.orgId, runId);
      if (!run) throw errors.notFound('run');
      await requireUnderProject(store.repos, actor, run.project_id, 'run', 'workflows', 'read');
      const steps = await store.repos.runs.steps(actor.orgId, runId);
      const tasks = await store.repos.tasks.findByIds(actor.orgId, steps.flatMap((s) => (s.task_id ? [s.task_id] : [])));
      const byId = new Map(tasks.map((t) => [t.id, t]));
      return { ...toRun(run), steps: steps.map((s) => toRunStep(s, s.task_id ? byId.get(s.task_id) : undefined)) };
    },

    /** "Cancel run": the run fails with `error_code: cancelled` at once (its open task is cancelled). */
    async cancel(actor: Actor, runId: string): Promise<Run> {
      requireScope(actor, 'workflows', 'update');
      await requireWritableUpFront(store.repos, actor);
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        const run = await repos.runs.findByIdForUpdate(actor.orgId, runId);
        if (!run) throw errors.notFound('run');
        await requireProject(repos, actor, run.project_id, 'workflows', 'update', 'run');
        if (!isActiveRun(run)) throw errors.conflict(`this run has already ${run.status === 'cancelled' ? 'been cancelled' : run.status}`);
        const by = await personName(repos, actor);
        return finishRun(repos, actor, run, { status: 'cancelled', error: `Run cancelled by ${by}`, errorCode: 'cancelled' }, now);
      });
      return toRun(row);
    },

    // ---- the workers' ----

    /** Leases up to `limit` due runs for `owner`; returns their keys. */
    claimDue(owner: string, leaseMs: number, limit: number): Promise<{ org_id: string; id: string }[]> {
      const now = clock.now();
      return store.transaction((repos) => repos.runs.claimDueAcrossOrgs({ owner, now, leaseMs, limit }));
    },

    /**
     * Advances one leased run; false when the lease was lost (another worker has the run now) or the
     * organisation became read-only after the claim: then the lease is given back and the run keeps its
     * wake time, so it is claimed again once the subscription is resumed (DASHBOARD 10: runs pause).
     */
    async advance(owner: string, key: { org_id: string; id: string }): Promise<boolean> {
      return store.transaction(async (repos) => {
        const run = await repos.runs.findLeasedForUpdate(key.org_id, key.id, owner);
        if (!run) return false;
        const workspace = await repos.organizations.workspace(run.org_id);
        if (workspace?.state !== 'active') {
          await repos.runs.update(run.org_id, run.id, { lease_owner: null, lease_expires_at: null });
          return false;
        }
        const now = clock.now();
        if (!isActiveRun(run)) {
          await repos.runs.update(run.org_id, run.id, { wake_at: null, lease_owner: null, lease_expires_at: null });
          return true;
        }
        await advanceRun(repos, run, now);
        return true;
      });
    },

    nextDueAt(): Promise<number | null> {
      return store.repos.runs.nextDueAtAcrossOrgs();
    },

    releaseAllLeases(): Promise<number> {
      return store.transaction((repos) => repos.runs.releaseAllLeasesAcrossOrgs());
    },
  };
}

export type RunsService = ReturnType<typeof createRunsService>;
