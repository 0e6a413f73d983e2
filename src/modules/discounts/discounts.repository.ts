/** The SQL of discounts and their uses. Rows are parsed here; amounts are integers in minor units. */
import { z } from 'zod';
import { Prisma } from '../../__generated__/prisma/client';
import type { DbOrTx, Tx } from '../../kernel/db';
import type { SqlKeysetList } from '../../kernel/keyset';
import { int8, parseFirstRow, parseRows, timestamp, uuid, type RowModel } from '../../kernel/rows';
import { DISCOUNT_KINDS, DISCOUNT_TARGETS, type DiscountRecord } from './discounts.types';

const DiscountRow: RowModel<DiscountRecord> = z.object({
  id: uuid,
  channelId: uuid.nullable(),
  code: z.string().nullable(),
  title: z.string(),
  kind: z.enum(DISCOUNT_KINDS),
  percentBasisPoints: z.number().int().nullable(),
  amount: z.number().int().nullable(),
  currency: z.string().nullable(),
  target: z.enum(DISCOUNT_TARGETS),
  productIds: z.array(uuid),
  categoryIds: z.array(z.string()),
  minimumSubtotal: z.number().int().nullable(),
  startsAt: timestamp.nullable(),
  endsAt: timestamp.nullable(),
  usageLimit: z.number().int().nullable(),
  usageLimitPerBuyer: z.number().int().nullable(),
  combinable: z.boolean(),
  active: z.boolean(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

const COLUMNS = `id, channel_id AS "channelId", code, title, kind, percent_basis_points AS "percentBasisPoints",
  amount, currency, target, product_ids::text[] AS "productIds", category_ids AS "categoryIds",
  minimum_subtotal AS "minimumSubtotal", starts_at AS "startsAt", ends_at AS "endsAt",
  usage_limit AS "usageLimit", usage_limit_per_buyer AS "usageLimitPerBuyer", combinable, active,
  created_at AS "createdAt", updated_at AS "updatedAt"`;

/** The columns a write sets (everything but the id, the tenant and the timestamps). */
export type DiscountColumns = Omit<DiscountRecord, 'id' | 'createdAt' | 'updatedAt'>;

const values = (d: DiscountColumns) => [
  d.channelId,
  d.code,
  d.title,
  d.kind,
  d.percentBasisPoints,
  d.amount,
  d.currency,
  d.target,
  d.productIds,
  d.categoryIds,
  d.minimumSubtotal,
  d.startsAt,
  d.endsAt,
  d.usageLimit,
  d.usageLimitPerBuyer,
  d.combinable,
  d.active,
];

export async function insertDiscount(tx: Tx, tenantId: string, id: string, d: DiscountColumns) {
  const rows = await tx.$queryRawUnsafe<unknown[]>(
    `INSERT INTO discounts (id, tenant_id, channel_id, code, title, kind, percent_basis_points, amount, currency,
       target, product_ids, category_ids, minimum_subtotal, starts_at, ends_at, usage_limit, usage_limit_per_buyer,
       combinable, active)
     VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5, $6, $7::int, $8::int, $9, $10, $11::uuid[], $12::text[], $13::int,
       $14::timestamptz, $15::timestamptz, $16::int, $17::int, $18, $19)
     RETURNING ${COLUMNS}`,
    id,
    tenantId,
    ...values(d),
  );
  return parseFirstRow(DiscountRow, rows)!;
}

/** Replaces every column of a discount; undefined when the tenant has no such discount. */
export async function updateDiscount(tx: Tx, tenantId: string, id: string, d: DiscountColumns) {
  const rows = await tx.$queryRawUnsafe<unknown[]>(
    `UPDATE discounts SET channel_id = $3::uuid, code = $4, title = $5, kind = $6, percent_basis_points = $7::int,
       amount = $8::int, currency = $9, target = $10, product_ids = $11::uuid[], category_ids = $12::text[],
       minimum_subtotal = $13::int, starts_at = $14::timestamptz, ends_at = $15::timestamptz, usage_limit = $16::int,
       usage_limit_per_buyer = $17::int, combinable = $18, active = $19, updated_at = now()
     WHERE tenant_id = $2::uuid AND id = $1::uuid
     RETURNING ${COLUMNS}`,
    id,
    tenantId,
    ...values(d),
  );
  return parseFirstRow(DiscountRow, rows);
}

export async function deleteDiscount(db: DbOrTx, tenantId: string, id: string): Promise<boolean> {
  const count = await db.$executeRawUnsafe(
    `DELETE FROM discounts WHERE tenant_id = $1::uuid AND id = $2::uuid`,
    tenantId,
    id,
  );
  return count > 0;
}

export async function findDiscount(db: DbOrTx, tenantId: string, id: string) {
  return parseFirstRow(
    DiscountRow,
    await db.$queryRawUnsafe<unknown[]>(
      `SELECT ${COLUMNS} FROM discounts WHERE tenant_id = $1::uuid AND id = $2::uuid`,
      tenantId,
      id,
    ),
  );
}

/** The tenant's discounts in id order (creation order), optionally only the one with a code. */
export function discountList(tenantId: string, filter: { code?: string }): SqlKeysetList<DiscountRecord, string> {
  const where = [Prisma.sql`tenant_id = ${tenantId}::uuid`];
  if (filter.code !== undefined) where.push(Prisma.sql`code_lower = lower(${filter.code})`);
  return {
    select: Prisma.sql`SELECT ${Prisma.raw(COLUMNS)} FROM discounts`,
    where,
    key: [Prisma.sql`id`],
    values: (id) => [Prisma.sql`${id}::uuid`],
    row: DiscountRow,
    keyOf: (row) => row.id,
  };
}

/**
 * What `evaluate` weighs, in creation order: the discounts whose code is one of `codes` (lower
 * case; active or not, so an inactive one is told apart from a mistyped one) and the active
 * automatic promotions of the channel (or of every channel).
 */
export async function candidates(db: DbOrTx, tenantId: string, channelId: string, codes: readonly string[]) {
  return parseRows(
    DiscountRow,
    await db.$queryRawUnsafe<unknown[]>(
      `SELECT ${COLUMNS} FROM discounts
        WHERE tenant_id = $1::uuid
          AND (code_lower = ANY($2::text[])
               OR (code IS NULL AND active AND (channel_id IS NULL OR channel_id = $3::uuid)))
        ORDER BY id`,
      tenantId,
      [...codes],
      channelId,
    ),
  );
}

const CountRow = z.object({ discountId: uuid, total: int8, buyer: int8 });

/** How often each discount was used, overall and by `buyerEmail` (lower case; null: 0). */
export async function usageCounts(db: DbOrTx, discountIds: readonly string[], buyerEmail: string | null) {
  if (discountIds.length === 0) return [];
  return parseRows(
    CountRow,
    await db.$queryRawUnsafe<unknown[]>(
      `SELECT discount_id AS "discountId", count(*) AS total,
              count(*) FILTER (WHERE buyer_email = $2::text) AS buyer
         FROM discount_usages WHERE discount_id = ANY($1::uuid[])
        GROUP BY discount_id`,
      [...discountIds],
      buyerEmail,
    ),
  );
}

const LockedRow = z.object({
  id: uuid,
  code: z.string().nullable(),
  usageLimit: z.number().int().nullable(),
  usageLimitPerBuyer: z.number().int().nullable(),
});

/**
 * Locks the discounts' rows until the transaction ends, in id order (so two transactions locking
 * overlapping sets cannot deadlock), and answers their limits.
 */
export async function lockDiscounts(tx: Tx, tenantId: string, ids: readonly string[]) {
  return parseRows(
    LockedRow,
    await tx.$queryRawUnsafe<unknown[]>(
      `SELECT id, code, usage_limit AS "usageLimit", usage_limit_per_buyer AS "usageLimitPerBuyer"
         FROM discounts WHERE tenant_id = $1::uuid AND id = ANY($2::uuid[])
        ORDER BY id FOR UPDATE`,
      tenantId,
      [...ids],
    ),
  );
}

export async function insertUsages(
  tx: Tx,
  tenantId: string,
  usages: readonly { id: string; discountId: string; buyerEmail: string | null; orderId: string }[],
) {
  if (usages.length === 0) return;
  await tx.$executeRawUnsafe(
    `INSERT INTO discount_usages (id, tenant_id, discount_id, buyer_email, order_id)
     SELECT u.id, $1::uuid, u.discount_id, u.buyer_email, u.order_id
       FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::uuid[]) AS u(id, discount_id, buyer_email, order_id)`,
    tenantId,
    usages.map((u) => u.id),
    usages.map((u) => u.discountId),
    usages.map((u) => u.buyerEmail),
    usages.map((u) => u.orderId),
  );
}

/** Which of these ids are products of the tenant. */
export async function existingProducts(db: DbOrTx, tenantId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.$queryRawUnsafe<{ id: string }[]>(
    `SELECT id::text FROM products WHERE tenant_id = $1::uuid AND id = ANY($2::uuid[])`,
    tenantId,
    [...ids],
  );
  return new Set(rows.map((row) => row.id));
}
