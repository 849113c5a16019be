/** Milliseconds since the epoch; stored as integers in both dialects. */
export type EpochMs = number;

export interface Clock {
  now(): EpochMs;
}

export const systemClock: Clock = { now: () => Date.now() };

/** The contract's timestamp format: UTC, millisecond precision, `2026-11-22T09:30:00.000Z`. */
export function toIso(ms: EpochMs): string {
  return new Date(ms).toISOString();
}
