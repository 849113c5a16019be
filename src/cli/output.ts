import { ConfigError } from '../config.js';
import { DomainError, type ErrorDetail } from '../errors.js';
import { UsageError } from './command.js';

/** The body printed on stdout with --json when a command fails; the HTTP API's error shape. */
export interface CliErrorBody {
  error: { code: string; message: string; details?: ErrorDetail[] };
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export function writeOut(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function writeErr(text: string): void {
  process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function writeJson(value: unknown): void {
  writeOut(JSON.stringify(value, null, 2));
}

/** Maps anything a command throws to an exit code, a stderr message and the --json error body. */
export function describeFailure(err: unknown): { exitCode: number; body: CliErrorBody; text: string } {
  if (err instanceof UsageError) {
    return { exitCode: EXIT_USAGE, body: { error: { code: 'invalid_arguments', message: err.message } }, text: err.message };
  }
  if (err instanceof DomainError) {
    const details = err.details && err.details.length > 1 ? err.details.map((d) => `\n  ${d.field}: ${d.message}`).join('') : '';
    return { exitCode: EXIT_FAILURE, body: err.toBody(), text: `${err.message}${details}` };
  }
  if (err instanceof ConfigError) {
    return { exitCode: EXIT_FAILURE, body: { error: { code: 'invalid_configuration', message: err.message } }, text: err.message };
  }
  // An operator's tool: the cause (e.g. "connect ECONNREFUSED 127.0.0.1:5432") is what they need to see.
  const message = err instanceof Error ? err.message : String(err);
  return { exitCode: EXIT_FAILURE, body: { error: { code: 'internal_error', message } }, text: message };
}

/** `label  value` lines with aligned labels; null/undefined values show as `-`. */
export function formatFields(rows: ReadonlyArray<readonly [string, unknown]>): string {
  const width = Math.max(0, ...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value === null || value === undefined ? '-' : String(value)}`).join('\n');
}

/** A plain-text table of `items` over the given columns. */
export function formatTable<T extends object>(items: readonly T[], keys: ReadonlyArray<keyof T & string>): string {
  if (items.length === 0) return '(none)';
  const cells = items.map((item) => keys.map((k) => {
    const value = item[k];
    return value === null || value === undefined ? '-' : String(value);
  }));
  const header = keys.map((k) => k.toUpperCase());
  const widths = keys.map((_, i) => Math.max(header[i]!.length, ...cells.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), ...cells.map(line)].join('\n');
}
