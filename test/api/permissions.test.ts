import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

type Role = 'owner' | 'admin' | 'member' | 'viewer';
type Kind = 'projects' | 'users' | 'webhooks';

interface RouteCase {
  name: string;
  kind: Kind;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  body?: (n: number) => unknown;
  /** Roles CONTRACT section 9 allows; reads are open to every role. */
  roles: Role[];
  /**
   * A change on one project, which a project role may allow where the organisation role does not (CONTRACT 15):
   * refused for the role, the call is decided on the project, and an id that names none is 404 (as a private
   * project's is), never 403.
   */
  onProject?: true;
}

const ALL: Role[] = ['owner', 'admin', 'member', 'viewer'];
const MISSING = 'x_doesnotexist';

// Allowed calls on ids use ids that do not exist: an allowed call gets 404, never 401 or 403.
const ROUTES: RouteCase[] = [
  { name: 'projects list', kind: 'projects', method: 'GET', url: '/v1/projects', roles: ALL },
  { name: 'projects get', kind: 'projects', method: 'GET', url: `/v1/projects/proj_${MISSING}`, roles: ALL },
  { name: 'projects create', kind: 'projects', method: 'POST', url: '/v1/projects', body: (n) => ({ name: `P ${n}` }), roles: ['owner', 'admin', 'member'] },
  { name: 'projects update', kind: 'projects', method: 'PUT', url: `/v1/projects/proj_${MISSING}`, body: () => ({ name: 'Renamed' }), roles: ['owner', 'admin', 'member'], onProject: true },
  { name: 'projects delete', kind: 'projects', method: 'DELETE', url: `/v1/projects/proj_${MISSING}`, roles: ['owner', 'admin'], onProject: true },
  { name: 'users list', kind: 'users', method: 'GET', url: '/v1/users', roles: ALL },
  { name: 'users get', kind: 'users', method: 'GET', url: `/v1/users/user_${MISSING}`, roles: ALL },
  { name: 'users invite', kind: 'users', method: 'POST', url: '/v1/users', body: (n) => ({ email: `invitee${n}@example.com`, role: 'member' }), roles: ['owner', 'admin'] },
  { name: 'users update', kind: 'users', method: 'PUT', url: `/v1/users/user_${MISSING}`, body: () => ({ role: 'member' }), roles: ['owner', 'admin'] },
  { name: 'webhooks list', kind: 'webhooks', method: 'GET', url: '/v1/webhooks', roles: ALL },
  { name: 'webhooks create', kind: 'webhooks', method: 'POST', url: '/v1/webhooks', body: (n) => ({ url: `https://hooks.example.com/${n}`, events: ['project.created'] }), roles: ['owner', 'admin'] },
  { name: 'webhooks delete', kind: 'webhooks', method: 'DELETE', url: `/v1/webhooks/wh_${MISSING}`, roles: ['owner', 'admin'] },
  // Extension routes (delivery history and replay) follow the webhooks rules: reading is GET, replay is a write.
  { name: 'deliveries list', kind: 'webhooks', method: 'GET', url: `/v1/webhooks/wh_${MISSING}/deliveries`, roles: ALL },
  { name: 'delivery get', kind: 'webhooks', method: 'GET', url: `/v1/webhooks/wh_${MISSING}/deliveries/dlv_${MISSING}`, roles: ALL },
  { name: 'delivery replay', kind: 'webhooks', method: 'POST', url: `/v1/webhooks/wh_${MISSING}/deliveries/dlv_${MISSING}/replay`, roles: ['owner', 'admin'] },
];

/** What each scope grants, written out by hand from CONTRACT section 9 (not computed by the code under test). */
const SCOPES: Record<string, Partial<Record<Kind, 'read' | 'full'>>> = {
  full: { projects: 'full', users: 'full', webhooks: 'full' },
  read: { projects: 'read', users: 'read', webhooks: 'read' },
  projects: { projects: 'full' },
  'projects:read': { projects: 'read' },
  users: { users: 'full' },
  'users:read': { users: 'read' },
  webhooks: { webhooks: 'full' },
  'webhooks:read': { webhooks: 'read' },
  'projects,users:read': { projects: 'full', users: 'read' },
};

function expected(route: RouteCase, role: Role, scope: string): boolean {
  return scopeAllows(route, scope) && route.roles.includes(role);
}

function scopeAllows(route: RouteCase, scope: string): boolean {
  const grant = SCOPES[scope]![route.kind];
  return grant === 'full' || (grant === 'read' && route.method === 'GET');
}

const CASES = ALL.flatMap((role) => Object.keys(SCOPES).map((scope) => [role, scope] as const));

describe.each(testDialects())('permissions (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let counter = 0;

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg();
  });
  afterAll(async () => env?.close());

  it('covers every route of CONTRACT section 9, allowed and refused', () => {
    // The table allows and refuses something for each role, so it cannot pass by allowing or refusing all.
    const outcomes = CASES.flatMap(([role, scope]) => ROUTES.map((route) => expected(route, role, scope)));
    expect(outcomes.filter(Boolean).length).toBeGreaterThan(50);
    expect(outcomes.filter((x) => !x).length).toBeGreaterThan(50);
  });

  it.each(CASES)('role %s with scope %s: 403 exactly where the contract refuses', async (role, scope) => {
    const { key } = await org.member(role, scope);
    const mismatches: string[] = [];
    for (const route of ROUTES) {
      const n = ++counter;
      const res = await env.request(route.method, route.url, { key, ...(route.body ? { body: route.body(n) } : {}) });
      const allow = expected(route, role, scope);
      if (allow && (res.status === 403 || res.status === 401 || res.status === 404 && res.body?.error?.message === 'route not found')) {
        mismatches.push(`${route.name}: expected allowed, got ${res.status} ${JSON.stringify(res.body)}`);
      }
      if (!allow && route.onProject && scopeAllows(route, scope)) {
        if (res.status !== 404 || res.body?.error?.code !== 'not_found') mismatches.push(`${route.name}: expected 404 for no such project, got ${res.status} ${JSON.stringify(res.body)}`);
        continue;
      }
      if (!allow && (res.status !== 403 || res.body?.error?.code !== 'forbidden')) {
        mismatches.push(`${route.name}: expected 403 forbidden, got ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('refuses with 403 before looking at the body or the id, and changes nothing', async () => {
    const viewer = await org.member('viewer', 'full');
    const created = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Guarded' } });
    expect(created.status).toBe(201);
    const put = await env.request('PUT', `/v1/projects/${created.body.id}`, { key: viewer.key, body: { name: 'Hijacked' } });
    expect(put.status).toBe(403);
    const del = await env.request('DELETE', `/v1/projects/${created.body.id}`, { key: viewer.key });
    expect(del.status).toBe(403);
    const read = await env.request('GET', `/v1/projects/${created.body.id}`, { key: viewer.key });
    expect(read.status).toBe(200);
    expect(read.body.name).toBe('Guarded');

    const readOnly = await org.member('owner', 'read');
    expect((await env.request('POST', '/v1/users', { key: readOnly.key, body: { email: 'nope', role: 'x' } })).status).toBe(403);
    const users = await env.request('GET', '/v1/users?limit=100', { key: org.ownerKey });
    expect(users.body.data.map((u: { email: string }) => u.email)).not.toContain('nope');
  });

  it("lets a member create and update projects, delete only those they manage (their own), and nobody else's", async () => {
    const member = await org.member('member', 'full');
    const theirs = await env.request('POST', '/v1/projects', { key: member.key, body: { name: 'Member made' } });
    expect(theirs.status).toBe(201);
    const others = await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Owner made' } });
    const updated = await env.request('PUT', `/v1/projects/${others.body.id}`, { key: member.key, body: { status: 'archived' } });
    expect(updated.status).toBe(200);
    const refused = await env.request('DELETE', `/v1/projects/${others.body.id}`, { key: member.key });
    expect(refused.status).toBe(403);
    expect((await env.request('GET', `/v1/projects/${others.body.id}`, { key: member.key })).body.status).toBe('archived');
    // The creator is the project's manager (CONTRACT 15), and a manager deletes the project.
    expect((await env.request('DELETE', `/v1/projects/${theirs.body.id}`, { key: member.key })).status).toBe(204);
    expect((await env.request('GET', `/v1/projects/${theirs.body.id}`, { key: org.ownerKey })).status).toBe(404);
  });
});
