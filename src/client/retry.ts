import { retryAfterSeconds } from './errors.js';

/** How the client retries a call. */
export interface RetryOptions {
  /** Attempts after the first one, at most; 0 turns retrying off. Default 3. */
  maxRetries?: number;
  /** Backoff after a network error: a random wait up to `baseDelayMs × 2^retry` (full jitter). Default 250. */
  baseDelayMs?: number;
  /**
   * The longest wait between two attempts. A `Retry-After` longer than this is not waited for: the 429 or
   * 503 is returned at once rather than sleeping for minutes. Default 60 000 (the rate limit's window).
   */
  maxDelayMs?: number;
}

export const RETRY_DEFAULTS: Required<RetryOptions> = { maxRetries: 3, baseDelayMs: 250, maxDelayMs: 60_000 };

export interface RetryingFetchOptions {
  fetch: (request: Request) => Promise<Response>;
  retry: Required<RetryOptions>;
  sleep: (ms: number) => Promise<void>;
  /** Source of jitter, [0, 1). */
  random?: () => number;
}

/** Methods the server treats as idempotent; a POST joins them by carrying an Idempotency-Key. */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/**
 * POSTs where the server honours no Idempotency-Key: it keeps keys per API key (CONTRACT 9), and accepting
 * an invitation is the one unauthenticated POST. Sent once: after a lost answer a second try would meet a
 * used token (404) rather than the first answer.
 */
const UNKEYED_POSTS = [/\/invitations\/[^/]+\/accept$/];

function honoursIdempotencyKey(request: Request): boolean {
  const pathname = new URL(request.url).pathname;
  return !UNKEYED_POSTS.some((pattern) => pattern.test(pathname));
}

/** Error codes of connection failures, for fetch implementations that reject with them rather than a TypeError. */
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'ENETUNREACH', 'EHOSTUNREACH', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** Most a Retry-After wait is lengthened by (and at most a tenth of it), so clients refused together do not all come back in the same instant. */
const RETRY_AFTER_JITTER_MS = 1_000;

/** Waits `ms` with a timer: the default `sleep`. */
export const timerSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A fetch that adds an Idempotency-Key to every POST without one (but the unauthenticated invitation accept,
 * where the server keeps no keys) and retries: network errors on idempotent
 * calls (backoff with full jitter), a 429 after its Retry-After (backoff when it has none), a 503 with
 * Retry-After on idempotent calls. Nothing else is retried. Each attempt sends a clone of the request, so
 * its body can be sent again; the key is set once, before the first attempt, so every retry of a call
 * carries the same one and the server replays the first response instead of acting twice.
 */
export function retryingFetch(options: RetryingFetchOptions): (request: Request) => Promise<Response> {
  const { fetch, retry, sleep, random = Math.random } = options;

  function backoff(retryNumber: number): number {
    return Math.floor(random() * Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** retryNumber));
  }

  /** How long to wait before retrying after this response, or undefined to hand it to the caller. */
  function waitAfter(response: Response, idempotent: boolean, retryNumber: number): number | undefined {
    // A 429 was refused before anything ran, so any call may be sent again; a 503 only when repeating is safe.
    if (response.status !== 429 && !(response.status === 503 && idempotent)) return undefined;
    const seconds = retryAfterSeconds(response.headers.get('retry-after'));
    if (seconds === undefined) return response.status === 429 ? backoff(retryNumber) : undefined;
    const ms = seconds * 1000;
    if (ms > retry.maxDelayMs) return undefined;
    return Math.min(retry.maxDelayMs, ms + Math.floor(random() * Math.min(RETRY_AFTER_JITTER_MS, ms / 10)));
  }

  return async (request: Request): Promise<Response> => {
    const keyed = request.method === 'POST' && honoursIdempotencyKey(request);
    if (keyed && !request.headers.has('idempotency-key')) request.headers.set('Idempotency-Key', newIdempotencyKey());
    const idempotent = IDEMPOTENT_METHODS.has(request.method) || keyed;
    for (let retryNumber = 0; ; retryNumber++) {
      request.signal.throwIfAborted();
      const canRetry = retryNumber < retry.maxRetries;
      let response: Response;
      try {
        // A clone each time: the body stays readable for the next attempt, and for middleware afterwards.
        response = await fetch(request.clone());
      } catch (error) {
        if (!canRetry || !idempotent || !isNetworkError(error, request.signal)) throw error;
        await abortableSleep(sleep, backoff(retryNumber), request.signal);
        continue;
      }
      const wait = canRetry ? waitAfter(response, idempotent, retryNumber) : undefined;
      if (wait === undefined) return response;
      // Read nothing of the refused response, but let its connection go back to the pool.
      await response.body?.cancel().catch(() => undefined);
      await abortableSleep(sleep, wait, request.signal);
    }
  };
}

/** `sleep(ms)`, cut short by the call's abort signal (a caller's timeout also bounds the waits between attempts). */
function abortableSleep(sleep: (ms: number) => Promise<void>, ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    sleep(ms).then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Whether fetch failed to get any response: the Fetch standard rejects with a TypeError for every network
 * failure (refused, reset, closed before the response). An abort or timeout is the caller's decision, never
 * retried.
 */
function isNetworkError(error: unknown, signal: AbortSignal): boolean {
  if (signal.aborted) return false;
  if (error instanceof TypeError) return true;
  for (let e: unknown = error, depth = 0; typeof e === 'object' && e !== null && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  }
  return false;
}

/** A random UUID; built from getRandomValues where randomUUID is missing (browsers on plain http:// pages). */
function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
