import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import type { Config } from './config.js';
import { openDatabase, migrateToLatest, schemaStatus, type Database } from './db/database.js';
import { createStore, type Store } from './db/store.js';
import type { HealthChecks } from './http/app-deps.js';
import { createSignal, type Signal } from './lib/signal.js';
import { systemClock, type Clock } from './lib/time.js';
import { createMailer } from './mail/mailer.js';
import { createMemoryRateLimiter } from './rate-limit/memory-rate-limiter.js';
import { createSharedState } from './redis/shared-state.js';
import { createPgWakeRelay } from './db/pg-notify.js';
import { metricsRepository } from './db/repositories/metrics-repo.js';
import { createMetrics, type Metrics } from './tracing/metrics.js';
import type { RateLimiter } from './rate-limit/rate-limiter.js';
import { createAccountsService } from './services/identity/accounts-service.js';
import { createAdminService } from './services/members/admin-service.js';
import { createApiKeysService } from './services/identity/api-keys-service.js';
import { createAuditService } from './services/audit/audit-service.js';
import { createEventsService } from './services/events/events-service.js';
import { noopAuthEvents, type AuthEvents } from './db/auth-events.js';
import { createAuthService, type AuthService } from './services/identity/auth-service.js';
import { createCachedAuthService } from './services/identity/cached-auth-service.js';
import { createPgAuthEvents } from './db/pg-auth-events.js';
import { createSqliteAuthChanges } from './db/sqlite-auth-changes.js';
import { authChangesRepository } from './db/repositories/auth-changes-repo.js';
import { createIdempotencyService } from './services/shared/idempotency-service.js';
import type { Services } from './services/index.js';
import { createInvitationsService } from './services/identity/invitations-service.js';
import { createOrganizationsService } from './services/members/organizations-service.js';
import { createProjectsService } from './services/projects/projects-service.js';
import { createCollaboratorsService } from './services/projects/collaborators-service.js';
import { createSessionsService } from './services/identity/sessions-service.js';
import { createAccountSecurityService } from './services/identity/account-security-service.js';
import { createTwoStepService } from './services/identity/two-step-service.js';
import { createPasswordHasher, type PasswordKdf } from './services/identity/passwords.js';
import { webauthnRelyingParty } from './services/identity/webauthn.js';
import { createSsoService } from './services/identity/sso-service.js';
import { createOidcClient } from './sso/oidc-client.js';
import { createTxtLookup } from './sso/dns-txt.js';
import { createRunsService } from './services/workflows/runs-service.js';
import { createTasksService } from './services/workflows/tasks-service.js';
import { createUsersService } from './services/members/users-service.js';
import { createWebhooksService } from './services/webhooks/webhooks-service.js';
import { createDeliveriesService } from './services/webhooks/deliveries-service.js';
import { createReplayJobsService } from './services/webhooks/replay-jobs-service.js';
import { createDeliveryStatsService } from './services/webhooks/delivery-stats-service.js';
import { createUsageService } from './services/lifecycle/usage-service.js';
import { createWorkflowsService } from './services/workflows/workflows-service.js';
import { createLifecycleService } from './services/lifecycle/lifecycle-service.js';
import { createDeletionService } from './services/lifecycle/deletion-service.js';
import { createExportsService } from './services/lifecycle/exports-service.js';
import { createStripeBilling, type StripeApiOptions, type StripeBilling } from './billing/stripe-billing.js';
import { noTracing, type Tracing } from './tracing/tracing.js';
import { createSecretBox, type SecretBox } from './lib/secret-box.js';
import { eventExamples } from './schemas/events.js';
import { createWebhookHealthService } from './services/webhooks/webhook-health-service.js';
import { createScimSettingsService } from './services/provisioning/scim-settings-service.js';
import { createScimDirectoryService } from './services/provisioning/scim-directory-service.js';
import { createConnectedAppsService } from './services/apps/connected-apps-service.js';
import { lazyAuthorizationServer, type AuthorizationServer } from './oauth/authorization-server.js';

/**
 * The composition root: config in, every long-lived part out, wired by hand. `serve`, `worker`, the
 * CLI and the tests all build their world here, so they run the same code.
 */
export interface Container {
  config: Config;
  database: Database;
  store: Store;
  clock: Clock;
  services: Services;
  rateLimiter: RateLimiter;
  health: HealthChecks;
  logger: FastifyBaseLogger;
  /** Woken after a commit that created deliveries; the delivery worker subscribes. */
  waker: Signal;
  authEvents: AuthEvents;
  /** Prometheus metrics; the delivery worker reports attempts through `metrics.deliveryAttempt`. */
  metrics: Metrics;
  /** Set when STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are: the webhook route and the customer portal. */
  stripe: StripeBilling | null;
  /** OpenTelemetry when OTEL_EXPORTER_OTLP_ENDPOINT is set; otherwise `noTracing`, which costs nothing. */
  tracing: Tracing;
  /** Seals and opens webhook signing secrets (WEBHOOK_SECRETS_KEY); stores them as given without a key. */
  secretBox: SecretBox;
  /** The OAuth 2.1 authorization server of CONTRACT 17 (oidc-provider over the `oauth_*` tables). */
  authorizationServer: AuthorizationServer;
  close(): Promise<void>;
}

export interface ContainerOptions {
  /** Run migrations before returning (serve, worker, tests). */
  migrate?: boolean;
  clock?: Clock;
  logger?: FastifyBaseLogger;
  sqliteFile?: string;
  /** Where the Stripe client sends API calls (tests run a local stand-in); Stripe's own API by default. */
  stripeApi?: StripeApiOptions;
  /** Trusted CA(s) for identity providers, replacing Node's (tests with a self-signed provider). */
  outboundCa?: string | Buffer | (string | Buffer)[];
  /** The password key derivation (scrypt by default): a test wraps it to count what a sign-in costs. */
  passwordKdf?: PasswordKdf;
}

/** How long an instance may reuse a principal while it hears every change (docs/decisions.md). */
export const AUTH_CACHE_TTL_MS = 30_000;

export function createLogger(config: Config): FastifyBaseLogger {
  return pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.authorization', 'authorization'], censor: '[redacted]' },
  });
}

export async function createContainer(config: Config, options: ContainerOptions = {}): Promise<Container> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config);
  // The SDK is loaded only when tracing is configured: off, not one OpenTelemetry module is imported.
  const otel = config.tracing ? (await import('./tracing/otel.js')).createOtelTracing(config.tracing, logger) : null;
  const tracing: Tracing = otel ?? noTracing;
  const database = openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    sqliteFile: options.sqliteFile,
  });
  if (otel && database.pgPool && config.databaseUrl) {
    const url = new URL(config.databaseUrl);
    otel.instrumentPg(database.pgPool, { database: url.pathname.slice(1) || undefined, host: url.hostname, port: Number(url.port) || 5432 });
  }
  if (options.migrate) await migrateToLatest(database);
  // On PostgreSQL a wake also reaches workers in other processes (NOTIFY), so new events start at once.
  const pgWaker =
    database.pgPool && config.databaseUrl ? createPgWakeRelay({ pool: database.pgPool, connectionString: config.databaseUrl, logger }) : null;
  const waker: Signal = pgWaker ?? createSignal();
  const store = createStore(database, waker, otel ? () => otel.activeTraceparent() : undefined);
  // Principals are cached in every mode; what tells the cache about changes differs (docs/decisions.md,
  // "Issue 11"): on SQLite the change counter every process shares through the file (Redis or not); on
  // PostgreSQL Redis pub/sub when REDIS_URL is set, otherwise LISTEN/NOTIFY. Each announces a change before
  // the response of the request that made it.
  const sqliteChanges = database.dialect === 'sqlite' && database.direct ? createSqliteAuthChanges(authChangesRepository(database.direct), logger) : null;
  // REDIS_URL: shared rate limits (and, on PostgreSQL, the cache's invalidations); without it, per-process limits.
  const shared = config.redisUrl
    ? createSharedState({ ...config, redisUrl: config.redisUrl }, logger, clock, { authInvalidation: sqliteChanges === null })
    : null;
  // Start shared when Redis answers promptly, rather than logging a fallback for the first requests.
  await shared?.waitReady(2000);
  const pgAuthEvents =
    !sqliteChanges && !shared?.authEvents && database.pgPool && config.databaseUrl
      ? createPgAuthEvents({ pool: database.pgPool, connectionString: config.databaseUrl, logger })
      : null;
  const authEvents: AuthEvents = shared?.authEvents ?? pgAuthEvents ?? noopAuthEvents;
  const authSource = sqliteChanges ?? shared?.authEvents ?? pgAuthEvents;
  const lookup = createAuthService(store);
  const auth: AuthService = authSource ? createCachedAuthService(lookup, authSource, { ttlMs: AUTH_CACHE_TTL_MS }) : lookup;
  const rateLimiter: RateLimiter = shared?.rateLimiter ?? createMemoryRateLimiter(clock);

  const mailer = createMailer(config);
  const secretBox = createSecretBox(config.webhookSecretsKeys);

  const apiKeys = createApiKeysService({
    store,
    clock,
    authEvents,
    onTouchError: (err) => logger.warn({ err: (err as Error).message }, 'could not record when an API key was last used'),
    notices: { mailer, publicBaseUrl: config.publicBaseUrl, log: logger },
  });
  const usage = createUsageService({
    store,
    clock,
    onFlushError: (err) => logger.warn({ err: (err as Error).message }, 'could not record API request counts'),
  });
  const sessions = createSessionsService({ store, clock });
  const relyingParty = webauthnRelyingParty(config.publicBaseUrl);
  const oidc = createOidcClient({ allowPrivateNetworks: config.ssoAllowPrivateNetworks, ...(options.outboundCa !== undefined ? { ca: options.outboundCa } : {}) });
  const passwords = createPasswordHasher({ store, ...(options.passwordKdf ? { kdf: options.passwordKdf } : {}) });
  const invitations = createInvitationsService({ store, clock, authEvents, passwords });
  const lifecycle = createLifecycleService({ store, clock, authEvents, mailer, publicBaseUrl: config.publicBaseUrl, log: logger });
  const users = createUsersService({ store, clock, authEvents, mailer, publicBaseUrl: config.publicBaseUrl, log: logger });
  const scimBaseUrl = `${config.publicBaseUrl}/scim/v2`;
  const connectedApps = createConnectedAppsService({
    store,
    clock,
    authEvents,
    onTouchError: (err) => logger.warn({ err: (err as Error).message }, 'could not record when a connected app was last used'),
  });
  const services: Services = {
    admin: createAdminService({ store, clock, authEvents, apiKeys }),
    apiKeys,
    auth,
    idempotency: createIdempotencyService({ store, clock, box: secretBox }),
    projects: createProjectsService({ store, clock }),
    collaborators: createCollaboratorsService({ store, clock }),
    users,
    invitations,
    webhooks: createWebhooksService({ store, clock, allowPrivateNetworks: config.webhookAllowPrivateNetworks, secrets: secretBox, eventExamples: eventExamples() }),
    webhookHealth: createWebhookHealthService({ store, clock, mailer, publicBaseUrl: config.publicBaseUrl, log: logger, disableAfterMs: config.webhookDisableAfterMs }),
    deliveries: createDeliveriesService({ store, clock }),
    replayJobs: createReplayJobsService({ store, clock }),
    workflows: createWorkflowsService({ store, clock, limits: { maxSteps: config.workflowMaxSteps, maxActiveRuns: config.workflowMaxActiveRuns } }),
    tasks: createTasksService({ store, clock }),
    runs: createRunsService({ store, clock }),
    audit: createAuditService({ store, clock, retentionMs: config.auditRetentionDays * 86_400_000 }),
    events: createEventsService({ store, clock, retentionMs: config.eventRetentionMs }),
    sessions,
    organizations: createOrganizationsService({ store }),
    deliveryStats: createDeliveryStatsService({ store, clock }),
    usage,
    lifecycle,
    deletion: createDeletionService({ store, clock, mailer, authEvents, publicBaseUrl: config.publicBaseUrl, log: logger }),
    exports: createExportsService({ store, clock, mailer, publicBaseUrl: config.publicBaseUrl, log: logger }),
    scimSettings: createScimSettingsService({ store, clock, authEvents, baseUrl: scimBaseUrl }),
    scimDirectory: createScimDirectoryService({ store, clock, authEvents, users, baseUrl: scimBaseUrl }),
    connectedApps,
    accounts: createAccountsService({ store, clock, sessions, invitations, passwords, mailer, rateLimiter, publicBaseUrl: config.publicBaseUrl, log: logger }),
    accountSecurity: createAccountSecurityService({ store, clock, box: secretBox, mailer, relyingParty, publicBaseUrl: config.publicBaseUrl, log: logger }),
    sso: createSsoService({ store, clock, box: secretBox, oidc, txt: createTxtLookup(config.dnsServers), sessions, rateLimiter, mailer, authEvents, publicBaseUrl: config.publicBaseUrl, log: logger }),
    twoStep: createTwoStepService({ store, clock, box: secretBox, sessions, rateLimiter, mailer, relyingParty, passwords, publicBaseUrl: config.publicBaseUrl, log: logger }),
  };

  const metricsRepo = metricsRepository({ db: database.db, dialect: database.dialect });
  const metrics = createMetrics({
    deliveryStats: () => metricsRepo.deliveryStats(),
    now: () => clock.now(),
    onCollectError: (err) => logger.warn({ err: (err as Error).message }, 'metrics: could not read delivery statistics'),
  });

  const stripe = config.stripe ? createStripeBilling({ config: config.stripe, store, clock, lifecycle, api: options.stripeApi }) : null;

  const health: HealthChecks = {
    database: () => database.ping(),
    pendingMigrations: async () => (await schemaStatus(database)).pending,
    redis: async () => (shared ? shared.health() : 'disabled'),
  };

  return {
    config,
    database,
    store,
    clock,
    services,
    rateLimiter,
    health,
    logger,
    waker,
    authEvents,
    metrics,
    stripe,
    tracing,
    secretBox,
    authorizationServer: lazyAuthorizationServer({
      config,
      store,
      secretBox,
      // oidc-provider reads the system clock for every expiry; its storage must agree with it.
      now: Date.now,
      grantEnded: (grantId) => connectedApps.grantEnded(grantId),
      activeUser: (userId) => connectedApps.activeUser(userId),
      logError: (err, message) => logger.error({ err }, message),
    }),
    async close() {
      mailer.close();
      await oidc.close();
      await apiKeys.flush();
      await connectedApps.flush();
      await usage.close();
      await (shared ? shared.close() : rateLimiter.close());
      await pgAuthEvents?.close();
      await pgWaker?.close();
      await database.close();
      // Last: the spans of everything above (the final requests, deliveries and queries) are exported.
      await tracing.shutdown();
    },
  };
}
