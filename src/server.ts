import type { FastifyBaseLogger } from 'fastify';
import { ConfigError, type Config } from './config.js';
import { createContainer, type Container } from './container.js';
import { migrateToLatest, schemaStatus, SchemaBehindError } from './db/database.js';
import { startDeliveryWorker, type RunningWorker } from './worker/index.js';
import { prepareSecretsAtRest } from './db/maintenance/secrets-at-rest.js';
import { createInstancePresence, type InstancePresence } from './services/shared/instances-service.js';
import { buildApp, type App } from './app.js';
import { startMetricsListener, type MetricsListener } from './http/metrics.js';

/** A running process part (API + worker, or worker alone) that can be shut down once. */
export interface Running {
  readonly container: Container;
  /** Where GET /metrics is served, e.g. `http://127.0.0.1:9464`; null when METRICS_PORT=off. */
  readonly metricsAddress: string | null;
  /** Idempotent: the second call returns the first call's promise. */
  close(): Promise<void>;
}

export interface RunningServer extends Running {
  readonly app: App;
  /** The address the API listens on, e.g. `http://127.0.0.1:3000` (the real port when PORT=0). */
  readonly address: string;
}

export interface StartOptions {
  logger?: FastifyBaseLogger;
}

/**
 * Opens the container and applies pending migrations (MIGRATE_ON_START, the default), or only checks that
 * none is pending (MIGRATE_ON_START=false: the schema is migrated by a separate `workspace migrate` step);
 * closes the container again if either fails.
 */
async function openMigrated(config: Config, options: StartOptions): Promise<Container> {
  const container = await createContainer(config, { logger: options.logger });
  try {
    const { dialect } = container.database;
    const status = await schemaStatus(container.database);
    if (config.migrateOnStart) {
      const applied = await migrateToLatest(container.database, status);
      container.logger.info({ applied, dialect }, applied.length ? 'migrations applied' : 'schema up to date');
    } else {
      if (status.pending.length > 0) throw new SchemaBehindError(status.pending);
      container.logger.info({ dialect }, 'schema up to date (MIGRATE_ON_START=false: not migrating)');
    }
    if (status.newer.length > 0) {
      container.logger.warn({ newer: status.newer }, 'the schema was migrated by a newer release; running on it (migrations only add)');
    }
    await prepareSecretsAtRest({ store: container.store, database: container.database, box: container.secretBox, log: container.logger });
    return container;
  } catch (err) {
    await container.close().catch(() => {});
    throw err;
  }
}

/**
 * A listen that failed because the address is taken names the setting to change: two processes on one host
 * (serve + worker, two serve) collide on a port, and `EADDRINUSE` alone does not say whose.
 */
function explainListenError(err: unknown, variable: 'PORT' | 'METRICS_PORT', host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'EADDRINUSE') {
    return new ConfigError(
      variable,
      `is ${port}, but ${host}:${port} is already in use by another process; give each serve and worker on this host its own ${variable}` +
        (variable === 'METRICS_PORT' ? ' (0 picks a free port, off opens no metrics listener)' : ''),
    );
  }
  if (code === 'EACCES' || code === 'EADDRNOTAVAIL') return new ConfigError(variable, `is ${port}, but this process cannot listen on ${host}:${port} (${code})`);
  return err;
}

/** The separate /metrics listener (src/http/metrics.ts), or null when METRICS_PORT=off. */
async function openMetrics(config: Config, container: Container): Promise<MetricsListener | null> {
  if (config.metricsPort === null) return null;
  try {
    return await startMetricsListener(container.metrics, {
      port: config.metricsPort,
      host: config.metricsHost,
      token: config.metricsToken,
      logger: container.logger,
    });
  } catch (err) {
    throw explainListenError(err, 'METRICS_PORT', config.metricsHost, config.metricsPort);
  }
}

function once(work: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | null = null;
  return () => (running ??= work());
}

/**
 * `serve`: migrate, listen (the API, and /metrics on its own listener), and run the delivery worker in the
 * same process. `close()` stops accepting connections and waits for in-flight requests (app.close) and
 * scrapes, stops the worker, then closes the database.
 */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const container = await openMigrated(config, options);
  let app: App | null = null;
  let metrics: MetricsListener | null = null;
  let worker: RunningWorker | null = null;
  let presence: InstancePresence | null = null;
  try {
    app = await buildApp(container);
    const address = await app.listen({ port: config.port, host: config.host }).catch((err: unknown) => {
      throw explainListenError(err, 'PORT', config.host, config.port);
    });
    metrics = await openMetrics(config, container);
    worker = await startDeliveryWorker(container);
    // Sign-ins are taken here: another `serve` on this database without shared limits is said at start.
    presence = createInstancePresence({ store: container.store, clock: container.clock, sharedLimits: config.redisUrl !== null, log: container.logger });
    await presence.start();
    const metricsAddress = metrics?.address ?? null;
    container.logger.info({ address, metricsAddress }, 'ready: API and delivery worker running');
    const readyApp = app;
    const readyMetrics = metrics;
    const readyWorker = worker;
    const readyPresence = presence;
    return {
      container,
      app: readyApp,
      address,
      metricsAddress,
      close: once(async () => {
        // Requests, scrapes and deliveries drain side by side; the database closes only after all three.
        await Promise.allSettled([readyApp.close(), readyMetrics?.close(), readyWorker.stop()]);
        await readyPresence.stop();
        await container.close();
      }),
    };
  } catch (err) {
    await presence?.stop().catch(() => {});
    await worker?.stop().catch(() => {});
    await metrics?.close().catch(() => {});
    await app?.close().catch(() => {});
    await container.close().catch(() => {});
    throw err;
  }
}

/** `worker`: migrate, then run only the delivery worker (and /metrics: its delivery counters live here). */
export async function startWorker(config: Config, options: StartOptions = {}): Promise<Running> {
  const container = await openMigrated(config, options);
  let metrics: MetricsListener | null = null;
  let worker: RunningWorker;
  try {
    metrics = await openMetrics(config, container);
    worker = await startDeliveryWorker(container);
  } catch (err) {
    await metrics?.close().catch(() => {});
    await container.close().catch(() => {});
    throw err;
  }
  const metricsAddress = metrics?.address ?? null;
  container.logger.info({ metricsAddress }, 'ready: delivery worker running');
  const readyMetrics = metrics;
  return {
    container,
    metricsAddress,
    close: once(async () => {
      // As before the listener existed: a worker that fails to stop fails the shutdown (exit 1).
      await Promise.all([worker.stop(), readyMetrics?.close()]);
      await container.close();
    }),
  };
}

/**
 * Waits for SIGTERM or SIGINT, then shuts `running` down gracefully and resolves with the exit code
 * (0 after a clean stop). A second signal, or a shutdown past SHUTDOWN_TIMEOUT, exits at once with 1.
 */
export function untilSignal(running: Running): Promise<number> {
  const { logger } = running.container;
  const deadlineMs = running.container.config.shutdownTimeoutMs;
  return new Promise((resolve) => {
    // Signal listeners do not keep Node alive, and a worker may have nothing else pending between polls.
    const keepAlive = setInterval(() => {}, 1 << 30);
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        logger.warn({ signal }, 'second signal during shutdown: exiting now');
        process.exit(1);
      }
      stopping = true;
      logger.info({ signal }, 'shutting down');
      const deadline = setTimeout(() => {
        logger.error({ deadlineMs }, 'shutdown did not finish in time: exiting');
        process.exit(1);
      }, deadlineMs);
      deadline.unref();
      running.close().then(
        () => {
          clearTimeout(deadline);
          clearInterval(keepAlive);
          process.off('SIGTERM', onSignal);
          process.off('SIGINT', onSignal);
          logger.info('stopped');
          resolve(0);
          // Anything another part left running (a stray timer or socket) must not keep a stopped process alive.
          setTimeout(() => process.exit(0), 2000).unref();
        },
        (err: unknown) => {
          clearTimeout(deadline);
          clearInterval(keepAlive);
          logger.error({ err }, 'shutdown failed');
          resolve(1);
          setTimeout(() => process.exit(1), 2000).unref();
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
