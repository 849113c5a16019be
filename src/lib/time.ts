import { countOf } from './text.js';

/** Milliseconds since the epoch; stored as integers in both dialects. */
export type EpochMs = number;

export interface Clock {
  now(): EpochMs;
}

export const systemClock: Clock = { now: () => Date.now() };

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
const MAX_ISO_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z, the last four-digit year
/** The date part of recent days, `2026-11-22T`: a page mixes a few days (created, updated, due dates). */
const dayPrefixes = new Map<number, string>();
const MAX_CACHED_DAYS = 1024;
/** The last day asked for, answered without the map: most timestamps of a page share it. */
let lastDay = NaN;
let lastPrefix = '';

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * The contract's timestamp format: UTC, millisecond precision, `2026-11-22T09:30:00.000Z`. Identical
 * to `Date#toISOString`, which it calls for the date part only the first time a day is met: a page of
 * 100 items formats hundreds of timestamps over a few days, and the full call costs several times more.
 */
export function toIso(ms: EpochMs): string {
  if (!Number.isInteger(ms) || ms < 0 || ms > MAX_ISO_MS) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    let prefix = dayPrefixes.get(day);
    if (prefix === undefined) {
      prefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
      if (dayPrefixes.size >= MAX_CACHED_DAYS) dayPrefixes.clear();
      dayPrefixes.set(day, prefix);
    }
    lastDay = day;
    lastPrefix = prefix;
  }
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${lastPrefix}${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(rest - seconds * 1000)}Z`;
}

/** A period in words, in the largest unit that divides it: "7 days", "1 day", "12 hours", "90 minutes". */
export function durationInWords(ms: number): string {
  const units: [number, string][] = [
    [DAY_MS, 'day'],
    [HOUR_MS, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ];
  for (const [size, unit] of units) {
    if (ms >= size && ms % size === 0) return countOf(ms / size, unit);
  }
  return countOf(ms, 'ms', 'ms');
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A day as people read it, in UTC: "25 Nov 2026". */
export function formatDay(ms: EpochMs): string {
  const at = new Date(ms);
  return `${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]} ${at.getUTCFullYear()}`;
}

/** "25 Nov 2026" for an ISO day ("2026-11-25"), without a Date: the overview's 30 days of requests. */
export function formatIsoDay(day: string): string {
  return `${Number(day.slice(8, 10))} ${MONTHS[Number(day.slice(5, 7)) - 1]} ${day.slice(0, 4)}`;
}

/**
 * The one format of every time a person reads (DASHBOARD 1): "25 Nov 2026, 13:44 UTC"; seconds on request.
 * Built from `toIso` (its day part cached), as pages format hundreds of times over a few days.
 */
export function formatUtc(ms: EpochMs, options: { seconds?: boolean } = {}): string {
  const iso = toIso(ms);
  return `${formatIsoDay(iso)}, ${iso.slice(11, options.seconds ? 19 : 16)} UTC`;
}

/**
 * "3 minutes ago" / "in 2 hours" for a time within a day of `now`, else null (the exact time reads better
 * than "40 days ago"). Under a minute is "just now" (or "in under a minute").
 */
export function relativeTime(ms: EpochMs, now: EpochMs): string | null {
  const diff = ms - now;
  const abs = Math.abs(diff);
  if (abs >= DAY_MS) return null;
  if (abs < 60_000) return diff <= 0 ? 'just now' : 'in under a minute';
  const words = abs < HOUR_MS ? countOf(Math.floor(abs / 60_000), 'minute') : countOf(Math.floor(abs / HOUR_MS), 'hour');
  return diff < 0 ? `${words} ago` : `in ${words}`;
}
