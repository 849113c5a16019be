import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { fingerprint, type IdempotencyService } from '../../services/shared/idempotency-service.js';

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyKey: string | null;
  }
}

type Hooks<T> = T | T[] | undefined;
const asArray = <T>(hooks: Hooks<T>): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]);

/**
 * `Idempotency-Key` on authenticated POSTs. The check runs after validation (a request that fails
 * validation stores nothing, as with Stripe); the response is recorded as it is sent. The hooks are
 * attached only to authenticated POST routes, so no other request pays for them, and a POST without the
 * header passes in one check.
 */
export function registerIdempotency(app: FastifyInstance, service: IdempotencyService): void {
  app.decorateRequest('idempotencyKey', null);

  async function begin(request: FastifyRequest, reply: FastifyReply, key: string): Promise<void> {
    service.validateKey(key);
    const { orgId, keyId } = request.principal!;
    const path = request.url.split('?')[0]!;
    const outcome = await service.begin(orgId, keyId, key, fingerprint(request.method, path, request.body));
    if (outcome.kind === 'replay') {
      reply.header('idempotent-replayed', 'true');
      reply.code(outcome.status);
      if (outcome.body === '') return void reply.send();
      return void reply.type('application/json; charset=utf-8').send(outcome.body);
    }
    request.idempotencyKey = key;
  }

  function preHandler(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const header = request.headers['idempotency-key'];
    if (request.method !== 'POST' || header === undefined || !request.principal) return done();
    const key = Array.isArray(header) ? header[0]! : header;
    // A replay sends its reply here; Fastify then skips the handler.
    begin(request, reply, key).then(() => done(), done);
  }

  function onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void): void {
    const key = request.idempotencyKey;
    if (key === null || !request.principal) return done(null, payload);
    request.idempotencyKey = null;
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : '';
    service.finish(request.principal.orgId, request.principal.keyId, key, reply.statusCode, body).then(
      () => done(null, payload),
      (err: Error) => done(err),
    );
  }

  app.addHook('onRoute', (route) => {
    const methods = asArray(route.method);
    if (!route.config?.auth || !methods.includes('POST')) return;
    const preHandlers = asArray(route.preHandler);
    // The HEAD route Fastify derives from a GET copies its options; a POST never has one, but be exact.
    if (preHandlers.includes(preHandler as never)) return;
    route.preHandler = [...preHandlers, preHandler] as typeof route.preHandler;
    route.onSend = [...asArray(route.onSend), onSend] as typeof route.onSend;
  });
}
