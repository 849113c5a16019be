import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError, isGroup, type Command, type CommandEntry, type CommandGroup, type CommandInput } from './command.js';

export const PROGRAM = 'workspace';

const HELP_FLAGS = new Set(['--help', '-h']);

/** True when `--help`/`-h` appears before a `--` terminator. */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const arg of argv) {
    if (arg === '--') return false;
    if (HELP_FLAGS.has(arg)) return true;
  }
  return false;
}

/** True when `--json` appears before a `--` terminator (also used to shape usage errors). */
export function wantsJson(argv: readonly string[]): boolean {
  for (const arg of argv) {
    if (arg === '--') return false;
    if (arg === '--json') return true;
  }
  return false;
}

/** Parses a command's arguments against its declaration; every misuse is a UsageError (exit 2). */
export function parseCommandArgs(command: Command, path: string, argv: readonly string[], env: NodeJS.ProcessEnv): CommandInput {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const [name, spec] of Object.entries(command.options ?? {})) {
    options[name] = spec.short ? { type: spec.type, short: spec.short } : { type: spec.type };
  }
  if (!command.noJson) options.json = { type: 'boolean' };

  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(describeParseError(err), path);
  }

  const stringValues: Record<string, string | undefined> = {};
  const flags: Record<string, boolean> = {};
  for (const [name, spec] of Object.entries(command.options ?? {})) {
    const value = parsed.values[name];
    if (spec.type === 'boolean') {
      flags[name] = value === true;
      continue;
    }
    if (value === undefined) {
      if (spec.required) throw new UsageError(`missing required option --${name}${spec.value ? ` ${spec.value}` : ''}`, path);
      continue;
    }
    const text = String(value);
    if (spec.choices && !spec.choices.includes(text)) {
      throw new UsageError(`--${name} must be one of ${spec.choices.join(', ')}, got "${text}"`, path);
    }
    const problem = spec.check?.(text);
    if (problem) throw new UsageError(`--${name} ${problem}, got "${text}"`, path);
    stringValues[name] = text;
  }

  const declared = command.positionals ?? [];
  const positionals = parsed.positionals;
  if (positionals.length < declared.length) {
    throw new UsageError(`missing argument ${declared[positionals.length]!.name}`, path);
  }
  if (positionals.length > declared.length) {
    throw new UsageError(`unexpected argument "${positionals[declared.length]}"`, path);
  }

  return { options: stringValues, flags, args: positionals, json: parsed.values.json === true, env };
}

function describeParseError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: string }).code;
  const unknown = /Unknown option '([^']+)'/.exec(message);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) return `unknown option ${unknown[1]}`;
  // Node's messages are already clear ("Option '--name <value>' argument missing"); drop its hints
  // about `--` which mention internals of the parser.
  return message.split('. To specify')[0]!.replace(/\.$/, '');
}

/**
 * Finds the command `argv` names. `command` is null when only a group (or nothing) was named, which
 * shows that level's help. An unknown name is a UsageError.
 */
export function resolveCommand(
  registry: readonly CommandEntry[],
  argv: readonly string[],
): { group: CommandGroup | null; command: Command | null; path: string; rest: string[] } {
  const [first, ...afterFirst] = argv;
  if (first === undefined || first.startsWith('-')) {
    if (first !== undefined && !HELP_FLAGS.has(first)) throw new UsageError(`expected a command before ${first}`);
    return { group: null, command: null, path: '', rest: [...argv] };
  }
  const entry = registry.find((e) => e.name === first);
  if (!entry) throw new UsageError(`unknown command "${first}"`);
  if (!isGroup(entry)) return { group: null, command: entry, path: entry.name, rest: afterFirst };

  const [second, ...rest] = afterFirst;
  if (second === undefined || second.startsWith('-')) {
    if (second !== undefined && !HELP_FLAGS.has(second)) throw new UsageError(`expected a ${entry.name} command before ${second}`, entry.name);
    return { group: entry, command: null, path: entry.name, rest: afterFirst };
  }
  const command = entry.commands.find((c) => c.name === second);
  if (!command) throw new UsageError(`unknown command "${entry.name} ${second}"`, entry.name);
  return { group: entry, command, path: `${entry.name} ${command.name}`, rest };
}

function columns(rows: ReadonlyArray<readonly [string, string]>, indent = '  '): string {
  const width = Math.max(0, ...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `${indent}${left.padEnd(width)}  ${right}`.trimEnd()).join('\n');
}

export function usageLine(command: Command, path: string): string {
  const parts = [PROGRAM, path];
  for (const p of command.positionals ?? []) parts.push(p.name);
  for (const [name, spec] of Object.entries(command.options ?? {})) {
    const flag = spec.type === 'string' ? `--${name} ${spec.value ?? 'VALUE'}` : `--${name}`;
    parts.push(spec.required ? flag : `[${flag}]`);
  }
  if (!command.noJson) parts.push('[--json]');
  return parts.join(' ');
}

export function commandHelp(command: Command, path: string): string {
  const lines = [`Usage: ${usageLine(command, path)}`, '', command.summary];
  if (command.details) lines.push('', command.details);
  if (command.positionals?.length) {
    lines.push('', 'Arguments:', columns(command.positionals.map((p) => [p.name, p.description] as const)));
  }
  const optionRows: Array<readonly [string, string]> = Object.entries(command.options ?? {}).map(([name, spec]) => {
    const flag = `${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;
    const extra = [spec.required ? 'required' : null, spec.choices ? `one of ${spec.choices.join(', ')}` : null].filter(Boolean);
    return [flag, extra.length ? `${spec.description} (${extra.join('; ')})` : spec.description] as const;
  });
  if (!command.noJson) optionRows.push(['--json', 'print exactly one JSON document on stdout']);
  optionRows.push(['-h, --help', 'show this help']);
  lines.push('', 'Options:', columns(optionRows));
  return lines.join('\n');
}

export function groupHelp(group: CommandGroup): string {
  return [
    `Usage: ${PROGRAM} ${group.name} <command> [options]`,
    '',
    group.summary,
    '',
    'Commands:',
    columns(group.commands.map((c) => [usageLine(c, `${group.name} ${c.name}`).slice(PROGRAM.length + 1), c.summary] as const)),
    '',
    `Run "${PROGRAM} ${group.name} <command> --help" for the options of a command.`,
  ].join('\n');
}

export function topHelp(registry: readonly CommandEntry[]): string {
  const rows: Array<readonly [string, string]> = [];
  for (const entry of registry) {
    if (isGroup(entry)) for (const c of entry.commands) rows.push([`${entry.name} ${c.name}`, c.summary]);
    else rows.push([entry.name, entry.summary]);
  }
  return [
    `Usage: ${PROGRAM} <command> [options]`,
    '',
    'Workspace Service: runs the HTTP API and the webhook delivery worker, and administers organisations,',
    'users and API keys. Configuration comes from environment variables (see README.md).',
    '',
    'Commands:',
    columns(rows),
    '',
    'Exit codes: 0 success, 1 failure (error on stderr; with --json also { "error": {...} } on stdout),',
    '2 bad arguments.',
    `Run "${PROGRAM} <command> --help" for the options of a command.`,
  ].join('\n');
}
