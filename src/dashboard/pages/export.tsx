import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendExport } from '../../http/download.js';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { ExportView } from '../../services/lifecycle/exports-service.js';
import type { AppDeps } from '../../http/app-deps.js';
import { pageContext, pageRefusal, pathId, seeOther, sendPage, type PageContext } from '../context.js';
import { FormBody, htmlResponses, pageSchema } from '../schemas.js';
import { ActionForm, NoValue, Table, Time, type FormError } from '../views/components.js';
import { Layout } from '../views/layout.js';
import { formatBytes, sentence } from '../../lib/text.js';
import { progressFragment, progressVersion } from '../progress.js';

const HERE = '/dashboard/export';

const ExportParams = Type.Object({ id: Type.String({ maxLength: 128 }) });
const RequestForm = FormBody({});

const DOWNLOAD_RESPONSES = {
  ...htmlResponses,
  200: { description: "The export's ZIP, streamed as an attachment.", content: { 'application/zip': { schema: Type.String({ format: 'binary' }) } } },
};

const STATUS_WORDS: Record<ExportView['status'], string> = { queued: 'Queued', running: 'Being built', ready: 'Ready', failed: 'Failed' };

const formatSize = (bytes: number | null) => (bytes === null ? '—' : formatBytes(bytes));
const isPending = (e: ExportView) => e.status === 'queued' || e.status === 'running';

const downloadHref = (id: string) => `${HERE}/${encodeURIComponent(id)}/download`;

/**
 * DASHBOARD 3 and 9: /dashboard/export, for admins and owners (others get the 403 page from the service).
 * "Request export" queues a build in the worker (allowed while the workspace is read-only); the table
 * "Exports" lists the latest ones, with "Download" while a ready one has not expired (7 days, never past
 * the deletion date). The download streams the ZIP from the database, so any instance serves it.
 */
export const exportPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  const exports = services.exports;

  async function exportPage(reply: FastifyReply, page: PageContext, extra: { error?: unknown } = {}) {
    const list = await exports.list(page.actor);
    const people = await services.users.names(page.actor.orgId, list.flatMap((e) => (e.requested_by ? [e.requested_by] : [])));
    // A conflict (an export already under way) is explained on the page; anything else goes to the error page.
    const refusal = extra.error === undefined ? null : pageRefusal(reply, extra.error, [409]);
    const problems: FormError[] = refusal ? [{ field: null, message: sentence(refusal.message) }] : [];
    return sendPage(reply, <ExportPageView page={page} list={list} people={people} errors={problems} />, refusal?.status ?? 200);
  }

  app.get('/export', { schema: pageSchema() }, async (request, reply) => exportPage(reply, pageContext(request)));

  progressFragment(app, '/export/progress', Type.Object({}), async (request) => {
    const list = await exports.list(pageContext(request).actor);
    return { state: list.map((e) => [e.id, e.status, e.downloadable]), active: list.some(isPending) };
  });

  app.post('/export', { schema: { hide: true, body: RequestForm, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    try {
      await exports.request(page.actor);
    } catch (error) {
      return exportPage(reply, page, { error });
    }
    return seeOther(reply, HERE, { notice: 'Export requested. It is built in the background; this page shows it when it is ready, and you will get an e-mail.' });
  });

  // No HEAD twin: every GET is an audited download.
  app.get('/export/:id/download', { exposeHeadRoute: false, schema: { hide: true, params: ExportParams, response: DOWNLOAD_RESPONSES } }, async (request, reply) => {
    const page = pageContext(request);
    const file = await exports.openDownload(page.actor, pathId(request.params.id, 'export'));
    return sendExport(reply, file);
  });
};

interface ExportPageViewProps {
  page: PageContext;
  list: readonly ExportView[];
  /** Requesters by name. */
  people: ReadonlyMap<string, string>;
  errors: FormError[];
}

function ExportPageView({ page, list, people, errors: problems }: ExportPageViewProps) {
  const pending = list.some(isPending);
  const progress = pending ? { url: `${HERE}/progress`, version: progressVersion(list.map((e) => [e.id, e.status, e.downloadable])) } : null;
  return (
    <Layout title="Export" viewer={page.viewer} csrf={page.csrf} current={HERE} errors={problems} progress={progress}>
      <p>
        A copy of the workspace's data as a ZIP: a <code>manifest.json</code> and one JSON Lines file per collection (projects, members, API keys,
        webhook subscriptions, workflows, runs, tasks, deliveries with their attempts, and the audit log). It holds no password, key hash or webhook
        secret. A ready export can be downloaded for 7 days, or until the workspace is deleted if that is sooner.
      </p>
      <section class="panel" aria-labelledby="request-title">
        <h2 id="request-title">New export</h2>
        <p class="muted">
          {pending
            ? 'An export is being prepared. A new one can be requested once it is ready.'
            : 'The export is built in the background; you will get an e-mail when it is ready.'}
        </p>
        <ActionForm action={HERE} csrf={page.csrf} label="Request export" disabled={pending} />
      </section>
      <ExportsTable list={list} people={people} />
    </Layout>
  );
}

function ExportsTable({ list, people }: { list: readonly ExportView[]; people: ReadonlyMap<string, string> }) {
  return (
    <Table caption="Exports" headers={['Requested', 'By', 'Status', 'Size', 'Expires', 'File']} empty="No exports yet.">
      {list.map((e) => (
        <tr>
          <td>
            <Time iso={e.created_at} />
          </td>
          <td>{e.requested_by_label === 'cli' ? 'Command line' : ((e.requested_by ? people.get(e.requested_by) : undefined) ?? e.requested_by_label)}</td>
          <td>
            {STATUS_WORDS[e.status]}
            {e.status === 'failed' && e.error ? <span class="cell-sub">{e.error}</span> : null}
            {e.status === 'ready' && !e.downloadable ? <span class="cell-sub">Expired</span> : null}
          </td>
          <td>{formatSize(e.size_bytes)}</td>
          <td>{e.expires_at ? <Time iso={e.expires_at} /> : <NoValue />}</td>
          <td>
            {e.downloadable ? (
              <a href={downloadHref(e.id)}>Download</a>
            ) : (
              <NoValue />
            )}
          </td>
        </tr>
      ))}
    </Table>
  );
}
