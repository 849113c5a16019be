/** A GET filter form's values as typed, by field; a field left empty is absent (no filter). */
export type FilterText<F extends string> = Partial<Record<F, string>>;

/** What was typed in the filter fields, trimmed; empty fields dropped. */
export function filterText<F extends string>(fields: readonly F[], values: Partial<Record<string, string | undefined>>): FilterText<F> {
  const text: FilterText<F> = {};
  for (const field of fields) {
    const value = values[field]?.trim();
    if (value) text[field] = value;
  }
  return text;
}

/** The list page at `path` with the filters (and a page cursor) in its query, so a link keeps them. */
export function filteredHref<F extends string>(path: string, fields: readonly F[], text: FilterText<F>, cursor?: string | null): string {
  const query = new URLSearchParams();
  for (const field of fields) {
    const value = text[field];
    if (value !== undefined) query.set(field, value);
  }
  if (cursor) query.set('cursor', cursor);
  const qs = query.toString();
  return qs ? `${path}?${qs}` : path;
}
