import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv } from '../helpers/cli.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/statement-churn-serve.mjs');

/**
 * The native driver under garbage collection, on the runtime the suite runs on (Node 24 through npm):
 * `serve` answers requests from this process while 100,000 prepared statements are created and dropped in
 * it. better-sqlite3 12 aborted the process here on Node 24.19 and later (SIGABRT in
 * `Statement::~Statement`); 13, built on N-API, must not.
 */
describe('native SQLite driver under garbage collection', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-gc-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('serve keeps answering while 100,000 statements are prepared and collected, and exits 0', async () => {
    const child = spawn(process.execPath, ['--expose-gc', FIXTURE, dataDir], { env: cliEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));

    // Its stdout lines, one at a time; the exit (a crash included) ends the wait for the next one.
    const lines: string[] = [];
    let wake = () => {};
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      wake();
    });
    void exited.then(() => wake());
    const next = async (): Promise<string> => {
      while (lines.length === 0) {
        if (child.exitCode !== null || child.signalCode !== null) {
          throw new Error(`the server exited (code ${child.exitCode}, signal ${child.signalCode}) before it said so:\n${stderr}`);
        }
        await new Promise<void>((resolve) => (wake = resolve));
      }
      return lines.shift()!;
    };
    const { address, key, project } = JSON.parse(await next()) as { address: string; key: string; project: string };

    // Four clients read the project without pause until the churn is over.
    let churned = false;
    const statuses = new Map<number, number>();
    const client = async () => {
      while (!churned) {
        const res = await fetch(`${address}/v1/projects/${project}`, { headers: { authorization: `Bearer ${key}` } }).catch(() => null);
        if (res === null) break; // the process is gone: the exit status below says why
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    };
    const clients = Array.from({ length: 4 }, client);
    const done = await next().finally(() => (churned = true));
    await Promise.all(clients);

    expect(done).toBe('churned 100000');
    expect(await exited, stderr).toEqual({ code: 0, signal: null });
    expect(stderr).not.toContain('Assertion failed');
    expect([...statuses.keys()]).toEqual([200]);
    console.log(`${statuses.get(200)} requests answered while 100,000 statements were prepared and collected`);
    expect(statuses.get(200)).toBeGreaterThan(50);
  }, 180_000);
});
