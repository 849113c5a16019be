import http from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, errors } from '../errors.js';
import { nonPublicReason } from '../lib/ssrf.js';
import { safeEqual, sha256Hex } from '../lib/crypto.js';
import type { Metrics } from '../tracing/metrics.js';

const OBSERVES = Symbol('metrics hook');

/**
 * Request counts and latency by route pattern (`/v1/projects/:id`, never the raw URL, so ids cannot
 * explode the label space). The API app only counts: /metrics itself is served by the separate listener
 * below, so reaching the API port never exposes it.
 *
 * Each route gets its own hook with its pattern bound, rather than one global hook asking
 * `request.routeOptions.url`: that getter builds a 13-field object and asks the router about constraint
 * strategies on every access, several microseconds of a GET by id (docs/benchmarks.md, issue 29). What no
 * route answers (the not-found handler, an undecodable URL) is counted as `unmatched` by a global hook that
 * only reads `is404`. Register this before any route, so that each one passes through `onRoute` here.
 */
export function registerMetrics(app: FastifyInstance, metrics: Metrics): void {
  // Callback style like the other per-request hooks in app.ts: no promise per request.
  app.addHook('onRoute', (route) => {
    const hooks = route.onResponse === undefined ? [] : Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse];
    // The HEAD route Fastify derives from a GET copies its options, this hook included.
    if (hooks.some((hook) => OBSERVES in hook)) return;
    const pattern = route.url;
    const observe = Object.assign(
      (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
        metrics.observeRequest(request.method, pattern, reply.statusCode, reply.elapsedTime / 1000);
        done();
      },
      { [OBSERVES]: true },
    );
    route.onResponse = [...hooks, observe] as typeof route.onResponse;
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) metrics.observeRequest(request.method, 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

export interface MetricsListenerOptions {
  port: number;
  host: string;
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  token: string | null;
  logger: FastifyBaseLogger;
}

export interface MetricsListener {
  /** e.g. `http://127.0.0.1:9464` (the real port when METRICS_PORT=0). */
  readonly address: string;
  /** Stops listening and waits for an in-flight scrape; idle keep-alive connections are closed at once. */
  close(): Promise<void>;
}

/**
 * `localhost`, 127.0.0.0/8 and ::1 (IPv4-mapped forms too): addresses no other machine can reach. The
 * address classes are the SSRF guard's (it names an IPv4-mapped one `IPv4-mapped 127.0.0.1: loopback`).
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase();
  if (name === 'localhost') return true;
  if (isIP(name) === 0) return false;
  const reason = nonPublicReason(name);
  return reason === 'loopback' || reason?.endsWith(': loopback') === true;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** How long close() lets a scrape in flight finish before it cuts the connections. */
const CLOSE_GRACE_MS = 5000;

function sendError(res: http.ServerResponse, error: DomainError, extra: Record<string, string>): void {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE, 'cache-control': 'no-store', ...error.headers, ...extra };
  if (error.status === 401) headers['www-authenticate'] = 'Bearer realm="metrics"';
  res.writeHead(error.status, headers).end(JSON.stringify(error.toBody()));
}

/** The token from `Authorization: Bearer <token>`, or null. */
function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return match ? match[1]! : null;
}

/**
 * GET /metrics (Prometheus text) on a listener of its own, loopback by default (METRICS_HOST), so the
 * API port never exposes process internals and the scrape needs no route through the public balancer.
 * `serve` and `worker` both start it: a worker's delivery counters are only visible there. Anything else
 * is the contract's JSON 404 (405 for another method on /metrics).
 */
export async function startMetricsListener(metrics: Metrics, options: MetricsListenerOptions): Promise<MetricsListener> {
  const { logger } = options;
  // Compared as digests: constant time whatever the length of what was sent.
  const expected = options.token === null ? null : sha256Hex(options.token);

  let closing = false;
  // Once closing, a response ends its connection: a scraper's kept-alive socket would otherwise hold
  // close() open until its keep-alive timeout.
  const connection = (): Record<string, string> => (closing ? { connection: 'close' } : {});

  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return sendError(res, errors.notFound('route'), connection());
    if (req.method !== 'GET') return sendError(res, errors.methodNotAllowed(['GET']), connection());
    if (expected !== null) {
      const given = bearerToken(req.headers.authorization);
      if (given === null || !safeEqual(sha256Hex(given), expected)) {
        return sendError(res, errors.unauthorized('a valid metrics token is required: Authorization: Bearer <METRICS_TOKEN>'), connection());
      }
    }
    metrics.render().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store', ...connection() }).end(text),
      (err: unknown) => {
        logger.error({ err }, 'metrics: rendering failed');
        sendError(res, errors.internal(), connection());
      },
    );
  });
  // A client that is slow to send its (tiny) request must not hold a socket; a scraper may keep its
  // connection between scrapes (past a one-minute scrape interval, unlike Node's 5 s default).
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  server.keepAliveTimeout = 65_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => logger.error({ err }, 'metrics listener error'));

  const bound = server.address() as AddressInfo;
  const address = `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`;
  if (expected === null && !isLoopbackHost(options.host)) {
    logger.warn(
      { metricsAddress: address },
      'metrics: /metrics listens beyond loopback without METRICS_TOKEN; anyone who reaches this address can read it',
    );
  }

  let closed: Promise<void> | null = null;
  return {
    address,
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closed;
    },
  };
}
