/**
 * CSV as RFC 4180 writes it (CRLF line ends, fields quoted only when they must be), made safe to open in a
 * spreadsheet: a cell that starts with a character a spreadsheet reads as the start of a formula (`=`, `+`,
 * `-`, `@`) or that some of them strip before doing so (tab, CR) gets a leading `'` (OWASP "CSV injection"),
 * so `=HYPERLINK(...)` in a project name is shown as text, never evaluated.
 */

export type CsvValue = string | number | boolean | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell: null and undefined are empty; formula starters are neutralised, then the cell is quoted if needed. */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One record, terminated by CRLF. */
export function csvLine(values: readonly CsvValue[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}
