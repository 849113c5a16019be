import { createRequire } from 'node:module';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import {
  context,
  diag,
  DiagLogLevel,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  defaultTextMapGetter,
  type Context,
  type Span,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify';
import type pg from 'pg';
import type { TracingConfig } from '../config.js';
import { formatTraceparent, type SpanOptions, type SpanScope, type Tracing } from './tracing.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

const KINDS = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT, server: SpanKind.SERVER } as const;

/** Longest SQL text kept on a query span: statements are parameterised, so no values are in it. */
const MAX_QUERY_TEXT = 2000;

export interface OtelTracing extends Tracing {
  /** Wraps a PostgreSQL pool's connections so each query inside a traced operation gets a span. */
  instrumentPg(pool: pg.Pool, target: { database?: string; host?: string; port?: number }): void;
}

let globalsInstalled = false;

/**
 * The process-wide parts OpenTelemetry's API reads from globals: the async context (so a span started in a
 * request is the parent of the queries it makes), the W3C propagator (`traceparent` in and out), and the
 * SDK's own diagnostics routed to our log at warn (a collector that refuses spans is worth a line).
 * Installed once; each tracer provider stays the caller's own (tests build several).
 */
function installGlobals(logger: FastifyBaseLogger): void {
  if (globalsInstalled) return;
  globalsInstalled = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const log = (message: string, ...args: unknown[]) => logger.warn({ otel: args.length ? args.map(String).join(' ') : undefined }, `tracing: ${message}`);
  diag.setLogger({ error: log, warn: log, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN);
}

function sampler(config: TracingConfig): Sampler {
  const root = config.sampleRatio >= 1 ? new AlwaysOnSampler() : config.sampleRatio <= 0 ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(config.sampleRatio);
  return config.parentBased ? new ParentBasedSampler({ root }) : root;
}

function traceparentOf(span: Span): string | null {
  const sc = span.spanContext();
  return isSpanContextValid(sc) ? formatTraceparent(sc.traceId, sc.spanId, sc.traceFlags) : null;
}

const w3c = new W3CTraceContextPropagator();

/** A stored `traceparent` as a parent context; the root context when it is malformed. */
function contextOf(traceparent: string): Context {
  return w3c.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `SELECT`, `INSERT`, … : the operation a statement names, for the span's name (never its values). */
function operationOf(text: string): string {
  const match = /^\s*(?:with\b[\s\S]*?\)\s*)?([a-z]+)/i.exec(text);
  return match ? match[1]!.toUpperCase() : 'QUERY';
}

export function createOtelTracing(config: TracingConfig, logger: FastifyBaseLogger): OtelTracing {
  installGlobals(logger);
  const Exporter = config.protocol === 'http/json' ? OtlpJsonExporter : OtlpProtobufExporter;
  const exporter = new Exporter({ url: config.tracesUrl, headers: { ...config.headers }, timeoutMillis: config.exportTimeoutMs });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': version, ...config.resourceAttributes }),
    sampler: sampler(config),
    // Spans leave in batches, off the request path; a full queue drops spans rather than holding memory.
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000, maxQueueSize: 4096, maxExportBatchSize: 512 })],
  });
  const tracer = provider.getTracer('workspace-service', version);

  const instrumentation = new FastifyOtelInstrumentation({
    // One span per request: none per hook or for the handler inside it, which would double the spans of
    // every request for no more information (the request span is the active context throughout).
    instrumentHooks: false,
    instrumentHandler: false,
    // Probes every few seconds would drown the requests people look for.
    ignorePaths: (route: { url?: string }) => route.url === '/healthz' || route.url === '/readyz',
    requestHook: (span: Span, request: { method: string; routeOptions: { url?: string } }) => {
      span.updateName(`${request.method} ${request.routeOptions.url ?? 'unmatched'}`);
    },
  });
  instrumentation.setTracerProvider(provider);

  return {
    enabled: true,
    fastifyPlugin: instrumentation.plugin() as unknown as FastifyPluginAsync,

    activeTraceparent() {
      const span = trace.getSpan(context.active());
      return span ? traceparentOf(span) : null;
    },

    span<T>(name: string, options: SpanOptions, work: (span: SpanScope) => Promise<T>): Promise<T> {
      const parent = options.parent ? contextOf(options.parent) : context.active();
      const span = tracer.startSpan(name, { kind: KINDS[options.kind ?? 'internal'], attributes: options.attributes }, parent);
      const scope: SpanScope = {
        setAttributes: (attributes) => void span.setAttributes(attributes),
        fail: (reason) => void span.setStatus({ code: SpanStatusCode.ERROR, message: reason }),
        traceparent: traceparentOf(span),
      };
      return context.with(trace.setSpan(parent, span), () => work(scope)).then(
        (value) => {
          span.end();
          return value;
        },
        (err: unknown) => {
          span.recordException(err instanceof Error ? err : new Error(String(err)));
          span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(err) });
          span.end();
          throw err;
        },
      );
    },

    instrumentPg(pool, target) {
      const attributes = {
        'db.system.name': 'postgresql',
        ...(target.database ? { 'db.namespace': target.database } : {}),
        ...(target.host ? { 'server.address': target.host } : {}),
        ...(target.port ? { 'server.port': target.port } : {}),
      };
      pool.on('connect', (client) => {
        const original = client.query as (...args: unknown[]) => unknown;
        (client as { query: unknown }).query = function tracedQuery(this: unknown, ...args: unknown[]): unknown {
          const first = args[0] as string | { text?: unknown } | undefined;
          const text = typeof first === 'string' ? first : typeof first?.text === 'string' ? first.text : null;
          // Only inside a traced operation (a request, a delivery, a run step): the worker's polls and the
          // listeners' heartbeats outside one would each become a trace of their own.
          // A parent that is not recording (a trace sampled out) makes its queries free too.
          if (text === null || !trace.getSpan(context.active())?.isRecording()) return original.apply(this, args);
          const operation = operationOf(text);
          const span = tracer.startSpan(operation, {
            kind: SpanKind.CLIENT,
            attributes: { ...attributes, 'db.operation.name': operation, 'db.query.text': text.length > MAX_QUERY_TEXT ? `${text.slice(0, MAX_QUERY_TEXT)}…` : text },
          });
          const end = (err?: unknown) => {
            if (err) span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(err) });
            span.end();
          };
          const last = args[args.length - 1];
          if (typeof last === 'function') {
            args[args.length - 1] = (err: unknown, result: unknown) => {
              end(err);
              return (last as (e: unknown, r: unknown) => unknown)(err, result);
            };
            return original.apply(this, args);
          }
          try {
            const result = original.apply(this, args) as { then?: unknown } | undefined;
            if (result && typeof result.then === 'function') {
              return (result as Promise<unknown>).then(
                (value) => {
                  end();
                  return value;
                },
                (err: unknown) => {
                  end(err);
                  throw err;
                },
              );
            }
            end();
            return result;
          } catch (err) {
            end(err);
            throw err;
          }
        };
      });
    },

    async shutdown() {
      try {
        await provider.shutdown();
      } catch (err) {
        logger.warn({ err: errorMessage(err) }, 'tracing: spans could not be exported at shutdown');
      }
    },
  };
}
