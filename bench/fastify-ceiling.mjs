// The measured ceiling for the API's read paths (`npm run bench -- --ceiling`): a bare Fastify server with
// the same two routes, doing only what such a request cannot avoid — parse the bearer token, SHA-256 it,
// find the key's organisation in an in-process map (as the API's auth cache does), run the same SQL
// statement for the project or the page (prepared once; named on PostgreSQL), format the timestamps and
// serialise with the API's own response schemas. No hooks, no rate limit, no metrics, no logging, no
// permission or state checks. Whatever the API spends above this is the price of its features.
// On SQLite it also answers POST /v1/projects with the create's four statements (project, event, the
// deliveries of listening subscriptions, audit row) in one synchronous BEGIN IMMEDIATE ... COMMIT per
// request, the durable minimum without group commit; no validation beyond a JSON parse.
// Env: DATA_DIR (SQLite) or DATABASE_URL (PostgreSQL), PORT. Prints `listening <port>`.
import path from 'node:path';
import { createHash } from 'node:crypto';
import Fastify from 'fastify';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { Project, ProjectList } from '../dist/schemas/projects.js';
import { toIso } from '../dist/lib/time.js';
import { encodeCursor } from '../dist/services/shared/pagination.js';
import { newId } from '../dist/lib/ids.js';
// The API's own row-to-response mapping, so both servers do the same formatting work.
import { toProject } from '../dist/services/projects/projects-service.js';

const databaseUrl = process.env.DATABASE_URL || null;
const KEYS_SQL = `select k.key_hash, k.org_id from api_keys k join users u on u.id = k.user_id and u.org_id = k.org_id
  where k.revoked_at is null and u.status = 'active'`;
const BY_ID_SQL = (p) => `select seq, id, org_id, name, description, status, created_at, updated_at from projects where org_id = ${p(1)} and id = ${p(2)}`;
const LIST_SQL = (p) => `select seq, id, name, status, created_at from projects where org_id = ${p(1)} order by seq desc limit ${p(2)}`;

let byId;
let listFirst;
let keys;
if (databaseUrl) {
  const types = { getTypeParser: (oid, format) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)) };
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, types });
  const p = (n) => `$${n}`;
  byId = async (orgId, id) => (await pool.query({ name: 'ceiling_by_id', text: BY_ID_SQL(p), values: [orgId, id] })).rows[0];
  listFirst = async (orgId, fetch) => (await pool.query({ name: 'ceiling_list', text: LIST_SQL(p), values: [orgId, fetch] })).rows;
  keys = (await pool.query(KEYS_SQL)).rows;
} else {
  const db = new BetterSqlite3(path.join(process.env.DATA_DIR, 'workspace.db'), { readonly: true, fileMustExist: true });
  const p = () => '?';
  const byIdStmt = db.prepare(BY_ID_SQL(p));
  const listStmt = db.prepare(LIST_SQL(p));
  byId = async (orgId, id) => byIdStmt.get(orgId, id);
  listFirst = async (orgId, fetch) => listStmt.all(orgId, fetch);
  keys = db.prepare(KEYS_SQL).all();
}
const orgByKeyHash = new Map(keys.map((k) => [k.key_hash, k.org_id]));

let create = null;
if (!databaseUrl) {
  const db = new BetterSqlite3(path.join(process.env.DATA_DIR, 'workspace.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  const insertProject = db.prepare(`insert into projects (id, org_id, name, description, status, created_at, updated_at)
    values (?, ?, ?, ?, ?, ?, ?) returning seq, id, org_id, name, description, status, created_at, updated_at`);
  const insertEvent = db.prepare('insert into events (id, org_id, type, body, occurred_at) values (?, ?, ?, ?, ?)');
  const fanOut = db.prepare(`insert into deliveries (id, org_id, event_id, webhook_id, event_type, status, attempt_count, failure_count, next_attempt_at, created_at, updated_at)
    select json_extract(?, '$[' || (n - 1) || ']'), ?, ?, listening.id, ?, 'pending', 0, 0, ?, ?, ?
    from (select id, row_number() over (order by seq) as n from webhooks where org_id = ? and exists (select 1 from json_each(webhooks.events) where json_each.value = ?)) as listening
    where n <= json_array_length(?) order by n`);
  const insertAudit = db.prepare(`insert into audit_log (id, org_id, occurred_at, actor_type, actor_id, actor_label, api_key_id, session_id, action, target_type,
    target_id, target_label, source, ip, user_agent, request_id, outcome, changes) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const begin = db.prepare('begin immediate');
  const commit = db.prepare('commit');
  create = (orgId, input, requestId) => {
    const now = Date.now();
    begin.run();
    try {
      const row = insertProject.get(newId('proj'), orgId, input.name, input.description ?? null, input.status ?? 'active', now, now);
      const project = toProject(row);
      const eventId = newId('evt');
      insertEvent.run(eventId, orgId, 'project.created', JSON.stringify({ event: 'project.created', timestamp: toIso(now), data: { project_id: project.id, ...project } }), now);
      fanOut.run('[]', orgId, eventId, 'project.created', now, now, now, orgId, 'project.created', '[]');
      insertAudit.run(newId('aud'), orgId, now, 'user', 'usr_x', 'bench@example.com', 'key_x', null, 'project.created', 'project', project.id, project.name, 'api', '127.0.0.1', null, requestId, 'success',
        JSON.stringify({ name: { old: null, new: project.name }, description: { old: null, new: project.description }, status: { old: null, new: project.status } }));
      commit.run();
      return project;
    } catch (err) {
      if (db.inTransaction) db.exec('rollback');
      throw err;
    }
  };
}

const app = Fastify({ logger: false });
const BEARER = /^bearer[ \t]+([^\s]+)[ \t]*$/i;
function orgOf(request, reply) {
  const m = BEARER.exec(request.headers.authorization ?? '');
  const orgId = m ? orgByKeyHash.get(createHash('sha256').update(m[1]).digest('hex')) : undefined;
  if (!orgId) reply.code(401).send({ error: { code: 'unauthorized', message: 'unauthorized' } });
  return orgId;
}

app.get('/v1/projects/:id', { schema: { response: { 200: Project } } }, async (request, reply) => {
  const orgId = orgOf(request, reply);
  if (!orgId) return reply;
  const row = await byId(orgId, request.params.id);
  if (!row) return reply.code(404).send({ error: { code: 'not_found', message: 'project not found' } });
  return toProject(row);
});

app.get('/v1/projects', { schema: { response: { 200: ProjectList } } }, async (request, reply) => {
  const orgId = orgOf(request, reply);
  if (!orgId) return reply;
  const limit = Number(request.query.limit ?? 20);
  const rows = await listFirst(orgId, limit + 1);
  const page = rows.slice(0, limit);
  return {
    data: page.map((r) => ({ id: r.id, name: r.name, status: r.status, created_at: toIso(r.created_at) })),
    next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1].seq) : null,
  };
});

if (create) {
  app.post('/v1/projects', { schema: { response: { 201: Project } } }, async (request, reply) => {
    const orgId = orgOf(request, reply);
    if (!orgId) return reply;
    return reply.code(201).send(create(orgId, request.body, request.id));
  });
}

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`listening ${app.server.address().port}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
