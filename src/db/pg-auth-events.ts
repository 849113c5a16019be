import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { AUTH_CHANNEL } from './migrations/008-auth-changes.js';
import { createLogThrottle } from '../lib/log-throttle.js';
import { reconnectSchedule } from '../lib/reconnect.js';
import type { AuthEvents, AuthInvalidation, AuthInvalidationSource } from './auth-events.js';
import { createAcks, createReadiness } from './invalidation-acks.js';

/** The LISTEN connections' application_name: publishers count them in pg_stat_activity. */
export const AUTH_LISTENER_NAME = 'workspace-auth-listener';

export interface PgAuthEvents extends AuthEvents, AuthInvalidationSource {
  close(): Promise<void>;
}

export interface PgAuthEventsOptions {
  /** Sends the barrier (any pooled connection will do). */
  pool: pg.Pool;
  /** For the dedicated LISTEN connection. */
  connectionString: string;
  logger: FastifyBaseLogger;
  /** How long a publisher waits for every listening process to confirm. */
  ackTimeoutMs?: number;
  /** How often the LISTEN connection proves it is alive; a silent one stops being trusted within this plus the timeout. */
  heartbeatMs?: number;
  heartbeatTimeoutMs?: number;
}

interface SyncMessage {
  from?: string;
  msg?: string;
  kind?: string;
  id?: string;
}

/**
 * Invalidations over PostgreSQL LISTEN/NOTIFY, for PostgreSQL without Redis. The triggers of migration 008
 * send a NOTIFY naming the key, user or organisation in the changing transaction itself, so every change is
 * announced at its commit, whoever makes it. Each process LISTENs on a dedicated connection, opened on first
 * use, and trusts its cache only while that connection is up and answers a heartbeat; when it is lost the
 * cache is dropped and bypassed, and it starts empty once LISTEN is back (notifications sent meanwhile are lost).
 *
 * The change's response must not go out before every instance has applied it, and a NOTIFY being committed
 * does not mean it was received, so `keyRevoked`/`userChanged`/`orgChanged` (called after the commit) are a
 * barrier: one statement sends a sync message on the same channel and counts the listening connections
 * (by application_name, set only after LISTEN succeeded); PostgreSQL delivers notifications in commit order,
 * so a listener that has seen the sync has seen the trigger's notification, and it answers on the
 * publisher's own ack channel. The call resolves when every counted listener answered, or after
 * `ackTimeoutMs` (logged). The sync message names the change too, so it also works for a change no
 * trigger covers.
 */
export function createPgAuthEvents({
  pool,
  connectionString,
  logger,
  ackTimeoutMs = 2000,
  heartbeatMs = 5000,
  heartbeatTimeoutMs = 2000,
}: PgAuthEventsOptions): PgAuthEvents {
  const instance = randomBytes(8).toString('hex');
  const ackChannel = `${AUTH_CHANNEL}_ack_${instance}`;
  const listeners = new Set<(invalidation: AuthInvalidation) => void>();
  const acks = createAcks();
  const readiness = createReadiness();
  const throttle = createLogThrottle(10_000);
  let client: pg.Client | null = null;
  let listening = false;
  let started = false;
  let closed = false;
  const reconnect = reconnectSchedule(() => void connect());
  let heartbeat: NodeJS.Timeout | null = null;

  function emit(invalidation: AuthInvalidation): void {
    for (const listener of listeners) listener(invalidation);
  }

  function start(): void {
    if (started || closed) return;
    started = true;
    void connect();
  }

  function drop(current: pg.Client, err?: unknown): void {
    if (client !== current) return;
    client = null;
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = null;
    if (listening) {
      listening = false;
      emit({ kind: 'reset' });
      logger.error({ err: (err as Error | undefined)?.message }, 'auth invalidation channel (PostgreSQL LISTEN) lost: API keys are read from the database on every request until it returns');
    }
    current.removeAllListeners();
    current.on('error', () => {});
    current.end().catch(() => {});
    reconnect.schedule();
  }

  function onNotification(current: pg.Client, message: pg.Notification): void {
    const payload = message.payload ?? '';
    if (message.channel === ackChannel) return acks.received(payload);
    if (message.channel !== AUTH_CHANNEL) return;
    const kind = payload.slice(0, 2);
    const id = payload.slice(2);
    if (kind === 'k:') emit({ kind: 'key', keyId: id });
    else if (kind === 'u:') emit({ kind: 'user', userId: id });
    else if (kind === 'o:') emit({ kind: 'org', orgId: id });
    else if (kind === 's:') {
      let sync: SyncMessage = {};
      try {
        sync = JSON.parse(id) as SyncMessage;
      } catch {
        emit({ kind: 'reset' });
      }
      if (sync.kind === 'key' && sync.id) emit({ kind: 'key', keyId: sync.id });
      else if (sync.kind === 'user' && sync.id) emit({ kind: 'user', userId: sync.id });
      else if (sync.kind === 'org' && sync.id) emit({ kind: 'org', orgId: sync.id });
      // Acknowledge only after the entries are gone from this process's cache.
      if (sync.from && sync.msg && /^[0-9a-f]{16}$/.test(sync.from)) {
        current.query('select pg_notify($1, $2)', [`${AUTH_CHANNEL}_ack_${sync.from}`, sync.msg]).catch((err: Error) => {
          logger.error({ err: err.message }, 'could not acknowledge an auth invalidation');
        });
      }
    } else emit({ kind: 'reset' });
  }

  async function connect(): Promise<void> {
    if (closed) return;
    const current = new pg.Client({ connectionString, connectionTimeoutMillis: 2000, keepAlive: true });
    client = current;
    current.on('error', (err) => drop(current, err));
    current.on('end', () => drop(current));
    current.on('notification', (message) => onNotification(current, message));
    try {
      await current.connect();
      await current.query(`LISTEN ${AUTH_CHANNEL}`);
      await current.query(`LISTEN ${ackChannel}`);
      // Named only now: a publisher counts this connection once it is sure to hear every later NOTIFY.
      await current.query(`SET application_name = '${AUTH_LISTENER_NAME}'`);
      if (closed || client !== current) {
        await current.end().catch(() => {});
        return;
      }
      // Anything sent while we were not listening is lost: start from an empty cache.
      emit({ kind: 'reset' });
      listening = true;
      reconnect.succeeded();
      throttle.reset('listen');
      heartbeat = setInterval(() => void beat(current), heartbeatMs);
      heartbeat.unref();
      readiness.release();
    } catch (err) {
      const suppressed = throttle.shouldLog('listen');
      if (suppressed !== null) logger.warn({ err: (err as Error).message, suppressed }, 'could not LISTEN for auth invalidations; retrying');
      drop(current, err);
    }
  }

  async function beat(current: pg.Client): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer to the heartbeat within ${heartbeatTimeoutMs} ms`)), heartbeatTimeoutMs);
    });
    try {
      await Promise.race([current.query('select 1'), timedOut]);
    } catch (err) {
      drop(current, err);
    } finally {
      clearTimeout(timer);
    }
  }

  async function publish(kind: 'key' | 'user' | 'org', id: string): Promise<void> {
    if (closed) return;
    // A short-lived process (the CLI, a worker's first deletion) opens its LISTEN now: acks come through it.
    // Only that first time is it worth waiting for; a LISTEN that is down since is being retried.
    const opening = !started;
    start();
    if (opening) await readiness.wait(listening, 1000);
    const msg = randomBytes(8).toString('hex');
    const waiting = listening;
    const ack = acks.open(msg, waiting);
    const payload = `s:${JSON.stringify({ from: waiting ? instance : undefined, msg, kind, id })}`;
    try {
      const result = await pool.query<{ listeners: number }>(
        `select pg_notify($1, $2), (select count(*)::int from pg_stat_activity where datname = current_database() and application_name = $3) as listeners`,
        [AUTH_CHANNEL, payload, AUTH_LISTENER_NAME],
      );
      if (!waiting) {
        logger.warn({ kind, id }, 'auth invalidation sent without waiting for other processes: this process could not LISTEN for their answers');
        return;
      }
      const expected = result.rows[0]!.listeners;
      const received = await ack.wait(expected, ackTimeoutMs);
      if (received < expected && !closed) {
        logger.warn({ kind, id, expected, received }, 'not every process acknowledged an auth invalidation in time');
      }
    } catch (err) {
      // The change is committed and its trigger's NOTIFY went out with it; only the wait is lost.
      logger.error({ err: (err as Error).message, kind, id }, 'could not send the auth invalidation barrier: other processes apply the change when its notification reaches them');
    } finally {
      ack.cancel();
    }
  }

  return {
    keyRevoked: (keyId) => publish('key', keyId),
    userChanged: (userId) => publish('user', userId),
    orgChanged: (orgId) => publish('org', orgId),
    listening() {
      if (!started) start();
      return listening && !closed;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      closed = true;
      listening = false;
      listeners.clear();
      reconnect.cancel();
      if (heartbeat) clearInterval(heartbeat);
      readiness.release();
      acks.releaseAll();
      const current = client;
      client = null;
      if (current) {
        current.removeAllListeners();
        current.on('error', () => {});
        await current.end().catch(() => {});
      }
    },
  };
}
