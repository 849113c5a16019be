const counts = new Intl.NumberFormat('en-US');

/** 1234 → "1,234". */
export function formatCount(n: number): string {
  return counts.format(n);
}

/**
 * `part` of `whole` as a percentage with one decimal, rounded to the nearest tenth (3/21 → "14.3%", 2/3 →
 * "66.7%"), except that anything short of all never reads "100.0%" and anything above none never "0.0%":
 * 1999/2000 → "99.9%", 1/2000 → "0.1%".
 */
export function formatShare(part: number, whole: number): string {
  if (whole <= 0 || part <= 0) return '0%';
  if (part >= whole) return '100%';
  const tenths = Math.max(1, Math.min(999, Math.round((part * 1000) / whole)));
  return `${(tenths / 10).toFixed(1)}%`;
}
