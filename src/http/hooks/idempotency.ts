import type { FastifyInstance } from 'fastify';
import { fingerprint, type IdempotencyService } from '../../services/idempotency-service.js';

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyKey: string | null;
  }
}

/**
 * `Idempotency-Key` on authenticated POSTs. The check runs after validation (a request that fails
 * validation stores nothing, as with Stripe); the response is recorded as it is sent.
 */
export function registerIdempotency(app: FastifyInstance, service: IdempotencyService): void {
  app.decorateRequest('idempotencyKey', null);

  app.addHook('preHandler', async (request, reply) => {
    const header = request.headers['idempotency-key'];
    if (request.method !== 'POST' || header === undefined || !request.principal) return;
    const key = Array.isArray(header) ? header[0]! : header;
    service.validateKey(key);
    const { orgId, keyId } = request.principal;
    const path = request.url.split('?')[0]!;
    const outcome = await service.begin(orgId, keyId, key, fingerprint(request.method, path, request.body));
    if (outcome.kind === 'replay') {
      reply.header('idempotent-replayed', 'true');
      reply.code(outcome.status);
      if (outcome.body === '') return reply.send();
      return reply.type('application/json; charset=utf-8').send(outcome.body);
    }
    request.idempotencyKey = key;
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const key = request.idempotencyKey;
    if (key === null || !request.principal) return payload;
    request.idempotencyKey = null;
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : '';
    await service.finish(request.principal.orgId, request.principal.keyId, key, reply.statusCode, body);
    return payload;
  });
}
