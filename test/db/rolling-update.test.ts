import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, createCliWorld, runCli, startServe, type ServeProcess } from '../helpers/cli.js';
import { ROOT } from '../helpers/docker.js';
import { makeSelfSignedCertificate, startHttpsReceiver, waitFor, type HttpsReceiver, type TestCertificate } from '../helpers/https-receiver.js';
import { testDialects, type TestDialect } from '../helpers/test-env.js';

/**
 * The rolling-update rule (docs/deployment.md, "Migrations and rolling updates"): release N's migrations
 * only add, so release N-1's processes keep serving on N's schema while N rolls out. Tested for real: the
 * previous release is built from git, serves a database, this release migrates it underneath, and the
 * previous release's API calls (a fixed list) still succeed against it, as they do against this release.
 */
const PREVIOUS_RELEASE = '25ab354f3993e0e08177c52ab1f5d7d752044616';

const hasPrevious = spawnSync('git', ['cat-file', '-e', `${PREVIOUS_RELEASE}^{commit}`], { cwd: ROOT }).status === 0;
if (!hasPrevious && process.env.CI) throw new Error(`CI needs the git history: ${PREVIOUS_RELEASE} is missing from this clone`);

/** The previous release's API calls. `{project}`, `{user}`, `{webhook}` are ids from earlier answers. */
type Call = { method: string; path: string; body?: unknown; status: number; keep?: 'project' | 'user' | 'webhook' };
const N_MINUS_1_CALLS = (hookUrl: string, n: number): Call[] => [
  { method: 'POST', path: '/v1/projects', body: { name: `Rolling ${n}`, description: 'made during the update', status: 'draft' }, status: 201, keep: 'project' },
  { method: 'GET', path: '/v1/projects?limit=1', status: 200 },
  { method: 'GET', path: '/v1/projects/{project}', status: 200 },
  { method: 'PUT', path: '/v1/projects/{project}', body: { status: 'active', description: '' }, status: 200 },
  { method: 'GET', path: '/v1/projects?status=active', status: 200 },
  { method: 'POST', path: '/v1/users', body: { email: `colleague${n}@example.com`, role: 'member' }, status: 201, keep: 'user' },
  { method: 'GET', path: '/v1/users?limit=100', status: 200 },
  { method: 'PUT', path: '/v1/users/{user}', body: { role: 'viewer' }, status: 200 },
  { method: 'GET', path: '/v1/users/{user}', status: 200 },
  { method: 'POST', path: '/v1/webhooks', body: { url: hookUrl, events: ['project.created', 'project.deleted'] }, status: 201, keep: 'webhook' },
  { method: 'GET', path: '/v1/webhooks', status: 200 },
  { method: 'POST', path: '/v1/projects', body: { name: `Delivered ${n}` }, status: 201 },
  { method: 'DELETE', path: '/v1/projects/{project}', status: 204 },
  { method: 'GET', path: '/v1/projects/{project}', status: 404 },
  { method: 'POST', path: '/v1/projects', body: { name: '' }, status: 400 },
];

async function runCalls(base: string, key: string, calls: Call[]): Promise<Array<{ call: string; status: number }>> {
  const ids: Record<string, string> = {};
  const seen: Array<{ call: string; status: number }> = [];
  for (const call of calls) {
    const url = base + call.path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name]!);
    const res = await fetch(url, {
      method: call.method,
      headers: { authorization: `Bearer ${key}`, ...(call.body ? { 'content-type': 'application/json' } : {}) },
      body: call.body ? JSON.stringify(call.body) : undefined,
    });
    const body = res.status === 204 ? null : ((await res.json()) as { id?: string });
    if (call.keep && body?.id) ids[call.keep] = body.id;
    seen.push({ call: `${call.method} ${call.path}`, status: res.status });
  }
  return seen;
}

describe.skipIf(!hasPrevious)('release N-1 on release N\'s schema', () => {
  let previous: string;
  let cert: TestCertificate;
  let receiver: HttpsReceiver;
  beforeAll(async () => {
    previous = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-previous-'));
    // Its sources from git, compiled with this checkout's TypeScript and dependencies.
    const archive = execFileSync('git', ['archive', PREVIOUS_RELEASE, 'src', 'bin', 'public', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'LICENSE'], { cwd: ROOT, maxBuffer: 256 * 1024 * 1024 });
    execFileSync('tar', ['-x', '-C', previous], { input: archive });
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(previous, 'node_modules'));
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(previous, 'tsconfig.build.json')], { cwd: previous, stdio: 'pipe' });
    cert = makeSelfSignedCertificate();
    receiver = await startHttpsReceiver(cert);
  }, 180_000);
  afterAll(async () => {
    await receiver?.close();
    if (previous) fs.rmSync(previous, { recursive: true, force: true });
  });

  /** `serve` of the previous release (its own bin/workspace). */
  function startPrevious(env: Record<string, string>): Promise<ServeProcess> {
    return startServe({ ...env, WORKSPACE_BIN: path.join(previous, 'bin/workspace') });
  }

  describe.each(testDialects())('%s', (dialect: TestDialect) => {
    it('keeps serving, and delivering, after this release migrated its database; this release serves the same calls', async () => {
      const world = await createCliWorld(dialect);
      const env = { ...world.env, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', NODE_EXTRA_CA_CERTS: cert.certFile };
      const running: ServeProcess[] = [];
      try {
        const old = await startPrevious(env);
        running.push(old);
        const org = JSON.parse(execFileSync(process.execPath, [path.join(previous, 'bin/workspace'), 'org', 'create', '--name', 'Rolling', '--owner-email', 'o@example.com', '--json'], { env: cliEnv(env) }).toString());
        const key = org.api_key.key as string;

        // This release migrates the database under the running previous release.
        const pending = await runCli(['migrate', '--check', '--json'], env);
        expect(pending.code).toBe(1);
        expect(JSON.parse(pending.stdout).pending.length).toBeGreaterThan(0);
        expect((await runCli(['migrate'], env)).code).toBe(0);

        const calls = N_MINUS_1_CALLS(receiver.url(`/rolling-${dialect}-old`), 1);
        const onOld = await runCalls(old.address, key, calls);
        expect(onOld).toEqual(calls.map((c) => ({ call: `${c.method} ${c.path}`, status: c.status })));
        // The previous release's worker delivers what its requests recorded on the new schema.
        await waitFor('deliveries by the previous release', () => receiver.at(`/rolling-${dialect}-old`).length >= 2, 20_000);

        // This release, beside it on the same database (MIGRATE_ON_START=false: nothing is pending).
        const current = await startServe({ ...env, MIGRATE_ON_START: 'false' });
        running.push(current);
        const callsNew = N_MINUS_1_CALLS(receiver.url(`/rolling-${dialect}-new`), 2);
        expect(await runCalls(current.address, key, callsNew)).toEqual(callsNew.map((c) => ({ call: `${c.method} ${c.path}`, status: c.status })));
        await waitFor('deliveries by the mixed fleet', () => receiver.at(`/rolling-${dialect}-new`).length >= 2, 20_000);
        expect(old.child.exitCode).toBeNull();
      } finally {
        for (const p of running) {
          p.child.kill('SIGTERM');
          await p.exited;
        }
        await world.cleanup();
      }
    }, 120_000);
  });
});
