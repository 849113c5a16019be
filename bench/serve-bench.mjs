// The API as `workspace serve` runs it (API, metrics and the delivery worker in one process), from the
// built code, as its own process so the load generator does not share its event loop. Configuration
// comes from the environment exactly as in production. Prints `listening <port>` once ready; exits
// cleanly on SIGTERM so --cpu-prof can write its profile.
import { loadConfig } from '../dist/config.js';
import { startServer } from '../dist/server.js';

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
