import { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { ExportRow, ExportStatus, OrganizationRow } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { errors } from '../../errors.js';
import { createChunkWriter } from '../../lib/chunk-store.js';
import { collectionFile, collectionLines, collectionTable, EXPORT_COLLECTIONS, type ExportCollection, type ExportCounts } from './export-collections.js';
import { textSource, writeZip, type ZipEntry } from '../../lib/zip-writer.js';
import { newId } from '../../lib/ids.js';
import { DAY_MS, formatDay, toIso, type Clock } from '../../lib/time.js';
import { exportReadyMail } from '../../mail/export-mail.js';
import type { Mailer } from '../../mail/mailer.js';
import { authorize, can, type Actor } from '../access/actor.js';
import { recordAudit } from '../audit/audit-record.js';
import { toPage } from '../../db/repositories/executor.js';
import { decodeCursor, pageResult, type PageRequest, type PageResult } from '../shared/pagination.js';

/** The ZIP's layout version, in its manifest (docs/lifecycle.md describes version 1). */
export const EXPORT_FORMAT_VERSION = 1;
/** DASHBOARD 9: a ready export can be downloaded for 7 days (never past the organisation's deletion date). */
export const EXPORT_RETENTION_MS = 7 * DAY_MS;
/** How long a build is held before another worker may take it over; renewed while the build goes on. */
export const EXPORT_LEASE_MS = 60_000;
/** Failed exports stay listed (with their error) this long, then go with the expired ones. */
const FAILED_RETENTION_MS = 7 * DAY_MS;
/** The page lists this many, newest first; older ones expire within 7 days anyway. */
const LIST_LIMIT = 20;
/** Chunks (1 MiB each) read per query while a download streams. */
const DOWNLOAD_BATCH = 2;
const PRUNE_BATCH = 100;
/** What a failed export shows; the cause goes to the log, not to the page. */
const FAILED_MESSAGE = 'The export could not be built. Request a new one; if it fails again, contact support.';

/** An export as the audit log names it: by the day it was asked for (exports have no name of their own). */
const exportTarget = (id: string, requestedAt: number) => ({ type: 'export', id, label: `Data export of ${formatDay(requestedAt)}` });

export interface ExportsDeps {
  store: Store;
  clock: Clock;
  mailer: Mailer;
  publicBaseUrl: string;
  log: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>;
}

/** An export as the Export page shows it. */
export interface ExportView {
  id: string;
  status: ExportStatus;
  requested_by: string | null;
  /** Who asked, as named at the time (an e-mail, or cli). */
  requested_by_label: string;
  format_version: number;
  created_at: string;
  started_at: string | null;
  ready_at: string | null;
  expires_at: string | null;
  size_bytes: number | null;
  counts: ExportCounts | null;
  error: string | null;
  /** Ready and not expired: the page offers "Download". */
  downloadable: boolean;
}

/** `manifest.json`, the last file of the ZIP (written once every collection's count is known). */
export interface ExportManifest {
  format_version: number;
  organization: { id: string; name: string; state: OrganizationRow['state']; created_at: string };
  /** When the build began: every collection holds the rows that existed then (by `seq`), none written later. */
  generated_at: string;
  counts: ExportCounts;
  files: { name: string; collection: ExportCollection; records: number }[];
}

export interface ExportDownload {
  id: string;
  filename: string;
  contentType: 'application/zip';
  sizeBytes: number;
  /** The ZIP's chunks in order, a few read at a time as the consumer pulls. */
  stream: Readable;
}

export interface BuildOptions {
  leaseMs?: number;
  /** Asked between pages: true stops the build and returns the export to the queue (the worker is stopping). */
  shouldStop?: () => boolean;
}

export type BuildOutcome = 'ready' | 'failed' | 'abandoned';

/** DASHBOARD 3: `/dashboard/export` is for admins and owners; the operator and the system may too. */
export function mayExport(actor: Actor, action: 'read' | 'create' = 'read'): boolean {
  return can(actor, 'exports', action);
}

function requireExporter(actor: Actor, action: 'read' | 'create' = 'read'): void {
  authorize(actor, 'exports', action, `your role (${actor.type === 'user' ? actor.role : actor.type}) does not allow exporting the workspace's data`);
}

const iso = (ms: number | null) => (ms === null ? null : toIso(ms));

function isDownloadable(row: ExportRow, now: number): boolean {
  return row.status === 'ready' && row.expires_at !== null && row.expires_at > now;
}

export function toExportView(row: ExportRow, now: number): ExportView {
  return {
    id: row.id,
    status: row.status,
    requested_by: row.requested_by,
    requested_by_label: row.requested_by_label,
    format_version: row.format_version,
    created_at: toIso(row.created_at),
    started_at: iso(row.started_at),
    ready_at: iso(row.ready_at),
    expires_at: iso(row.expires_at),
    size_bytes: row.size_bytes,
    counts: row.counts === null ? null : (JSON.parse(row.counts) as ExportCounts),
    error: row.error,
    downloadable: isDownloadable(row, now),
  };
}

/** An export as the API shows it (CONTRACT 13). */
export interface ExportResource {
  id: string;
  status: 'pending' | 'building' | 'ready' | 'failed' | 'expired';
  created_at: string;
  ready_at: string | null;
  expires_at: string | null;
  size_bytes: number | null;
}

const API_STATUS = { queued: 'pending', running: 'building', ready: 'ready', failed: 'failed' } as const;

export function toExportResource(view: ExportView): ExportResource {
  return {
    id: view.id,
    status: view.status === 'ready' && !view.downloadable ? 'expired' : API_STATUS[view.status],
    created_at: view.created_at,
    ready_at: view.ready_at,
    expires_at: view.expires_at,
    size_bytes: view.size_bytes,
  };
}

/** `workspace-export-{org id}-{yyyymmdd}.zip`, dated by the snapshot (UTC). Ids are plain ASCII: safe in a header. */
export function exportFilename(orgId: string, generatedAt: number): string {
  return `workspace-export-${orgId}-${toIso(generatedAt).slice(0, 10).replace(/-/g, '')}.zip`;
}

/** Why a build stops without an outcome of its own: the lease went to another worker (or deletion began), or the worker stops. */
class BuildStopped extends Error {
  constructor(readonly reason: 'lease_lost' | 'stopping') {
    super(reason === 'lease_lost' ? 'the export lease was lost' : 'the worker is stopping');
  }
}

function emptyCounts(): ExportCounts {
  return Object.fromEntries(EXPORT_COLLECTIONS.map((c) => [c, 0])) as ExportCounts;
}

/**
 * Data export (DASHBOARD 9). An admin asks (`request`: one transaction with its audit row, allowed while
 * the workspace is read-only, at most one queued or running export per organisation); the worker's export
 * job builds it (`runNext`: claim under a lease, stream the ZIP into 1 MiB chunks in the database, mark it
 * ready, e-mail the requester); any instance streams the download from the chunks (`openDownload`, audited
 * before the first byte). Expired exports are removed by `prune`.
 */
export function createExportsService(deps: ExportsDeps) {
  const { store, clock, mailer, publicBaseUrl, log } = deps;

  async function mailRequester(row: ExportRow, org: OrganizationRow, sizeBytes: number, expiresAt: number): Promise<void> {
    if (!row.requested_by) return;
    const user = await store.repos.users.findById(row.org_id, row.requested_by);
    // Someone removed since (or the operator, who has no address) is not written to.
    if (!user || user.status !== 'active') return;
    const message = exportReadyMail({
      to: user.email,
      organizationName: org.name,
      exportUrl: `${publicBaseUrl}/dashboard/export`,
      expiresAt: new Date(expiresAt),
      sizeBytes,
    });
    // The export is ready whether or not the mail goes out; the page lists it either way.
    await mailer.send(message).catch((err: unknown) => log.error({ err: (err as Error).message, export_id: row.id }, 'could not e-mail the requester that the export is ready'));
  }

  /**
   * Builds one claimed export. Each collection is read in keyset pages up to its highest `seq` at the
   * start, turned into NDJSON, deflated into the ZIP and cut into chunks, each stored in a transaction that
   * first renews the lease (so a worker that lost the export to another writes nothing more).
   */
  async function build(owner: string, row: ExportRow, options: BuildOptions = {}): Promise<BuildOutcome> {
    const leaseMs = options.leaseMs ?? EXPORT_LEASE_MS;
    const { org_id: orgId, id } = row;
    const org = await store.repos.organizations.findById(orgId);
    // A workspace being deleted is left alone: its deletion removes the export with everything else.
    if (!org || org.state === 'deleting') return 'abandoned';
    const generatedAt = row.started_at ?? clock.now();
    let renewedAt = clock.now();

    const holdLease = async (repos = store.repos) => {
      const now = clock.now();
      if (!(await repos.exports.holdLease(orgId, id, owner, now, leaseMs))) throw new BuildStopped('lease_lost');
      renewedAt = now;
    };
    const betweenPages = async () => {
      if (options.shouldStop?.()) throw new BuildStopped('stopping');
      if (clock.now() - renewedAt >= leaseMs / 3) await holdLease();
    };

    try {
      // A previous attempt's chunks (its worker died mid-build): this attempt starts the file again.
      await store.repos.exports.deleteChunks(orgId, id);
      const snapshot = await store.repos.exportReads.snapshot(orgId);
      const counts = emptyCounts();
      const entries: ZipEntry[] = EXPORT_COLLECTIONS.map((collection) => ({
        name: collectionFile(collection),
        open: () =>
          textSource(() =>
            collectionLines({
              collection,
              reads: store.repos.exportReads,
              orgId,
              upToSeq: snapshot[collectionTable(collection)],
              onRecords: (n) => (counts[collection] += n),
              afterPage: betweenPages,
            }),
          ),
      }));
      entries.push({
        name: 'manifest.json',
        open: () => {
          const manifest: ExportManifest = {
            format_version: EXPORT_FORMAT_VERSION,
            organization: { id: org.id, name: org.name, state: org.state, created_at: toIso(org.created_at) },
            generated_at: toIso(generatedAt),
            counts,
            files: EXPORT_COLLECTIONS.map((collection) => ({ name: collectionFile(collection), collection, records: counts[collection] })),
          };
          return Readable.from([Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`)]);
        },
      });
      const writer = createChunkWriter(async (position, data) => {
        await store.transaction(async (repos) => {
          await holdLease(repos);
          await repos.exports.insertChunk(orgId, id, position, data);
        });
      });
      await writeZip(entries, writer, { mtime: new Date(generatedAt) });

      const readyAt = clock.now();
      // Cancelled meanwhile: the download still ends with the workspace.
      const deletionAt = (await store.repos.organizations.findById(orgId))?.deletion_at ?? null;
      const expiresAt = deletionAt === null ? readyAt + EXPORT_RETENTION_MS : Math.min(readyAt + EXPORT_RETENTION_MS, deletionAt);
      const sizeBytes = writer.bytes();
      const settled = await store.repos.exports.settle(orgId, id, owner, {
        status: 'ready',
        size_bytes: sizeBytes,
        counts: JSON.stringify(counts),
        error: null,
        ready_at: readyAt,
        expires_at: expiresAt,
        updated_at: readyAt,
      });
      if (!settled) return 'abandoned';
      log.info({ export_id: id, org_id: orgId, size_bytes: sizeBytes, chunks: writer.chunks(), seconds: (readyAt - generatedAt) / 1000 }, 'export ready');
      await mailRequester(row, org, sizeBytes, expiresAt);
      return 'ready';
    } catch (err) {
      if (err instanceof BuildStopped) {
        if (err.reason === 'stopping') {
          // Back to the queue at once: the next worker (or this one, restarted) starts it again.
          await store.repos.exports.settle(orgId, id, owner, { status: 'queued', updated_at: clock.now() });
        }
        return 'abandoned';
      }
      log.error({ err, export_id: id, org_id: orgId }, 'export: the build failed');
      // Only while the export is still this worker's: another one's chunks are not touched.
      if (await store.repos.exports.settle(orgId, id, owner, { status: 'failed', error: FAILED_MESSAGE, updated_at: clock.now() })) {
        await store.repos.exports.deleteChunks(orgId, id);
      }
      return 'failed';
    }
  }

  return {
    /** Queues an export (admins and owners; allowed while read-only). 409 while another is queued or running. */
    async request(actor: Actor): Promise<ExportView> {
      requireExporter(actor, 'create');
      const now = clock.now();
      const row = await store.transaction(async (repos) => {
        // Two admins asking at once: the second sees the first's export.
        await repos.organizations.lock(actor.orgId);
        const workspace = await repos.organizations.workspace(actor.orgId);
        if (!workspace) throw errors.notFound('organization');
        if (workspace.state === 'deleting') throw errors.conflict('this workspace is being deleted; its data can no longer be exported');
        if (await repos.exports.findPending(actor.orgId)) {
          throw errors.conflict('an export of this workspace is already being prepared; it is listed as ready when it is done');
        }
        const inserted = await repos.exports.insert({
          id: newId('exp'),
          org_id: actor.orgId,
          status: 'queued',
          requested_by: actor.type === 'user' ? actor.userId : null,
          requested_by_label: actor.type === 'user' ? actor.label : actor.type,
          format_version: EXPORT_FORMAT_VERSION,
          size_bytes: null,
          counts: null,
          error: null,
          created_at: now,
          started_at: null,
          ready_at: null,
          expires_at: null,
          lease_owner: null,
          lease_expires_at: null,
          updated_at: now,
        });
        await recordAudit(repos, actor, { action: 'export.requested', target: exportTarget(inserted.id, inserted.created_at), at: now });
        return inserted;
      });
      return toExportView(row, now);
    },

    /** The organisation's latest exports, newest first (admins and owners). */
    async list(actor: Actor): Promise<ExportView[]> {
      requireExporter(actor);
      const now = clock.now();
      const rows = await store.repos.exports.list(actor.orgId, LIST_LIMIT);
      return rows.map((row) => toExportView(row, now));
    },

    /** A page of the organisation's exports, newest first (GET /v1/exports). */
    async listPage(actor: Actor, page: PageRequest): Promise<PageResult<ExportView>> {
      requireExporter(actor);
      const now = clock.now();
      const before = decodeCursor(page.cursor);
      const rows = await store.repos.exports.page(actor.orgId, page.limit + 1, before);
      return pageResult(toPage(rows, page.limit), (row) => toExportView(row, now));
    },

    async get(actor: Actor, exportId: string): Promise<ExportView> {
      requireExporter(actor);
      const row = await store.repos.exports.findById(actor.orgId, exportId);
      if (!row) throw errors.notFound('export');
      return toExportView(row, clock.now());
    },

    /**
     * A ready, unexpired export's ZIP as a stream: one still being prepared, or failed, is a 409; an expired
     * one is gone (404), as an unknown one. The download is audited
     * (`export.downloaded`) in its own transaction before the first byte, so an interrupted one is on
     * record too. A file cut short (pruned while streaming) ends the stream with an error, never quietly.
     */
    async openDownload(actor: Actor, exportId: string): Promise<ExportDownload> {
      requireExporter(actor);
      const { orgId } = actor;
      const now = clock.now();
      const row = await store.repos.exports.findById(orgId, exportId);
      if (row?.status === 'queued' || row?.status === 'running') throw errors.conflict('this export is not ready yet; it is listed as ready when it is done');
      if (row?.status === 'failed') throw errors.conflict('this export failed; request a new one');
      if (!row || !isDownloadable(row, now) || row.size_bytes === null) throw errors.notFound('export');
      await store.transaction((repos) => recordAudit(repos, actor, { action: 'export.downloaded', target: exportTarget(row.id, row.created_at), at: now }));
      const size = row.size_bytes;

      async function* chunks(): AsyncGenerator<Buffer> {
        let position = 0;
        let sent = 0;
        for (;;) {
          const batch = await store.repos.exports.readChunks(orgId, exportId, position, DOWNLOAD_BATCH);
          for (const chunk of batch) {
            if (chunk.position !== position) throw new Error(`export ${exportId}: chunk ${position} is missing`);
            const data = Buffer.isBuffer(chunk.data) ? chunk.data : Buffer.from(chunk.data.buffer, chunk.data.byteOffset, chunk.data.byteLength);
            sent += data.length;
            position += 1;
            yield data;
          }
          if (batch.length < DOWNLOAD_BATCH) break;
        }
        if (sent !== size) throw new Error(`export ${exportId}: ${sent} of ${size} bytes found`);
      }

      return {
        id: row.id,
        filename: exportFilename(orgId, row.started_at ?? row.created_at),
        contentType: 'application/zip',
        sizeBytes: size,
        stream: Readable.from(chunks(), { objectMode: false }),
      };
    },

    // ---- the export job's ----

    /** Leases the next export to build (queued, or abandoned by a dead worker), if any. */
    async claim(owner: string, leaseMs = EXPORT_LEASE_MS): Promise<ExportRow | null> {
      return (await store.repos.exports.claimAcrossOrgs({ owner, now: clock.now(), leaseMs })) ?? null;
    },

    build,

    /** Claims and builds one export; false when there was nothing to do. */
    async runNext(owner: string, options: BuildOptions = {}): Promise<boolean> {
      const row = await store.repos.exports.claimAcrossOrgs({ owner, now: clock.now(), leaseMs: options.leaseMs ?? EXPORT_LEASE_MS });
      if (!row) return false;
      await build(owner, row, options);
      return true;
    },

    /** SQLite runs one worker: builds left by a killed process are queued again when it starts. */
    async releaseAllLeases(): Promise<number> {
      return store.repos.exports.releaseAllLeasesAcrossOrgs(clock.now());
    },

    /** Removes expired exports (and failed ones after a week) with their chunks; returns how many. */
    async prune(): Promise<number> {
      const now = clock.now();
      let removed = 0;
      for (;;) {
        const doomed = await store.repos.exports.expiredAcrossOrgs(now, now - FAILED_RETENTION_MS, PRUNE_BATCH);
        for (const { org_id, id } of doomed) {
          await store.transaction((repos) => repos.exports.delete(org_id, id));
          removed += 1;
        }
        if (doomed.length < PRUNE_BATCH) return removed;
      }
    },
  };
}

export type ExportsService = ReturnType<typeof createExportsService>;
