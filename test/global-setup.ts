import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
/** Newest source time the current dist/ was built from. */
const stampFile = path.join(dist, '.build-stamp');
/** Held (mkdir is atomic) while one test run builds, so parallel runs do not compile over each other. */
const lockDir = path.join(dist, '.build-lock');
const STALE_LOCK_MS = 5 * 60_000;

function newestSourceTime(): number {
  let newest = 0;
  const visit = (file: string) => {
    const stat = fs.statSync(file);
    if (stat.isDirectory()) for (const entry of fs.readdirSync(file)) visit(path.join(file, entry));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  visit(path.join(root, 'src'));
  for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package.json']) visit(path.join(root, file));
  return newest;
}

function upToDate(): boolean {
  try {
    return Number(fs.readFileSync(stampFile, 'utf8')) >= newestSourceTime() && fs.existsSync(path.join(dist, 'cli/main.js'));
  } catch {
    return false;
  }
}

async function acquireLock(): Promise<void> {
  fs.mkdirSync(dist, { recursive: true });
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      return;
    } catch {
      const age = Date.now() - (fs.statSync(lockDir, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) fs.rmSync(lockDir, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * Compiles src/ to dist/ (`npm run build`) before the suites, so the CLI tests run `./bin/workspace`
 * against the code under test rather than a stale build. Skipped when dist/ was built from the current
 * sources. tsc emits even when a file has a type error (the typecheck step reports those); only a build
 * that leaves no CLI behind stops the run.
 */
export default async function setup(): Promise<void> {
  if (upToDate()) return;
  await acquireLock();
  try {
    if (upToDate()) return; // another run built it while we waited
    const sourceTime = newestSourceTime();
    try {
      await promisify(execFile)('npm', ['run', '--silent', 'build'], { cwd: root });
    } catch (err) {
      const output = String((err as { stdout?: string }).stdout ?? '') + String((err as { stderr?: string }).stderr ?? '');
      if (!fs.existsSync(path.join(dist, 'cli/main.js'))) throw new Error(`npm run build failed:\n${output}`);
      console.warn(`npm run build reported errors (dist/ was still written):\n${output}`);
    }
    fs.writeFileSync(stampFile, String(sourceTime));
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}
