import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/access/actor.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

/**
 * CONTRACT 15 as a matrix: four organisation roles × {no project role, viewer, editor, manager} × {visible,
 * private} × every call of CONTRACT 13 and 15 on one project and what is under it. The expected status is
 * written out here from the contract's tables, not computed by the code under test:
 * - a private project is hidden from anyone who is neither its collaborator, an admin nor an owner: 404;
 * - otherwise the call needs a right (read, write, manage), and a person holds the higher of their
 *   organisation role's (viewer reads, member writes, admin and owner everything) and their project role's
 *   (viewer reads, editor writes, manager manages): 403 `forbidden` when it falls short;
 * - finishing a task is its assignee's or an admin's/owner's (CONTRACT 13), whatever the project role.
 */
type OrgRole = 'owner' | 'admin' | 'member' | 'viewer';
type ProjectRole = 'none' | 'viewer' | 'editor' | 'manager';
type Visibility = 'organization' | 'private';
type Need = 'read' | 'write' | 'manage' | 'finish';

const ORG_ROLES: OrgRole[] = ['owner', 'admin', 'member', 'viewer'];
const PROJECT_ROLES: ProjectRole[] = ['none', 'viewer', 'editor', 'manager'];
const VISIBILITIES: Visibility[] = ['organization', 'private'];

const ORG_LEVEL: Record<OrgRole, number> = { viewer: 1, member: 2, admin: 4, owner: 4 };
const PROJECT_LEVEL: Record<ProjectRole, number> = { none: 0, viewer: 1, editor: 2, manager: 3 };
const NEED_LEVEL: Record<Exclude<Need, 'finish'>, number> = { read: 1, write: 2, manage: 3 };

interface World {
  projectId: string;
  workflowId: string;
  runId: string;
  taskId: string;
  eventId: string;
  spareId: string;
  otherId: string;
}

interface Call {
  name: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url(w: World): string;
  body?(w: World): unknown;
  need: Need;
}

/** Every call of CONTRACT 13 and 15 on a project or under it; the destructive ones last, in an order that keeps the rest meaningful. */
const CALLS: Call[] = [
  { name: 'GET project', method: 'GET', url: (w) => `/v1/projects/${w.projectId}`, need: 'read' },
  { name: 'PUT project', method: 'PUT', url: (w) => `/v1/projects/${w.projectId}`, body: () => ({ description: 'changed' }), need: 'write' },
  { name: 'GET collaborators', method: 'GET', url: (w) => `/v1/projects/${w.projectId}/collaborators`, need: 'read' },
  { name: 'PUT collaborator', method: 'PUT', url: (w) => `/v1/projects/${w.projectId}/collaborators/${w.otherId}`, body: () => ({ role: 'viewer' }), need: 'manage' },
  { name: 'GET workflows', method: 'GET', url: (w) => `/v1/projects/${w.projectId}/workflows`, need: 'read' },
  { name: 'POST workflow', method: 'POST', url: (w) => `/v1/projects/${w.projectId}/workflows`, body: () => ({ name: 'Another' }), need: 'write' },
  { name: 'GET workflow', method: 'GET', url: (w) => `/v1/workflows/${w.workflowId}`, need: 'read' },
  {
    name: 'PUT workflow',
    method: 'PUT',
    url: (w) => `/v1/workflows/${w.workflowId}`,
    body: () => ({ name: 'Renamed', steps: [{ type: 'task', title: 'Do it' }] }),
    need: 'write',
  },
  { name: 'GET runs', method: 'GET', url: (w) => `/v1/workflows/${w.workflowId}/runs`, need: 'read' },
  { name: 'POST run', method: 'POST', url: (w) => `/v1/workflows/${w.workflowId}/runs`, body: () => ({}), need: 'write' },
  { name: 'GET run', method: 'GET', url: (w) => `/v1/runs/${w.runId}`, need: 'read' },
  { name: 'GET project tasks', method: 'GET', url: (w) => `/v1/projects/${w.projectId}/tasks`, need: 'read' },
  { name: 'POST task', method: 'POST', url: (w) => `/v1/projects/${w.projectId}/tasks`, body: () => ({ title: 'New' }), need: 'write' },
  { name: 'GET task', method: 'GET', url: (w) => `/v1/tasks/${w.taskId}`, need: 'read' },
  { name: 'PATCH task', method: 'PATCH', url: (w) => `/v1/tasks/${w.taskId}`, body: () => ({ title: 'Retitled' }), need: 'write' },
  { name: 'GET event', method: 'GET', url: (w) => `/v1/events/${w.eventId}`, need: 'read' },
  { name: 'complete task', method: 'POST', url: (w) => `/v1/tasks/${w.taskId}/complete`, body: () => ({}), need: 'finish' },
  { name: 'cancel run', method: 'POST', url: (w) => `/v1/runs/${w.runId}/cancel`, body: () => ({}), need: 'write' },
  { name: 'DELETE collaborator', method: 'DELETE', url: (w) => `/v1/projects/${w.projectId}/collaborators/${w.spareId}`, need: 'manage' },
  { name: 'DELETE workflow', method: 'DELETE', url: (w) => `/v1/workflows/${w.workflowId}`, need: 'write' },
  { name: 'DELETE project', method: 'DELETE', url: (w) => `/v1/projects/${w.projectId}`, need: 'manage' },
];

function expectedStatus(orgRole: OrgRole, projectRole: ProjectRole, visibility: Visibility, need: Need): 'allowed' | 403 | 404 {
  const admin = orgRole === 'owner' || orgRole === 'admin';
  if (visibility === 'private' && projectRole === 'none' && !admin) return 404;
  if (need === 'finish') return admin ? 'allowed' : 403;
  return Math.max(ORG_LEVEL[orgRole], PROJECT_LEVEL[projectRole]) >= NEED_LEVEL[need] ? 'allowed' : 403;
}

const COMBINATIONS = ORG_ROLES.flatMap((orgRole) => PROJECT_ROLES.flatMap((projectRole) => VISIBILITIES.map((visibility) => [orgRole, projectRole, visibility] as const)));

describe.each(testDialects())('project roles and private projects: the matrix (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  const people = new Map<OrgRole, { userId: string; key: string }>();

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Matrix');
    for (const role of ORG_ROLES) people.set(role, await org.member(role, 'full'));
  });
  afterAll(async () => env?.close());

  /** A project made by the operator (so nobody is its manager by creating it), with one of everything under it. */
  async function world(visibility: Visibility, person: { userId: string }, projectRole: ProjectRole): Promise<World> {
    const s = env.container.services;
    const cli = cliActor(org.id);
    const project = await s.projects.create(cli, { name: `P ${Math.random()}` });
    const spare = await org.member('viewer');
    const other = await org.member('viewer');
    await s.collaborators.put(cli, project.id, spare.userId, 'viewer');
    if (projectRole !== 'none') await s.collaborators.put(cli, project.id, person.userId, projectRole);
    if (visibility === 'private') await s.projects.update(cli, project.id, { visibility });
    const workflow = await s.workflows.create(cli, project.id, { name: 'Flow', steps: [{ type: 'wait', duration: '1d' }] });
    const run = await s.workflows.startRun(cli, workflow.id);
    const task = await s.tasks.create(cli, project.id, { title: 'Open work' });
    const events = await s.events.list(cli, { type: 'project.created' }, { limit: 100 });
    const eventId = events.items.map((e) => JSON.parse(e) as { id: string; data: { project_id: string } }).find((e) => e.data.project_id === project.id)!.id;
    return { projectId: project.id, workflowId: workflow.id, runId: run.id, taskId: task.id, eventId, spareId: spare.userId, otherId: other.userId };
  }

  it('the table allows, refuses and hides something, so it cannot pass by answering one way', () => {
    const outcomes = COMBINATIONS.flatMap(([o, p, v]) => CALLS.map((c) => expectedStatus(o, p, v, c.need)));
    for (const outcome of ['allowed', 403, 404] as const) expect(outcomes.filter((x) => x === outcome).length).toBeGreaterThan(30);
  });

  it.each(COMBINATIONS)('organisation role %s, project role %s, %s project: every call answers as CONTRACT 15 says', async (orgRole, projectRole, visibility) => {
    const person = people.get(orgRole)!;
    const w = await world(visibility, person, projectRole);
    const mismatches: string[] = [];
    for (const call of CALLS) {
      const expected = expectedStatus(orgRole, projectRole, visibility, call.need);
      const res = await env.request(call.method, call.url(w), { key: person.key, ...(call.body ? { body: call.body(w) } : {}) });
      const got = res.status;
      const ok = expected === 'allowed' ? got < 400 || got === 409 : got === expected && res.body?.error?.code === (expected === 403 ? 'forbidden' : 'not_found');
      if (!ok) mismatches.push(`${call.name}: expected ${expected}, got ${got} ${JSON.stringify(res.body)}`);
    }
    expect(mismatches).toEqual([]);

    // A refused or hidden call changed nothing: the project is there exactly when deleting it was not allowed.
    const deleteAllowed = expectedStatus(orgRole, projectRole, visibility, 'manage') === 'allowed';
    const after = await env.request('GET', `/v1/projects/${w.projectId}`, { key: org.ownerKey });
    expect(after.status).toBe(deleteAllowed ? 404 : 200);
    if (!deleteAllowed) {
      const writeAllowed = expectedStatus(orgRole, projectRole, visibility, 'write') === 'allowed';
      expect(after.body.description).toBe(writeAllowed ? 'changed' : null);
      const task = await env.request('GET', `/v1/tasks/${w.taskId}`, { key: org.ownerKey });
      expect(task.body.title).toBe(writeAllowed ? 'Retitled' : 'Open work');
    }
  });
});
