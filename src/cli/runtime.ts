import type { Level } from 'pino';
import { loadConfig, type Config } from '../config.js';
import type { Container } from '../container.js';
import type { CommandInput } from './command.js';

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
