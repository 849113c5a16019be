import type { ComponentChild } from 'preact';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { DomainError, errors, type ErrorDetail } from '../../errors.js';
import type { Actor } from '../../services/access/actor.js';
import { AUDIT_ACTIONS } from '../../services/audit/audit-record.js';
import { assertCanReadAudit, type AuditEntryView, type AuditExportFormat, type AuditListFilter } from '../../services/audit/audit-service.js';
import type { PageResult } from '../../services/shared/pagination.js';
import { escapeHtml } from '../../lib/html.js';
import { formatUtc } from '../../lib/time.js';
import type { AppDeps } from '../../http/app-deps.js';
import { pageContext, pageRefusal, sendPage, type PageContext } from '../context.js';
import { readTimeField } from '../datetime.js';
import { DayField } from '../views/day-field.js';
import { memberOptions, type MemberOption } from '../members-options.js';
import { formErrors } from '../form-validation.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { ActionForm, Clipped, FieldShell, Url, errorFor, Field, Table, Time, type FormError, Email } from '../views/components.js';
import { Layout } from '../views/layout.js';
import { filteredHref, filterText as filterTextOf, type FilterText as FilterTextOf } from '../filters.js';

const HERE = '/dashboard/audit-log';
const PAGE_SIZE = 50;

/** The filter fields as typed into the form: ids, names and query parameters are the same words. */
const FILTER_FIELDS = ['action', 'actor', 'target', 'from', 'to'] as const;
type FilterField = (typeof FILTER_FIELDS)[number];
type FilterText = FilterTextOf<FilterField>;

const LABELS: Record<FilterField, string> = { action: 'Action', actor: 'Actor', target: 'Target', from: 'From', to: 'To' };

// The schemas only bound the size; the service owns the real limits, so a long value is listed on the page.
const ListQuery = Type.Object(
  {
    action: FormText(1024),
    actor: FormText(1024),
    target: FormText(1024),
    from: FormText(64),
    to: FormText(64),
    cursor: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);

const ExportForm = FormBody({
  format: FormText(16),
  action: FormText(1024),
  actor: FormText(1024),
  target: FormText(1024),
  from: FormText(64),
  to: FormText(64),
});

const EXPORT_RESPONSES = {
  ...htmlResponses,
  200: {
    description: 'The filtered audit log as CSV or JSON Lines, streamed as an attachment.',
    content: { 'text/csv': { schema: Type.String() }, 'application/x-ndjson': { schema: Type.String() } },
  },
};

const filterText = (values: Partial<Record<string, string | undefined>>): FilterText => filterTextOf(FILTER_FIELDS, values);

/**
 * The service's filter from the form's text. Times the form cannot read are a 400 naming the field, but only
 * once the service has said this person may read the audit log at all (403 before 400, as everywhere).
 */
function toFilter(actor: Actor, text: FilterText): AuditListFilter {
  const details: ErrorDetail[] = [];
  const time = (field: 'from' | 'to') => readTimeField(text, field, details, field === 'to');
  const filter: AuditListFilter = { action: text.action, actor: text.actor, target: text.target, from: time('from'), to: time('to') };
  if (details.length > 0) {
    assertCanReadAudit(actor);
    throw errors.validation(details);
  }
  return filter;
}

/** A refused filter as the page lists it; a stale page link gets a sentence a person can act on. */
function pageErrors(error: DomainError): FormError[] {
  if (error.details?.some((d) => d.field === 'cursor')) {
    return [{ field: null, message: 'This page link is no longer valid. Start again from the newest entries.' }];
  }
  return formErrors(error, LABELS);
}

function listHref(text: FilterText, cursor?: string): string {
  return filteredHref(HERE, FILTER_FIELDS, text, cursor);
}

export const auditLogPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services }) => {
  app.get('/audit-log', { schema: pageSchema(ListQuery) }, async (request, reply) => {
    const page = pageContext(request);
    const { cursor, ...values } = request.query;
    const text = filterText(values);
    try {
      const list = await services.audit.list(page.actor, toFilter(page.actor, text), { limit: PAGE_SIZE, cursor });
      // People by their names today (a removed person by the e-mail the row kept), keys by their names: one query each.
      const userIds = list.items.flatMap((e) => [e.actor.id, e.target?.type === 'user' ? e.target.id : null]).filter((id): id is string => id !== null);
      const keyIds = list.items.flatMap((e) => (e.actor.api_key_id ? [e.actor.api_key_id] : []));
      const [people, keys, members] = await Promise.all([services.users.names(page.actor.orgId, userIds), services.apiKeys.names(page.actor.orgId, keyIds), memberOptions(services, page.actor)]);
      return sendPage(reply, <AuditLogView page={page} text={text} list={list} cursor={cursor} names={{ people, keys }} members={members} />);
    } catch (error) {
      const refusal = pageRefusal(reply, error, [400]);
      return sendPage(reply, <AuditLogView page={page} text={text} errors={pageErrors(refusal)} members={await memberOptions(services, page.actor)} />, 400);
    }
  });

  // A POST, not a link: every download writes an `audit_log.exported` row, so it carries the CSRF token.
  app.post('/audit-log/export', { schema: { hide: true, body: ExportForm, response: EXPORT_RESPONSES } }, async (request, reply) => {
    const page = pageContext(request);
    const { format = '', ...values } = request.body;
    const text = filterText(values);
    try {
      // The service refuses any other format (after the role and the filter), so the cast only names the type.
      const file = await services.audit.export(page.actor, toFilter(page.actor, text), format as AuditExportFormat);
      return reply
        .code(200)
        .type(file.contentType)
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .header('cache-control', 'no-store')
        .send(file.stream);
    } catch (error) {
      const refusal = pageRefusal(reply, error, [400]);
      return sendPage(reply, <AuditLogView page={page} text={text} errors={pageErrors(refusal)} members={await memberOptions(services, page.actor)} />, 400);
    }
  });
};

/** Names read for the page's rows. */
interface Names {
  people: ReadonlyMap<string, string>;
  keys: ReadonlyMap<string, string>;
}

interface AuditLogViewProps {
  page: PageContext;
  text: FilterText;
  names?: Names;
  /** Absent when the filter was refused: the page then shows the form and its problems only. */
  list?: PageResult<AuditEntryView>;
  cursor?: string | undefined;
  errors?: FormError[];
  /** The people the "Actor" filter offers by name. */
  members: readonly MemberOption[];
}

function AuditLogView({ page, text, list, cursor, names = { people: new Map(), keys: new Map() }, errors: problems, members }: AuditLogViewProps) {
  const filtered = FILTER_FIELDS.some((field) => text[field] !== undefined);
  return (
    <Layout title="Audit log" viewer={page.viewer} csrf={page.csrf} current={HERE} errors={problems}>
      <FilterForm text={text} errors={problems} filtered={filtered} members={members} />
      {list ? (
        <>
          {/* Above the rows, as GitHub puts Export: 50 rows are a long scroll on a phone. */}
          <DownloadForms csrf={page.csrf} text={text} filtered={filtered} />
          <AuditTable items={list.items} filtered={filtered} names={names} />
          <nav class="pager" aria-label="Pages of the audit log">
            {cursor ? <a href={listHref(text)}>Newer</a> : null}
            {list.nextCursor ? <a href={listHref(text, list.nextCursor)}>Older</a> : null}
          </nav>
        </>
      ) : (
        <p class="muted">Correct the filters to see the entries.</p>
      )}
    </Layout>
  );
}

/** The actions by what they act on, in the order the list declares them: one `<optgroup>` each. */
const ACTION_GROUPS: readonly { subject: string; actions: readonly string[] }[] = (() => {
  const groups = new Map<string, string[]>();
  for (const action of AUDIT_ACTIONS) {
    const subject = action.slice(0, action.indexOf('.'));
    groups.set(subject, [...(groups.get(subject) ?? []), action]);
  }
  return [...groups].map(([subject, actions]) => ({ subject, actions }));
})();

/** "project" → "Project actions"; a group's first option selects its prefix (`project.`), every action of it. */
const groupWords = (subject: string) => actionWords(`${subject}.`).trim();

/**
 * The Action select's groups as HTML, built on first use: about 90 options the same on every view. A view marks its
 * choice by adding ` selected` to that one option (measured: rendering them as components each time made the
 * page 16% slower).
 */
let actionOptions: string | undefined;
const allActionOptions = (): string =>
  (actionOptions ??= ACTION_GROUPS.map(
  (group) =>
    `<optgroup label="${escapeHtml(groupWords(group.subject))}">` +
    `<option value="${group.subject}.">All ${escapeHtml(groupWords(group.subject).toLowerCase())} actions</option>` +
    group.actions.map((action) => `<option value="${action}">${escapeHtml(actionWords(action))}</option>`).join('') +
    '</optgroup>',
  ).join(''));

function actionOptionsHtml(chosen: string | undefined): string {
  if (chosen === undefined) return allActionOptions();
  // Only a value from the list reaches here (the form shows any other as its own option), so it needs no escaping.
  return allActionOptions().replace(`<option value="${chosen}">`, `<option value="${chosen}" selected>`);
}

const SPECIAL_ACTORS = [
  { value: 'system', label: 'The service' },
  { value: 'cli', label: 'Command line' },
] as const;

/** One `<option>`, escaped; the selects of this form are strings, as their options are many (see above). */
const optionHtml = (value: string, label: string, selected: boolean) => `<option value="${escapeHtml(value)}"${selected ? ' selected' : ''}>${escapeHtml(label)}</option>`;

/** "Anyone", then the people by name, then the actors that are not people; a value typed into the address kept as it is. */
function actorOptionsHtml(chosen: string | undefined, known: boolean, members: readonly MemberOption[]): string {
  let html = optionHtml('', 'Anyone', false);
  if (!known && chosen !== undefined) html += optionHtml(chosen, `Matching “${chosen}”`, true);
  html += '<optgroup label="People">';
  for (const m of members) html += optionHtml(m.value, m.label, m.value === chosen);
  html += '</optgroup><optgroup label="Not a person">';
  for (const a of SPECIAL_ACTORS) html += optionHtml(a.value, a.label, a.value === chosen);
  return `${html}</optgroup>`;
}

/**
 * DASHBOARD 8, filters in words: "Action" a list of the actions by name, grouped by what they act on; "Actor"
 * the people by name; "From" and "To" days. A code or id typed into the address still filters, and is kept
 * as a selected option in its own words, so the form shows what is applied.
 */
function FilterForm({ text, errors: problems, filtered, members }: { text: FilterText; errors?: FormError[] | undefined; filtered: boolean; members: readonly MemberOption[] }) {
  const knownAction = text.action === undefined || ACTION_GROUPS.some((g) => `${g.subject}.` === text.action || g.actions.includes(text.action!));
  const knownActor = text.actor === undefined || SPECIAL_ACTORS.some((a) => a.value === text.actor) || members.some((m) => m.value === text.actor);
  return (
    <form method="get" action={HERE} class="filters audit-filters" role="search" aria-label="Filter the audit log">
      <FilterSelect
        id="action"
        label="Action"
        error={errorFor(problems, 'action')}
        html={`${optionHtml('', 'Any action', false)}${knownAction ? actionOptionsHtml(text.action) : `${optionHtml(text.action!, `Starting with “${text.action!}”`, true)}${allActionOptions()}`}`}
      />
      <FilterSelect id="actor" label="Actor" error={errorFor(problems, 'actor')} html={actorOptionsHtml(text.actor, knownActor, members)} />
      <Field id="target" label="Target" value={text.target} error={errorFor(problems, 'target')} maxLength={200} hint="Part of its name, such as a project's or a member's e-mail." />
      <DayField id="from" label="From" value={text.from} error={errorFor(problems, 'from')} hint="Entries on or after this day (UTC)." />
      <DayField id="to" label="To" value={text.to} error={errorFor(problems, 'to')} hint="Entries up to the end of this day (UTC)." />
      <div class="actions">
        <button type="submit" class="secondary">
          Filter
        </button>
        {filtered ? <a href={HERE}>Clear filters</a> : null}
      </div>
    </form>
  );
}

/** A select whose options come as HTML (grouped, and many: see above), with its error on the field. */
function FilterSelect({ id, label, error, html }: { id: string; label: string; error: string | undefined; html: string }) {
  return (
    <FieldShell id={id} label={label} error={error}>
      <select id={id} name={id} aria-invalid={error ? 'true' : undefined} aria-describedby={error ? `${id}-error` : undefined} dangerouslySetInnerHTML={{ __html: html }} />
    </FieldShell>
  );
}


/**
 * Six columns fit 1,280 px without breaking a time or an address: where a change came from rides under its
 * action, and the request's particulars (address, agent, ids) open under "More".
 */
const AUDIT_HEADERS = ['Time', 'Actor', 'Action', 'Target', 'Changes', 'Details'];

function AuditTable({ items, filtered, names }: { items: AuditEntryView[]; filtered: boolean; names: Names }) {
  return (
    <Table caption="Audit log" captionHidden kind="audit-table" headers={AUDIT_HEADERS} empty={filtered ? 'No entries match these filters.' : 'No entries yet.'}>
      {items.map((entry) => (
        <tr>
          <td>
            <Time iso={entry.occurred_at} />
          </td>
          <td>
            <ActorCell actor={entry.actor} names={names} />
          </td>
          <td>
            <span class="cell-main">{actionWords(entry.action)}</span>
            <span class="cell-sub">
              {/* "Command line / from the command line" said it twice (review 5, AL4): the door only for a person. */}
              {entry.actor.type === 'user' ? SOURCE_WORDS[entry.source] : null}
              {entry.outcome === 'success' ? null : <strong class="change-old"> · Failure</strong>}
            </span>
          </td>
          <td>
            <TargetCell target={entry.target} names={names} />
          </td>
          <td>
            <ChangesCell changes={entry.changes} />
          </td>
          <td>
            <RequestDetails entry={entry} />
          </td>
        </tr>
      ))}
    </Table>
  );
}

const SOURCE_WORDS: Record<AuditEntryView['source'], string> = { api: 'via the API', dashboard: 'via the dashboard', cli: 'from the command line', system: 'by the service', scim: 'by the identity provider (SCIM)', mcp: 'by an AI agent or app (MCP)' };

/** The words people use for the things actions are about; the rest reads as it is spelt. */
const SUBJECT_WORDS: Record<string, string> = { organization: 'Organisation', scim_group: 'SCIM group', scim: 'SCIM', api_key: 'API key', sso: 'Single sign-on', workflow_run: 'Workflow run', audit_log: 'Audit log', app: 'Connected app', mcp: 'MCP' };
const VERB_WORDS: Record<string, string> = { mfa_enabled: 'turned on two-step verification', mfa_disabled: 'turned off two-step verification' };

/** "project.created" → "Project created"; "api_key.revoked" → "API key revoked". The code stays beside it, for the filter. */
export function actionWords(action: string): string {
  let words = ACTION_WORDS.get(action);
  if (words === undefined) {
    words = spellAction(action);
    // Actions are a fixed list, but a filter's prefix is typed: keep the cache bounded.
    if (ACTION_WORDS.size < 500) ACTION_WORDS.set(action, words);
  }
  return words;
}

const ACTION_WORDS = new Map<string, string>();

function spellAction(action: string): string {
  const dot = action.indexOf('.');
  const subject = action.slice(0, dot);
  const verb = action.slice(dot + 1);
  const noun = SUBJECT_WORDS[subject] ?? subject.charAt(0).toUpperCase() + subject.slice(1).replaceAll('_', ' ');
  return `${noun} ${VERB_WORDS[verb] ?? verb.replaceAll('_', ' ')}`;
}

function ActorCell({ actor, names }: { actor: AuditEntryView['actor']; names: Names }) {
  if (actor.type !== 'user') return <span>{actor.type === 'cli' ? 'Command line' : 'The service'}</span>;
  const name = actor.id ? names.people.get(actor.id) : undefined;
  const key = actor.api_key_id ? (names.keys.get(actor.api_key_id) ?? 'a revoked key') : null;
  return (
    <>
      <span class="cell-main">{name ?? (actor.label ? <Email address={actor.label} /> : 'A removed member')}</span>
      {key ? <span class="cell-sub">with the API key “{key}”</span> : null}
    </>
  );
}

function TargetCell({ target, names }: { target: AuditEntryView['target']; names: Names }) {
  if (!target) return <span class="muted">none</span>;
  const name = target.type === 'user' ? (names.people.get(target.id) ?? target.label) : target.label;
  return (
    <>
      <span class="cell-main">{name ? <CellText text={name} /> : <code>{target.id}</code>}</span>
      <span class="cell-sub">{actionWords(`${target.type}.`).trim()}</span>
    </>
  );
}

/** "assignee_id" → "Assignee", "due_at" → "Due", "two_step_required" → "Two step required". */
function fieldWords(field: string): string {
  let words = FIELD_WORDS.get(field);
  if (words === undefined) {
    const spaced = field === 'url' ? 'URL' : field.replace(/_(id|at)$/, '').replaceAll('_', ' ');
    words = spaced.charAt(0).toUpperCase() + spaced.slice(1);
    if (FIELD_WORDS.size < 500) FIELD_WORDS.set(field, words);
  }
  return words;
}

const FIELD_WORDS = new Map<string, string>();

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** A stored value as people read it: a name where the row kept one, times in the page's format, words for empties. */
// A plain function, not a component: two per change, fifty rows a page.
function shownValue(value: unknown, label: string | undefined): ComponentChild {
  if (label !== undefined) return <CellText text={label} />;
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number') return value.toLocaleString('en-GB');
  if (typeof value === 'string') {
    if (ISO_TIME.test(value)) return formatUtc(Date.parse(value));
    // An id whose thing was already gone when the row was written: shown as the identifier it is.
    if (ID_VALUE.test(value)) return <code>{value}</code>;
    return <CellText text={value} />;
  }
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(', ');
  return <code>{JSON.stringify(value)}</code>;
}

const ID_VALUE = /^[a-z]+_[a-z0-9]{8,}$/;

/** A stored text in a cell: a URL (a subscription's) wraps after its slashes and dots; anything else between words. */
function CellText({ text }: { text: string }) {
  return /^https?:\/\//.test(text) ? <Url href={text} /> : <Clipped text={text} />;
}

function ChangesCell({ changes }: { changes: AuditEntryView['changes'] }) {
  if (!changes) return <span class="muted">none</span>;
  return (
    <ul class="changes">
      {Object.entries(changes).map(([field, change]) => (
        <li>
          <span class="change-field">{fieldWords(field)}:</span>{' '}
          {/* Nothing before (a creation, a first sign-in method): only what was set. */}
          {change.old === null && change.old_label === undefined ? null : (
            <>
              <span class="change-old">{shownValue(change.old, change.old_label)}</span>{' '}
              →{' '}
            </>
          )}
          <span class="change-new">{shownValue(change.new, change.new_label)}</span>
        </li>
      ))}
    </ul>
  );
}

function RequestDetails({ entry }: { entry: AuditEntryView }) {
  return (
    <details class="audit-details">
      <summary>
        More<span class="visually-hidden"> about {actionWords(entry.action)} at {formatUtc(Date.parse(entry.occurred_at))}</span>
      </summary>
      <dl>
        <dt>Action code</dt>
        <dd>
          <code>{entry.action}</code>
        </dd>
        <dt>Source</dt>
        <dd>{entry.source}</dd>
        <dt>IP</dt>
        <dd>{entry.ip ?? <span class="muted">none</span>}</dd>
        <dt>Outcome</dt>
        <dd>{entry.outcome === 'success' ? 'Success' : 'Failure'}</dd>
        <dt>Exact time</dt>
        <dd>
          <code>{entry.occurred_at}</code>
        </dd>
        <dt>User agent</dt>
        <dd>{entry.user_agent ?? <span class="muted">none</span>}</dd>
        <dt>Request ID</dt>
        <dd>{entry.request_id ? <code>{entry.request_id}</code> : <span class="muted">none</span>}</dd>
        {entry.actor.id ? (
          <>
            <dt>Actor ID</dt>
            <dd>
              <code>{entry.actor.id}</code>
            </dd>
          </>
        ) : null}
        <dt>Entry ID</dt>
        <dd>
          <code>{entry.id}</code>
        </dd>
      </dl>
    </details>
  );
}

function DownloadForms({ csrf, text, filtered }: { csrf: string; text: FilterText; filtered: boolean }) {
  const hidden: Record<string, string> = {};
  for (const field of FILTER_FIELDS) if (text[field] !== undefined) hidden[field] = text[field];
  return (
    <section class="panel" aria-labelledby="download-title">
      <h2 id="download-title">Download</h2>
      <p class="muted">
        {filtered ? 'Every entry matching these filters' : 'Every entry'}, on all pages, newest first. Each download is itself recorded in the audit
        log.
      </p>
      <div class="actions">
        <ActionForm action={`${HERE}/export`} csrf={csrf} label="Download CSV" hidden={{ format: 'csv', ...hidden }} secondary />
        <ActionForm action={`${HERE}/export`} csrf={csrf} label="Download JSON Lines" hidden={{ format: 'jsonl', ...hidden }} secondary />
      </div>
    </section>
  );
}
