import { Readable } from 'node:stream';
import type { AuditFilter } from '../../db/repositories/audit-repo.js';
import type { AuditLogRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { fieldError } from '../../errors.js';
import { csvLine, type CsvValue } from '../../lib/csv.js';
import { toIso, type Clock } from '../../lib/time.js';
import { authorize, can, type Actor } from '../access/actor.js';
import { createdChanges, recordAudit, type AuditChange } from './audit-record.js';
import { decodeCursor, pageResult, type PageRequest, type PageResult } from '../shared/pagination.js';
import { pacedBatches } from '../../lib/paced-batches.js';

/** One audit row as the dashboard, the JSON Lines export and any future API show it. */
export interface AuditEntryView {
  id: string;
  occurred_at: string;
  actor: { type: AuditLogRow['actor_type']; id: string | null; label: string | null; api_key_id: string | null; session_id: string | null };
  action: string;
  target: { type: string; id: string; label: string | null } | null;
  source: AuditLogRow['source'];
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  outcome: AuditLogRow['outcome'];
  /** `{ field: { old, new } }`, or null when the action changed no field (a deletion, a revocation). */
  changes: Record<string, AuditChange> | null;
}

/** What the dashboard's filters send; `from` inclusive, `to` exclusive, both epoch ms. Empty text is no filter. */
export interface AuditListFilter {
  /** A prefix (CONTRACT 13): `workflow` matches `workflow.created` and `workflow_run.started`; a whole action matches itself. */
  action?: string | undefined;
  /** A user id, `cli`, `system`, or part of the actor's e-mail. */
  actor?: string | undefined;
  /** A target id or part of its label. */
  target?: string | undefined;
  from?: number | undefined;
  to?: number | undefined;
}

export type AuditExportFormat = 'csv' | 'jsonl';

export interface AuditExport {
  filename: string;
  contentType: string;
  /** The rows, newest first, read in batches as the consumer pulls: memory stays flat. */
  stream: Readable;
}

export const CSV_COLUMNS = [
  'occurred_at',
  'actor_type',
  'actor_id',
  'actor_label',
  'api_key_id',
  'session_id',
  'action',
  'target_type',
  'target_id',
  'target_label',
  'source',
  'ip',
  'user_agent',
  'request_id',
  'outcome',
  'changes',
] as const;

const MAX_ACTION = 100;
const MAX_ACTOR_OR_TARGET = 200;
const MAX_LIMIT = 100;
const MAX_TIME = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z, as toIso renders
const PRUNE_BATCH = 200;
/** Export lines are gathered into chunks of about this size: fewer, larger writes to the socket. */
const CHUNK_BYTES = 64 * 1024;

const EXPORT_FORMATS: Record<AuditExportFormat, { extension: string; contentType: string }> = {
  csv: { extension: 'csv', contentType: 'text/csv; charset=utf-8' },
  jsonl: { extension: 'jsonl', contentType: 'application/x-ndjson; charset=utf-8' },
};

/** Admins, owners and operators (CLI, system) read the audit log (DASHBOARD 3: `/dashboard/audit-log` is A). */
export function canReadAudit(actor: Actor): boolean {
  return can(actor, 'audit_log', 'read');
}

/** Throws 403 `forbidden` for members and viewers, and for a key whose scope leaves out `audit_log`. */
export function assertCanReadAudit(actor: Actor): void {
  authorize(actor, 'audit_log', 'read', `your role (${actor.type === 'user' ? actor.role : actor.type}) does not allow reading the audit log`);
}

export function toAuditEntryView(row: AuditLogRow): AuditEntryView {
  return {
    id: row.id,
    occurred_at: toIso(row.occurred_at),
    actor: { type: row.actor_type, id: row.actor_id, label: row.actor_label, api_key_id: row.api_key_id, session_id: row.session_id },
    action: row.action,
    target: row.target_type !== null && row.target_id !== null ? { type: row.target_type, id: row.target_id, label: row.target_label } : null,
    source: row.source,
    ip: row.ip,
    user_agent: row.user_agent,
    request_id: row.request_id,
    outcome: row.outcome,
    changes: row.changes === null ? null : (JSON.parse(row.changes) as AuditEntryView['changes']),
  };
}

function csvRecord(row: AuditLogRow): CsvValue[] {
  return [
    toIso(row.occurred_at),
    row.actor_type,
    row.actor_id,
    row.actor_label,
    row.api_key_id,
    row.session_id,
    row.action,
    row.target_type,
    row.target_id,
    row.target_label,
    row.source,
    row.ip,
    row.user_agent,
    row.request_id,
    row.outcome,
    row.changes,
  ];
}

function checkText(value: unknown, field: string, max: number): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw fieldError(field, 'must be a string');
  if ([...value].length > max) throw fieldError(field, `must be at most ${max} characters`);
  return value;
}

function checkTime(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TIME) {
    throw fieldError(field, 'must be a time between 1970-01-01 and 9999-12-31');
  }
  return value;
}

/** The filter as the repository takes it, or 400 `validation_failed` naming the first bad field. */
export function checkAuditFilter(filter: AuditListFilter): AuditFilter {
  const checked: AuditFilter = {
    action: checkText(filter.action, 'action', MAX_ACTION),
    actor: checkText(filter.actor, 'actor', MAX_ACTOR_OR_TARGET),
    target: checkText(filter.target, 'target', MAX_ACTOR_OR_TARGET),
    from: checkTime(filter.from, 'from'),
    to: checkTime(filter.to, 'to'),
  };
  if (checked.from !== undefined && checked.to !== undefined && checked.to <= checked.from) throw fieldError('to', 'must be later than from');
  return checked;
}

function checkLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw fieldError('limit', `must be an integer from 1 to ${MAX_LIMIT}`);
}

/** The filter as the `audit_log.exported` row records it: only what was set, times as ISO. */
function describeFilter(filter: AuditFilter): Record<string, string> {
  const described: Record<string, string> = {};
  if (filter.action !== undefined) described.action = filter.action;
  if (filter.actor !== undefined) described.actor = filter.actor;
  if (filter.target !== undefined) described.target = filter.target;
  if (filter.from !== undefined) described.from = toIso(filter.from);
  if (filter.to !== undefined) described.to = toIso(filter.to);
  return described;
}

export interface AuditServiceDeps {
  store: Store;
  clock: Clock;
  /** AUDIT_RETENTION_DAYS in milliseconds: rows older than this are pruned. */
  retentionMs: number;
}

/**
 * Reading, exporting and pruning the audit log. Rows are written only by `recordAudit`, inside each
 * change's own transaction; there is deliberately no update or delete here except retention (`prune`)
 * (the organisation's deletion removes its rows by cascade).
 */
export function createAuditService({ store, clock, retentionMs }: AuditServiceDeps) {
  return {
    /** Newest first, keyset pages. 403 before 400, as everywhere. */
    async list(actor: Actor, filter: AuditListFilter, page: PageRequest): Promise<PageResult<AuditEntryView>> {
      assertCanReadAudit(actor);
      const checked = checkAuditFilter(filter);
      checkLimit(page.limit);
      const before = decodeCursor(page.cursor);
      const rows = await store.repos.audit.list(actor.orgId, checked, page.limit, before);
      return pageResult(rows, toAuditEntryView);
    },

    /**
     * Exactly the filtered rows, newest first, streamed. The export is itself audited (`audit_log.exported`,
     * naming the filter and format) in its own transaction before the first byte is sent, so a download
     * that is later interrupted is still on record.
     */
    async export(actor: Actor, filter: AuditListFilter, format: AuditExportFormat): Promise<AuditExport> {
      assertCanReadAudit(actor);
      const checked = checkAuditFilter(filter);
      const spec = EXPORT_FORMATS[format];
      if (!Object.hasOwn(EXPORT_FORMATS, format) || !spec) throw fieldError('format', 'must be one of: csv, jsonl');
      const { orgId } = actor;
      const now = clock.now();
      // The export covers the rows up to the newest one that existed when it was asked for, by `seq`.
      // Its own `audit_log.exported` row is written after that read, so it gets a higher seq and is left
      // out, and so is anything written while the file streams: the file is one consistent snapshot.
      // Bounding by `to = now` instead would be wrong twice: occurred_at has millisecond grain (rows of
      // that same millisecond would be cut, or the export row kept), and it comes from each instance's
      // clock, which is not the commit order; seq is.
      const upTo = await store.transaction(async (repos) => {
        const newest = await repos.audit.list(orgId, {}, 1, null);
        await recordAudit(repos, actor, {
          action: 'audit_log.exported',
          target: null,
          changes: createdChanges({ format, filter: describeFilter(checked) }),
          at: now,
        });
        return newest.rows[0]?.seq ?? 0;
      });

      async function* chunks(): AsyncGenerator<string> {
        let buffer = format === 'csv' ? csvLine(CSV_COLUMNS) : '';
        for await (const row of store.repos.audit.stream(orgId, checked)) {
          // Newest first: rows above the bound come first, and are only the few written since.
          if (row.seq > upTo) continue;
          buffer += format === 'csv' ? csvLine(csvRecord(row)) : `${JSON.stringify(toAuditEntryView(row))}\n`;
          if (buffer.length >= CHUNK_BYTES) {
            yield buffer;
            buffer = '';
          }
        }
        if (buffer.length > 0) yield buffer;
      }

      const stamp = toIso(now).replace(/\.\d{3}Z$/, 'Z').replace(/:/g, '');
      return { filename: `audit-log-${stamp}.${spec.extension}`, contentType: spec.contentType, stream: Readable.from(chunks(), { objectMode: false }) };
    },

    /** Retention: deletes every row older than AUDIT_RETENTION_DAYS, in batches; returns how many. */
    async prune(): Promise<number> {
      const cutoff = clock.now() - retentionMs;
      return pacedBatches((size) => store.repos.audit.pruneOlderThan(cutoff, size), { size: PRUNE_BATCH });
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
