import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { createLogThrottle } from '../lib/log-throttle.js';
import { reconnectSchedule } from '../lib/reconnect.js';
import { createSignal, type Signal } from '../lib/signal.js';

export const WAKE_CHANNEL = 'workspace_delivery_wake';

export interface PgWakeRelay extends Signal {
  /** True while the LISTEN connection is up (tests, diagnostics). */
  listening(): boolean;
  close(): Promise<void>;
}

export interface PgWakeRelayOptions {
  /** Sends NOTIFY (any pooled connection will do). */
  pool: pg.Pool;
  /** For the dedicated LISTEN connection: a pooled one would be handed to other queries. */
  connectionString: string;
  logger: FastifyBaseLogger;
  channel?: string;
}

/**
 * The container's wake signal on PostgreSQL: `wake()` wakes this process at once and NOTIFYs every other
 * process on the database, each of which LISTENs on its own connection and wakes its local subscribers.
 * The LISTEN connection opens only when something subscribes (a delivery worker), reconnects with backoff
 * after loss, and wakes subscribers on reconnect because notifications sent meanwhile are lost. Workers
 * still poll, so a lost notification delays a delivery; it never loses one.
 */
export function createPgWakeRelay({ pool, connectionString, logger, channel = WAKE_CHANNEL }: PgWakeRelayOptions): PgWakeRelay {
  const local = createSignal();
  const self = randomBytes(8).toString('hex');
  const throttle = createLogThrottle(10_000);
  let listener: pg.Client | null = null;
  let listening = false;
  let started = false;
  let closed = false;
  const reconnect = reconnectSchedule(() => void connect());
  // NOTIFYs coalesce: while one is being sent, further wakes collapse into one more.
  let sending = false;
  let again = false;

  function warn(topic: string, err: unknown, msg: string): void {
    const suppressed = throttle.shouldLog(topic);
    if (suppressed !== null) logger.warn({ err: (err as Error)?.message, suppressed }, msg);
  }

  async function notify(): Promise<void> {
    if (sending) {
      again = true;
      return;
    }
    sending = true;
    try {
      do {
        again = false;
        await pool.query('select pg_notify($1, $2)', [channel, self]);
      } while (again && !closed);
    } catch (err) {
      warn('notify', err, 'could not NOTIFY other processes of new deliveries; their workers will find them on their next poll');
    } finally {
      sending = false;
    }
  }

  async function connect(): Promise<void> {
    if (closed) return;
    const client = new pg.Client({ connectionString, connectionTimeoutMillis: 2000, keepAlive: true });
    listener = client;
    const lost = (err?: unknown) => {
      if (listener !== client) return;
      listener = null;
      if (listening) logger.warn({ err: (err as Error | undefined)?.message }, 'delivery wake-up LISTEN connection lost; reconnecting');
      listening = false;
      client.removeAllListeners();
      client.on('error', () => {});
      client.end().catch(() => {});
      reconnect.schedule();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (message) => {
      if (message.channel === channel && message.payload !== self) local.wake();
    });
    try {
      await client.connect();
      await client.query(`listen ${channel}`);
      if (closed || listener !== client) {
        await client.end().catch(() => {});
        return;
      }
      listening = true;
      reconnect.succeeded();
      throttle.reset('listen');
      // Notifications sent while we were not listening are gone: look for work now.
      local.wake();
    } catch (err) {
      warn('listen', err, 'could not LISTEN for delivery wake-ups; retrying');
      lost(err);
    }
  }

  return {
    wake() {
      local.wake();
      if (!closed) void notify();
    },
    subscribe(fn) {
      if (!started && !closed) {
        started = true;
        void connect();
      }
      return local.subscribe(fn);
    },
    listening: () => listening,
    async close() {
      closed = true;
      reconnect.cancel();
      const client = listener;
      listener = null;
      listening = false;
      if (client) {
        client.removeAllListeners();
        client.on('error', () => {});
        await client.end().catch(() => {});
      }
    },
  };
}
