import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../lib/metrics.js';

/**
 * Request counts and latency by route pattern (`/v1/projects/:id`, never the raw URL, so ids cannot
 * explode the label space), and GET /metrics in Prometheus text format. Like /healthz it is
 * unauthenticated and hidden from OpenAPI: expose it only on the internal network (docs/deployment.md).
 */
export function registerMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const text = await metrics.render();
    return reply.type(metrics.registry.contentType).send(text);
  });
}
