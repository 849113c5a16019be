import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cliJson, runCli } from '../helpers/cli.js';
import { createTestEnv, testDialects, type TestEnv, type TestOrg } from '../helpers/test-env.js';

// Each case spawns Node processes; on a busy two-core machine that is slow, not wrong.
vi.setConfig({ testTimeout: 120_000 });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** `workspace project …` (CONTRACT 15): the same services as the API, so the same rules, events and audit rows. */
describe.each(testDialects())('workspace project (%s)', (dialect) => {
  let env: TestEnv;
  let org: TestOrg;
  let cli: Record<string, string>;
  let member: { userId: string; key: string };

  beforeAll(async () => {
    env = await createTestEnv(dialect);
    org = await env.createOrg('Command line');
    member = await org.member('member');
    cli = { DATA_DIR: env.dataDir, ...(env.config.databaseUrl ? { DATABASE_URL: env.config.databaseUrl } : {}) };
  });
  afterAll(async () => env?.close());

  it('adds, lists and removes collaborators, makes a project private, and the member then no longer finds it', async () => {
    const project = (await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Quiet one' } })).body;
    const added = await cliJson(['project', 'collaborators', 'add', project.id, '--org', org.id, '--user', member.userId, '--role', 'viewer'], cli);
    expect(added).toMatchObject({ user: { id: member.userId }, role: 'viewer' });
    const listed = await cliJson(['project', 'collaborators', 'list', project.id, '--org', org.id], cli);
    expect(listed.data.map((c: Json) => [c.user.id, c.role])).toEqual([
      [member.userId, 'viewer'],
      [org.ownerId, 'manager'],
    ]);
    const updated = await cliJson(['project', 'update', project.id, '--org', org.id, '--visibility', 'private'], cli);
    expect(updated.visibility).toBe('private');
    // A collaborator finds it (--as the member), then, removed, does not.
    const seen = await cliJson(['project', 'list', '--org', org.id, '--as', member.userId], cli);
    expect(seen.data.map((p: Json) => p.id)).toContain(project.id);
    const removed = await runCli(['project', 'collaborators', 'remove', project.id, '--org', org.id, '--user', member.userId], cli);
    expect(removed.code, removed.stderr).toBe(0);
    const after = await cliJson(['project', 'list', '--org', org.id, '--as', member.userId], cli);
    expect(after.data.map((p: Json) => p.id)).not.toContain(project.id);
    const audit = (await env.request('GET', `/v1/audit-log?action=project.collaborator&target_id=${project.id}`, { key: org.ownerKey })).body.data as Json[];
    expect(audit.map((r) => [r.action, r.source])).toEqual([
      ['project.collaborator_removed', 'cli'],
      ['project.collaborator_added', 'cli'],
    ]);
  });

  it('refuses what the member may not do --as them, and bad arguments as usage errors; nothing changes', async () => {
    const project = (await env.request('POST', '/v1/projects', { key: org.ownerKey, body: { name: 'Guarded' } })).body;
    const forbidden = await runCli(['project', 'collaborators', 'add', project.id, '--org', org.id, '--as', member.userId, '--user', member.userId, '--role', 'manager'], cli);
    expect(forbidden.code).not.toBe(0);
    expect(forbidden.stderr).toMatch(/does not allow this action/);
    const badRole = await runCli(['project', 'collaborators', 'add', project.id, '--org', org.id, '--user', member.userId, '--role', 'owner'], cli);
    expect(badRole.code).toBe(2);
    const badAction = await runCli(['project', 'collaborators', 'grant', project.id, '--org', org.id], cli);
    expect(badAction.code).toBe(2);
    expect(badAction.stderr).toMatch(/ACTION must be list, add or remove/);
    const nothing = await runCli(['project', 'update', project.id, '--org', org.id], cli);
    expect(nothing.code).toBe(2);
    const collaborators = (await env.request('GET', `/v1/projects/${project.id}/collaborators`, { key: org.ownerKey })).body.data as Json[];
    expect(collaborators.map((c) => c.user.id)).toEqual([org.ownerId]);
  });
});
