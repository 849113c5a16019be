import { sql, type RawBuilder } from 'kysely';

/**
 * The one rule of CONTRACT 15 in SQL: who sees a project. Every repository query that lists or counts
 * something under projects for a person who is not an admin or owner adds one of these predicates; nothing
 * is filtered in memory after reading. `viewer` is that person's user id; admins, owners and operators pass
 * no viewer and get the queries they had before.
 *
 * The core is `visible(alias)`: the project is the organisation's to see, or the viewer is one of its
 * collaborators. The second half is a semi-join written as `id IN (the viewer's projects)`, not a correlated
 * EXISTS: the sub-select does not depend on the row, so both databases read the viewer's collaborator rows once
 * per statement (project_collaborators_user_project_idx) and test each private row against that set (SQLite: a
 * list with a Bloom filter, PostgreSQL: a hashed subplan). On SQLite a page of 100 for a member who sees half
 * of 10,000 projects took 110 µs with the correlated EXISTS and takes 85 µs this way (docs/benchmarks.md,
 * issue 43). Rows under a project
 * (tasks, workflows, runs, events) are kept unless their project is one the viewer may not see: an anti-join
 * on the project's id (its unique index), so an event whose project is gone (deleted) or which has none
 * stays listed, while `events.restricted` hides those of a deleted private project.
 */

/** The literal is part of the SQL text, not a parameter: one text per query shape (prepared.ts). */
const PRIVATE = sql.lit('private');

function visible(alias: string, viewer: string): RawBuilder<boolean> {
  const p = sql.table(alias);
  return sql<boolean>`(${p}.visibility <> ${PRIVATE} or ${p}.id in (select pc.project_id from project_collaborators pc where pc.user_id = ${viewer}))`;
}

/** For queries over `projects` itself (aliased or not). */
export function projectVisibleTo(viewer: string, alias = 'projects'): RawBuilder<boolean> {
  return visible(alias, viewer);
}

/** For rows that name their project in `column` (`tasks.project_id`): false only when that project is hidden. */
export function underVisibleProject(column: string, viewer: string): RawBuilder<boolean> {
  return sql<boolean>`not exists (select 1 from projects hp where hp.id = ${sql.ref(column)} and not ${visible('hp', viewer)})`;
}

/** For events (and what reads through them, deliveries): not restricted, and not about a hidden project. */
export function eventVisibleTo(viewer: string, alias = 'events'): RawBuilder<boolean> {
  return sql<boolean>`(${sql.table(alias)}.restricted = 0 and ${underVisibleProject(`${alias}.project_id`, viewer)})`;
}

/** For deliveries: not the delivery of an event the viewer may not read. */
export function deliveryVisibleTo(viewer: string, alias = 'deliveries'): RawBuilder<boolean> {
  return sql<boolean>`not exists (select 1 from events he where he.id = ${sql.ref(`${alias}.event_id`)} and not ${eventVisibleTo(viewer, 'he')})`;
}
