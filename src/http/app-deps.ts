import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { StripeBilling } from '../billing/stripe-billing.js';
import type { Config } from '../config.js';
import type { Metrics } from '../tracing/metrics.js';
import type { Clock } from '../lib/time.js';
import type { RateLimiter } from '../rate-limit/rate-limiter.js';
import type { Services } from '../services/index.js';
import type { Tracing } from '../tracing/tracing.js';

/**
 * What `buildApp` is given, and the app it returns: types only, in a module of their own so the routes,
 * hooks and dashboard pages that take them do not import app.ts, which imports them.
 */
export interface HealthChecks {
  database(): Promise<void>;
  /** This release's migrations the database lacks; any makes the instance not ready. */
  pendingMigrations(): Promise<readonly string[]>;
  /** 'disabled' without REDIS_URL; 'degraded' when configured but not answering. */
  redis(): Promise<'ok' | 'degraded' | 'disabled'>;
}

import type { AuthorizationServer } from '../oauth/authorization-server.js';

export interface AppDeps {
  config: Config;
  services: Services;
  rateLimiter: RateLimiter;
  health: HealthChecks;
  /** A pino logger; tests pass a silent one. */
  logger?: FastifyBaseLogger;
  /** Request metrics, served by the metrics listener (src/http/metrics.ts); the container always provides it. */
  metrics?: Metrics;
  /** The services' clock, for pages that prefill a time relative to now (the container provides it). */
  clock?: Clock;
  /** Set when Stripe is configured: its webhook route and the Billing page's customer portal. */
  stripe?: StripeBilling | null;
  /** The OAuth 2.1 authorization server (CONTRACT 17); without it /oauth, /mcp's OAuth and the consent page are absent. */
  authorizationServer?: AuthorizationServer;
  /** With tracing on, a span per request (registered before every route and hook). */
  tracing?: Tracing;
}

export type App = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
