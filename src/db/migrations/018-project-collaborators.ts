import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { seqColumn } from './helpers.js';

/**
 * Project collaborators and private projects (issue 43, CONTRACT 15).
 * - `project_collaborators`: one row per (project, user) with the project role. (user_id, project_id) serves
 *   the visibility predicate (repositories/project-visibility.ts: the viewer's projects, read once per
 *   statement) and finds a leaving user's rows; the unique (project_id, user_id) finds one collaborator and a
 *   project's role for its reader; (project_id, seq) lists a project's collaborators newest first.
 * - `projects.visibility`, `organization` by default: every project that exists stays visible to everyone.
 * - `events.project_id`: the project an event is about, so GET /v1/events and the delivery history can leave
 *   out a private project's events with the same predicate; filled in for the events already kept.
 *   `events.restricted`: set on the events of a private project when it is deleted, since no row is left to
 *   say it was private; only admins and owners read those.
 * Additive: release N-1 writes projects and events without the new columns, which take their defaults.
 */
export function projectCollaboratorsMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('project_collaborators')
        .addColumn('seq', ...seqColumn(dialect))
        .addColumn('org_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('project_collaborators_project_user_uq').on('project_collaborators').columns(['project_id', 'user_id']).unique().execute();
      await db.schema.createIndex('project_collaborators_user_project_idx').on('project_collaborators').columns(['user_id', 'project_id']).execute();
      await db.schema.createIndex('project_collaborators_project_seq_idx').on('project_collaborators').columns(['project_id', 'seq']).execute();

      await db.schema.alterTable('projects').addColumn('visibility', 'text', (c) => c.notNull().defaultTo('organization')).execute();
      await db.schema.createIndex('projects_org_visibility_seq_idx').on('projects').columns(['org_id', 'visibility', 'seq']).execute();

      await db.schema.alterTable('events').addColumn('project_id', 'text').execute();
      await db.schema.alterTable('events').addColumn('restricted', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      const projectOf = dialect === 'postgres' ? sql`(body::jsonb -> 'data' ->> 'project_id')` : sql`json_extract(body, '$.data.project_id')`;
      await sql`UPDATE events SET project_id = ${projectOf} WHERE type LIKE 'project.%' OR type LIKE 'task.%' OR type LIKE 'workflow.%'`.execute(db);
      await db.schema.createIndex('events_project_idx').on('events').columns(['project_id']).execute();
    },
  };
}
