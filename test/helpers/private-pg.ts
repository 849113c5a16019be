import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './redis.js';

const run = promisify(execFile);

/** The newest PostgreSQL server binaries installed on this machine. */
function pgBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', 'pg_ctl'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql/*/bin');
  return path.join(root, versions[0]!, 'bin');
}

/**
 * A throwaway PostgreSQL cluster on a spare port, for tests that stop and restart the database. It is
 * never the machine's own server. initdb refuses root, so as root it runs as the `postgres` user.
 */
export interface PrivatePg {
  /** Connection URL of the `postgres` database on the private cluster. */
  adminUrl: string;
  port: number;
  start(): Promise<void>;
  /** `immediate` is a crash (recovery on restart); `fast` a clean shutdown. */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  destroy(): Promise<void>;
}

export async function createPrivatePg(): Promise<PrivatePg> {
  const bin = pgBin();
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-pg-'));
  const dataDir = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    fs.chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const as = (cmd: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', cmd, ...args]) : run(cmd, args));

  await as(path.join(bin, 'initdb'), ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  let running = false;

  const self: PrivatePg = {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await as(path.join(bin, 'pg_ctl'), ['-D', dataDir, '-o', options, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', 'start']);
      running = true;
    },
    async stop(mode = 'immediate') {
      await as(path.join(bin, 'pg_ctl'), ['-D', dataDir, '-m', mode, '-w', 'stop']);
      running = false;
    },
    async destroy() {
      if (running) await self.stop('immediate').catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return self;
}
