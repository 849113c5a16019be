import type { Kysely, Migration } from 'kysely';

/**
 * The trace context (a W3C `traceparent`) of the operation that recorded an event, so that each of its
 * delivery attempts continues that trace (docs/deployment.md, "Traces"). Nullable and added only: release
 * N-1, which never writes it, keeps running on this schema during a rolling update; null means untraced.
 */
export function eventTraceContextMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('events').addColumn('trace_parent', 'text').execute();
    },
  };
}
