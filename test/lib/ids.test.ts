import { describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';

// newId draws from a pooled CSPRNG buffer; ids must keep their shape, be unique and stay uniform.
describe('newId', () => {
  it('gives prefix_ and 24 base-36 characters, unique across many pool refills, every character in use', () => {
    const seen = new Set<string>();
    const counts = new Map<string, number>();
    for (let i = 0; i < 20_000; i++) {
      const id = newId('proj');
      expect(id).toMatch(/^proj_[0-9a-z]{24}$/);
      seen.add(id);
      for (const ch of id.slice(5)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    }
    expect(seen.size).toBe(20_000);
    expect(counts.size).toBe(36);
    // 480,000 characters: each of the 36 expected ~13,333 times; far outside this band means bias.
    for (const n of counts.values()) expect(Math.abs(n - 480_000 / 36)).toBeLessThan(700);
  });
});
