import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { createAcks, createReadiness } from '../db/invalidation-acks.js';
import type { AuthEvents, AuthInvalidation, AuthInvalidationSource } from '../db/auth-events.js';

export type { AuthInvalidation, AuthInvalidationSource } from '../db/auth-events.js';

export interface RedisAuthEvents extends AuthEvents, AuthInvalidationSource {
  close(): Promise<void>;
}

export interface RedisAuthEventsOptions {
  /** Commands connection (publishing, acknowledging). */
  redis: Redis;
  /** A dedicated connection for SUBSCRIBE (a subscribed connection can run nothing else). */
  subscriber: Redis;
  prefix: string;
  logger: FastifyBaseLogger;
  /** How long a publisher waits for every subscribed instance to confirm it dropped the entry. */
  ackTimeoutMs?: number;
}

/**
 * Invalidations over Redis pub/sub, acknowledged. A revocation must hold on the very next request on
 * every instance, and PUBLISH returning only means Redis queued the message, so each receiver drops the
 * entry and then answers on the publisher's own ack channel; `keyRevoked`/`userChanged` resolve once every
 * receiver PUBLISH counted has answered (or after `ackTimeoutMs`, logged). Instances whose subscription is
 * down are not counted, and they bypass their cache until it is back.
 */
export function createRedisAuthEvents({ redis, subscriber, prefix, logger, ackTimeoutMs = 2000 }: RedisAuthEventsOptions): RedisAuthEvents {
  const instance = randomBytes(8).toString('hex');
  const invalidateChannel = `${prefix}auth:invalidate`;
  const ackChannel = `${prefix}auth:ack:${instance}`;
  const listeners = new Set<(invalidation: AuthInvalidation) => void>();
  const acks = createAcks();
  const readiness = createReadiness();
  let subscribed = false;
  let closed = false;

  function emit(invalidation: AuthInvalidation): void {
    for (const listener of listeners) listener(invalidation);
  }

  function lost(): void {
    if (!subscribed) return;
    subscribed = false;
    emit({ kind: 'reset' });
    logger.error('auth invalidation channel (redis) lost: API keys are read from the database on every request until it returns');
  }

  async function subscribeNow(): Promise<void> {
    try {
      await subscriber.subscribe(invalidateChannel, ackChannel);
      // Anything published while we were away is lost: start from an empty cache.
      emit({ kind: 'reset' });
      subscribed = true;
      readiness.release();
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'auth invalidation subscribe failed; retrying on reconnect');
    }
  }

  subscriber.on('ready', () => void subscribeNow());
  subscriber.on('close', lost);
  subscriber.on('end', lost);
  if (subscriber.status === 'ready') void subscribeNow();

  subscriber.on('message', (channel: string, message: string) => {
    if (channel === ackChannel) return acks.received(message);
    if (channel !== invalidateChannel) return;
    let parsed: { kind?: string; id?: string; from?: string; msg?: string };
    try {
      parsed = JSON.parse(message) as typeof parsed;
    } catch {
      return;
    }
    if (parsed.kind === 'key' && parsed.id) emit({ kind: 'key', keyId: parsed.id });
    else if (parsed.kind === 'user' && parsed.id) emit({ kind: 'user', userId: parsed.id });
    else if (parsed.kind === 'org' && parsed.id) emit({ kind: 'org', orgId: parsed.id });
    else emit({ kind: 'reset' });
    // Acknowledge only after the entry is gone from this instance's cache.
    if (parsed.from && parsed.msg) {
      redis.publish(`${prefix}auth:ack:${parsed.from}`, parsed.msg).catch((err: Error) => {
        logger.error({ err: err.message }, 'could not acknowledge an auth invalidation');
      });
    }
  });

  async function publish(kind: 'key' | 'user' | 'org', id: string): Promise<void> {
    // A short-lived process (the CLI) may publish before its subscription is up; acks need it.
    if (redis.status === 'ready') await readiness.wait(subscribed, 1000);
    const msg = randomBytes(8).toString('hex');
    const ack = acks.open(msg, subscribed);
    try {
      let receivers: number | null = null;
      for (let attempt = 1; attempt <= 3 && receivers === null; attempt++) {
        try {
          receivers = await redis.publish(invalidateChannel, JSON.stringify({ kind, id, from: subscribed ? instance : undefined, msg }));
        } catch (err) {
          if (attempt === 3) {
            // The change is committed; instances whose subscription is healthy keep the stale entry at most
            // one cache TTL. Instances that lost Redis too already bypass their cache.
            logger.error({ err: (err as Error).message, kind, id }, 'could not publish an auth invalidation: other instances may serve the old principal until their cache entry expires');
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
        }
      }
      if (!ack.tracked) return;
      const received = await ack.wait(receivers!, ackTimeoutMs);
      if (received < receivers! && !closed) {
        logger.warn({ kind, id, expected: receivers, received }, 'not every instance acknowledged an auth invalidation in time');
      }
    } finally {
      ack.cancel();
    }
  }

  return {
    keyRevoked: (keyId) => publish('key', keyId),
    userChanged: (userId) => publish('user', userId),
    orgChanged: (orgId) => publish('org', orgId),
    listening: () => subscribed && !closed,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      closed = true;
      subscribed = false;
      listeners.clear();
      acks.releaseAll();
    },
  };
}
