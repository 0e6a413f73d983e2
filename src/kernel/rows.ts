/**
 * Raw SQL rows are parsed at the repository boundary with zod row models, so that what a
 * repository returns has the type it claims: int8 columns and aggregates arrive as bigint and
 * become numbers here, once, instead of being cast and fixed up by hand in services.
 */
import { z } from 'zod';

export type RowModel<Row> = z.ZodType<Row, unknown>;

/** An int8 column, count or sum (bigint from the driver) as a number; all of ours fit 2^53. */
export const int8 = z.union([z.bigint(), z.number()]).transform(Number);
/** A nullable int8 column. */
export const int8OrNull = int8.nullable();
/** A numeric column (Prisma hands a Decimal, a string or a number) as a number. */
export const numeric = z
  .union([
    z.number(),
    z.string(),
    z.custom<{ toNumber(): number }>((value) => typeof value === 'object' && value !== null),
  ])
  .transform((value) => (typeof value === 'object' ? value.toNumber() : Number(value)));
export const uuid = z.string();
export const timestamp = z.date();

/** Parses the rows of one query with `model`; a row that does not fit is a bug, thrown as such. */
export function parseRows<Row>(model: RowModel<Row>, rows: unknown[]): Row[] {
  return rows.map((row) => model.parse(row));
}

/** The first row of a query, parsed, or undefined. */
export function parseFirstRow<Row>(model: RowModel<Row>, rows: unknown[]): Row | undefined {
  return rows.length === 0 ? undefined : model.parse(rows[0]);
}
