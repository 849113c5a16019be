import { describe, expect, it } from 'vitest';
import { csvCell, csvLine } from '../../src/lib/csv.js';

describe('csv', () => {
  it.each([
    ['=', '=HYPERLINK("http://evil.example","x")', `"'=HYPERLINK(""http://evil.example"",""x"")"`],
    ['+', '+1+2', "'+1+2"],
    ['-', '-2+3', "'-2+3"],
    ['@', '@SUM(A1)', "'@SUM(A1)"],
    ['tab', '\t=1', "'\t=1"],
    ['CR', '\r=1', `"'\r=1"`],
  ])('prefixes a cell starting with %s with a quote mark, before quoting', (_label, value, expected) => {
    expect(csvCell(value)).toBe(expected);
  });

  it('leaves formula characters alone when they are not at the start', () => {
    expect(csvCell('a=b')).toBe('a=b');
    expect(csvCell('x-1')).toBe('x-1');
    expect(csvCell(' =1')).toBe(' =1');
    expect(csvCell("'=1")).toBe("'=1");
  });

  it('quotes fields holding a comma, a quote, CR or LF, doubling quotes', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line1\nline2')).toBe('"line1\nline2"');
    expect(csvCell('line1\r\nline2')).toBe('"line1\r\nline2"');
    expect(csvCell('"')).toBe('""""');
  });

  it('writes null and undefined as empty cells, numbers and booleans as text', () => {
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell('')).toBe('');
    expect(csvCell(42)).toBe('42');
    expect(csvCell(false)).toBe('false');
  });

  it('passes unicode through unchanged', () => {
    expect(csvCell('Zoë Ünal 日本語 🚀')).toBe('Zoë Ünal 日本語 🚀');
    expect(csvCell('Café, Straße')).toBe('"Café, Straße"');
    expect(csvCell('\u2028x')).toBe('\u2028x');
  });

  it('joins cells with commas and ends a line with CRLF', () => {
    expect(csvLine(['a', null, 'b,c', '=x', 1])).toBe(`a,,"b,c",'=x,1\r\n`);
    expect(csvLine([])).toBe('\r\n');
  });
});
