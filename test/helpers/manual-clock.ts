import type { Clock } from '../../src/lib/time.js';

/** A clock the test moves by hand, so windows and expiries are crossed without sleeping. */
export class ManualClock implements Clock {
  constructor(private time = Date.UTC(2026, 10, 22, 9, 30, 0, 0)) {}

  now(): number {
    return this.time;
  }

  advance(ms: number): void {
    this.time += ms;
  }

  set(ms: number): void {
    this.time = ms;
  }
}
