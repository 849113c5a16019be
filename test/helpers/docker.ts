import { execFile, execFileSync, spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const run = promisify(execFile);

/** True when a Docker engine answers. */
export function dockerAvailable(): boolean {
  return spawnSync('docker', ['info'], { stdio: 'ignore', timeout: 10_000 }).status === 0;
}

/**
 * How Compose is run here: the `docker compose` plugin where the Docker CLI has it, else the standalone
 * `docker-compose` (Debian's package, what CI installs); neither is a reason to skip, given as `missing`.
 */
export function composeCommand(): { command: string[] } | { missing: string } {
  if (spawnSync('docker', ['compose', 'version'], { stdio: 'ignore', timeout: 10_000 }).status === 0) return { command: ['docker', 'compose'] };
  if (spawnSync('docker-compose', ['version'], { stdio: 'ignore', timeout: 10_000 }).status === 0) return { command: ['docker-compose'] };
  return { missing: 'neither `docker compose` nor `docker-compose` is installed' };
}

/** `docker ...args` that may fail: its exit code and output. */
export async function dockerTry(args: string[], timeoutMs = 120_000): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('docker', args, { maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** `docker ...args` that must succeed: its output, or a rejection with the exit code and stderr. */
export async function docker(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const result = await dockerTry(args);
  if (result.code !== 0) throw new Error(`docker ${args.join(' ')} exited ${result.code}:\n${result.stderr}`);
  return result;
}

/**
 * A free TCP port below 32768: containers run with host networking here, and ports above that range can
 * collide with the ephemeral ports of outgoing connections.
 */
export async function freeLowPort(taken: Set<number> = new Set()): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (taken.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
    });
    if (free) {
      taken.add(port);
      return port;
    }
  }
  throw new Error('no free port below 32768');
}

/** Builds the image from the repository's Dockerfile (layers cached between runs). */
export function buildImage(tag: string, extraCaCerts: string): void {
  execFileSync('docker', ['build', '--network', 'host', '-t', tag, '--build-arg', `EXTRA_CA_CERTS=${extraCaCerts}`, '.'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 20 * 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
}
