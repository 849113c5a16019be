import type { FastifyPluginAsync } from 'fastify';

/** Span attributes as OpenTelemetry takes them. */
export type SpanAttributes = Record<string, string | number | boolean>;

export interface SpanScope {
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span as failed (status ERROR) with a short reason. */
  fail(reason: string): void;
  /** This span as a W3C `traceparent`, for a request it makes downstream; null when not traced. */
  readonly traceparent: string | null;
}

export interface SpanOptions {
  kind?: 'internal' | 'client' | 'server';
  /** A stored `traceparent` to continue (an event's, for its deliveries); otherwise the active span's child. */
  parent?: string | null;
  attributes?: SpanAttributes;
}

/**
 * What the service sees of tracing (docs/deployment.md, "Traces"). Off by default: `noTracing` does nothing
 * and allocates nothing per call, and the OpenTelemetry SDK is not even loaded (src/tracing/otel.ts is
 * imported by the composition root only when OTEL_EXPORTER_OTLP_ENDPOINT is set).
 */
export interface Tracing {
  readonly enabled: boolean;
  /** The active span as a `traceparent`, stored with an event so that its deliveries continue the trace. */
  activeTraceparent(): string | null;
  /** Runs `work` in a new span that ends when it settles (failed if it throws). */
  span<T>(name: string, options: SpanOptions, work: (span: SpanScope) => Promise<T>): Promise<T>;
  /** Opens a span per HTTP request (`@fastify/otel`), honouring an incoming `traceparent`; null when off. */
  readonly fastifyPlugin: FastifyPluginAsync | null;
  /** Exports the spans still buffered; called last at shutdown. */
  shutdown(): Promise<void>;
}

const NO_SPAN: SpanScope = { setAttributes() {}, fail() {}, traceparent: null };

export const noTracing: Tracing = {
  enabled: false,
  activeTraceparent: () => null,
  span: (_name, _options, work) => work(NO_SPAN),
  fastifyPlugin: null,
  shutdown: async () => {},
};

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A W3C `traceparent` (version 00) split into its parts; null when malformed or all-zero. */
export function parseTraceparent(value: string | null | undefined): { traceId: string; spanId: string; flags: number } | null {
  const match = value ? TRACEPARENT.exec(value) : null;
  if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return null;
  return { traceId: match[1]!, spanId: match[2]!, flags: parseInt(match[3]!, 16) };
}

export function formatTraceparent(traceId: string, spanId: string, flags: number): string {
  return `00-${traceId}-${spanId}-${(flags & 0xff).toString(16).padStart(2, '0')}`;
}
