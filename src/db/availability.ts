import { DomainError } from '../errors.js';

/** Node socket errors that mean the database could not be reached or the connection died. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** PostgreSQL SQLSTATEs that mean "not now" rather than "wrong request": shutdown, crash recovery, cancellation. */
const PG_UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '53300', '57014']);

/** pg and pg-pool report some connection failures only as messages. */
const MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Connection terminated due to connection timeout',
  'Query read timeout',
  'connect ECONNREFUSED',
];

/**
 * True when an error means the database is unreachable or going away (PostgreSQL restarting, network
 * loss, pool wait timeout), so the request should be answered 503 at once instead of 500. SQLite busy
 * timeouts count too: the write lock was not released within busy_timeout.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || PG_UNAVAILABLE.has(code) || code.startsWith('08') || code === 'SQLITE_BUSY') return true;
  }
  if (typeof message === 'string' && MESSAGES.some((m) => message.includes(m))) return true;
  // AggregateError (dual-stack connect attempts) carries the socket errors inside.
  const inner = (err as { errors?: unknown }).errors;
  if (Array.isArray(inner) && inner.some(isDatabaseUnavailable)) return true;
  const cause = (err as { cause?: unknown }).cause;
  return cause !== undefined && cause !== err && isDatabaseUnavailable(cause);
}

/** The 503 a request gets while the database is away; clients may retry after a second. */
export function databaseUnavailableError(): DomainError {
  return new DomainError(503, 'service_unavailable', 'the service is temporarily unavailable; retry shortly', undefined, { 'retry-after': '1' });
}
