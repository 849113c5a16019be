import type { ExportReadsRepository, ExportTable, ExportTableRow } from '../../db/repositories/export-reads-repo.js';
import type { DeliveryAttemptRow, DeliveryRow, OauthGrantRow, RunRow, RunStepRow, ScimGroupRow, TaskRow } from '../../db/schema.js';
import { toIso } from '../../lib/time.js';
import { summarizeKey } from '../identity/api-keys-service.js';
import { toAuditEntryView } from '../audit/audit-service.js';
import { toAttempt, toDelivery } from '../webhooks/deliveries-service.js';
import { type DeliveryDetail } from '../../schemas/deliveries.js';
import { toProject } from '../projects/projects-service.js';
import { toCollaboratorRecord } from '../projects/collaborators-view.js';
import { toRun, toRunStep, type RunDetail } from '../workflows/runs-view.js';
import { toTask } from '../workflows/tasks-service.js';
import { toUser } from '../identity/users-view.js';
import { toWebhook } from '../webhooks/webhooks-service.js';
import { toWorkflow } from '../workflows/workflows-service.js';

/**
 * The collections of an export (DASHBOARD 9), in the order their files appear in the ZIP. Each record is
 * the API's own public shape where the API has one (`toProject`, `toUser`, `summarizeKey`, `toWebhook`,
 * `toWorkflow`, the run and delivery details), so the export format is the API's documented format:
 * no password hash, key hash, webhook secret or session token exists in any of these shapes.
 */
export const EXPORT_COLLECTIONS = ['projects', 'project_collaborators', 'users', 'api_keys', 'scim_tokens', 'scim_groups', 'connected_apps', 'webhooks', 'workflows', 'runs', 'tasks', 'deliveries', 'audit_log'] as const;

export type ExportCollection = (typeof EXPORT_COLLECTIONS)[number];

export type ExportCounts = Record<ExportCollection, number>;

interface CollectionSpec {
  table: ExportTable;
  /** Rows per read. Deliveries carry their attempts (each up to 64 KiB of response body): fewer per page. */
  pageSize: number;
  /** One page of rows as records, with whatever they embed read in one query per kind. */
  records(rows: readonly unknown[], reads: ExportReadsRepository, orgId: string): Promise<unknown[]> | unknown[];
}

type Records<T extends ExportTable> = (rows: ExportTableRow<T>[], reads: ExportReadsRepository, orgId: string) => Promise<unknown[]> | unknown[];

function spec<T extends ExportTable>(table: T, pageSize: number, records: Records<T>): CollectionSpec {
  // collectionLines hands `records` the rows it read from this same `table`: the cast only forgets which table.
  return { table, pageSize, records: records as unknown as CollectionSpec['records'] };
}

/**
 * Rows per read. Small pages keep what is alive at any moment small: with 1,000 rows a page the worker's
 * heap grew with the size of the export (objects alive across a page's await outlive V8's young generation
 * and are only reclaimed by full collections); with 250 it stays flat on SQLite (docs: the export benchmark).
 */
const DEFAULT_PAGE = 250;
/** Text is handed to the ZIP in pieces of about this many characters, never as one string per page. */
const PIECE_CHARS = 32 * 1024;

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/** Runs with their steps (and each step's task state), as the API's run detail. */
async function runRecords(rows: RunRow[], reads: ExportReadsRepository, orgId: string): Promise<RunDetail[]> {
  const steps = await reads.runSteps(orgId, rows.map((r) => r.id));
  const taskIds = steps.map((s) => s.task_id).filter((id): id is string => id !== null);
  const tasks = new Map((await reads.tasks(orgId, taskIds)).map((t: TaskRow) => [t.id, t]));
  const byRun = groupBy(steps, (s: RunStepRow) => s.run_id);
  return rows.map((run) => ({
    ...toRun(run),
    steps: (byRun.get(run.id) ?? []).map((s) => toRunStep(s, s.task_id === null ? undefined : tasks.get(s.task_id))),
  }));
}

/** Deliveries with their payload and every attempt, as the API's delivery detail. */
async function deliveryRecords(rows: DeliveryRow[], reads: ExportReadsRepository, orgId: string): Promise<DeliveryDetail[]> {
  const [attempts, bodies] = await Promise.all([
    reads.attempts(orgId, rows.map((r) => r.id)),
    reads.eventBodies(orgId, [...new Set(rows.map((r) => r.event_id))]),
  ]);
  const byDelivery = groupBy(attempts, (a: DeliveryAttemptRow) => a.delivery_id);
  return rows.map((row) => {
    const list = byDelivery.get(row.id) ?? [];
    const last = list[list.length - 1];
    const summary = last ? { lastAttemptAt: last.started_at, replayed: list.some((a) => a.trigger === 'replay') } : undefined;
    return { ...toDelivery(row, summary), payload: bodies.get(row.event_id) ?? '', attempt_history: list.map(toAttempt) };
  });
}

const isoOrNull = (ms: number | null) => (ms === null ? null : toIso(ms));

/** SCIM groups with their members and the owner's mapping of them to roles (CONTRACT 16). */
async function scimGroupRecords(rows: ScimGroupRow[], reads: ExportReadsRepository, orgId: string) {
  const { members, projects } = await reads.scimGroupParts(orgId, rows.map((r) => r.id));
  const membersOf = groupBy(members, (m) => m.group_id);
  const projectsOf = groupBy(projects, (p) => p.group_id);
  return rows.map((g) => ({
    id: g.id,
    display_name: g.display_name,
    external_id: g.external_id,
    org_role: g.org_role,
    project_roles: (projectsOf.get(g.id) ?? []).map((p) => ({ project_id: p.project_id, role: p.role })),
    member_ids: (membersOf.get(g.id) ?? []).map((m) => m.user_id),
    created_at: toIso(g.created_at),
    updated_at: toIso(g.updated_at),
  }));
}

/** Apps connected through OAuth (CONTRACT 17): who allowed which app, for what; never a token (those are not in the grant). */
async function connectedAppRecords(rows: OauthGrantRow[], reads: ExportReadsRepository) {
  const names = await reads.appNames(rows.map((g) => g.client_id));
  return rows.map((g) => ({
    id: g.id,
    app: names.get(g.client_id) ?? null,
    client_id: g.client_id,
    user_id: g.user_id,
    resource: `/${g.resource}`,
    scope: g.scope,
    created_at: toIso(g.created_at),
    last_used_at: isoOrNull(g.last_used_at),
    revoked_at: isoOrNull(g.revoked_at),
  }));
}

const SPECS: Record<ExportCollection, CollectionSpec> = {
  projects: spec('projects', DEFAULT_PAGE, (rows) => rows.map(toProject)),
  project_collaborators: spec('project_collaborators', DEFAULT_PAGE, (rows) => rows.map(toCollaboratorRecord)),
  users: spec('users', DEFAULT_PAGE, (rows) => rows.map(toUser)),
  api_keys: spec('api_keys', DEFAULT_PAGE, (rows) => rows.map(summarizeKey)),
  // The token's name and dates; never its hash.
  scim_tokens: spec('scim_tokens', DEFAULT_PAGE, (rows) =>
    rows.map((t) => ({ id: t.id, name: t.name, prefix: t.token_prefix, created_at: toIso(t.created_at), last_used_at: isoOrNull(t.last_used_at), revoked_at: isoOrNull(t.revoked_at) })),
  ),
  scim_groups: spec('scim_groups', DEFAULT_PAGE, scimGroupRecords),
  connected_apps: spec('oauth_grants', DEFAULT_PAGE, connectedAppRecords),
  webhooks: spec('webhooks', DEFAULT_PAGE, (rows) => rows.map(toWebhook)),
  workflows: spec('workflows', DEFAULT_PAGE, (rows) => rows.map(toWorkflow)),
  runs: spec('workflow_runs', DEFAULT_PAGE, runRecords),
  tasks: spec('tasks', DEFAULT_PAGE, (rows) => rows.map(toTask)),
  deliveries: spec('deliveries', 100, deliveryRecords),
  audit_log: spec('audit_log', DEFAULT_PAGE, (rows) => rows.map(toAuditEntryView)),
};

export const collectionFile = (collection: ExportCollection): string => `${collection}.ndjson`;

export const collectionTable = (collection: ExportCollection): ExportTable => SPECS[collection].table;

/**
 * The collection's NDJSON text, one page of rows at a time (`afterPage` runs between pages: the job renews
 * its lease there and stops if told to). Rows above `upToSeq` (written after the export began) are left out.
 */
export async function* collectionLines(input: {
  collection: ExportCollection;
  reads: ExportReadsRepository;
  orgId: string;
  upToSeq: number;
  onRecords: (n: number) => void;
  afterPage: () => Promise<void>;
}): AsyncGenerator<string> {
  const spec = SPECS[input.collection];
  let after = 0;
  while (after < input.upToSeq) {
    const rows = await input.reads.page(spec.table, input.orgId, after, input.upToSeq, spec.pageSize);
    if (rows.length === 0) return;
    const records = await spec.records(rows, input.reads, input.orgId);
    input.onRecords(records.length);
    let text = '';
    for (const record of records) {
      text += `${JSON.stringify(record)}\n`;
      if (text.length >= PIECE_CHARS) {
        yield text;
        text = '';
      }
    }
    if (text.length > 0) yield text;
    if (rows.length < spec.pageSize) return;
    after = rows[rows.length - 1]!.seq;
    await input.afterPage();
  }
}
