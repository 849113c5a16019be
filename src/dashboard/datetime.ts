import type { ErrorDetail } from '../errors.js';
import { toIso } from '../lib/time.js';

// Time fields are text in one format, `2026-01-31 14:30` (UTC): a datetime-local picker would show the
// browser's local zone and 12-hour clock beside a label saying UTC. `T` for the space, seconds and a
// trailing Z, as people paste times from the CSV or the API, are taken too.
const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?Z?$/;

/** A time field's value read as UTC, in epoch ms; null when it is not a real date and time. */
export function parseUtcDateTime(value: string): number | null {
  const match = LOCAL_TIME.exec(value);
  if (!match) return null;
  const [, year, month, day, hour, minute, second = '0', fraction = '0'] = match;
  const ms = Number(fraction.padEnd(3, '0'));
  const at = new Date(0);
  at.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  at.setUTCHours(Number(hour), Number(minute), Number(second), ms);
  // Date rolls 31 February over into March; a value that does not survive the round trip is not a date.
  const same =
    at.getUTCFullYear() === Number(year) &&
    at.getUTCMonth() === Number(month) - 1 &&
    at.getUTCDate() === Number(day) &&
    at.getUTCHours() === Number(hour) &&
    at.getUTCMinutes() === Number(minute) &&
    at.getUTCSeconds() === Number(second);
  return same ? at.getTime() : null;
}

/** An instant as a time field's value in UTC, to the minute (`2026-01-31 14:30`): what the fields above read back. */
export function utcDateTimeValue(ms: number): string {
  return toIso(ms).slice(0, 16).replace('T', ' ');
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** Whether a filter value is a calendar day (what a `type="date"` field sends), not a day and a time. */
export function isDateOnly(value: string | undefined): boolean {
  return value !== undefined && DATE_ONLY.test(value);
}

/**
 * A filter form's time field read as UTC: undefined when empty; when it cannot be read, undefined and a
 * problem naming the field added to `details`. A day alone (a date field) is its first moment, or with
 * `dayEnd` (a "To" field: that day included) the first moment of the next day.
 */
export function readTimeField<F extends string>(text: Partial<Record<F, string>>, field: F, details: ErrorDetail[], dayEnd = false): number | undefined {
  const value = text[field];
  if (value === undefined) return undefined;
  const dateOnly = isDateOnly(value);
  const at = parseUtcDateTime(dateOnly ? `${value} 00:00` : value);
  if (at === null) details.push({ field, message: 'must be a date, or a date and time in UTC such as 2026-01-31 14:30' });
  if (at !== null && dateOnly && dayEnd) return at + 86_400_000;
  return at ?? undefined;
}
