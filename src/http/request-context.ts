import type { FastifyRequest } from 'fastify';
import type { AuditSource } from '../db/schema.js';
import type { ActorContext } from '../services/access/actor.js';

const MAX_USER_AGENT = 512;

/** What the audit log records about the request behind a change. */
export function requestContext(request: FastifyRequest, source: AuditSource): ActorContext {
  const agent = request.headers['user-agent'];
  return {
    source,
    ip: request.ip ?? null,
    userAgent: typeof agent === 'string' && agent.length > 0 ? agent.slice(0, MAX_USER_AGENT) : null,
    requestId: request.id,
  };
}
