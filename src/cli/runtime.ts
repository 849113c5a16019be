import type { Level } from 'pino';
import { loadConfig, type Config } from '../config.js';
import type { Container } from '../container.js';
import { required, type CommandInput } from './command.js';
import { cliActor, type Actor } from '../services/access/actor.js';

/** Logs of one-shot commands: stderr (stdout is the result), warnings and worse only. */
async function cliLogger(config: Config) {
  const { pino } = await import('pino');
  const quietest = (['fatal', 'error', 'warn'] as Level[]).includes(config.logLevel as Level) || config.logLevel === 'silent';
  return pino({ level: quietest ? config.logLevel : 'warn' }, pino.destination(2));
}

/**
 * Runs `work` against the database without serving: loads the config (a ConfigError propagates and
 * becomes exit 1), applies pending migrations so administration works on a fresh DATA_DIR, and always
 * closes the container so the process can exit. `work` receives the names of the migrations applied.
 */
export async function withContainer<T>(input: CommandInput, work: (container: Container, applied: string[]) => Promise<T>): Promise<T> {
  const config = loadConfig(input.env);
  // Loaded on use, so --help and argument errors answer without loading the database drivers.
  const [{ createContainer }, { migrateToLatest }] = await Promise.all([import('../container.js'), import('../db/database.js')]);
  const container = await createContainer(config, { logger: await cliLogger(config) });
  try {
    const applied = await migrateToLatest(container.database);
    return await work(container, applied);
  } finally {
    await container.close();
  }
}

/** The operator of `--org`, or (with `--as USER`) that member acting with their current role. */
export function actingAs(c: Container, input: CommandInput): Promise<Actor> {
  const orgId = required(input, 'org');
  const as = input.options.as;
  return as === undefined ? Promise.resolve(cliActor(orgId)) : c.services.users.actAs(orgId, as);
}
