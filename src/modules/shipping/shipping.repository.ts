/** The SQL of shipping methods, and the catalog reads `optionsFor` plans with. Rows are parsed here. */
import { z } from 'zod';
import { Prisma } from '../../__generated__/prisma/client';
import type { DbOrTx, Tx } from '../../kernel/db';
import type { SqlKeysetList } from '../../kernel/keyset';
import { parseRows, timestamp, uuid, type RowModel } from '../../kernel/rows';
import type { ShippingMethodInput } from './shipping.schemas';
import { SHIPPING_METHOD_TYPES, SHIPPING_RATE_KINDS, type ShippingMethodRecord } from './shipping.types';

const MethodRow: RowModel<ShippingMethodRecord> = z.object({
  id: uuid,
  channelId: uuid,
  currency: z.string(),
  title: z.string(),
  type: z.enum(SHIPPING_METHOD_TYPES),
  countries: z.array(z.string()),
  rateKind: z.enum(SHIPPING_RATE_KINDS),
  flatAmount: z.number().int(),
  freeAbove: z.number().int().nullable(),
  weightBrackets: z.array(z.object({ upToGrams: z.number().int(), amount: z.number().int() })),
  pickupWarehouseIds: z.array(uuid),
  active: z.boolean(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

const METHOD_SELECT = `SELECT m.id, m.channel_id AS "channelId", c.currency, m.title, m.type, m.countries,
  m.rate_kind AS "rateKind", m.flat_amount AS "flatAmount", m.free_above AS "freeAbove",
  m.weight_brackets AS "weightBrackets", m.pickup_warehouse_ids::text[] AS "pickupWarehouseIds", m.active,
  m.created_at AS "createdAt", m.updated_at AS "updatedAt"
  FROM shipping_methods m JOIN sales_channels c ON c.id = m.channel_id`;

/** One method of the tenant, or undefined. */
export async function findMethod(db: DbOrTx, tenantId: string, id: string) {
  const rows = await db.$queryRawUnsafe<unknown[]>(
    `${METHOD_SELECT} WHERE m.tenant_id = $1::uuid AND m.id = $2::uuid`,
    tenantId,
    id,
  );
  return parseRows(MethodRow, rows)[0];
}

/** The methods of a channel in creation order; only the active ones with `activeOnly`. */
export async function methodsOfChannel(db: DbOrTx, tenantId: string, channelId: string, activeOnly: boolean) {
  const rows = await db.$queryRawUnsafe<unknown[]>(
    `${METHOD_SELECT} WHERE m.tenant_id = $1::uuid AND m.channel_id = $2::uuid AND ($3::boolean = false OR m.active)
      ORDER BY m.id`,
    tenantId,
    channelId,
    activeOnly,
  );
  return parseRows(MethodRow, rows);
}

/** The tenant's methods in id order (creation order), optionally of one channel. */
export function methodList(
  tenantId: string,
  filter: { channelId?: string },
): SqlKeysetList<ShippingMethodRecord, string> {
  const where = [Prisma.sql`m.tenant_id = ${tenantId}::uuid`];
  if (filter.channelId !== undefined) where.push(Prisma.sql`m.channel_id = ${filter.channelId}::uuid`);
  return {
    select: Prisma.raw(METHOD_SELECT),
    where,
    key: [Prisma.sql`m.id`],
    values: (id) => [Prisma.sql`${id}::uuid`],
    row: MethodRow,
    keyOf: (row) => row.id,
  };
}

const columns = (input: ShippingMethodInput) => [
  input.channelId,
  input.title,
  input.type,
  input.countries,
  input.rateKind,
  input.flatAmount,
  input.freeAbove,
  JSON.stringify(input.weightBrackets),
  input.pickupWarehouseIds,
  input.active,
];

export async function insertMethod(tx: Tx, tenantId: string, id: string, input: ShippingMethodInput) {
  await tx.$executeRawUnsafe(
    `INSERT INTO shipping_methods (id, tenant_id, channel_id, title, type, countries, rate_kind, flat_amount,
       free_above, weight_brackets, pickup_warehouse_ids, active)
     VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5, $6::text[], $7, $8, $9, $10::jsonb, $11::uuid[], $12)`,
    id,
    tenantId,
    ...columns(input),
  );
}

/** Replaces every field of a method; false when the tenant has no such method. */
export async function updateMethod(tx: Tx, tenantId: string, id: string, input: ShippingMethodInput) {
  const count = await tx.$executeRawUnsafe(
    `UPDATE shipping_methods SET channel_id = $3::uuid, title = $4, type = $5, countries = $6::text[], rate_kind = $7,
       flat_amount = $8, free_above = $9, weight_brackets = $10::jsonb, pickup_warehouse_ids = $11::uuid[],
       active = $12, updated_at = now()
      WHERE id = $1::uuid AND tenant_id = $2::uuid`,
    id,
    tenantId,
    ...columns(input),
  );
  return count > 0;
}

export async function deleteMethod(db: DbOrTx, tenantId: string, id: string) {
  const count = await db.$executeRawUnsafe(
    `DELETE FROM shipping_methods WHERE tenant_id = $1::uuid AND id = $2::uuid`,
    tenantId,
    id,
  );
  return count > 0;
}

// The catalog, read to plan with (one statement each)

const ChannelWarehouseRow = z.object({ warehouseId: uuid, businessId: uuid, name: z.string() });

/** The channel's warehouses in priority order, with their business and name. */
export async function channelWarehouses(db: DbOrTx, tenantId: string, channelId: string) {
  const rows = await db.$queryRawUnsafe<unknown[]>(
    `SELECT l.warehouse_id AS "warehouseId", w.business_id AS "businessId", w.name
       FROM channel_warehouses l JOIN warehouses w ON w.id = l.warehouse_id
      WHERE l.tenant_id = $1::uuid AND l.channel_id = $2::uuid
      ORDER BY l.priority`,
    tenantId,
    channelId,
  );
  return parseRows(ChannelWarehouseRow, rows);
}

const ProductRow = z.object({ id: uuid, sku: z.string(), weightGrams: z.number().int().nullable() });

/** The tenant's products with these ids (those that exist): SKU and weight. */
export async function productsOf(db: DbOrTx, tenantId: string, ids: readonly string[]) {
  const rows = await db.$queryRawUnsafe<unknown[]>(
    `SELECT id, sku, weight_grams AS "weightGrams" FROM products WHERE tenant_id = $1::uuid AND id = ANY($2::uuid[])`,
    tenantId,
    [...ids],
  );
  return parseRows(ProductRow, rows);
}
