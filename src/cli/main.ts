/**
 * `./bin/workspace`: the command-line tool (CONTRACT section 10).
 *
 * Adding a command group (e.g. `deliveries`): create `src/cli/commands/<group>.ts` exporting a
 * `CommandGroup` (see `commands/key.ts`: options are declared, parsed and checked for you; `run` returns
 * `{ data, text }` — `data` is printed for --json, `text` otherwise — and throws `DomainError`s for
 * domain failures; use `withContainer(input, ...)` from `runtime.ts` to reach the services), then add it
 * to `registry` below: one import, one entry. Help, --json, exit codes and error output come with it.
 *
 * Exit codes: 0 success; 1 failure (message on stderr; with --json also `{ "error": { code, message } }`
 * on stdout); 2 bad arguments (unknown command or option, missing or invalid value).
 */
import { commandHelp, groupHelp, parseCommandArgs, resolveCommand, topHelp, wantsHelp, wantsJson, PROGRAM } from './args.js';
import { UsageError, type CommandEntry } from './command.js';
import { backupCommand, restoreCommand } from './commands/backup.js';
import { copyToPostgresCommand } from './commands/copy-to-postgres.js';
import { deliveriesGroup } from './commands/deliveries.js';
import { webhookGroup } from './commands/webhook.js';
import { healthcheckCommand } from './commands/healthcheck.js';
import { keyGroup } from './commands/key.js';
import { appGroup } from './commands/app.js';
import { migrateCommand } from './commands/migrate.js';
import { orgGroup } from './commands/org.js';
import { runGroup } from './commands/run.js';
import { serveCommand, workerCommand } from './commands/server.js';
import { taskGroup } from './commands/task.js';
import { projectGroup } from './commands/project.js';
import { eventsGroup } from './commands/events.js';
import { userGroup } from './commands/user.js';
import { workflowGroup } from './commands/workflow.js';
import { describeFailure, EXIT_OK, EXIT_USAGE, writeErr, writeJson, writeOut } from './output.js';

export const registry: readonly CommandEntry[] = [
  serveCommand,
  workerCommand,
  migrateCommand,
  healthcheckCommand,
  backupCommand,
  restoreCommand,
  copyToPostgresCommand,
  orgGroup,
  userGroup,
  keyGroup,
  appGroup,
  projectGroup,
  workflowGroup,
  runGroup,
  taskGroup,
  eventsGroup,
  deliveriesGroup,
  webhookGroup,
];

/** A reader that closed early (`workspace key list | head`) is not an error: stop quietly. */
function exitQuietlyOnClosedPipe(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
}

export async function main(givenArgv: string[]): Promise<number> {
  exitQuietlyOnClosedPipe();
  // `workspace help key create` is `workspace key create --help`.
  const argv = givenArgv[0] === 'help' ? [...givenArgv.slice(1), '--help'] : givenArgv;
  const json = wantsJson(argv);
  let helpPath = '';
  try {
    const { group, command, path, rest } = resolveCommand(registry, argv);
    helpPath = path;
    if (!command) {
      const help = group ? groupHelp(group) : topHelp(registry);
      if (wantsHelp(rest)) {
        writeOut(help);
        return EXIT_OK;
      }
      // A bare `workspace` or `workspace key`: show what exists, as a usage error.
      writeErr(help);
      return EXIT_USAGE;
    }
    if (wantsHelp(rest)) {
      writeOut(commandHelp(command, path));
      return EXIT_OK;
    }
    const input = parseCommandArgs(command, path, rest, process.env);
    const result = await command.run(input);
    if (typeof result === 'number') return result;
    if (input.json && command.jsonLine) writeOut(JSON.stringify(result.data));
    else if (input.json) writeJson(result.data);
    else writeOut(result.text);
    return EXIT_OK;
  } catch (err) {
    const failure = describeFailure(err);
    if (err instanceof UsageError) {
      const where = err.commandPath ?? helpPath;
      writeErr(`${PROGRAM}: ${failure.text}\nRun "${PROGRAM}${where ? ` ${where}` : ''} --help" for usage.`);
    } else {
      writeErr(`${PROGRAM}: ${failure.text}`);
    }
    if (json) writeJson(failure.body);
    return failure.exitCode;
  }
}
