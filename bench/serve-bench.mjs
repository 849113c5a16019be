// The API alone (no delivery worker), from the built code, as its own process so the load generator
// does not share its event loop. Configuration comes from the environment exactly as in production.
// Prints `listening <port>` on stdout once ready; exits cleanly on SIGTERM so --cpu-prof can write.
import { loadConfig } from '../dist/config.js';
import { createContainer } from '../dist/container.js';
import { buildApp } from '../dist/http/app.js';

const config = loadConfig(process.env);
const container = await createContainer(config, { migrate: true });
const app = await buildApp({
  config,
  services: container.services,
  rateLimiter: container.rateLimiter,
  health: container.health,
  logger: container.logger,
});
await app.listen({ port: config.port, host: config.host });
process.stdout.write(`listening ${app.server.address().port}\n`);

let closing = false;
async function shutdown() {
  if (closing) return;
  closing = true;
  await app.close();
  await container.close();
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
