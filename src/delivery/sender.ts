import type { Dispatcher } from 'undici';
import { signatureHeaders, type SigningSecrets } from './signing.js';
import { SsrfBlockedError } from '../lib/ssrf.js';

/** Bytes of the response body kept in the history; the rest is never read. */
export const RESPONSE_BODY_LIMIT = 64 * 1024;

export const USER_AGENT = 'WorkspaceService-Webhooks/1.0 (+https://github.com/workspace-service)';

export interface AttemptRequest {
  url: string;
  /** The secrets valid at the attempt's start (opened: never the stored, sealed form). */
  secrets: SigningSecrets;
  /** The stored event body: sent byte for byte and signed as is. */
  body: string;
  eventType: string;
  eventId: string;
  deliveryId: string;
  attemptNumber: number;
  /** W3C trace context for the receiver (the delivery span, or the event's stored context); none when untraced. */
  traceparent?: string | null;
  /** A test event (POST /v1/webhooks/:id/test): sent with `X-Service-Test: true`. */
  test?: boolean;
}

export interface AttemptResult {
  success: boolean;
  startedAt: number;
  durationMs: number;
  requestHeaders: Record<string, string>;
  status: number | null;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
  error: string | null;
}

export interface SendOptions {
  dispatcher: Dispatcher;
  timeoutMs: number;
  now: () => number;
}

/** The request headers of one attempt; `startedAt` (ms) is its start, signed as `webhook-timestamp`. */
export function deliveryHeaders(req: AttemptRequest, bytes: Buffer, startedAt: number): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-service-event': req.eventType,
    'x-service-event-id': req.eventId,
    'x-service-delivery-id': req.deliveryId,
    'x-service-delivery-attempt': String(req.attemptNumber),
    ...signatureHeaders(req.secrets, req.eventId, Math.floor(startedAt / 1000), bytes),
  };
  if (req.test) headers['x-service-test'] = 'true';
  if (req.traceparent) headers.traceparent = req.traceparent;
  return headers;
}

/** Response headers as undici hands them to a dispatch handler. */
type ResponseHeaders = Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[2];

function flattenHeaders(headers: ResponseHeaders | Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** A short, human-readable reason for a failure that produced no status (network, TLS, timeout, SSRF). */
export function describeNetworkError(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timeout: no response status within ${timeoutMs} ms`;
  const e = err as { name?: string; code?: string; message?: string; cause?: unknown } | null;
  // undici wraps socket errors; the cause carries the useful code (ECONNREFUSED, CERT_HAS_EXPIRED, ...).
  const cause = e?.cause as { code?: string; message?: string } | undefined;
  if (e?.code === 'ERR_SSRF_BLOCKED' || (cause && cause.code === 'ERR_SSRF_BLOCKED')) {
    // Recorded in the history members read: never what a name resolved to (SsrfBlockedError.shownMessage).
    const blocked = cause?.code === 'ERR_SSRF_BLOCKED' ? cause : e;
    return `refused by SSRF guard: ${blocked instanceof SsrfBlockedError ? blocked.shownMessage : (blocked?.message ?? 'target is not public')}`;
  }
  const code = cause?.code ?? e?.code;
  const message = cause?.message ?? e?.message ?? String(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

/** Where a webhook URL sends to: undici's origin (its pool key) and the request path. */
interface Target {
  origin: string;
  path: string;
}

// Parsed once per subscription URL rather than once per attempt; bounded, oldest first out.
const TARGETS_KEPT = 1000;
const targets = new Map<string, Target>();

function targetOf(url: string): Target {
  let target = targets.get(url);
  if (target === undefined) {
    const parsed = new URL(url);
    target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    if (targets.size >= TARGETS_KEPT) targets.delete(targets.keys().next().value!);
    targets.set(url, target);
  }
  return target;
}

/** Why an attempt was cut at its deadline (what `describeNetworkError` reports as a timeout). */
class AttemptDeadline extends Error {
  constructor(timeoutMs: number) {
    super(`no response status within ${timeoutMs} ms`);
    this.name = 'AttemptDeadline';
  }
}

/** Why the rest of a response body was not read (its first RESPONSE_BODY_LIMIT bytes are kept). */
class BodyLimitReached extends Error {
  constructor() {
    super('response body limit reached');
    this.name = 'BodyLimitReached';
  }
}

function timeUp(attempt: Attempt): void {
  attempt.deadline();
}

/**
 * One attempt as an undici dispatch handler: no AbortController, response stream or async iterator per
 * attempt (undici's `request` API builds all three). The handler keeps the status, the flattened headers and
 * at most RESPONSE_BODY_LIMIT bytes of the body, and settles exactly once: at the end of the response, on an
 * error, at the body limit, or at the deadline, whichever comes first. Whatever undici still holds for the
 * request after that is aborted.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private status: number | null = null;
  private responseHeaders: Record<string, string> | null = null;
  private chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  private timedOut = false;
  private readonly timer: NodeJS.Timeout;
  private readonly started = performance.now();

  constructor(
    private readonly startedAt: number,
    private readonly requestHeaders: Record<string, string>,
    private readonly timeoutMs: number,
    private readonly resolve: (result: AttemptResult) => void,
  ) {
    this.timer = setTimeout(timeUp, timeoutMs, this);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // The deadline may have passed while the request waited for its connection.
    if (this.settled) controller.abort(new AttemptDeadline(this.timeoutMs));
    else this.controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: ResponseHeaders): void {
    // 1xx informational answers come before the real one.
    if (statusCode < 200 || this.settled) return;
    this.status = statusCode;
    this.responseHeaders = flattenHeaders(headers);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    const room = RESPONSE_BODY_LIMIT - this.size;
    this.chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    this.size += Math.min(chunk.length, room);
    if (this.size >= RESPONSE_BODY_LIMIT) {
      // The rest is never read: history keeps the first 64 KiB.
      this.finish(null);
      controller.abort(new BodyLimitReached());
    }
  }

  onResponseEnd(): void {
    this.finish(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.finish(err);
  }

  /** The attempt's deadline: covers DNS, connect, TLS, the status and the body read. */
  deadline(): void {
    if (this.settled) return;
    this.timedOut = true;
    this.finish(null);
    this.controller?.abort(new AttemptDeadline(this.timeoutMs));
  }

  /** Settles the attempt; `err` is the request's failure, if one ended it. */
  finish(err: Error | null): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    const durationMs = Math.max(0, Math.round(performance.now() - this.started));
    const status = this.status;
    if (status === null) {
      // No status: a network, TLS or SSRF failure, or the deadline.
      this.resolve({
        success: false,
        startedAt: this.startedAt,
        durationMs,
        requestHeaders: this.requestHeaders,
        status: null,
        responseHeaders: null,
        responseBody: null,
        error: describeNetworkError(err ?? new AttemptDeadline(this.timeoutMs), this.timedOut || err === null, this.timeoutMs),
      });
      return;
    }
    // The status arrived in time and decides; a body cut short (deadline, reset) keeps what arrived.
    const success = status >= 200 && status < 300;
    this.resolve({
      success,
      startedAt: this.startedAt,
      durationMs,
      requestHeaders: this.requestHeaders,
      status,
      responseHeaders: this.responseHeaders,
      responseBody: storableBody(this.chunks, this.size),
      error: success ? null : status >= 300 && status < 400 ? `redirect not followed: HTTP ${status}` : `HTTP ${status}`,
    });
    this.chunks = [];
  }
}

/**
 * The kept bytes as text. U+0000 becomes U+FFFD: PostgreSQL refuses it in text, and a receiver's body must
 * not be able to fail the history row (and with it the bookkeeping of the batch it is recorded in).
 */
function storableBody(chunks: Buffer[], size: number): string {
  const text = chunks.length === 1 ? chunks[0]!.toString('utf8', 0, size) : Buffer.concat(chunks, size).toString('utf8');
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}

/**
 * One attempt: POST the stored bytes with the contract's headers. Success is a 2xx status that arrives
 * within `timeoutMs` of the start (the deadline covers DNS, connect, TLS and headers); redirects are not
 * followed (a dispatch follows none), so a 3xx is a failure. Never throws.
 */
export function sendAttempt(req: AttemptRequest, options: SendOptions): Promise<AttemptResult> {
  return new Promise((resolve) => {
    const bytes = Buffer.from(req.body, 'utf8');
    const startedAt = options.now();
    const requestHeaders = deliveryHeaders(req, bytes, startedAt);
    const attempt = new Attempt(startedAt, requestHeaders, options.timeoutMs, resolve);
    let target: Target;
    try {
      target = targetOf(req.url);
    } catch (err) {
      attempt.finish(err as Error);
      return;
    }
    // A dispatcher that refuses synchronously reports through onResponseError as well.
    options.dispatcher.dispatch(
      {
        origin: target.origin,
        path: target.path,
        method: 'POST',
        body: bytes,
        headers: requestHeaders,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      },
      attempt,
    );
  });
}
