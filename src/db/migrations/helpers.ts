import type { ColumnDataType, ColumnDefinitionBuilder } from 'kysely';
import type { SqlDialect } from '../dialect.js';

type ColumnArgs = [ColumnDataType, (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder];

/** An auto-incrementing integer primary key, spelled the way each dialect wants it. */
export function seqColumn(dialect: SqlDialect): ColumnArgs {
  return dialect === 'postgres'
    ? ['bigserial', (c) => c.primaryKey()]
    : ['integer', (c) => c.primaryKey().autoIncrement()];
}
