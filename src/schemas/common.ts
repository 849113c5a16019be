import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    }),
  },
  { $id: 'ErrorResponse', title: 'Error', description: 'Every error has this shape (CONTRACT 1).' },
);

/** The list envelope of CONTRACT section 3. */
export const ListEnvelope = <T extends TSchema>(item: T, title: string) =>
  Type.Object(
    {
      data: Type.Array(item),
      next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
    },
    { title },
  );

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page, 1 to 100.' })),
  cursor: Type.Optional(Type.String({ description: 'next_cursor from a previous page.' })),
};

export const IdParams = Type.Object({ id: Type.String() });

export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T09:30:00.000Z'] });

/** Error responses every authenticated route can give; spread into a route's `response`. */
export const authErrorResponses = {
  400: ErrorResponse,
  401: ErrorResponse,
  403: ErrorResponse,
  429: ErrorResponse,
};

/**
 * A value or null, as a JSON Schema type array (`type: ['string', 'null']`) rather than TypeBox's `anyOf`:
 * fast-json-stringify writes a type array directly, where an `anyOf` makes it validate each value against
 * each branch (for a page of 100 tasks, half its serialisation time; docs/benchmarks.md, issue 30).
 */
export function Nullable<T extends TSchema & { type: string }>(schema: T, options: { description?: string; examples?: unknown[] } = {}) {
  const { type, ...rest } = schema;
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'], ...options });
}
