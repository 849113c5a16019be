import type { FastifyBaseLogger } from 'fastify';
import type { Store } from '../db/store.js';
import type { Clock } from '../lib/time.js';
import type { Mailer } from '../mail/mailer.js';

export interface ExportsDeps {
  store: Store;
  clock: Clock;
  mailer: Mailer;
  publicBaseUrl: string;
  log: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>;
}

/** Data export (DASHBOARD 9). STUB: being built. */
export function createExportsService(deps: ExportsDeps) {
  void deps;
  return {};
}

export type ExportsService = ReturnType<typeof createExportsService>;
