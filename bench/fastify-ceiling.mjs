// The measured ceiling for the API's read paths (`npm run bench -- --ceiling`): a bare Fastify server with
// the same two routes, doing only what such a request cannot avoid — parse the bearer token, SHA-256 it,
// find the key's organisation in an in-process map (as the API's auth cache does), run the same SQL
// statement for the project or the page (prepared once; named on PostgreSQL), format the timestamps and
// serialise with the API's own response schemas. No hooks, no rate limit, no metrics, no logging, no
// permission or state checks. Whatever the API spends above this is the price of its features.
// Env: DATA_DIR (SQLite) or DATABASE_URL (PostgreSQL), PORT. Prints `listening <port>`.
import path from 'node:path';
import { createHash } from 'node:crypto';
import Fastify from 'fastify';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { Project, ProjectList } from '../dist/http/schemas/projects.js';
import { toIso } from '../dist/lib/time.js';
import { encodeCursor } from '../dist/services/pagination.js';

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
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    status: row.status,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
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

await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.stdout.write(`listening ${app.server.address().port}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
