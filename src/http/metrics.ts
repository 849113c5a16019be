import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../lib/metrics.js';

/**
 * Request counts and latency by route pattern (`/v1/projects/:id`, never the raw URL, so ids cannot
 * explode the label space), and GET /metrics in Prometheus text format. Like /healthz it is
 * unauthenticated and hidden from OpenAPI: expose it only on the internal network (docs/deployment.md).
 */
export function registerMetrics(app: FastifyInstance, metrics: Metrics): void {
  // Callback style like the other per-request hooks in app.ts: no promise per request.
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const text = await metrics.render();
    return reply.type(metrics.registry.contentType).send(text);
  });
}
