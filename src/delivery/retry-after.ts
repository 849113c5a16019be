/**
 * A `Retry-After` header (RFC 9110 10.2.3) as a delay in milliseconds from `now`: delay-seconds (digits
 * only) or an HTTP date. Null when absent or unreadable (the schedule decides alone); a date in the past
 * is 0. A repeated header (values joined with ", ") is read by its first delay-seconds.
 */
export function retryAfterMs(header: string | undefined, now: number): number | null {
  if (header === undefined) return null;
  const first = header.split(',', 1)[0]!.trim();
  if (/^\d+$/.test(first)) {
    const seconds = Number(first);
    return Number.isSafeInteger(seconds) ? seconds * 1000 : null;
  }
  // An IMF-fixdate has a comma of its own ("Fri, 27 Nov 2026 10:00:00 GMT"): the whole value is the date.
  // Letters are required: Date.parse also reads bare numbers ("-5") as years.
  const at = /[a-z]/i.test(header) ? Date.parse(header.trim()) : NaN;
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
