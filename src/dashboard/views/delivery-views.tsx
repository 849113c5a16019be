import { STATUS_CODES } from 'node:http';
import { countOf } from '../../lib/text.js';
import { RESPONSE_BODY_LIMIT } from '../../delivery/sender.js';
import { canChange } from '../../services/access/workspace.js';
import { progressVersion } from '../progress.js';
import type { HistoryState } from '../../services/webhooks/deliveries-service.js';
import { type DeliveryDetail, type Delivery, type DeliveryAttempt, type ReplayJob, MAX_BULK_REPLAY } from '../../schemas/deliveries.js';
import type { Webhook } from '../../schemas/webhooks.js';
import type { PageContext } from '../context.js';
import { ActionForm, Table, Time, type FormError } from './components.js';
import { Layout } from './layout.js';
import { formatCount } from './numbers.js';

/** The history's states as the dashboard names them (DASHBOARD 6): never a colour alone. */
export const STATE_WORDS: Record<HistoryState, string> = {
  delivered: 'Delivered',
  retrying: 'Retrying',
  pending: 'Pending',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/** A time to the second: retries and attempts are seconds apart, so minutes would hide their order. */
export function ExactTime({ iso }: { iso: string | null | undefined }) {
  return <Time iso={iso} seconds absolute />;
}

/** A JSON body indented for reading; anything that is not JSON as it is. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** The notice after "Send test event": how the endpoint answered the one attempt. */
export function testNotice(delivery: DeliveryDetail): string {
  const attempt = delivery.attempt_history[delivery.attempt_history.length - 1];
  if (!attempt) return 'Test event sent; its attempt has not finished yet. This page shows it when it has.';
  if (attempt.outcome === 'success') return `Test event delivered: the endpoint answered ${attempt.response_status ?? ''} in ${attempt.duration_ms} ms.`;
  return `Test event failed: ${attempt.error ?? 'the endpoint did not answer with a 2xx status'}. It is not retried.`;
}

/** Why a pending delivery is not on the wire yet (CONTRACT 14), after its state. */
export const WAITING_WORDS: Record<NonNullable<Delivery['waiting']>, string> = {
  order: 'waiting: in order',
  rate_limit: 'waiting: rate limit',
};

/** "Delivered", "Retrying — next attempt <time>" while a retry waits, "Pending — waiting: rate limit". */
export function StatusWords({ delivery }: { delivery: Pick<Delivery, 'status' | 'next_attempt_at' | 'waiting'> }) {
  const words = STATE_WORDS[delivery.status];
  if (delivery.waiting) {
    return (
      <span class={`state state-${delivery.status}`}>
        {words} — {WAITING_WORDS[delivery.waiting]}
      </span>
    );
  }
  if (delivery.status === 'retrying' && delivery.next_attempt_at) {
    return (
      <span class={`state state-${delivery.status}`}>
        {words} — next attempt <ExactTime iso={delivery.next_attempt_at} />
      </span>
    );
  }
  return <span class={`state state-${delivery.status}`}>{words}</span>;
}

/** "2.4 s by the rate limit", "12 s while earlier deliveries went first (in order)". */
export function heldInWords(reason: NonNullable<DeliveryAttempt['held_reason']>, ms: number): string {
  const time = ms < 1000 ? `${formatCount(ms)} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${formatCount(Math.round(ms / 60_000))} min`;
  return reason === 'rate_limit' ? `${time} by the rate limit` : `${time} while earlier deliveries went first (in order)`;
}

/** "503 Service Unavailable"; a 3xx says it was not followed (the sender never follows redirects). */
export function statusInWords(code: number): string {
  const phrase = STATUS_CODES[code];
  const text = phrase ? `${code} ${phrase}` : String(code);
  return code >= 300 && code < 400 ? `${text} (redirect not followed)` : text;
}

// The sender's error texts (src/delivery/sender.ts describeNetworkError, src/lib/ssrf.ts) by kind, first
// match wins: the SSRF guard's text mentions an address, a TLS failure may mention a refused handshake.
const ERROR_KINDS: readonly [RegExp, string][] = [
  [/^timeout/i, 'Timeout'],
  [/SSRF|not public|blocked address/i, 'Blocked address'],
  [/CERT|TLS|SSL|self[- ]signed|certificate|EPROTO/i, 'TLS error'],
  [/redirect/i, 'Redirect not followed'],
  [/ECONNREFUSED|connection refused/i, 'Connection refused'],
  [/ENOTFOUND|EAI_AGAIN|did not resolve|has no IPv/i, 'Host not found'],
  [/ECONNRESET|socket hang up|other side closed|UND_ERR_SOCKET/i, 'Connection closed by the receiver'],
];

/**
 * What the endpoint last answered, in words: the status code with its reason phrase, or the kind of failure
 * (timeout, connection refused, TLS, redirect, blocked address) with the recorded detail beside it.
 */
export function responseInWords(code: number | null, error: string | null): { words: string; detail: string | null } {
  if (code !== null) return { words: statusInWords(code), detail: null };
  if (error === null) return { words: 'No response yet', detail: null };
  const http = /^HTTP (\d{3})$/.exec(error);
  if (http) return { words: statusInWords(Number(http[1])), detail: null };
  const kind = ERROR_KINDS.find(([pattern]) => pattern.test(error));
  return { words: kind ? kind[1] : 'Connection failed', detail: error };
}

function ResponseCell({ code, error }: { code: number | null; error: string | null }) {
  const { words, detail } = responseInWords(code, error);
  return (
    <>
      <span class="cell-main">{words}</span>
      {detail ? <span class="cell-sub">{detail}</span> : null}
    </>
  );
}

export const WEBHOOKS = '/dashboard/webhooks';
export const subscriptionHref = (webhookId: string) => `${WEBHOOKS}/${encodeURIComponent(webhookId)}`;
export const deliveryHref = (webhookId: string, deliveryId: string) => `${subscriptionHref(webhookId)}/deliveries/${encodeURIComponent(deliveryId)}`;

const DELIVERY_HEADERS = ['Status', 'Event', 'Event ID', 'Attempts', 'Last response', 'Last attempt', 'Replayed'];

/** The table "Deliveries", newest first; each row's event links to the delivery's page. */
export function DeliveriesTable({ items, filtered }: { items: readonly Delivery[]; filtered: boolean }) {
  return (
    <Table caption="Deliveries" captionHidden headers={DELIVERY_HEADERS} empty={filtered ? 'No deliveries match these filters on this page.' : 'No deliveries yet.'}>
      {items.map((d) => (
        <tr>
          <td>
            <StatusWords delivery={d} />
          </td>
          <td>
            <a href={deliveryHref(d.webhook_id, d.id)}>
              {d.event_type}
              <span class="visually-hidden">, delivery {d.id}</span>
            </a>
          </td>
          <td>
            <code>{d.event_id}</code>
          </td>
          <td>{formatCount(d.attempts)}</td>
          <td>
            <ResponseCell code={d.last_status_code} error={d.last_error} />
          </td>
          <td>
            <Time iso={d.last_attempt_at} />
          </td>
          <td>
            {d.replayed ? <span class="replayed">Replayed</span> : null}
            {d.test ? <span class="replayed">Test event</span> : null}
          </td>
        </tr>
      ))}
    </Table>
  );
}

/** "2 deliveries will be sent again" (the confirmation's count, and the button's number). */
export const deliveriesCount = (n: number) => countOf(n, 'delivery', 'deliveries');

/** A bulk replay's progress in words: "Running: 120 of 300 sent again", "Done: 300 sent again, 290 delivered, …". */
export function jobProgress(job: ReplayJob): string {
  if (job.count === 0) return 'Done: no failed deliveries to send again';
  const waiting = job.pending > 0 ? `, ${formatCount(job.pending)} waiting for their attempt` : '';
  if (job.status === 'running') {
    return `Running: ${formatCount(job.queued)} of ${formatCount(job.count)} sent again, ${formatCount(job.delivered)} delivered, ${formatCount(job.failed)} failed${waiting}`;
  }
  return `Done: ${formatCount(job.queued)} sent again, ${formatCount(job.delivered)} delivered, ${formatCount(job.failed)} failed${waiting}, ${formatCount(job.skipped)} skipped`;
}

/** The section "Bulk replays": a subscription's latest replays of failed deliveries and how far they got. */
export function BulkReplays({ jobs, requesters }: { jobs: readonly ReplayJob[]; requesters: ReadonlyMap<string, string> }) {
  return (
    <Table caption="Latest bulk replays" captionHidden headers={['Requested', 'Requested by', 'Failed since', 'Progress']} empty="No bulk replays yet.">
      {jobs.map((job) => (
        <tr>
          <td>
            <Time iso={job.created_at} />
          </td>
          <td>{job.requested_by === 'cli' ? 'Command line' : (requesters.get(job.requested_by) ?? job.requested_by)}</td>
          <td>
            <Time iso={job.since} />
          </td>
          <td>
            <span class="cell-main">{jobProgress(job)}</span>
            {job.count > 0 && job.skipped > 0 && job.status === 'running' ? <span class="cell-sub">{formatCount(job.skipped)} skipped: no longer failed when their turn came</span> : null}
            {job.more ? (
              <span class="cell-sub">More than {formatCount(MAX_BULK_REPLAY)} failed deliveries matched; this replay took the oldest {formatCount(MAX_BULK_REPLAY)}.</span>
            ) : null}
          </td>
        </tr>
      ))}
    </Table>
  );
}

function HeadersTable({ caption, headers }: { caption: string; headers: Record<string, string> | null }) {
  const entries = Object.entries(headers ?? {});
  return (
    <Table caption={caption} headers={['Header', 'Value']} empty="None.">
      {entries.map(([name, value]) => (
        <tr>
          <td>
            <code>{name}</code>
          </td>
          <td class="header-value">{value}</td>
        </tr>
      ))}
    </Table>
  );
}

/**
 * "Attempt N": the newest open, older ones collapsed behind a summary line (outcome, response, start), so
 * a page of three attempts reads at a glance and each still opens in place, without script. Bodies are text
 * in a <pre>: the renderer escapes them, so a receiver's HTML is shown, never rendered.
 */
export function AttemptSection({ attempt, collapsed = false }: { attempt: DeliveryAttempt; collapsed?: boolean }) {
  const n = attempt.attempt_number;
  const id = `attempt-${n}`;
  const summary = (
    <>
      <h3 id={id}>Attempt {n}</h3>{' '}
      <span class="attempt-summary">
        {attempt.outcome === 'success' ? 'Succeeded' : 'Failed'} · {attempt.response_status === null ? 'No response' : statusInWords(attempt.response_status)} ·{' '}
        <ExactTime iso={attempt.started_at} />
      </span>
    </>
  );
  return (
    <section class="attempt panel" aria-labelledby={id}>
      {collapsed ? (
        <details>
          <summary>{summary}</summary>
          <AttemptDetails attempt={attempt} />
        </details>
      ) : (
        <>
          <div class="attempt-head">{summary}</div>
          <AttemptDetails attempt={attempt} />
        </>
      )}
    </section>
  );
}

function AttemptDetails({ attempt }: { attempt: DeliveryAttempt }) {
  const n = attempt.attempt_number;
  const id = `attempt-${n}`;
  const body = attempt.response_body;
  const size = body === null ? 0 : Buffer.byteLength(body, 'utf8');
  return (
    <>
      <dl class="facts">
        <div>
          <dt>Trigger</dt>
          <dd>{attempt.trigger === 'replay' ? 'Replay' : attempt.trigger === 'test' ? 'Test event' : 'Automatic'}</dd>
        </div>
        <div>
          <dt>Outcome</dt>
          <dd>{attempt.outcome === 'success' ? 'Succeeded' : 'Failed'}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <ExactTime iso={attempt.started_at} />
          </dd>
        </div>
        {attempt.held_reason && attempt.held_ms !== null ? (
          <div>
            <dt>Held back</dt>
            <dd>{heldInWords(attempt.held_reason, attempt.held_ms)}</dd>
          </div>
        ) : null}
        <div>
          <dt>Duration</dt>
          <dd>{formatCount(attempt.duration_ms)} ms</dd>
        </div>
        <div>
          <dt>Response status</dt>
          <dd>{attempt.response_status === null ? 'No response' : statusInWords(attempt.response_status)}</dd>
        </div>
        {attempt.error ? (
          <div>
            <dt>Error</dt>
            <dd>
              {attempt.response_status === null ? `${responseInWords(null, attempt.error).words}: ` : null}
              <code>{attempt.error}</code>
            </dd>
          </div>
        ) : null}
      </dl>
      <HeadersTable caption={`Request headers of attempt ${n}`} headers={attempt.request_headers} />
      <HeadersTable caption={`Response headers of attempt ${n}`} headers={attempt.response_headers} />
      <h4 id={`${id}-body`}>Response body</h4>
      {body === null ? (
        <p class="muted">No response body.</p>
      ) : body === '' ? (
        <p class="muted">The response body was empty.</p>
      ) : (
        <>
          {size >= RESPONSE_BODY_LIMIT ? (
            <p class="hint">
              Showing the first 64 KiB (stored size: {formatCount(size)} bytes). The rest of the response was not kept.
            </p>
          ) : null}
          <pre class="payload" tabindex={0} aria-labelledby={`${id}-body`}>
            {body}
          </pre>
        </>
      )}
    </>
  );
}

/** Why a delivery cannot be replayed now, in the page's words (the service refuses it anyway). */
function notReplayable(delivery: DeliveryDetail) {
  switch (delivery.status) {
    case 'retrying':
      return (
        <>
          It is still being retried (next attempt <ExactTime iso={delivery.next_attempt_at} />
          ): it can be replayed once it is delivered or has failed.
        </>
      );
    case 'pending':
      return delivery.replayed ? 'A replay is queued: it is sent again now.' : 'Its first attempt is still to come: it can be replayed once it is delivered or has failed.';
    case 'cancelled':
      return 'A cancelled delivery cannot be replayed: its subscription was deleted before it was sent.';
    default:
      return null;
  }
}

export interface DeliveryViewProps {
  page: PageContext;
  webhook: Webhook;
  delivery: DeliveryDetail;
  errors?: FormError[];
}

/** What the delivery page shows that moves while an attempt is due. */
export const deliveryState = (delivery: Pick<DeliveryDetail, 'status' | 'attempts'>) => [delivery.status, delivery.attempts];
export const deliveryInProgress = (delivery: Pick<DeliveryDetail, 'status'>) => delivery.status === 'pending' || delivery.status === 'retrying';

export function DeliveryView({ page, webhook, delivery, errors: problems }: DeliveryViewProps) {
  const canReplay = canChange(page.actor, 'webhooks', 'create');
  const here = deliveryHref(webhook.id, delivery.id);
  const progress = deliveryInProgress(delivery) ? { url: `${here}/progress`, version: progressVersion(deliveryState(delivery)) } : null;
  const replayable = delivery.status === 'delivered' || delivery.status === 'failed';
  const last = responseInWords(delivery.last_status_code, delivery.last_error);
  return (
    <Layout title={`Delivery of ${delivery.event_type}`} viewer={page.viewer} csrf={page.csrf} current={WEBHOOKS} errors={problems} progress={progress}>
      <p>
        <a href={subscriptionHref(webhook.id)}>Back to the subscription</a> <code class="webhook-url">{webhook.url}</code>
      </p>
      <dl class="facts">
        <div>
          <dt>Status</dt>
          <dd>
            <StatusWords delivery={delivery} />
          </dd>
        </div>
        <div>
          <dt>Event</dt>
          <dd>
            <code>{delivery.event_type}</code>
          </dd>
        </div>
        <div>
          <dt>Event ID</dt>
          <dd>
            <code>{delivery.event_id}</code>
          </dd>
        </div>
        <div>
          <dt>Delivery ID</dt>
          <dd>
            <code>{delivery.id}</code>
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            <ExactTime iso={delivery.created_at} />
          </dd>
        </div>
        <div>
          <dt>Attempts</dt>
          <dd>{formatCount(delivery.attempts)}</dd>
        </div>
        <div>
          <dt>Last response</dt>
          <dd>{last.words}</dd>
        </div>
      </dl>
      {canReplay ? (
        <section aria-labelledby="replay-title" class="panel">
          <h2 id="replay-title">Replay</h2>
          {replayable ? (
            <>
              <p>Sends it again now: the same event id and body, as a new attempt below, signed with the subscription's current secret.</p>
              <ActionForm action={`${deliveryHref(webhook.id, delivery.id)}/replay`} csrf={page.csrf} label="Replay delivery" />
            </>
          ) : (
            <p>{notReplayable(delivery)}</p>
          )}
        </section>
      ) : null}
      <section aria-labelledby="payload-title">
        <h2 id="payload-title">Payload</h2>
        {/* An empty grey box said nothing (review 5, DL1): the event's body is gone once its retention passed. */}
        {delivery.payload === '' ? (
          <p class="muted">The payload is no longer stored: the event it carried is past its retention. The attempts below still show what was sent and answered.</p>
        ) : (
          <>
            <pre class="payload" tabindex={0} aria-labelledby="payload-title">
              {prettyJson(delivery.payload)}
            </pre>
            <details class="raw-payload">
              <summary>Raw payload</summary>
              <p class="hint">The exact bytes sent on every attempt, as the signature covers them.</p>
              <pre class="payload" tabindex={0} aria-label="Raw payload">
                {delivery.payload}
              </pre>
            </details>
          </>
        )}
      </section>
      <section aria-labelledby="attempts-title">
        <h2 id="attempts-title">Attempts</h2>
        {delivery.attempt_history.length === 0 ? (
          <p class="muted">No attempt yet.</p>
        ) : (
          [...delivery.attempt_history].reverse().map((attempt, i) => <AttemptSection attempt={attempt} collapsed={i > 0} />)
        )}
      </section>
    </Layout>
  );
}
