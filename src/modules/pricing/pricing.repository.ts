/** The SQL of prices and tax zones. Rows are parsed here; amounts are integers in minor units. */
import { z } from 'zod';
import { Prisma } from '../../__generated__/prisma/client';
import type { DbOrTx, Tx } from '../../kernel/db';
import { isUuid } from '../../kernel/ids';
import type { SqlKeysetList } from '../../kernel/keyset';
import { parseRows, timestamp, uuid, type RowModel } from '../../kernel/rows';
import { TAX_CLASSES, type PriceRecord, type TaxRateRecord, type TaxZoneRecord } from './pricing.types';

const PriceRow: RowModel<PriceRecord> = z.object({
  id: uuid,
  productId: uuid,
  channelId: uuid.nullable(),
  currency: z.string(),
  amount: z.number().int(),
  compareAt: z.number().int().nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

const PRICE_COLUMNS = `id, product_id AS "productId", channel_id AS "channelId", currency, amount,
  compare_at AS "compareAt", created_at AS "createdAt", updated_at AS "updatedAt"`;

/** A price as the bulk write gives it (channel null: the product's price in the currency). */
export interface PriceWrite {
  id: string;
  productId: string;
  channelId: string | null;
  currency: string;
  amount: number;
  compareAt: number | null;
}

/** Sets the prices (insert or replace, one statement); returns the rows in the order given. */
export async function upsertPrices(tx: Tx, tenantId: string, prices: readonly PriceWrite[]): Promise<PriceRecord[]> {
  const rows = await tx.$queryRawUnsafe<unknown[]>(
    `INSERT INTO prices (id, tenant_id, product_id, channel_id, currency, amount, compare_at)
     SELECT i.id, $1::uuid, i.product_id, i.channel_id, i.currency, i.amount, i.compare_at
       FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::int[], $7::int[])
            WITH ORDINALITY AS i(id, product_id, channel_id, currency, amount, compare_at, ordinal)
      ORDER BY i.ordinal
     ON CONFLICT (tenant_id, product_id, currency, channel_id)
     DO UPDATE SET amount = EXCLUDED.amount, compare_at = EXCLUDED.compare_at, updated_at = now()
     RETURNING ${PRICE_COLUMNS}`,
    tenantId,
    prices.map((p) => p.id),
    prices.map((p) => p.productId),
    prices.map((p) => p.channelId),
    prices.map((p) => p.currency),
    prices.map((p) => p.amount),
    prices.map((p) => p.compareAt),
  );
  const parsed = parseRows(PriceRow, rows);
  const key = (p: { productId: string; channelId: string | null; currency: string }) =>
    `${p.productId}|${p.channelId ?? ''}|${p.currency}`;
  const byKey = new Map(parsed.map((row) => [key(row), row]));
  return prices.map((p) => byKey.get(key(p))!);
}

/** Removes the prices named by (product, currency, channel); returns how many there were. */
export async function deletePrices(
  tx: Tx,
  tenantId: string,
  keys: readonly { productId: string; channelId: string | null; currency: string }[],
): Promise<number> {
  return tx.$executeRawUnsafe(
    `DELETE FROM prices p
      USING unnest($2::uuid[], $3::uuid[], $4::text[]) AS k(product_id, channel_id, currency)
      WHERE p.tenant_id = $1::uuid AND p.product_id = k.product_id AND p.currency = k.currency
        AND p.channel_id IS NOT DISTINCT FROM k.channel_id`,
    tenantId,
    keys.map((k) => k.productId),
    keys.map((k) => k.channelId),
    keys.map((k) => k.currency),
  );
}

/** The prices of these products (every currency and channel), by product, channel (none first), currency. */
export async function pricesOfProducts(db: DbOrTx, tenantId: string, productIds: readonly string[]) {
  const rows = await db.$queryRawUnsafe<unknown[]>(
    `SELECT ${PRICE_COLUMNS} FROM prices
      WHERE tenant_id = $1::uuid AND product_id = ANY($2::uuid[])
      ORDER BY product_id, channel_id NULLS FIRST, currency`,
    tenantId,
    [...productIds],
  );
  return parseRows(PriceRow, rows);
}

/** The tenant's prices in id order (creation order), optionally of one product, channel or currency. */
export function priceList(
  tenantId: string,
  filter: { productId?: string; channelId?: string; currency?: string },
): SqlKeysetList<PriceRecord, string> {
  const where = [Prisma.sql`tenant_id = ${tenantId}::uuid`];
  if (filter.productId !== undefined) where.push(Prisma.sql`product_id = ${filter.productId}::uuid`);
  if (filter.channelId !== undefined) where.push(Prisma.sql`channel_id = ${filter.channelId}::uuid`);
  if (filter.currency !== undefined) where.push(Prisma.sql`currency = ${filter.currency}`);
  return {
    select: Prisma.sql`SELECT ${Prisma.raw(PRICE_COLUMNS)} FROM prices`,
    where,
    key: [Prisma.sql`id`],
    values: (id) => [Prisma.sql`${id}::uuid`],
    row: PriceRow,
    keyOf: (row) => row.id,
  };
}

const PriceLineRow = z.object({
  productId: uuid,
  taxClass: z.enum(TAX_CLASSES),
  amount: z.number().int(),
  compareAt: z.number().int().nullable(),
});

/**
 * The price of each product that has one in the channel: the channel's override in its currency,
 * else the product's price in that currency; with the product's tax class. One statement.
 */
export async function channelPrices(
  db: DbOrTx,
  tenantId: string,
  channelId: string,
  currency: string,
  productIds: readonly string[],
) {
  const rows = await db.$queryRawUnsafe<unknown[]>(
    `SELECT DISTINCT ON (p.id) p.id AS "productId", p.tax_class AS "taxClass", pr.amount, pr.compare_at AS "compareAt"
       FROM products p
       JOIN prices pr ON pr.tenant_id = p.tenant_id AND pr.product_id = p.id AND pr.currency = $3::text
                     AND (pr.channel_id IS NULL OR pr.channel_id = $2::uuid)
      WHERE p.tenant_id = $1::uuid AND p.id = ANY($4::uuid[])
      ORDER BY p.id, pr.channel_id NULLS LAST`,
    tenantId,
    channelId,
    currency,
    [...productIds],
  );
  return parseRows(PriceLineRow, rows);
}

/** Which of these ids are products of the tenant. */
export async function existingProducts(db: DbOrTx, tenantId: string, ids: readonly string[]): Promise<Set<string>> {
  const rows = await db.$queryRawUnsafe<{ id: string }[]>(
    `SELECT id FROM products WHERE tenant_id = $1::uuid AND id = ANY($2::uuid[])`,
    tenantId,
    ids.filter(isUuid), // what is no UUID names no product
  );
  return new Set(rows.map((row) => row.id));
}

/** The currency of each of these sales channels of the tenant (those that exist). */
export async function channelCurrencies(
  db: DbOrTx,
  tenantId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const rows = await db.$queryRawUnsafe<{ id: string; currency: string }[]>(
    `SELECT id, currency FROM sales_channels WHERE tenant_id = $1::uuid AND id = ANY($2::uuid[])`,
    tenantId,
    ids.filter(isUuid), // what is no UUID names no channel
  );
  return new Map(rows.map((row) => [row.id, row.currency]));
}

// Tax zones

type ZoneRecord = Omit<TaxZoneRecord, 'rates'>;
const ZoneRow: RowModel<ZoneRecord> = z.object({
  id: uuid,
  name: z.string(),
  country: z.string(),
  region: z.string().nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
});
const RateRow: RowModel<TaxRateRecord & { zoneId: string }> = z.object({
  zoneId: uuid,
  taxClass: z.enum(TAX_CLASSES),
  name: z.string(),
  rateBasisPoints: z.number().int(),
});

const ZONE_COLUMNS = `id, name, country, region, created_at AS "createdAt", updated_at AS "updatedAt"`;

export async function withRates(db: DbOrTx, zones: ZoneRecord[]): Promise<TaxZoneRecord[]> {
  if (zones.length === 0) return [];
  const rates = parseRows(
    RateRow,
    await db.$queryRawUnsafe<unknown[]>(
      `SELECT zone_id AS "zoneId", tax_class AS "taxClass", name, rate_basis_points AS "rateBasisPoints"
         FROM tax_rates WHERE zone_id = ANY($1::uuid[])
        ORDER BY zone_id, array_position(ARRAY['standard', 'reduced', 'zero'], tax_class)`,
      zones.map((zone) => zone.id),
    ),
  );
  return zones.map((zone) => ({
    ...zone,
    rates: rates
      .filter((rate) => rate.zoneId === zone.id)
      .map(({ taxClass, name, rateBasisPoints }) => ({ taxClass, name, rateBasisPoints })),
  }));
}

/** One tax zone of the tenant with its rates, or undefined. */
export async function findTaxZone(db: DbOrTx, tenantId: string, id: string) {
  const zones = parseRows(
    ZoneRow,
    await db.$queryRawUnsafe<unknown[]>(
      `SELECT ${ZONE_COLUMNS} FROM tax_zones WHERE tenant_id = $1::uuid AND id = $2::uuid`,
      tenantId,
      id,
    ),
  );
  return (await withRates(db, zones))[0];
}

/** The tenant's tax zones (without their rates: `withRates`) in id order. */
export function taxZoneList(tenantId: string): SqlKeysetList<ZoneRecord, string> {
  return {
    select: Prisma.sql`SELECT ${Prisma.raw(ZONE_COLUMNS)} FROM tax_zones`,
    where: [Prisma.sql`tenant_id = ${tenantId}::uuid`],
    key: [Prisma.sql`id`],
    values: (id) => [Prisma.sql`${id}::uuid`],
    row: ZoneRow,
    keyOf: (row) => row.id,
  };
}

/**
 * The zone taxing a destination: the zone of its country and region when there is one, else the
 * zone of the whole country; with its rates. Countries are upper case, regions compared as given
 * in upper case.
 */
export async function zoneFor(db: DbOrTx, tenantId: string, country: string, region: string | null) {
  const zones = parseRows(
    ZoneRow,
    await db.$queryRawUnsafe<unknown[]>(
      `SELECT ${ZONE_COLUMNS} FROM tax_zones
        WHERE tenant_id = $1::uuid AND country = $2::text
          AND (region IS NULL OR ($3::text IS NOT NULL AND upper(region) = upper($3::text)))
        ORDER BY region NULLS LAST LIMIT 1`,
      tenantId,
      country,
      region,
    ),
  );
  return (await withRates(db, zones))[0];
}

/** Inserts a zone and its rates. */
export async function insertTaxZone(
  tx: Tx,
  tenantId: string,
  zone: { id: string; name: string; country: string; region: string | null },
) {
  await tx.$executeRawUnsafe(
    `INSERT INTO tax_zones (id, tenant_id, name, country, region) VALUES ($1::uuid, $2::uuid, $3, $4, $5)`,
    zone.id,
    tenantId,
    zone.name,
    zone.country,
    zone.region,
  );
}

/** Changes a zone's name, country and region; false when the tenant has no such zone. */
export async function updateTaxZone(
  tx: Tx,
  tenantId: string,
  zone: { id: string; name: string; country: string; region: string | null },
): Promise<boolean> {
  const count = await tx.$executeRawUnsafe(
    `UPDATE tax_zones SET name = $3, country = $4, region = $5, updated_at = now()
      WHERE tenant_id = $1::uuid AND id = $2::uuid`,
    tenantId,
    zone.id,
    zone.name,
    zone.country,
    zone.region,
  );
  return count > 0;
}

/** Replaces a zone's rates. */
export async function replaceTaxRates(tx: Tx, tenantId: string, zoneId: string, rates: readonly TaxRateRecord[]) {
  await tx.$executeRawUnsafe(`DELETE FROM tax_rates WHERE zone_id = $1::uuid`, zoneId);
  if (rates.length === 0) return;
  await tx.$executeRawUnsafe(
    `INSERT INTO tax_rates (zone_id, tax_class, tenant_id, name, rate_basis_points)
     SELECT $1::uuid, r.tax_class, $2::uuid, r.name, r.rate
       FROM unnest($3::text[], $4::text[], $5::int[]) AS r(tax_class, name, rate)`,
    zoneId,
    tenantId,
    rates.map((rate) => rate.taxClass),
    rates.map((rate) => rate.name),
    rates.map((rate) => rate.rateBasisPoints),
  );
}

/** Deletes a zone (its rates go with it); false when the tenant has no such zone. */
export async function deleteTaxZone(db: DbOrTx, tenantId: string, id: string): Promise<boolean> {
  const count = await db.$executeRawUnsafe(
    `DELETE FROM tax_zones WHERE tenant_id = $1::uuid AND id = $2::uuid`,
    tenantId,
    id,
  );
  return count > 0;
}
