/**
 * The one shape of a keyset list over SQL. A repository describes its list once (the rows it
 * selects, its filter, its sort key) and gets both queries `paginate` needs: a page after or
 * before a key, and the probe for a row beyond a key. Both use the same conditions, so they
 * cannot drift apart.
 */
import { Prisma } from '../__generated__/prisma/client';
import type { DbOrTx } from './db';
import type { KeysetQuery, KeysetSource } from './pagination';
import { z } from 'zod';
import { parseFirstRow, parseRows, type RowModel } from './rows';

const ExistsRow = z.object({ exists: z.boolean() });

type Sql = Prisma.Sql;

export interface SqlKeysetList<Row, K> {
  /** `SELECT ... FROM ...` (joins included), without WHERE. */
  select: Sql;
  /** The list's filter, joined with AND (empty: every row). */
  where: Sql[];
  /** The sort key's expressions in order, e.g. [sql`p.sku`, sql`i.id`]. */
  key: Sql[];
  /** A key's values as SQL, in the order of `key` (with their casts, e.g. sql`${id}::uuid`). */
  values: (key: K) => Sql[];
  /** Whether the list is sorted from the largest key down. */
  descending?: boolean;
  /** The model each selected row is parsed with. */
  row: RowModel<Row>;
  keyOf: (row: Row) => K;
}

/** The conditions joined with AND; TRUE when there are none. */
export const and = (conditions: Sql[]) =>
  conditions.length === 0 ? Prisma.sql`TRUE` : Prisma.join(conditions, ' AND ');

/** `(key...) > (values...)`: rows beyond `key` in the direction of `forwards`, in the list's order. */
function beyond<Row, K>(list: SqlKeysetList<Row, K>, key: K, forwards: boolean): Sql {
  const operator = forwards !== (list.descending ?? false) ? '>' : '<';
  return Prisma.sql`(${Prisma.join(list.key)}) ${Prisma.raw(operator)} (${Prisma.join(list.values(key))})`;
}

/** The page query: up to `take` rows after `after`, or before `before` walking backwards. */
export function keysetPageSql<Row, K>(list: SqlKeysetList<Row, K>, query: KeysetQuery<K>): Sql {
  const conditions = [...list.where];
  if (query.after !== undefined) conditions.push(beyond(list, query.after, true));
  if (query.before !== undefined) conditions.push(beyond(list, query.before, false));
  // Walking backwards flips the order; a descending list flips it once more.
  const direction = Prisma.raw((list.descending ?? false) === query.backwards ? 'ASC' : 'DESC');
  const order = Prisma.join(list.key.map((expression) => Prisma.sql`${expression} ${direction}`));
  return Prisma.sql`${list.select} WHERE ${and(conditions)} ORDER BY ${order} LIMIT ${query.take}`;
}

/** The probe: whether a row of the list lies before or after `key`. */
export function keysetExistsSql<Row, K>(list: SqlKeysetList<Row, K>, direction: 'before' | 'after', key: K): Sql {
  const conditions = [...list.where, beyond(list, key, direction === 'after')];
  return Prisma.sql`SELECT EXISTS (${list.select} WHERE ${and(conditions)}) AS "exists"`;
}

/** The `paginate` source of a list: its page query and its probe, run on `db`. */
export function sqlKeysetSource<Row, K>(db: DbOrTx, list: SqlKeysetList<Row, K>): KeysetSource<Row, K> {
  return {
    fetch: async (query) => parseRows(list.row, await db.$queryRaw<unknown[]>(keysetPageSql(list, query))),
    exists: async (direction, key) => {
      const probe = parseFirstRow(ExistsRow, await db.$queryRaw<unknown[]>(keysetExistsSql(list, direction, key)));
      return probe?.exists === true;
    },
    keyOf: list.keyOf,
  };
}

/** The two Prisma delegate methods a model list needs. */
export interface KeysetDelegate<Row> {
  findMany(args: { where: object; orderBy: object; take: number }): Promise<Row[]>;
  findFirst(args: { where: object; select: object }): Promise<unknown>;
}

/**
 * The `paginate` source of a Prisma model's rows narrowed by `where` and ordered by one unique
 * column (`id`: UUIDv7, creation order; or a tenant-unique `key`).
 */
export function modelKeysetSource<Row extends Record<F, string>, F extends string>(
  delegate: KeysetDelegate<Row>,
  where: object,
  column: F,
): KeysetSource<Row, string> {
  return {
    fetch: (query) =>
      delegate.findMany({
        where: {
          ...where,
          ...(query.after !== undefined ? { [column]: { gt: query.after } } : {}),
          ...(query.before !== undefined ? { [column]: { lt: query.before } } : {}),
        },
        orderBy: { [column]: query.backwards ? 'desc' : 'asc' },
        take: query.take,
      }),
    exists: async (direction, key) =>
      (await delegate.findFirst({
        where: { ...where, [column]: direction === 'before' ? { lt: key } : { gt: key } },
        select: { [column]: true },
      })) !== null,
    keyOf: (row) => row[column],
  };
}
