import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../db/store.js';
import type { Clock } from '../lib/time.js';
import type { Mailer } from '../mail/mailer.js';
import type { AuthEvents } from './auth-events.js';

export interface DeletionDeps {
  store: Store;
  clock: Clock;
  mailer: Mailer;
  authEvents: AuthEvents;
  publicBaseUrl: string;
  log: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>;
}

/** Reminders before deletion, and the deletion of an organisation whose date has come (DASHBOARD 10). STUB: being built. */
export function createDeletionService(deps: DeletionDeps) {
  void deps;
  return {};
}

export type DeletionService = ReturnType<typeof createDeletionService>;
