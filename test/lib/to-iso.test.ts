import { describe, expect, it } from 'vitest';
import { toIso } from '../../src/lib/time.js';

// toIso formats without Date#toISOString on its fast path; it must agree with it everywhere.
describe('toIso', () => {
  it('matches Date#toISOString across days, boundaries and the whole four-digit range', () => {
    const samples = [0, 1, 999, 1000, 86_399_999, 86_400_000, 951_782_400_000, 1_795_392_000_000, 253_402_300_799_999];
    let x = 123_456_789;
    for (let i = 0; i < 4_000; i++) {
      x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
      samples.push(Math.floor((x / 2_147_483_648) * 253_402_300_799_999));
      samples.push(1_700_000_000_000 + x); // many calls within a few days, as a list page makes
    }
    for (const ms of samples) expect(toIso(ms)).toBe(new Date(ms).toISOString());
  });

  it('falls back to Date for values outside the fast path', () => {
    for (const ms of [-1, -86_400_001, 253_402_300_800_000, 1.5]) expect(toIso(ms)).toBe(new Date(ms).toISOString());
    expect(() => toIso(Number.NaN)).toThrow(RangeError);
  });
});
