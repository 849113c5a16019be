// The API as `workspace serve` runs it (API, metrics and the delivery worker in one process), from the
// built code, as its own process so the load generator does not share its event loop. Configuration
// comes from the environment exactly as in production. Prints `listening <port>` once ready; exits
// cleanly on SIGTERM so --cpu-prof can write its profile.
// BENCH_DIST runs another build instead (`npm run bench -- --compare DIR`).
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = process.env.BENCH_DIST ? pathToFileURL(path.resolve(process.env.BENCH_DIST) + '/').href : new URL('../dist/', import.meta.url).href;
const { loadConfig } = await import(new URL('config.js', dist).href);
const { startServer } = await import(new URL('server.js', dist).href);

const config = loadConfig(process.env);
const server = await startServer(config);
process.stdout.write(`listening ${new URL(server.address).port}\n`);

let closing = false;
async function shutdown() {
  if (closing) return;
  closing = true;
  await server.close();
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
