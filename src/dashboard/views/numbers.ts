const counts = new Intl.NumberFormat('en-US');

/** 1234 → "1,234". */
export function formatCount(n: number): string {
  return counts.format(n);
}

/**
 * `part` of `whole` as a percentage with one decimal, rounded down so that anything short of all never
 * reads "100.0%" and anything above none never reads "0.0%": 197/200 → "98.5%", 1999/2000 → "99.9%".
 */
export function formatShare(part: number, whole: number): string {
  if (whole <= 0 || part <= 0) return '0%';
  if (part >= whole) return '100%';
  const tenths = Math.max(1, Math.min(999, Math.floor((part * 1000) / whole)));
  return `${(tenths / 10).toFixed(1)}%`;
}
