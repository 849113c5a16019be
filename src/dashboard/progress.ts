import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';

/**
 * Progress without reloading (issue 23): a page with work in progress (a run, an export, a bulk replay)
 * names a JSON fragment; the dashboard's script polls it and reloads the page when its `version` changes.
 * Without JavaScript a `<noscript>` refresh does the same, less often. The fragment is read-only and never
 * empties the session's one-time slot.
 */
export interface Progress {
  /** Where the fragment is. */
  url: string;
  /** A fingerprint of what the page shows now. */
  version: string;
}

export const ProgressBody = Type.Object({ version: Type.String(), active: Type.Boolean() }, { additionalProperties: false });

/** A short fingerprint of whatever the page's progress is made of. */
export function progressVersion(state: unknown): string {
  return createHash('sha256').update(JSON.stringify(state)).digest('base64url').slice(0, 16);
}

/**
 * Registers `GET path` answering `{ version, active }` from `read` (which throws the page's own 404/403).
 * `active: false` tells the script it can stop asking.
 */
export function progressFragment<P>(
  app: FastifyInstance,
  path: string,
  params: ReturnType<typeof Type.Object>,
  read: (request: FastifyRequest<{ Params: P }>) => Promise<{ state: unknown; active: boolean }>,
): void {
  app.get<{ Params: P }>(
    path,
    { config: { dashboardFragment: true }, schema: { hide: true, params, response: { 200: ProgressBody } } },
    async (request, reply) => {
      const { state, active } = await read(request);
      return reply.header('cache-control', 'no-store').send({ version: progressVersion(state), active });
    },
  );
}
