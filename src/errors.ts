/**
 * The one error model. Services throw these; the HTTP error handler maps `status` and `code` into the
 * contract's error body. Anything else that reaches the handler is an internal fault.
 */
export interface ErrorDetail {
  field: string;
  message: string;
}

export class DomainError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  /** The contract's error body (CONTRACT 1): `{ error: { code, message, details? } }`. */
  toBody(): { error: { code: string; message: string; details?: ErrorDetail[] } } {
    return { error: this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message } };
  }
}

export const errors = {
  invalidJson: (message = 'request body is not valid JSON') => new DomainError(400, 'invalid_json', message),
  /** A request malformed at the HTTP level (a duplicate Host, a bad Content-Length): nothing a field names. */
  badRequest: (message: string) => new DomainError(400, 'bad_request', message),
  validation: (details: ErrorDetail[]) =>
    new DomainError(
      400,
      'validation_failed',
      details.length === 1 ? `${details[0]!.field} ${details[0]!.message}` : `${details.length} fields are invalid`,
      details,
    ),
  unauthorized: (message = 'a valid API key is required: Authorization: Bearer <key>') =>
    new DomainError(401, 'unauthorized', message),
  forbidden: (message = 'this API key is not allowed to perform this action') => new DomainError(403, 'forbidden', message),
  workspaceReadOnly: (deletionAt: number | null) =>
    new DomainError(
      403,
      'workspace_read_only',
      deletionAt === null
        ? 'this workspace is being deleted; nothing can be changed'
        : `this workspace is read-only since its subscription was cancelled; it will be deleted on ${new Date(deletionAt).toISOString()}`,
    ),
  notFound: (what = 'resource') => new DomainError(404, 'not_found', `${what} not found`),
  methodNotAllowed: (allow: string[]) =>
    new DomainError(405, 'method_not_allowed', 'method not allowed on this path', undefined, { allow: allow.join(', ') }),
  conflict: (message: string) => new DomainError(409, 'conflict', message),
  invitationExpired: () => new DomainError(410, 'invitation_expired', 'this invitation has expired; ask for a new one'),
  payloadTooLarge: () => new DomainError(413, 'payload_too_large', 'request body is larger than 1 MiB'),
  unsupportedMediaType: () =>
    new DomainError(415, 'unsupported_media_type', 'request bodies must be sent as Content-Type: application/json'),
  idempotencyKeyReused: () =>
    new DomainError(422, 'idempotency_key_reused', 'this Idempotency-Key was used with a different request'),
  rateLimited: (retryAfterSeconds: number) =>
    new DomainError(429, 'rate_limited', 'too many requests; retry after the time in Retry-After', undefined, {
      'retry-after': String(retryAfterSeconds),
    }),
  serviceUnavailable: (message = 'the service is temporarily unavailable') => new DomainError(503, 'service_unavailable', message),
  internal: () => new DomainError(500, 'internal_error', 'an internal error occurred'),
  /** An operator's command (backup, restore, copy-to-postgres) refused by one of its rules; `code` names the rule. */
  refused: (code: string, message: string) => new DomainError(409, code, message),
};

/** Single-field validation failure raised by a service (a rule the schema cannot express). */
export function fieldError(field: string, message: string): DomainError {
  return errors.validation([{ field, message }]);
}
