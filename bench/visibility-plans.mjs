#!/usr/bin/env node
// Issue 43: the query plans of the project list and GET by id for a member, with the visibility predicate of
// CONTRACT 15 (src/db/repositories/project-visibility.ts), on both dialects. Seeds 10,000 projects (every
// second one private) through the services, then asks each database to explain the queries the repository
// runs for a member who is no collaborator: the first page of 100, a page behind a cursor, the count of the
// overview, and one project by id with the member's own project role.
//
//   node bench/visibility-plans.mjs [--dialects sqlite,postgres]   (build first: npm run build)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompiledQuery, sql } from 'kysely';
import { freshPgDatabase } from './pg-database.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const { loadConfig, createContainer } = await import(path.join(dist, 'index.js'));
const { cliActor } = await import(path.join(dist, 'services/access/actor.js'));
const { openDatabase } = await import(path.join(dist, 'db/database.js'));
const { projectVisibleTo } = await import(path.join(dist, 'db/repositories/project-visibility.js'));

const arg = process.argv.indexOf('--dialects');
const dialects = (arg > 0 ? process.argv[arg + 1] : 'sqlite,postgres').split(',');
const PROJECTS = 10_000;

for (const dialect of dialects) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-plans-'));
  const pg = dialect === 'postgres' ? await freshPgDatabase('postgres://postgres@127.0.0.1:5432/postgres', `ws_plans_${process.pid}`) : null;
  try {
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...(pg ? { DATABASE_URL: pg.url } : {}) };
    const container = await createContainer(loadConfig(env), { migrate: true });
    const s = container.services;
    const created = await s.admin.createOrganization({ name: 'Plans', ownerEmail: 'plans@example.com' });
    const orgId = created.organization.id;
    const member = await s.admin.addUser({ orgId, email: 'member@example.com', role: 'member' });
    // A second organisation of the same size, so the organisation's rows are half the table.
    const second = await s.admin.createOrganization({ name: 'Other', ownerEmail: 'other@example.com' });
    // Created by each organisation's owner, as through the API: the creator is each project's manager, so
    // project_collaborators holds a row per project, as it would in use.
    const owners = [await s.users.actAs(orgId, created.owner.id), await s.users.actAs(second.organization.id, second.owner.id)];
    let next = 0;
    await Promise.all(
      Array.from({ length: pg ? 8 : 1 }, async () => {
        while (next < 2 * PROJECTS) {
          const i = next++;
          await s.projects.create(owners[i % 2], { name: `P ${i}`, ...(Math.floor(i / 2) % 2 ? { visibility: 'private' } : {}) });
        }
      }),
    );
    const page = await s.projects.list(cliActor(orgId), { limit: 100 });
    const someId = page.items[0].id;
    await container.close();

    const db = openDatabase({ dataDir, databaseUrl: pg?.url ?? null });
    if (pg) await sql`analyze`.execute(db.db);
    const limit = pg ? sql`(select cast(${101} as bigint))` : 101;
    const list = db.db.selectFrom('projects').select(['seq', 'id', 'name', 'status', 'visibility', 'created_at']).where('org_id', '=', orgId).where(projectVisibleTo(member.id));
    const plans = {
      'first page of 100 (member)': list.orderBy('seq', 'desc').limit(limit),
      'a page behind a cursor (member)': list.where('seq', '<', 10_000).orderBy('seq', 'desc').limit(limit),
      'the overview count (member)': db.db.selectFrom('projects').select((eb) => eb.fn.countAll().as('n')).where('org_id', '=', orgId).where(projectVisibleTo(member.id)),
      'GET by id with the member\'s project role': db.db
        .selectFrom('projects')
        .select(['id', 'visibility'])
        .select((eb) => eb.selectFrom('project_collaborators as pc').select('pc.role').whereRef('pc.project_id', '=', 'projects.id').where('pc.user_id', '=', member.id).as('project_role'))
        .where('org_id', '=', orgId)
        .where('id', '=', someId),
    };
    console.log(`\n## ${dialect}: ${2 * PROJECTS} projects in two organisations, every second one private\n`);
    for (const [name, query] of Object.entries(plans)) {
      const compiled = query.compile();
      const explain = pg ? 'EXPLAIN ' : 'EXPLAIN QUERY PLAN ';
      const { rows } = await db.db.executeQuery(CompiledQuery.raw(explain + compiled.sql, compiled.parameters));
      const text = rows.map((r) => r['QUERY PLAN'] ?? r.detail).join('\n');
      console.log(`${name}:\n\`\`\`\n${text}\n\`\`\``);
    }
    await db.close?.();
  } finally {
    await pg?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
