// Where a build keeps the modules the benches load. Benches compare this build with an older one, and the
// source layout moved (issue 42: one folder per door, services by domain), so each module is looked for
// at its path now and then at its paths in older builds.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const PATHS = {
  app: ['app.js', 'http/app.js'],
  worker: ['worker/index.js', 'delivery/index.js'],
  runEngine: ['worker/run-engine.js', 'workflows/run-engine.js'],
  exportJob: ['worker/export-job.js', 'exports/export-job.js'],
  actor: ['services/access/actor.js', 'services/actor.js'],
  events: ['services/events/outbox.js', 'services/events.js'],
  crypto: ['lib/crypto.js'],
  ids: ['lib/ids.js'],
  config: ['config.js'],
  container: ['container.js'],
  sender: ['delivery/sender.js'],
};

/** The path of module `name` in the build at `dist`, or an error that says to build first. */
export function builtPath(dist, name) {
  for (const candidate of PATHS[name]) {
    const file = path.join(dist, candidate);
    if (fs.existsSync(file)) return file;
  }
  throw new Error(`${dist} has no ${PATHS[name][0]}: run \`npm run build\` first`);
}

/** Module `name` of the build at `dist`. */
export async function builtModule(dist, name) {
  return import(pathToFileURL(builtPath(dist, name)).href);
}
