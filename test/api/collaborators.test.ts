import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../src/services/access/actor.js';
import { createTestEnv, testDialects, type ApiResponse, type TestEnv, type TestOrg } from '../helpers/test-env.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

function expectError(res: ApiResponse, status: number, code: string): void {
  expect({ status: res.status, code: res.body?.error?.code }, JSON.stringify(res.body)).toEqual({ status, code });
}

/** The rules of CONTRACT 15 beyond the permission matrix (project-access.test.ts): each broken once, and nothing changed. */
describe.each(testDialects())('collaborators and private projects (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let member: { userId: string; key: string };
  let outsider: { userId: string; key: string };
  let admin: { userId: string; key: string };

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Collaborators');
    member = await org.member('member');
    outsider = await org.member('member');
    admin = await org.member('admin');
  });
  afterAll(async () => env?.close());

  const s = () => env.container.services;
  const newProject = async (key: string, body: Json = {}) => {
    const res = await env.request('POST', '/v1/projects', { key, body: { name: `Project ${Math.random()}`, ...body } });
    expect(res.status).toBe(201);
    return res.body as { id: string; name: string; visibility: string };
  };
  const collaborators = async (projectId: string) =>
    (await env.request('GET', `/v1/projects/${projectId}/collaborators?limit=100`, { key: org.ownerKey })).body.data.map((c: Json) => [c.user.id, c.role]);
  const audit = async (action: string, targetId: string) =>
    (await env.request('GET', `/v1/audit-log?action=${action}&target_id=${targetId}&limit=100`, { key: org.ownerKey })).body.data as Json[];

  it('the creator manages the project; PUT adds (201), changes (200) and repeats (200, nothing written); DELETE removes; each change is an audit row', async () => {
    const project = await newProject(member.key);
    expect(project.visibility).toBe('organization');
    expect(await collaborators(project.id)).toEqual([[member.userId, 'manager']]);

    const put = (role: string) => env.request('PUT', `/v1/projects/${project.id}/collaborators/${outsider.userId}`, { key: member.key, body: { role } });
    const added = await put('viewer');
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ user: { id: outsider.userId, email: expect.any(String) }, role: 'viewer' });
    expect((await put('editor')).status).toBe(200);
    const same = await put('editor');
    expect(same.status).toBe(200);
    expect(same.body.role).toBe('editor');
    expect(await collaborators(project.id)).toEqual([
      [outsider.userId, 'editor'],
      [member.userId, 'manager'],
    ]);
    expect((await env.request('DELETE', `/v1/projects/${project.id}/collaborators/${outsider.userId}`, { key: member.key })).status).toBe(204);
    expect(await collaborators(project.id)).toEqual([[member.userId, 'manager']]);

    expect((await audit('project.collaborator_added', project.id)).map((r) => r.changes)).toEqual([{ collaborator: { old: null, new: expect.any(String) }, role: { old: null, new: 'viewer' } }]);
    expect((await audit('project.collaborator_role_changed', project.id)).map((r) => r.changes.role)).toEqual([{ old: 'viewer', new: 'editor' }]);
    expect((await audit('project.collaborator_removed', project.id)).map((r) => r.changes.role)).toEqual([{ old: 'editor', new: null }]);
    // Collaborator changes fire no webhook event (the specification fixes the event names).
    const events = (await env.request('GET', '/v1/events?limit=100', { key: org.ownerKey })).body.data as Json[];
    expect(events.filter((e) => e.data.project_id === project.id).map((e) => e.type)).toEqual(['project.created']);
  });

  it('refuses a bad role (400), an unknown or foreign user (404), a missing collaborator (404), and a non-manager (403): nothing changes', async () => {
    const project = await newProject(org.ownerKey);
    const before = await collaborators(project.id);
    const url = (userId: string) => `/v1/projects/${project.id}/collaborators/${userId}`;
    expectError(await env.request('PUT', url(member.userId), { key: org.ownerKey, body: { role: 'owner' } }), 400, 'validation_failed');
    expectError(await env.request('PUT', url(member.userId), { key: org.ownerKey, body: { role: 'viewer', extra: 1 } }), 400, 'validation_failed');
    expectError(await env.request('PUT', url('user_nobody'), { key: org.ownerKey, body: { role: 'viewer' } }), 404, 'not_found');
    const foreign = await env.createOrg('Elsewhere');
    expectError(await env.request('PUT', url(foreign.ownerId), { key: org.ownerKey, body: { role: 'viewer' } }), 404, 'not_found');
    expectError(await env.request('DELETE', url(member.userId), { key: org.ownerKey }), 404, 'not_found');
    // A member writes to the project but does not manage it: 403 before the body is read.
    expectError(await env.request('PUT', url(outsider.userId), { key: member.key, body: { role: 'nonsense' } }), 403, 'forbidden');
    expectError(await env.request('PUT', `/v1/projects/${project.id}`, { key: member.key, body: { visibility: 'private' } }), 403, 'forbidden');
    // A key without the projects scope cannot, whatever the project role.
    const narrow = await org.member('admin', 'users');
    expectError(await env.request('PUT', url(member.userId), { key: narrow.key, body: { role: 'viewer' } }), 403, 'forbidden');
    expect(await collaborators(project.id)).toEqual(before);
    expect((await env.request('GET', `/v1/projects/${project.id}`, { key: org.ownerKey })).body.visibility).toBe('organization');
  });

  it('a private project is 404 to others, listed for its collaborators only, and filterable by visibility', async () => {
    const open = await newProject(org.ownerKey);
    const closed = await newProject(org.ownerKey, { visibility: 'private' });
    expect(closed.visibility).toBe('private');
    const ids = async (key: string, query = '') => ((await env.request('GET', `/v1/projects?limit=100${query}`, { key })).body.data as Json[]).map((p) => p.id);
    expect(await ids(member.key)).toContain(open.id);
    expect(await ids(member.key)).not.toContain(closed.id);
    expectError(await env.request('GET', `/v1/projects/${closed.id}`, { key: member.key }), 404, 'not_found');
    expect(await ids(admin.key)).toContain(closed.id);
    expect(await ids(org.ownerKey, '&visibility=private')).toEqual(expect.arrayContaining([closed.id]));
    expect(await ids(org.ownerKey, '&visibility=private')).not.toContain(open.id);
    expectError(await env.request('GET', '/v1/projects?visibility=secret', { key: org.ownerKey }), 400, 'validation_failed');
    // List items keep the specification's four fields.
    const item = ((await env.request('GET', '/v1/projects?limit=100', { key: org.ownerKey })).body.data as Json[]).find((p) => p.id === closed.id);
    expect(Object.keys(item).sort()).toEqual(['created_at', 'id', 'name', 'status']);

    await env.request('PUT', `/v1/projects/${closed.id}/collaborators/${member.userId}`, { key: org.ownerKey, body: { role: 'viewer' } });
    expect(await ids(member.key)).toContain(closed.id);
    expect((await env.request('GET', `/v1/projects/${closed.id}`, { key: member.key })).status).toBe(200);
    // A viewer collaborator reads but does not write, even as a member of the organisation... which writes:
    // the higher of the two rights applies.
    expect((await env.request('PUT', `/v1/projects/${closed.id}`, { key: member.key, body: { description: 'member writes' } })).status).toBe(200);
  });

  it('a visibility change is project.updated with previous.visibility; going private is 409 naming those it would strand', async () => {
    const project = await newProject(org.ownerKey);
    const task = await env.request('POST', `/v1/projects/${project.id}/tasks`, { key: org.ownerKey, body: { title: 'Stranded?', assignee_id: outsider.userId } });
    expect(task.status).toBe(201);
    const outsiderEmail = (await env.request('GET', `/v1/users/${outsider.userId}`, { key: org.ownerKey })).body.email;
    const refused = await env.request('PUT', `/v1/projects/${project.id}`, { key: org.ownerKey, body: { visibility: 'private', name: 'Renamed' } });
    expectError(refused, 409, 'conflict');
    expect(refused.body.error.message).toContain(outsiderEmail);
    const unchanged = await env.request('GET', `/v1/projects/${project.id}`, { key: org.ownerKey });
    expect(unchanged.body).toMatchObject({ visibility: 'organization', name: project.name });

    // A workflow step naming them holds it back too.
    await env.request('PATCH', `/v1/tasks/${task.body.id}`, { key: org.ownerKey, body: { assignee_id: null } });
    const wf = await env.request('POST', `/v1/projects/${project.id}/workflows`, { key: org.ownerKey, body: { name: 'Flow', steps: [{ type: 'task', title: 'Step', assignee_id: outsider.userId }] } });
    expect(wf.status).toBe(201);
    expectError(await env.request('PUT', `/v1/projects/${project.id}`, { key: org.ownerKey, body: { visibility: 'private' } }), 409, 'conflict');

    await env.request('PUT', `/v1/projects/${project.id}/collaborators/${outsider.userId}`, { key: org.ownerKey, body: { role: 'editor' } });
    const done = await env.request('PUT', `/v1/projects/${project.id}`, { key: org.ownerKey, body: { visibility: 'private' } });
    expect(done.status).toBe(200);
    expect(done.body.visibility).toBe('private');
    const events = (await env.request('GET', '/v1/events?type=project.updated&limit=100', { key: org.ownerKey })).body.data as Json[];
    const updated = events.find((e) => e.data.project_id === project.id)!;
    expect(updated.data).toMatchObject({ visibility: 'private', previous: { visibility: 'organization' } });
    expect((await audit('project.updated', project.id))[0].changes).toEqual({ visibility: { old: 'organization', new: 'private' } });
  });

  it('in a private project only those who see it are assigned (400 naming the field); leaving clears their open tasks there, with no task.assigned', async () => {
    const project = await newProject(org.ownerKey, { visibility: 'private' });
    const base = `/v1/projects/${project.id}`;
    const refused = await env.request('POST', `${base}/tasks`, { key: org.ownerKey, body: { title: 'Secret', assignee_id: outsider.userId } });
    expectError(refused, 400, 'validation_failed');
    expect(refused.body.error.details).toEqual([{ field: 'assignee_id', message: expect.stringContaining('not a collaborator of this private project') }]);
    const step = await env.request('POST', `${base}/workflows`, { key: org.ownerKey, body: { name: 'Flow', steps: [{ type: 'wait', duration: '1h' }, { type: 'task', title: 'T', assignee_id: outsider.userId }] } });
    expectError(step, 400, 'validation_failed');
    expect(step.body.error.details.map((d: Json) => d.field)).toEqual(['steps[1].assignee_id']);
    expect((await env.request('GET', `${base}/tasks`, { key: org.ownerKey })).body.data).toEqual([]);
    expect((await env.request('GET', `${base}/workflows`, { key: org.ownerKey })).body.data).toEqual([]);

    // Admins see every project, so they may be assigned; a collaborator may be.
    expect((await env.request('POST', `${base}/tasks`, { key: org.ownerKey, body: { title: 'Admin work', assignee_id: admin.userId } })).status).toBe(201);
    await env.request('PUT', `${base}/collaborators/${outsider.userId}`, { key: org.ownerKey, body: { role: 'viewer' } });
    const theirs = await env.request('POST', `${base}/tasks`, { key: org.ownerKey, body: { title: 'Theirs', assignee_id: outsider.userId } });
    expect(theirs.status).toBe(201);
    const done = await env.request('POST', `${base}/tasks`, { key: org.ownerKey, body: { title: 'Finished', assignee_id: outsider.userId } });
    expect((await env.request('POST', `/v1/tasks/${done.body.id}/complete`, { key: outsider.key, body: {} })).status).toBe(200);
    const assignedBefore = ((await env.request('GET', '/v1/events?type=task.assigned&limit=100', { key: org.ownerKey })).body.data as Json[]).length;

    expect((await env.request('DELETE', `${base}/collaborators/${outsider.userId}`, { key: org.ownerKey })).status).toBe(204);
    expect((await env.request('GET', `/v1/tasks/${theirs.body.id}`, { key: org.ownerKey })).body.assignee_id).toBeNull();
    // A finished task keeps who finished it.
    expect((await env.request('GET', `/v1/tasks/${done.body.id}`, { key: org.ownerKey })).body.assignee_id).toBe(outsider.userId);
    expect(((await env.request('GET', '/v1/events?type=task.assigned&limit=100', { key: org.ownerKey })).body.data as Json[]).length).toBe(assignedBefore);
    expect((await audit('project.collaborator_removed', project.id))[0].changes.unassigned_tasks).toEqual({ old: null, new: 1 });
    expectError(await env.request('GET', `/v1/tasks/${theirs.body.id}`, { key: outsider.key }), 404, 'not_found');
  });

  it("removing a user from the organisation removes their collaborator rows and clears their assignments", async () => {
    const leaver = await org.member('member');
    const project = await newProject(org.ownerKey, { visibility: 'private' });
    await env.request('PUT', `/v1/projects/${project.id}/collaborators/${leaver.userId}`, { key: org.ownerKey, body: { role: 'editor' } });
    const task = await env.request('POST', `/v1/projects/${project.id}/tasks`, { key: org.ownerKey, body: { title: 'Theirs', assignee_id: leaver.userId } });
    expect((await env.request('DELETE', `/v1/users/${leaver.userId}`, { key: org.ownerKey })).status).toBe(204);
    expect((await collaborators(project.id)).map(([id]: [string]) => id)).not.toContain(leaver.userId);
    expect((await env.request('GET', `/v1/tasks/${task.body.id}`, { key: org.ownerKey })).body.assignee_id).toBeNull();
  });

  it("a run's step whose assignee cannot see the private project starts its task unassigned", async () => {
    const cli = cliActor(org.id);
    const helper = await org.member('member');
    const project = await newProject(org.ownerKey, { visibility: 'private' });
    await s().collaborators.put(cli, project.id, helper.userId, 'editor');
    const wf = await s().workflows.create(cli, project.id, { name: 'Flow', steps: [{ type: 'task', title: 'Help', assignee_id: helper.userId }] });
    await s().collaborators.remove(cli, project.id, helper.userId);
    await s().workflows.startRun(cli, wf.id);
    for (const key of await s().runs.claimDue('collaborators-test', 30_000, 100)) await s().runs.advance('collaborators-test', key);
    const tasks = (await env.request('GET', `/v1/projects/${project.id}/tasks`, { key: org.ownerKey })).body.data as Json[];
    expect(tasks.map((t) => [t.title, t.assignee_id])).toEqual([['Help', null]]);
  });

  it("a deleted private project's events stay the admins' and owners'; an organisation project's stay everyone's", async () => {
    const closed = await newProject(org.ownerKey, { visibility: 'private' });
    const open = await newProject(org.ownerKey);
    expect((await env.request('DELETE', `/v1/projects/${closed.id}`, { key: org.ownerKey })).status).toBe(204);
    expect((await env.request('DELETE', `/v1/projects/${open.id}`, { key: org.ownerKey })).status).toBe(204);
    const about = async (key: string, projectId: string) =>
      ((await env.request('GET', '/v1/events?limit=100', { key })).body.data as Json[]).filter((e) => e.data.project_id === projectId).map((e) => e.type);
    expect(await about(member.key, closed.id)).toEqual([]);
    expect(await about(admin.key, closed.id)).toEqual(['project.deleted', 'project.created']);
    expect(await about(member.key, open.id)).toEqual(['project.deleted', 'project.created']);
  });
});
