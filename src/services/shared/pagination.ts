import { fieldError } from '../../errors.js';

export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

export interface PageResult<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Cursors are opaque to clients: base64url of a versioned keyset position (the row's `seq`). Keyset
 * paging keeps every page's cost constant and the walk stable under concurrent inserts and deletes.
 */
export function encodeCursor(seq: number): string {
  return Buffer.from(`c1:${seq}`).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): number | null {
  if (cursor === undefined) return null;
  const text = /^[A-Za-z0-9_-]{1,64}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString() : '';
  const match = /^c1:([1-9]\d{0,15})$/.exec(text);
  if (!match) throw fieldError('cursor', 'is not a valid cursor; pass next_cursor from a previous page');
  return Number(match[1]);
}

export function pageResult<R extends { seq: number }, T>(
  page: { rows: R[]; nextSeq: number | null },
  map: (row: R) => T,
): PageResult<T> {
  return { items: page.rows.map(map), nextCursor: page.nextSeq === null ? null : encodeCursor(page.nextSeq) };
}

/** The contract's list envelope (CONTRACT section 3), as the API and the CLI's --json present a page. */
export function toListEnvelope<T>(page: PageResult<T>): { data: T[]; next_cursor: string | null } {
  return { data: page.items, next_cursor: page.nextCursor };
}
