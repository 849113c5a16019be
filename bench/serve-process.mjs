// A real `serve` process for the benches that drive one over HTTP (scim-bench, agents-bench), and the CLI they
// prepare it with. PORT=0; resolves once the process logs that it is ready, with the address it logged.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'workspace');

/** `./bin/workspace ARGV --json` with `env`, parsed. */
export const cli = (env, ...argv) => JSON.parse(execFileSync(process.execPath, [BIN, ...argv, '--json'], { env: { ...process.env, ...env }, encoding: 'utf8' }));

export function startServe(env) {
  const child = spawn(process.execPath, [BIN, 'serve'], { env: { ...process.env, ...env, PORT: '0', LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let partial = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop();
      for (const line of lines) {
        try {
          const entry = JSON.parse(line);
          if (entry.msg?.startsWith('ready')) resolve({ child, address: entry.address });
        } catch {
          // not JSON
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited (${code})`)));
  });
}
