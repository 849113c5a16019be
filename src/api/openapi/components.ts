// The shared parts of the document: error responses with the contract's codes (CONTRACT 1), and the headers
// and parameters every operation of a kind carries.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const REQUEST_ID = 'req_0123456789abcdefghijklmn';

interface ErrorKind {
  status: string;
  description: string;
  /** code -> [message, details?]: one example per code the status carries. */
  examples: Record<string, [string, { field: string; message: string }[]?]>;
  headers?: Record<string, string>;
}

const ERROR_KINDS: Record<string, ErrorKind> = {
  BadRequest: {
    status: '400',
    description:
      '`invalid_json`: the body is not JSON (an empty body on POST/PUT included). `validation_failed`: a body field or ' +
      'query parameter breaks a rule; `details` names every offending field.',
    examples: {
      validation_failed: ['name must be 1 to 255 characters', [{ field: 'name', message: 'must be 1 to 255 characters' }]],
      invalid_json: ['request body is not valid JSON'],
    },
  },
  Unauthorized: {
    status: '401',
    description: '`unauthorized`: the Authorization header is missing or malformed, or the key is unknown or revoked.',
    examples: { unauthorized: ['a valid API key is required: Authorization: Bearer <key>'] },
  },
  Forbidden: {
    status: '403',
    description:
      "`forbidden`: the key's scope or its user's current role does not allow the call. `workspace_read_only`: a " +
      "state-changing call while the organisation's subscription is cancelled; the message names the deletion date.",
    examples: {
      forbidden: ['this API key is not allowed to perform this action'],
      workspace_read_only: ['this workspace is read-only since its subscription was cancelled; it will be deleted on 2026-12-22T09:30:00.000Z'],
    },
  },
  NotFound: {
    status: '404',
    description: "`not_found`: no such id in the caller's organisation (another organisation's id looks the same).",
    examples: { not_found: ['project not found'] },
  },
  Conflict: {
    status: '409',
    description:
      '`conflict`: the call contradicts the current state (an e-mail of an active member, a change that would leave no ' +
      'owner, a delivery still in flight), or a request with the same Idempotency-Key is still running.',
    examples: { conflict: ['a request with this Idempotency-Key is still in progress'] },
  },
  Gone: {
    status: '410',
    description: '`invitation_expired`: the invitation is older than 72 hours; ask for a new one.',
    examples: { invitation_expired: ['this invitation has expired; ask for a new one'] },
  },
  PayloadTooLarge: {
    status: '413',
    description: '`payload_too_large`: the body is larger than 1 MiB.',
    examples: { payload_too_large: ['request body is larger than 1 MiB'] },
  },
  UnsupportedMediaType: {
    status: '415',
    description: '`unsupported_media_type`: a body sent with a Content-Type other than application/json.',
    examples: { unsupported_media_type: ['request bodies must be sent as Content-Type: application/json'] },
  },
  IdempotencyKeyReused: {
    status: '422',
    description: '`idempotency_key_reused`: this Idempotency-Key was used with a different method, path or body.',
    examples: { idempotency_key_reused: ['this Idempotency-Key was used with a different request'] },
  },
  RateLimited: {
    status: '429',
    description: '`rate_limited`: over the rate limit of the key (or of the address, for failed authentications). Retry after `Retry-After` seconds.',
    examples: { rate_limited: ['too many requests; retry after the time in Retry-After'] },
    headers: { 'Retry-After': 'RetryAfter' },
  },
  InternalError: {
    status: '500',
    description: '`internal_error`: a fault on our side; the body never carries internal detail. Quote X-Request-Id when reporting it.',
    examples: { internal_error: ['an internal error occurred'] },
  },
  ServiceUnavailable: {
    status: '503',
    description: '`service_unavailable`: the database is briefly unreachable; retry after `Retry-After` seconds.',
    examples: { service_unavailable: ['the service is temporarily unavailable; retry shortly'] },
    headers: { 'Retry-After': 'RetryAfter' },
  },
};

/** `components.responses`: one response per error status, its codes as named examples. */
export function errorResponses(): Json {
  const responses: Json = {};
  for (const [name, kind] of Object.entries(ERROR_KINDS)) {
    const examples: Json = {};
    for (const [code, [message, details]] of Object.entries(kind.examples)) {
      examples[code] = { summary: code, value: { error: { code, message, ...(details ? { details } : {}) } } };
    }
    const headers: Json = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
    for (const [header, ref] of Object.entries(kind.headers ?? {})) headers[header] = { $ref: `#/components/headers/${ref}` };
    responses[name] = {
      description: kind.description,
      headers,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples } },
    };
  }
  return responses;
}

/** The name of the shared response for an error status, if there is one. */
export function errorResponseName(status: string): string | undefined {
  return Object.entries(ERROR_KINDS).find(([, kind]) => kind.status === status)?.[0];
}

/**
 * The error statuses any operation of this shape can answer, whatever its own rules: authentication and its
 * limits, the body's checks, an id that names nothing, Idempotency-Key on POST, and faults.
 */
export function errorStatuses(shape: { authenticated: boolean; post: boolean; hasBody: boolean; hasPathId: boolean }): string[] {
  const statuses = ['500', '503'];
  if (shape.authenticated) statuses.push('400', '401', '403', '429');
  if (shape.hasBody) statuses.push('400', '413', '415');
  if (shape.hasPathId) statuses.push('404');
  if (shape.authenticated && shape.post) statuses.push('409', '422');
  return statuses;
}

export function sharedHeaders(): Json {
  return {
    RequestId: {
      description: 'The request id: the `X-Request-Id` the client sent (1 to 128 of `A-Za-z0-9._:-`), or one the service made.',
      schema: { type: 'string', example: REQUEST_ID },
    },
    RateLimitLimit: { description: 'Requests allowed per API key in a rolling 60-second window.', schema: { type: 'integer', example: 1000 } },
    RateLimitRemaining: { description: 'Requests left in the current window.', schema: { type: 'integer', example: 998 } },
    RetryAfter: { description: 'Whole seconds to wait before retrying, at least 1.', schema: { type: 'integer', minimum: 1, example: 12 } },
    IdempotentReplayed: {
      description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key.',
      schema: { type: 'string', enum: ['true'] },
    },
  };
}

export function sharedParameters(): Json {
  return {
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Makes the POST safe to retry: the same key (per API key, kept 24 hours) with the same method, path and body ' +
        'returns the first response again with `Idempotent-Replayed: true`; with a different request it is 422; while ' +
        'the first is still running, 409.',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\x20-\x7E]+$', example: '8e0f3c52-6f5e-4b8e-9a57-4f1f0cf0d1a2' },
    },
  };
}
