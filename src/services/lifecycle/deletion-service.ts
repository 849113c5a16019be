import type { FastifyBaseLogger } from 'fastify';
import { DELETION_STEPS, type ClaimedOrganization, type ScheduledOrganization } from '../../db/repositories/deletion-repo.js';
import type { Store } from '../../db/store.js';
import { DAY_MS, toIso, type Clock } from '../../lib/time.js';
import { deletionReminderMail } from '../../mail/lifecycle-mail.js';
import type { Mailer } from '../../mail/mailer.js';
import type { AuthEvents } from '../../db/auth-events.js';

export interface DeletionDeps {
  store: Store;
  clock: Clock;
  mailer: Mailer;
  authEvents: AuthEvents;
  publicBaseUrl: string;
  log: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>;
}

/** DASHBOARD 10: owners are e-mailed 7 days and 1 day before the deletion. */
export const REMINDER_7D_MS = 7 * DAY_MS;
export const REMINDER_1D_MS = DAY_MS;
/** Rows per statement (DELETION_BATCH_SIZE); each batch is its own short transaction. */
export const DEFAULT_DELETION_BATCH_SIZE = 1000;
/**
 * How long a claimed deletion is held without a batch. Every batch renews it, and a batch takes
 * milliseconds, so this only bounds how long a killed worker's deletion waits for another worker.
 */
export const DELETION_LEASE_MS = 15_000;

export interface DeletionOptions {
  batchSize?: number;
  leaseMs?: number;
  /** Asked between batches: a stopping worker ends after the current batch, releasing its lease. */
  shouldStop?: () => boolean;
}

export interface DeletionResult {
  /** False when the deletion stopped before its end (stop asked, or the lease lost); the row stays `deleting`. */
  finished: boolean;
  /** Rows deleted by this call, per table. */
  deleted: Record<string, number>;
  batches: number;
}

type Reminder = '7d' | '1d';

/** Which reminder is due now, if any: the 1-day one replaces a 7-day one never sent; none once the date has come. */
function dueReminder(org: ScheduledOrganization, now: number): Reminder | null {
  if (org.state !== 'read_only' || org.deletion_at === null || now >= org.deletion_at) return null;
  if (now >= org.deletion_at - REMINDER_1D_MS) return org.reminded_1d_at === null ? '1d' : null;
  if (now >= org.deletion_at - REMINDER_7D_MS) return org.reminded_7d_at === null ? '7d' : null;
  return null;
}

/** When the job must look at this organisation next (null: not before something changes). */
function nextAt(org: ScheduledOrganization, now: number): number | null {
  if (org.state === 'deleting') return org.lease_expires_at ?? now;
  if (org.deletion_at === null) return null;
  const points = [org.deletion_at];
  // Reminders that can no longer be sent (the 1-day point passed for the 7-day one, the date for both) are
  // nothing to wake for.
  if (org.reminded_1d_at === null && now < org.deletion_at) points.push(org.deletion_at - REMINDER_1D_MS);
  if (org.reminded_7d_at === null && now < org.deletion_at - REMINDER_1D_MS) points.push(org.deletion_at - REMINDER_7D_MS);
  return Math.min(...points);
}

class LeaseLost extends Error {}

/**
 * The end of an organisation's lifecycle (DASHBOARD 10): the reminders before its deletion date, then
 * the deletion itself. The deletion is claimed like the workers' other work (a lease in the
 * organisation's row), marks the organisation `deleting` — from that commit its keys answer 401 and its
 * people cannot sign in — then removes every row of it in bounded batches, each in its own transaction
 * that first renews the lease. The last transaction leaves a tombstone (the id and the dates) in place
 * of the organisation's row. Any crash between two transactions leaves a state the next claim carries on from.
 */
export function createDeletionService(deps: DeletionDeps) {
  const { store, clock, mailer, authEvents, publicBaseUrl, log } = deps;

  async function mailOwners(org: ScheduledOrganization, which: Reminder): Promise<number> {
    const owners = await store.repos.users.findActiveOwners(org.id);
    let sent = 0;
    for (const owner of owners) {
      const message = deletionReminderMail({
        to: owner.email,
        organizationName: org.name,
        deletionAt: new Date(org.deletion_at!),
        billingUrl: `${publicBaseUrl}/dashboard/billing`,
        exportUrl: `${publicBaseUrl}/dashboard/export`,
        daysLeft: which === '7d' ? 7 : 1,
      });
      try {
        await mailer.send(message);
        sent += 1;
      } catch (err) {
        // Claimed is claimed: a reminder is sent at most once, never twice.
        log.error({ err: (err as Error).message, org_id: org.id, reminder: which }, 'could not e-mail an owner the deletion reminder');
      }
    }
    return sent;
  }

  /**
   * One batch in its own transaction, run only while the lease is still ours (renewed first). Then a turn
   * of the event loop: better-sqlite3 answers synchronously, so without it a long deletion would run in
   * microtasks alone and hold up every request and log line of the process until it ended.
   */
  async function batch<T>(orgId: string, owner: string, leaseMs: number, work: (repos: Store['repos']) => Promise<T>): Promise<T> {
    const result = await store.transaction(async (repos) => {
      if (!(await repos.deletion.renewLease(orgId, owner, clock.now(), leaseMs))) throw new LeaseLost();
      return work(repos);
    });
    await new Promise((resolve) => setImmediate(resolve));
    return result;
  }

  return {
    /** Sends the reminders that are due (claiming each first, so any number of workers send it once); the e-mails sent. */
    async sendDueReminders(): Promise<number> {
      const now = clock.now();
      let sent = 0;
      for (const org of await store.repos.deletion.scheduledAcrossOrgs()) {
        const which = dueReminder(org, now);
        if (!which) continue;
        if (!(await store.repos.deletion.claimReminder(org.id, which, org.deletion_at!, now))) continue;
        sent += await mailOwners(org, which);
        log.info({ org_id: org.id, reminder: which, deletion_at: toIso(org.deletion_at!) }, 'deletion reminder sent to the owners');
      }
      return sent;
    },

    /**
     * Takes the next organisation whose deletion date has come and marks it `deleting` under `owner`'s
     * lease; then every instance drops the organisation's cached keys and sessions at once.
     */
    async claimDue(owner: string, leaseMs: number = DELETION_LEASE_MS): Promise<ClaimedOrganization | null> {
      const claimed = await store.transaction((repos) => repos.deletion.claimDueAcrossOrgs(owner, clock.now(), leaseMs));
      if (!claimed) return null;
      await authEvents.orgChanged(claimed.id);
      return claimed;
    },

    /**
     * Deletes every row of a claimed organisation, then the organisation (its tombstone stays). Stops early,
     * unfinished, when asked to or when the lease is no longer this owner's.
     */
    async deleteOrganization(org: ClaimedOrganization, owner: string, options: DeletionOptions = {}): Promise<DeletionResult> {
      const limit = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_DELETION_BATCH_SIZE));
      const leaseMs = options.leaseMs ?? DELETION_LEASE_MS;
      const stop = options.shouldStop ?? (() => false);
      const deleted: Record<string, number> = {};
      const count = (table: string, n: number) => {
        if (n > 0) deleted[table] = (deleted[table] ?? 0) + n;
      };
      let batches = 0;
      // Rows the last transaction still found (written by a request that began before the deletion did).
      let swept = 0;
      const started = Date.now();
      log.info({ org_id: org.id, resumed: org.resumed, deletion_at: org.deletion_at === null ? null : toIso(org.deletion_at) }, 'organisation deletion started');

      const unfinished = async (reason: 'stopped' | 'lease lost'): Promise<DeletionResult> => {
        if (reason === 'stopped') await store.repos.deletion.releaseLease(org.id, owner);
        log.warn({ org_id: org.id, reason, deleted, batches }, 'organisation deletion interrupted; it resumes from where it stopped');
        return { finished: false, deleted, batches };
      };

      try {
        for (const step of DELETION_STEPS) {
          const children = 'children' in step ? step.children : [];
          for (;;) {
            if (stop()) return await unfinished('stopped');
            batches += 1;
            if (children.length === 0) {
              const n = await batch(org.id, owner, leaseMs, (repos) => repos.deletion.deleteBatch(org.id, step.table, limit));
              count(step.table, n);
              if (n === 0) break;
              continue;
            }
            // A batch of parents: their children in statements of `limit` rows at most, then the parents.
            const ids = await batch(org.id, owner, leaseMs, (repos) => repos.deletion.parentIds(org.id, step.table, limit));
            if (ids.length === 0) break;
            for (const child of children) {
              for (;;) {
                if (stop()) return await unfinished('stopped');
                const n = await batch(org.id, owner, leaseMs, (repos) => repos.deletion.deleteChildren(child.table, child.key, ids, limit));
                count(child.table, n);
                // Until none is left, not until a short batch: on PostgreSQL a row updated meanwhile is skipped once.
                if (n === 0) break;
              }
            }
            count(step.table, await batch(org.id, owner, leaseMs, (repos) => repos.deletion.deleteParents(org.id, step.table, ids)));
          }
        }
        const end = await store.transaction((repos) => repos.deletion.finish(org, owner, clock.now()));
        if (!end.finished) return await unfinished('lease lost');
        swept = end.swept;
      } catch (err) {
        if (err instanceof LeaseLost) return await unfinished('lease lost');
        throw err;
      }
      const rows = Object.values(deleted).reduce((a, b) => a + b, 0) + swept;
      log.info({ org_id: org.id, rows, deleted, swept, batches, ms: Date.now() - started }, 'organisation deleted; its tombstone remains');
      return { finished: true, deleted, batches };
    },

    /** When the job should next look (a reminder point, a deletion date, a lease's end); null when nothing is scheduled. */
    async nextDueAt(): Promise<number | null> {
      const now = clock.now();
      let earliest: number | null = null;
      for (const org of await store.repos.deletion.scheduledAcrossOrgs()) {
        const at = nextAt(org, now);
        if (at !== null && (earliest === null || at < earliest)) earliest = at;
      }
      return earliest;
    },

    /** SQLite's single worker, at start: a deletion a killed process was running is taken up at once. */
    async releaseAllLeases(): Promise<number> {
      return store.repos.deletion.releaseAllLeasesAcrossOrgs();
    },
  };
}

export type DeletionService = ReturnType<typeof createDeletionService>;
