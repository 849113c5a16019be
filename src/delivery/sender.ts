import { request, type Dispatcher } from 'undici';
import { signBody } from './signing.js';

/** Bytes of the response body kept in the history; the rest is never read. */
export const RESPONSE_BODY_LIMIT = 64 * 1024;

export const USER_AGENT = 'WorkspaceService-Webhooks/1.0 (+https://github.com/workspace-service)';

export interface AttemptRequest {
  url: string;
  secret: string;
  /** The stored event body: sent byte for byte and signed as is. */
  body: string;
  eventType: string;
  eventId: string;
  deliveryId: string;
  attemptNumber: number;
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

export function deliveryHeaders(req: AttemptRequest, bytes: Buffer): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-service-event': req.eventType,
    'x-service-event-id': req.eventId,
    'x-service-delivery-id': req.deliveryId,
    'x-service-delivery-attempt': String(req.attemptNumber),
    'x-service-signature': signBody(req.secret, bytes),
  };
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
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
    return `refused by SSRF guard: ${(cause?.code === 'ERR_SSRF_BLOCKED' ? cause.message : e?.message) ?? 'target is not public'}`;
  }
  const code = cause?.code ?? e?.code;
  const message = cause?.message ?? e?.message ?? String(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

/** Reads at most RESPONSE_BODY_LIMIT bytes, stopping at the deadline; the rest is discarded unread. */
async function readBounded(body: Dispatcher.ResponseData['body'], signal: AbortSignal): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      if (signal.aborted) break;
      const buf = chunk as Buffer;
      const room = RESPONSE_BODY_LIMIT - size;
      chunks.push(buf.length > room ? buf.subarray(0, room) : buf);
      size += Math.min(buf.length, room);
      if (size >= RESPONSE_BODY_LIMIT) break;
    }
  } catch {
    // A body cut short (deadline, reset) keeps what arrived; the status already decided the outcome.
  } finally {
    if (!body.destroyed) body.destroy();
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/**
 * One attempt: POST the stored bytes with the contract's headers. Success is a 2xx status that arrives
 * within `timeoutMs` of the start (the deadline covers DNS, connect, TLS and headers); redirects are not
 * followed (undici follows none unless asked), so a 3xx is a failure. Never throws.
 */
export async function sendAttempt(req: AttemptRequest, options: SendOptions): Promise<AttemptResult> {
  const bytes = Buffer.from(req.body, 'utf8');
  const requestHeaders = deliveryHeaders(req, bytes);
  const startedAt = options.now();
  const started = performance.now();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  const elapsed = () => Math.max(0, Math.round(performance.now() - started));
  try {
    const response = await request(req.url, {
      method: 'POST',
      body: bytes,
      headers: requestHeaders,
      dispatcher: options.dispatcher,
      signal: controller.signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    const status = response.statusCode;
    const responseHeaders = flattenHeaders(response.headers);
    // The status arrived in time; reading the body stays inside the same deadline and size bound.
    const responseBody = await readBounded(response.body, controller.signal);
    const success = status >= 200 && status < 300;
    return {
      success,
      startedAt,
      durationMs: elapsed(),
      requestHeaders,
      status,
      responseHeaders,
      responseBody,
      error: success ? null : status >= 300 && status < 400 ? `redirect not followed: HTTP ${status}` : `HTTP ${status}`,
    };
  } catch (err) {
    return {
      success: false,
      startedAt,
      durationMs: elapsed(),
      requestHeaders,
      status: null,
      responseHeaders: null,
      responseBody: null,
      error: describeNetworkError(err, timedOut, options.timeoutMs),
    };
  } finally {
    clearTimeout(timer);
  }
}
