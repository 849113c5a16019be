import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Config } from '../../config.js';
import { DomainError, errors, type ErrorDetail } from '../../errors.js';
import { sentence } from '../../lib/text.js';
import { DAY_MS, durationInWords, systemClock, toIso } from '../../lib/time.js';
import { can } from '../../services/access/actor.js';
import { canChange } from '../../services/access/workspace.js';
import { progressFragment, progressVersion } from '../progress.js';
import { HISTORY_SCAN_LIMIT, type HistoryFilterInput, type HistoryResult, type HistoryState } from '../../services/webhooks/deliveries-service.js';
import { type DeliveryDetail, HISTORY_STATES, type ReplayJob, MAX_BULK_REPLAY } from '../../schemas/deliveries.js';
import type { DeliveryHealth } from '../../services/webhooks/delivery-stats-service.js';
import { EVENT_TYPES, type EventType } from '../../schemas/events.js';
import { type ReplayPreview } from '../../services/webhooks/replay-jobs-service.js';
import type { Webhook } from '../../schemas/webhooks.js';
import type { AppDeps } from '../../http/app-deps.js';
import { authorizeChange, pageContext, pageRefusal, pathId, seeOther, sendPage, type PageContext } from '../context.js';
import { parseUtcDateTime, readTimeField, utcDateTimeValue } from '../datetime.js';
import { DayField } from '../views/day-field.js';
import { formErrors } from '../form-validation.js';
import { FormBody, FormText, htmlResponses, pageSchema } from '../schemas.js';
import { ActionForm, Url, DangerItem, DangerLink, DangerZone, errorFor, Field, Select, Time, type FormError } from '../views/components.js';
import {
  deliveryInProgress,
  deliveryState,
  BulkReplays,
  DeliveriesTable,
  deliveriesCount,
  deliveryHref,
  DeliveryView,
  ExactTime,
  STATE_WORDS,
  subscriptionHref,
  WEBHOOKS,
} from '../views/delivery-views.js';
import { DeliveryHealthChart } from '../views/delivery-health.js';
import { deliveryControlInWords, DISABLED_WHY, SubscriptionStatus } from '../views/webhook-views.js';
import { hostOf } from '../../lib/url-host.js';
import { Layout } from '../views/layout.js';
import { formatCount } from '../views/numbers.js';
import { filteredHref, filterText as filterTextOf, type FilterText as FilterTextOf } from '../filters.js';

const PAGE_SIZE = 25;

const replayFailedHref = (webhookId: string) => `${subscriptionHref(webhookId)}/replay-failed`;

/** The filter fields as typed into the form; their names are the query parameters and the field ids. */
const FILTER_FIELDS = ['status', 'event', 'from', 'to', 'id'] as const;
type FilterField = (typeof FILTER_FIELDS)[number];
type FilterText = FilterTextOf<FilterField>;

const LABELS: Record<FilterField, string> = { status: 'Status', event: 'Event', from: 'From', to: 'To', id: 'Event or delivery ID' };

const STATUS_OPTIONS = [{ value: '', label: 'Any' }, ...HISTORY_STATES.map((s) => ({ value: s, label: STATE_WORDS[s] }))];
const EVENT_OPTIONS = [{ value: '', label: 'Any' }, ...EVENT_TYPES.map((e) => ({ value: e, label: e }))];

const WebhookParams = Type.Object({ id: Type.String({ maxLength: 128 }) });
const DeliveryParams = Type.Object({ id: Type.String({ maxLength: 128 }), dlv: Type.String({ maxLength: 128 }) });

// The schemas only bound the size: a value the page cannot read is listed on the page, not a bare 400.
const HistoryQuery = Type.Object(
  {
    status: FormText(64),
    event: FormText(64),
    from: FormText(64),
    to: FormText(64),
    id: FormText(1024),
    cursor: Type.Optional(Type.String({ maxLength: 128 })),
  },
  { additionalProperties: false },
);
const ReplayFailedQuery = Type.Object({ since: FormText(64) }, { additionalProperties: false });
const ReplayFailedBody = FormBody({ since: FormText(64) });

const SINCE_ERROR = 'Since must be a date and time in UTC, such as 2026-01-31 14:30';

const filterText = (values: Partial<Record<string, string | undefined>>): FilterText => filterTextOf(FILTER_FIELDS, values);

const isState = (value: string): value is HistoryState => (HISTORY_STATES as readonly string[]).includes(value);
const isEvent = (value: string): value is EventType => (EVENT_TYPES as readonly string[]).includes(value);

/**
 * The service's filter from the form's text: the choices and times the form cannot read are a 400 naming
 * their fields; the service judges the rest (the order of From and To, the id).
 */
function toFilter(text: FilterText): HistoryFilterInput {
  const details: ErrorDetail[] = [];
  const time = (field: 'from' | 'to') => readTimeField(text, field, details, field === 'to');
  const filter: HistoryFilterInput = { from: time('from'), to: time('to'), id: text.id };
  if (text.status !== undefined) {
    if (isState(text.status)) filter.status = text.status;
    else details.push({ field: 'status', message: `must be one of ${HISTORY_STATES.map((s) => STATE_WORDS[s]).join(', ')}` });
  }
  if (text.event !== undefined) {
    if (isEvent(text.event)) filter.event = text.event;
    else details.push({ field: 'event', message: `must be one of ${EVENT_TYPES.join(', ')}` });
  }
  if (details.length > 0) throw errors.validation(details);
  return filter;
}

/** A refused filter as the page lists it; a stale page link gets a sentence a person can act on. */
function pageErrors(error: DomainError): FormError[] {
  if (error.details?.some((d) => d.field === 'cursor')) {
    return [{ field: null, message: 'This page link is no longer valid. Start again from the newest deliveries.' }];
  }
  return formErrors(error, LABELS);
}

function listHref(webhookId: string, text: FilterText, cursor?: string | null): string {
  return filteredHref(subscriptionHref(webhookId), FILTER_FIELDS, text, cursor);
}

/** A bulk replay still re-queueing, or whose re-queued deliveries have not all settled. */
const replayInProgress = (job: ReplayJob) => job.status === 'running' || job.pending > 0;
const replayState = (job: ReplayJob) => [job.id, job.status, job.queued, job.skipped, job.delivered, job.failed, job.pending];

/** The notice after "Replay N deliveries". */
function startedNotice(job: Pick<ReplayJob, 'count'>): string {
  if (job.count === 0) return 'Nothing to replay: no failed deliveries since then.';
  return `Bulk replay started: ${deliveriesCount(job.count)} to send again. Its progress is shown under Bulk replays.`;
}

export const webhookHistoryPages: FastifyPluginAsyncTypebox<AppDeps> = async (app, { services, config, clock = systemClock }) => {
  app.get('/webhooks/:id', { schema: { ...pageSchema(HistoryQuery), params: WebhookParams } }, async (request, reply) => {
    const page = pageContext(request);
    const webhookId = pathId(request.params.id, 'webhook');
    const webhook = await services.webhooks.get(page.actor, webhookId);
    const { cursor, ...values } = request.query;
    const text = filterText(values);
    const canReplay = can(page.actor, 'webhooks', 'create');
    const [health, jobs] = await Promise.all([
      services.deliveryStats.hourly(page.actor, { webhookId }),
      canReplay ? services.replayJobs.listRecent(page.actor, webhookId) : Promise.resolve([]),
    ]);
    // A bulk replay keeps its requester's e-mail; people read names (a handful of jobs: one lookup each).
    const requesters = await services.users.namesByEmail(page.actor.orgId, jobs.map((j) => j.requested_by));
    const view = { page, config, webhook, health, jobs, requesters, text, cursor };
    try {
      const list = await services.deliveries.list(page.actor, webhookId, { limit: PAGE_SIZE, cursor, filter: toFilter(text) });
      return sendPage(reply, <SubscriptionView {...view} list={list} />);
    } catch (error) {
      const refusal = pageRefusal(reply, error, [400]);
      return sendPage(reply, <SubscriptionView {...view} errors={pageErrors(refusal)} />, 400);
    }
  });

  progressFragment<{ id: string }>(app, '/webhooks/:id/replays/progress', WebhookParams, async (request) => {
    const page = pageContext(request);
    const webhookId = pathId(request.params.id, 'webhook');
    // Bulk replays are shown to those who may start them; for others the subscription must still exist here (404).
    if (!can(page.actor, 'webhooks', 'create')) {
      await services.webhooks.get(page.actor, webhookId);
      return { state: [], active: false };
    }
    const jobs = await services.replayJobs.listRecent(page.actor, webhookId);
    return { state: jobs.map(replayState), active: jobs.some(replayInProgress) };
  });

  app.get('/webhooks/:id/replay-failed', { schema: { ...pageSchema(ReplayFailedQuery), params: WebhookParams } }, async (request, reply) => {
    const page = pageContext(request);
    // Only those who may replay see the count: 403 before anything about the subscription or the time.
    authorizeChange(page.actor, 'webhooks', 'create');
    const webhook = await services.webhooks.get(page.actor, pathId(request.params.id, 'webhook'));
    const sinceText = request.query.since?.trim();
    if (!sinceText) {
      return sendPage(reply, <ReplayFailedView page={page} webhook={webhook} sinceText={utcDateTimeValue(clock.now() - DAY_MS)} />);
    }
    const since = parseUtcDateTime(sinceText);
    if (since === null) {
      return sendPage(reply, <ReplayFailedView page={page} webhook={webhook} sinceText={sinceText} errors={[{ field: 'since', message: SINCE_ERROR }]} />, 400);
    }
    const preview = await services.replayJobs.preview(page.actor, webhook.id, since);
    return sendPage(reply, <ReplayFailedView page={page} webhook={webhook} sinceText={sinceText} since={since} preview={preview} />);
  });

  app.post('/webhooks/:id/replay-failed', { schema: { hide: true, params: WebhookParams, body: ReplayFailedBody, response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    authorizeChange(page.actor, 'webhooks', 'create');
    const webhook = await services.webhooks.get(page.actor, pathId(request.params.id, 'webhook'));
    const sinceText = request.body.since?.trim() ?? '';
    const since = parseUtcDateTime(sinceText);
    if (since === null) {
      return sendPage(reply, <ReplayFailedView page={page} webhook={webhook} sinceText={sinceText} errors={[{ field: 'since', message: SINCE_ERROR }]} />, 400);
    }
    const job = await services.replayJobs.start(page.actor, webhook.id, since);
    return seeOther(reply, subscriptionHref(webhook.id), { notice: startedNotice(job) });
  });

  app.get('/webhooks/:id/deliveries/:dlv', { schema: { ...pageSchema(), params: DeliveryParams } }, async (request, reply) => {
    const page = pageContext(request);
    const webhookId = pathId(request.params.id, 'webhook');
    const delivery = await services.deliveries.get(page.actor, webhookId, pathId(request.params.dlv, 'delivery'));
    const webhook = await services.webhooks.get(page.actor, webhookId);
    return sendPage(reply, <DeliveryView page={page} webhook={webhook} delivery={delivery} />);
  });

  progressFragment<{ id: string; dlv: string }>(app, '/webhooks/:id/deliveries/:dlv/progress', DeliveryParams, async (request) => {
    const page = pageContext(request);
    const delivery = await services.deliveries.get(page.actor, pathId(request.params.id, 'webhook'), pathId(request.params.dlv, 'delivery'));
    return { state: deliveryState(delivery), active: deliveryInProgress(delivery) };
  });

  app.post('/webhooks/:id/deliveries/:dlv/replay', { schema: { hide: true, params: DeliveryParams, body: FormBody({}), response: htmlResponses } }, async (request, reply) => {
    const page = pageContext(request);
    const webhookId = pathId(request.params.id, 'webhook');
    const deliveryId = pathId(request.params.dlv, 'delivery');
    try {
      await services.deliveries.replay(page.actor, webhookId, deliveryId);
    } catch (error) {
      const refusal = pageRefusal(reply, error, [409]);
      let shown: [DeliveryDetail, Webhook];
      try {
        shown = await Promise.all([services.deliveries.get(page.actor, webhookId, deliveryId), services.webhooks.get(page.actor, webhookId)]);
      } catch (gone) {
        // The subscription was deleted: there is no delivery page left to show the refusal on.
        if (gone instanceof DomainError && gone.status === 404) throw refusal;
        throw gone;
      }
      const [delivery, webhook] = shown;
      return sendPage(reply, <DeliveryView page={page} webhook={webhook} delivery={delivery} errors={[{ field: null, message: sentence(refusal.message) }]} />, 409);
    }
    return seeOther(reply, deliveryHref(webhookId, deliveryId), { notice: 'Replay queued: it is sent again now.' });
  });
};

interface SubscriptionViewProps {
  page: PageContext;
  config: Config;
  webhook: Webhook;
  health: DeliveryHealth;
  jobs: readonly ReplayJob[];
  /** Requesters of the jobs by name, keyed by the e-mail the job kept. */
  requesters: ReadonlyMap<string, string>;
  text: FilterText;
  cursor?: string | undefined;
  /** Absent when the filter was refused: the page then shows the form and its problems instead of the table. */
  list?: HistoryResult;
  errors?: FormError[];
}

function SubscriptionView({ page, config, webhook, health, jobs, requesters, text, cursor, list, errors: problems }: SubscriptionViewProps) {
  const canReplay = canChange(page.actor, 'webhooks', 'create');
  const canDelete = can(page.actor, 'webhooks', 'delete');
  const mayChange = canChange(page.actor, 'webhooks', 'update');
  const filtered = FILTER_FIELDS.some((field) => text[field] !== undefined);
  const progress = jobs.some(replayInProgress) ? { url: `${subscriptionHref(webhook.id)}/replays/progress`, version: progressVersion(jobs.map(replayState)) } : null;
  return (
    <Layout
      title={`Subscription to ${hostOf(webhook.url)}`}
      heading={
        <>
          Subscription to <Url href={hostOf(webhook.url)} />
        </>
      }
      viewer={page.viewer} csrf={page.csrf} current={WEBHOOKS} errors={problems} progress={progress}>
      {/* The host names the page (review 5, SB1: a whole URL as the heading took a phone's first screen); the URL follows whole. */}
      <p class="endpoint">
        <code class="webhook-url">
          <Url href={webhook.url} />
        </code>
      </p>
      <p class="lead">
        Events: {webhook.events.map((e, i) => (
          <>
            {i > 0 ? ', ' : null}
            <code>{e}</code>
          </>
        ))}
      </p>
      <p class="muted">
        <SubscriptionStatus webhook={webhook} /> · Created <Time iso={webhook.created_at} /> · <a href={WEBHOOKS}>All subscriptions</a>
      </p>
      <p>{deliveryControlInWords(webhook)}</p>
      <HealthNotice page={page} webhook={webhook} canChange={mayChange} disableAfterMs={config.webhookDisableAfterMs} />
      {canReplay || mayChange ? (
        <div class="actions page-actions">
          {mayChange ? (
            <>
              <a href={`${subscriptionHref(webhook.id)}/edit`} class="button secondary">
                Edit subscription
              </a>
              <a href={`${subscriptionHref(webhook.id)}/rotate-secret`} class="button secondary">
                Rotate secret
              </a>
              {webhook.status === 'active' ? (
                <a href={`${subscriptionHref(webhook.id)}/test`} class="button secondary">
                  Send test event
                </a>
              ) : null}
            </>
          ) : null}
          {canReplay ? (
            <a href={replayFailedHref(webhook.id)} class="button secondary">
              Replay failed deliveries
            </a>
          ) : null}
        </div>
      ) : null}
      <section aria-labelledby="health-title">
        <h2 id="health-title">Deliveries per hour</h2>
        <p class="hint">Attempts to this subscription's endpoint in the last 24 hours (UTC), by outcome.</p>
        <DeliveryHealthChart id="subscription-health" health={health} />
      </section>
      <section aria-labelledby="history-title">
        <h2 id="history-title">Delivery history</h2>
        <p class="muted">
          Delivered deliveries are kept for {durationInWords(config.deliveredRetentionMs)}, failed and cancelled ones for{' '}
          {durationInWords(config.failedRetentionMs)}, counted from their last attempt.
        </p>
        <FilterForm webhookId={webhook.id} text={text} errors={problems} filtered={filtered} />
        {list ? (
          <HistoryPage webhookId={webhook.id} text={text} list={list} cursor={cursor} filtered={filtered} />
        ) : (
          <p class="muted">
            Correct the filters to see the deliveries, or <a href={subscriptionHref(webhook.id)}>start again from the newest</a>.
          </p>
        )}
      </section>
      {canReplay ? (
        <section aria-labelledby="bulk-title">
          <h2 id="bulk-title">Bulk replays</h2>
          <BulkReplays jobs={jobs} requesters={requesters} />
        </section>
      ) : null}
      {canDelete ? (
        <DangerZone>
          <DangerItem title="Delete this subscription" control={<DangerLink href={`${subscriptionHref(webhook.id)}/delete`} label="Delete subscription" />}>
            Its endpoint receives nothing more, and its delivery history is deleted with it.
          </DangerItem>
        </DangerZone>
      ) : null}
    </Layout>
  );
}

/** A disabled subscription says since when and why, with "Enable subscription"; a failing one says since when. */
function HealthNotice({ page, webhook, canChange, disableAfterMs }: { page: PageContext; webhook: Webhook; canChange: boolean; disableAfterMs: number | null }) {
  if (webhook.status === 'disabled') {
    return (
      <section class="notice-panel warning" aria-labelledby="disabled-title">
        <h2 id="disabled-title">This subscription is disabled</h2>
        <p>
          The service disabled it on <Time iso={webhook.disabled_at} /> because {DISABLED_WHY[webhook.disabled_reason ?? 'failing']}. No delivery is
          attempted while it is disabled; its deliveries are kept as cancelled, and "Replay failed deliveries" sends them once it is enabled.
        </p>
        {canChange ? (
          <ActionForm action={`${subscriptionHref(webhook.id)}/enable`} csrf={page.csrf} label="Enable subscription" />
        ) : (
          <p class="muted">An admin or owner can enable it.</p>
        )}
      </section>
    );
  }
  if (webhook.failing_since) {
    return (
      <section class="notice-panel warning" aria-labelledby="failing-title">
        <h2 id="failing-title">Deliveries are failing</h2>
        <p>
          Every attempt to this endpoint has failed since <Time iso={webhook.failing_since} />. The history below shows each response or error.{' '}
          {/* As Stripe says it: the day it happens, not only that it will (review 4, A10). */}
          {disableAfterMs === null ? (
            'The service never disables it by itself.'
          ) : (
            <>
              Without a successful delivery first, the service disables the subscription on{' '}
              <Time iso={new Date(Date.parse(webhook.failing_since) + disableAfterMs).toISOString()} absolute />.
            </>
          )}
        </p>
      </section>
    );
  }
  return null;
}

function FilterForm({ webhookId, text, errors: problems, filtered }: { webhookId: string; text: FilterText; errors?: FormError[] | undefined; filtered: boolean }) {
  const here = subscriptionHref(webhookId);
  return (
    <form method="get" action={here} class="filters delivery-filters" role="search" aria-label="Filter the deliveries">
      <Select id="status" label="Status" options={STATUS_OPTIONS} value={text.status ?? ''} error={errorFor(problems, 'status')} />
      <Select id="event" label="Event" options={EVENT_OPTIONS} value={text.event ?? ''} error={errorFor(problems, 'event')} />
      <DayField id="from" label="From" value={text.from} error={errorFor(problems, 'from')} hint="Created on or after this day (UTC)." />
      <DayField id="to" label="To" value={text.to} error={errorFor(problems, 'to')} hint="Created up to the end of this day (UTC)." />
      <Field id="id" label="Event or delivery ID" value={text.id} error={errorFor(problems, 'id')} hint="evt_… or dlv_…" maxLength={100} autocomplete="off" />
      <div class="actions">
        <button type="submit" class="secondary">
          Filter
        </button>
        {filtered ? <a href={here}>Clear filters</a> : null}
      </div>
    </form>
  );
}

/**
 * Which way this page searched: towards older deliveries from the newest page or after "Older", towards newer
 * ones after "Newer" (then it stopped above its rows). An empty page reached by a link does not say.
 */
function searchDirection(list: HistoryResult, cursor: string | undefined): 'older' | 'newer' | 'unknown' {
  if (!cursor) return 'older';
  const newest = list.items[0];
  if (!newest || !list.searchedTo) return 'unknown';
  return list.searchedTo <= newest.created_at ? 'older' : 'newer';
}

const SEARCH_WORDS = {
  older: { way: 'back to', next: 'Older continues the search.' },
  newer: { way: 'up to', next: 'Newer continues the search.' },
  unknown: { way: 'as far as', next: 'Older and Newer continue the search.' },
};

function HistoryPage({ webhookId, text, list, cursor, filtered }: { webhookId: string; text: FilterText; list: HistoryResult; cursor: string | undefined; filtered: boolean }) {
  const words = SEARCH_WORDS[searchDirection(list, cursor)];
  return (
    <>
      {list.searchedTo ? (
        // A filter no index serves examines a bounded stretch of history per page; say where this one stopped.
        <p class="scan-note">
          Searched {formatCount(HISTORY_SCAN_LIMIT)} deliveries {words.way} <ExactTime iso={list.searchedTo} />: {list.items.length === 0 ? 'none match' : 'no more match'}{' '}
          there. {words.next}
        </p>
      ) : null}
      <DeliveriesTable items={list.items} filtered={filtered} />
      <nav class="pager" aria-label="Pages of the delivery history">
        {list.prevCursor ? <a href={listHref(webhookId, text, list.prevCursor)}>Newer</a> : null}
        {list.nextCursor ? <a href={listHref(webhookId, text, list.nextCursor)}>Older</a> : null}
      </nav>
    </>
  );
}

interface ReplayFailedViewProps {
  page: PageContext;
  webhook: Webhook;
  sinceText: string;
  /** Set once a time was given and read: the preview below is for it. */
  since?: number;
  preview?: ReplayPreview;
  errors?: FormError[];
}

function ReplayFailedView({ page, webhook, sinceText, since, preview, errors: problems }: ReplayFailedViewProps) {
  const action = replayFailedHref(webhook.id);
  return (
    <Layout title="Replay failed deliveries" viewer={page.viewer} csrf={page.csrf} current={WEBHOOKS} errors={problems}>
      <p class="lead">
        Subscription <code class="webhook-url">{webhook.url}</code>
      </p>
      <p>
        Sends every permanently failed delivery of this subscription created since a time again now: the same event id and body, as a new attempt
        in each delivery's history, signed with the subscription's current secret. At most {formatCount(MAX_BULK_REPLAY)} per request, oldest
        first.
      </p>
      <form method="get" action={action} class="filters">
        <Field id="since" label="Since" value={sinceText} error={errorFor(problems, 'since')} hint="UTC, as 2026-11-25 13:44; failed deliveries created at or after this time." autocomplete="off" maxLength={64} />
        <div class="actions">
          <button type="submit" class="secondary">
            Count failed deliveries
          </button>
        </div>
      </form>
      {preview && since !== undefined ? (
        <section aria-labelledby="preview-title" class="panel">
          <h2 id="preview-title">Since {toIso(since).slice(0, 16).replace('T', ' ')} UTC</h2>
          {preview.count === 0 ? (
            <p>No failed deliveries since then.</p>
          ) : (
            <>
              <p class="lead">{deliveriesCount(preview.count)} will be sent again</p>
              {preview.more ? (
                <p>
                  More than {formatCount(MAX_BULK_REPLAY)} failed deliveries match: this request sends only the oldest {formatCount(MAX_BULK_REPLAY)}.
                  Replay again once it is done for the next ones.
                </p>
              ) : null}
              <div class="actions">
                <ActionForm action={action} csrf={page.csrf} label={`Replay ${deliveriesCount(preview.count)}`} hidden={{ since: toIso(since) }} />
                <a href={subscriptionHref(webhook.id)}>Cancel</a>
              </div>
            </>
          )}
        </section>
      ) : null}
    </Layout>
  );
}
