import type { FetchResponse } from 'openapi-fetch';
import type { paths } from './openapi.js';

/**
 * The error body every failing call answers with (`{ error: { code, message, details? } }`), taken from the
 * document rather than written out: every operation shares it, so one list endpoint's is everyone's.
 */
export type WorkspaceErrorBody = Extract<FetchResponse<paths['/v1/projects']['get'], object, `${string}/${string}`>, { error: unknown }>['error'];

/** One offending field of a `validation_failed` error. */
export type WorkspaceErrorDetail = NonNullable<WorkspaceErrorBody['error']['details']>[number];

/**
 * The `error.code` values the service answers with (CONTRACT section 1, plus `service_unavailable` while its
 * database is away and `bad_request` for any other refused request), and `unknown_error` for a response that
 * did not come from the service in the contract's shape (a proxy's HTML 502, an empty body). Widened with
 * `string & {}` so a code added by a newer server still type-checks, while editors keep suggesting these.
 */
export type WorkspaceErrorCode =
  | 'invalid_json'
  | 'validation_failed'
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'workspace_read_only'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'invitation_expired'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'idempotency_key_reused'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable'
  | 'unknown_error'
  | (string & {});

/**
 * A call the service answered with an error status (4xx, 5xx, or an unfollowed 3xx). `code`, `message` and
 * `details` are the error body's; `requestId` is `X-Request-Id` (quote it when reporting a problem);
 * `retryAfter` is `Retry-After` in seconds on 429 and 503. `response` is the HTTP response (its body already
 * read; `headers` is a shortcut to its headers), and `body` what its body held: the parsed JSON, or the text
 * when it was not JSON.
 */
export class WorkspaceApiError extends Error {
  override readonly name = 'WorkspaceApiError';
  readonly status: number;
  readonly code: WorkspaceErrorCode;
  readonly details: WorkspaceErrorDetail[] | undefined;
  readonly requestId: string | undefined;
  readonly retryAfter: number | undefined;
  readonly response: Response;
  readonly body: unknown;

  constructor(response: Response, body: unknown) {
    const error = contractError(body);
    super(error ? error.message : fallbackMessage(response, body));
    this.status = response.status;
    this.code = error ? error.code : 'unknown_error';
    this.details = error?.details;
    this.requestId = response.headers.get('x-request-id') ?? undefined;
    this.retryAfter = retryAfterSeconds(response.headers.get('retry-after'));
    this.response = response;
    this.body = body;
  }

  /** The response's headers (`X-RateLimit-Remaining`, `Allow` on a 405, ...). */
  get headers(): Headers {
    return this.response.headers;
  }
}

/**
 * Whether `value` is a `WorkspaceApiError`; also true for one thrown by another copy of this module (two
 * versions of the package in one program), where `instanceof` would say no.
 */
export function isWorkspaceApiError(value: unknown): value is WorkspaceApiError {
  if (value instanceof WorkspaceApiError) return true;
  if (!(value instanceof Error) || value.name !== 'WorkspaceApiError') return false;
  const candidate = value as Partial<WorkspaceApiError>;
  return typeof candidate.status === 'number' && typeof candidate.code === 'string';
}

function contractError(body: unknown): WorkspaceErrorBody['error'] | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message, details } = error as Record<string, unknown>;
  if (typeof code !== 'string' || typeof message !== 'string') return undefined;
  const fields = Array.isArray(details)
    ? details.filter((d): d is WorkspaceErrorDetail => typeof d === 'object' && d !== null && typeof d.field === 'string' && typeof d.message === 'string')
    : undefined;
  return { code, message, details: fields };
}

function fallbackMessage(response: Response, body: unknown): string {
  const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  if (typeof body !== 'string' || body.trim() === '') return `${status} with no error body`;
  // A proxy's or load balancer's page: its title, or else a readable start of it without markup.
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(body)?.[1];
  const text = (title ?? body).replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 200);
  return text ? `${status}: ${text}` : `${status} with a non-JSON body`;
}

/**
 * Retry-After as whole seconds from now: the service sends seconds; an HTTP date (from a proxy) is turned
 * into the seconds until it. Undefined when absent or unreadable.
 */
export function retryAfterSeconds(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}
