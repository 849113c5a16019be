/**
 * The shapes every CLI command is declared with. A command declares its options and positional
 * arguments; `args.ts` parses and checks them (exit 2 on misuse) before `run` is called, so `run` only
 * deals with well-formed input and domain outcomes.
 */

/** Misuse of the command line (unknown command or flag, missing or malformed value): exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The command path whose help the user should read, e.g. `key create`. */
    readonly commandPath?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface OptionSpec {
  /** `string` takes a value (`--name Acme`); `boolean` is a switch (`--all`). */
  type: 'string' | 'boolean';
  /** Placeholder shown in help, e.g. `ORG`. */
  value?: string;
  description: string;
  required?: boolean;
  short?: string;
  /** Accepted values; anything else is a usage error. */
  choices?: readonly string[];
  /** Further check of a string value: return a problem description, or null when the value is fine. */
  check?: (value: string) => string | null;
}

/** `--org ORG`, required: every command that acts within one organisation declares it the same way. */
/** `--as USER`: act as that member, seeing what they see (CONTRACT 15) and refused what they may not do. */
export const AS_OPTION: OptionSpec = { type: 'string', value: 'USER', description: 'act as this member (user_...): see only what they may see' };

export const ORG_OPTION: OptionSpec = { type: 'string', value: 'ORG', description: 'organisation id (org_...)', required: true };

/** `--limit` of the list commands: the API's 1 to 100. */
export const LIMIT_OPTION: OptionSpec = {
  type: 'string',
  value: 'N',
  description: 'items per page, 1 to 100 (default 20)',
  check: (v) => (/^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= 100 ? null : 'must be a whole number from 1 to 100'),
};

export const CURSOR_OPTION: OptionSpec = { type: 'string', value: 'CURSOR', description: 'next_cursor of a previous page' };

/** A page as the list commands answer it: the API's envelope with --json, a table and the next cursor otherwise. */
export function pageResult<T>(page: { items: T[]; nextCursor: string | null }, table: string): CommandResult {
  return { data: { data: page.items, next_cursor: page.nextCursor }, text: page.nextCursor ? `${table}\n\nMore: --cursor ${page.nextCursor}` : table };
}

export interface PositionalSpec {
  name: string;
  description: string;
}

export interface CommandInput {
  /** String options as given (absent ones are undefined; required ones are always present). */
  readonly options: Readonly<Record<string, string | undefined>>;
  readonly flags: Readonly<Record<string, boolean>>;
  /** Positional arguments, exactly as many as the command declares. */
  readonly args: readonly string[];
  readonly json: boolean;
  readonly env: NodeJS.ProcessEnv;
}

/** What a one-shot command produced: `data` is printed for `--json`, `text` otherwise. */
export interface CommandResult {
  data: unknown;
  text: string;
}

export interface Command {
  name: string;
  summary: string;
  options?: Record<string, OptionSpec>;
  positionals?: readonly PositionalSpec[];
  /** Long-running commands (serve, worker) print logs, not a result, and take no --json. */
  noJson?: boolean;
  /** --json prints the result on one line: a scheduled command appends one line per run to its log. */
  jsonLine?: boolean;
  /** Extra help text shown under the usage line. */
  details?: string;
  /** A result to print, or an exit code when the command did its own output (serve, worker). */
  run(input: CommandInput): Promise<CommandResult | number>;
}

/** `workspace <group> <command> ...`, e.g. `key create`. */
export interface CommandGroup {
  name: string;
  summary: string;
  commands: readonly Command[];
}

/** A top-level entry: a lone command (`serve`) or a group of subcommands (`key`). */
export type CommandEntry = Command | CommandGroup;

export function isGroup(entry: CommandEntry): entry is CommandGroup {
  return 'commands' in entry;
}

/** The value of a required string option (the parser guarantees it is present). */
export function required(input: CommandInput, name: string): string {
  const value = input.options[name];
  if (value === undefined) throw new UsageError(`--${name} is required`);
  return value;
}
