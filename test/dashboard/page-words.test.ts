import { describe, expect, it } from 'vitest';
import { fieldMessage } from '../../src/dashboard/form-validation.js';
import { countOf, formatBytes, sentence } from '../../src/lib/text.js';
import { formatDay, formatIsoDay, formatUtc, relativeTime } from '../../src/lib/time.js';
import { openForToken, sealForToken } from '../../src/lib/token-seal.js';

/** The words and times the dashboard shows (issue 23), and the seal of its one-time slot. */
describe('what a page says', () => {
  const at = Date.UTC(2026, 10, 25, 13, 44, 5);

  it('writes every time in one format, UTC, with seconds where asked', () => {
    expect(formatUtc(at)).toBe('25 Nov 2026, 13:44 UTC');
    expect(formatUtc(at, { seconds: true })).toBe('25 Nov 2026, 13:44:05 UTC');
    expect(formatDay(Date.UTC(2026, 0, 1, 23, 59))).toBe('1 Jan 2026');
    expect(formatIsoDay('2026-01-01')).toBe('1 Jan 2026');
    expect(formatUtc(Date.UTC(2031, 11, 31, 23, 59, 59, 999), { seconds: true })).toBe('31 Dec 2031, 23:59:59 UTC');
  });

  it('says recent times relatively within a day, both ways, and nothing beyond', () => {
    expect(relativeTime(at, at + 30_000)).toBe('just now');
    expect(relativeTime(at + 30_000, at)).toBe('in under a minute');
    expect(relativeTime(at, at + 60_000)).toBe('1 minute ago');
    expect(relativeTime(at, at + 3 * 60_000 + 59_000)).toBe('3 minutes ago');
    expect(relativeTime(at + 2 * 3_600_000, at)).toBe('in 2 hours');
    expect(relativeTime(at, at + 23 * 3_600_000 + 59 * 60_000)).toBe('23 hours ago');
    expect(relativeTime(at, at + 24 * 3_600_000)).toBeNull();
  });

  it('writes sizes in human units and counts that agree with their nouns', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1,023 B');
    expect(formatBytes(9 * 1024 + 300)).toBe('9.3 KB');
    expect(formatBytes(12 * 1024 * 1024 + 5)).toBe('12 MB');
    expect(formatBytes(1.5 * 1024 ** 3)).toBe('1.5 GB');
    expect(countOf(1, 'delivery', 'deliveries')).toBe('1 delivery');
    expect(countOf(2_500, 'delivery', 'deliveries')).toBe('2,500 deliveries');
    expect(countOf(0, 'task')).toBe('0 tasks');
  });

  it('turns the API\'s clauses into sentences a person reads', () => {
    expect(sentence('project not found')).toBe('Project not found.');
    expect(sentence('Already a sentence.')).toBe('Already a sentence.');
    expect(fieldMessage('Name', 'must be at least 1 characters')).toBe('Enter a name');
    expect(fieldMessage('Events', 'must have at least 1 item(s)')).toBe('Choose at least one event');
    expect(fieldMessage('Email', 'must be at least 1 characters')).toBe('Enter an email');
    expect(fieldMessage('Title', 'must be 1 to 255 characters')).toBe('Title must be 1 to 255 characters');
  });
});

describe("the session slot's seal", () => {
  const token = 'a-session-token-of-43-characters-or-so-xyz';

  it('opens with the token that sealed it, and with nothing else', () => {
    const sealed = sealForToken(token, '{"secret":"wsk_live"}');
    expect(sealed).not.toContain('wsk_live');
    expect(openForToken(token, sealed)).toBe('{"secret":"wsk_live"}');
    expect(openForToken(`${token}!`, sealed)).toBeNull();
    // Any change to the stored text is refused, not read as something else.
    const [iv, body, tag] = sealed.split('.');
    // The first character (the first byte's top six bits) always changes a byte; a last one may only hold padding bits.
    const flipped = `${iv}.${body!.startsWith('A') ? 'B' : 'A'}${body!.slice(1)}.${tag}`;
    expect(openForToken(token, flipped)).toBeNull();
    expect(openForToken(token, 'not sealed')).toBeNull();
    // A fresh IV each time: the same value never seals to the same text.
    expect(sealForToken(token, 'same')).not.toBe(sealForToken(token, 'same'));
  });
});
