import type { DbOrTx, Tx } from '../../kernel/db';
import type { KeysetQuery } from '../../kernel/pagination';
import { Prisma } from '../../__generated__/prisma/client';
import type {
  InventoryGroup,
  InventoryItemReason,
  InventoryItemState,
  InventoryLine,
  LedgerEntry,
  StockActor,
  StockMutationSource,
  StockReference,
} from './stock.types';

type Sql = Prisma.Sql;

const NIL_UUID = '00000000-0000-0000-0000-000000000000';
const num = (value: bigint | number | null): number | null => (value === null ? null : Number(value));

// ---------------------------------------------------------------------------------------------
// Locks

/**
 * Serialises writers of the same products at the same warehouses: one transaction-scoped advisory
 * lock per (tenant, product, warehouse), taken by the database's `stock_lock` (sql/1-locks.sql), the
 * same function the batched reservations take them with. Every write of any quantity takes these
 * locks first; holding them, the sum of a product's lines at a warehouse is stable, so
 * `new_quantity` is exact.
 */
export async function lockStockLevels(tx: Tx, tenantId: string, pairs: { productId: string; warehouseId: string }[]) {
  if (pairs.length === 0) return;
  await tx.$executeRaw`
    SELECT stock_lock(${tenantId}::uuid, ${pairs.map((p) => p.productId)}::uuid[], ${pairs.map((p) => p.warehouseId)}::uuid[])`;
}

// ---------------------------------------------------------------------------------------------
// Inventory lines

const LINE_SELECT = Prisma.sql`
  SELECT i.id, i.tenant_id AS "tenantId", i.product_id AS "productId", p.sku, i.warehouse_id AS "warehouseId",
         w.business_id AS "businessId", i.position_id AS "positionId", pos.code AS "positionCode",
         i.batch_number AS "batchNumber", i.serial_number AS "serialNumber", i.expires_at AS "expiresAt",
         i.state::text AS state, i.reason::text AS reason, i.quantity, i.cost_amount AS "costAmount",
         i.cost_currency AS "costCurrency", coalesce(i.gtin, '{}') AS gtin, i.rfid, i.weight_amount AS "weightAmount",
         i.weight_unit AS "weightUnit", i.created_at AS "createdAt", i.updated_at AS "updatedAt"
    FROM inventory_items i
    JOIN products p ON p.id = i.product_id
    JOIN warehouses w ON w.id = i.warehouse_id
    LEFT JOIN positions pos ON pos.id = i.position_id`;

type RawLine = Omit<InventoryLine, 'quantity' | 'costAmount'> & { quantity: bigint; costAmount: bigint | null };

const toLine = (row: RawLine): InventoryLine => ({
  ...row,
  quantity: Number(row.quantity),
  costAmount: num(row.costAmount),
});

/** Lines of the tenant by id (in no particular order); `forUpdate` locks them. */
export async function findLines(
  db: DbOrTx,
  tenantId: string,
  ids: readonly string[],
  options: { forUpdate?: boolean } = {},
) {
  if (ids.length === 0) return [];
  const rows = await db.$queryRaw<RawLine[]>`${LINE_SELECT}
    WHERE i.tenant_id = ${tenantId}::uuid AND i.id = ANY(${[...ids]}::uuid[])
    ${options.forUpdate ? Prisma.sql`FOR UPDATE OF i` : Prisma.empty}`;
  return rows.map(toLine);
}

/** The identity of a line: lines with equal identities are one line. */
export interface LineIdentity {
  productId: string;
  warehouseId: string;
  positionId: string | null;
  batchNumber: string | null;
  serialNumber: string | null;
  expiresAt: Date | null;
  state: InventoryItemState;
  reason: InventoryItemReason;
}

/** The attributes of a line that are not part of its identity; undefined: leave as it is. */
export interface LineAttributes {
  costAmount?: number | null;
  costCurrency?: string | null;
  gtin?: string[] | null;
  rfid?: string | null;
  weightAmount?: number | null;
  weightUnit?: string | null;
}

export const identityKey = (identity: LineIdentity) =>
  JSON.stringify([
    identity.productId,
    identity.warehouseId,
    identity.positionId,
    identity.batchNumber,
    identity.serialNumber,
    identity.expiresAt?.getTime() ?? null,
    identity.state,
    identity.reason,
  ]);

export interface LineAddition extends LineIdentity {
  id: string;
  quantity: number;
  attributes: LineAttributes;
}

/**
 * Adds quantities to lines, in order, each through the database's `stock_add_to_line`
 * (sql/2-lines.sql): a line with the same identity gets the quantity added and the given
 * attributes; otherwise the line is created. Returns the id of each addition's line.
 */
export async function addToLines(tx: Tx, tenantId: string, additions: LineAddition[]): Promise<string[]> {
  if (additions.length === 0) return [];
  const column = <T>(pick: (addition: LineAddition) => T) => additions.map(pick);
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT stock_add_to_line(${tenantId}::uuid, v.id, v.product_id, v.warehouse_id, v.position_id, v.batch_number,
             v.serial_number, v.expires_at, v.state::inventory_item_state, v.reason::inventory_item_reason, v.quantity,
             v.cost_amount, v.cost_currency,
             CASE WHEN v.gtin IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(v.gtin::jsonb)) END,
             v.rfid, v.weight_amount, v.weight_unit)::text AS id
      FROM unnest(${column((a) => a.id)}::uuid[], ${column((a) => a.productId)}::uuid[],
                  ${column((a) => a.warehouseId)}::uuid[], ${column((a) => a.positionId)}::uuid[],
                  ${column((a) => a.batchNumber)}::text[], ${column((a) => a.serialNumber)}::text[],
                  ${column((a) => a.expiresAt?.toISOString() ?? null)}::timestamptz[],
                  ${column((a) => a.state)}::text[], ${column((a) => a.reason)}::text[],
                  ${column((a) => String(a.quantity))}::bigint[],
                  ${column((a) => (a.attributes.costAmount == null ? null : String(a.attributes.costAmount)))}::bigint[],
                  ${column((a) => a.attributes.costCurrency ?? null)}::text[],
                  ${column((a) => (a.attributes.gtin == null ? null : JSON.stringify(a.attributes.gtin)))}::text[],
                  ${column((a) => a.attributes.rfid ?? null)}::text[],
                  ${column((a) => a.attributes.weightAmount ?? null)}::float8[],
                  ${column((a) => a.attributes.weightUnit ?? null)}::text[]) WITH ORDINALITY
           AS v(id, product_id, warehouse_id, position_id, batch_number, serial_number, expires_at, state, reason, quantity,
                cost_amount, cost_currency, gtin, rfid, weight_amount, weight_unit, n)
     ORDER BY v.n`;
  return rows.map((row) => row.id);
}

/** Another line of the tenant with the given identity, locked; null when there is none. */
export async function findLineByIdentity(tx: Tx, tenantId: string, identity: LineIdentity, exceptId: string) {
  const [row] = await tx.$queryRaw<{ id: string; quantity: bigint }[]>`
    SELECT id, quantity FROM inventory_items
     WHERE tenant_id = ${tenantId}::uuid AND id <> ${exceptId}::uuid
       AND product_id = ${identity.productId}::uuid AND warehouse_id = ${identity.warehouseId}::uuid
       AND position_id IS NOT DISTINCT FROM ${identity.positionId}::uuid
       AND batch_number IS NOT DISTINCT FROM ${identity.batchNumber}::text
       AND serial_number IS NOT DISTINCT FROM ${identity.serialNumber}::text
       AND expires_at IS NOT DISTINCT FROM ${identity.expiresAt?.toISOString() ?? null}::timestamptz
       AND state = ${identity.state}::inventory_item_state AND reason = ${identity.reason}::inventory_item_reason
     FOR UPDATE`;
  return row ? { id: row.id, quantity: Number(row.quantity) } : null;
}

/** Sets a line's identity, quantity and the given attributes. */
export async function updateLine(
  tx: Tx,
  id: string,
  identity: LineIdentity,
  quantity: number,
  attributes: LineAttributes,
) {
  const set = (column: string, value: unknown, cast = '') =>
    Prisma.sql`, ${Prisma.raw(column)} = ${value}${Prisma.raw(cast)}`;
  await tx.$executeRaw`
    UPDATE inventory_items
       SET position_id = ${identity.positionId}::uuid, batch_number = ${identity.batchNumber}::text,
           serial_number = ${identity.serialNumber}::text, expires_at =
             ${identity.expiresAt?.toISOString() ?? null}::timestamptz,
           state = ${identity.state}::inventory_item_state, reason = ${identity.reason}::inventory_item_reason,
           quantity = ${String(quantity)}::bigint, updated_at = now()
           ${attributes.costAmount !== undefined ? set('cost_amount', attributes.costAmount === null ? null : String(attributes.costAmount), '::bigint') : Prisma.empty}
           ${attributes.costCurrency !== undefined ? set('cost_currency', attributes.costCurrency, '::text') : Prisma.empty}
           ${attributes.gtin !== undefined ? set('gtin', attributes.gtin, '::text[]') : Prisma.empty}
           ${attributes.rfid !== undefined ? set('rfid', attributes.rfid, '::text') : Prisma.empty}
           ${attributes.weightAmount !== undefined ? set('weight_amount', attributes.weightAmount, '::float8') : Prisma.empty}
           ${attributes.weightUnit !== undefined ? set('weight_unit', attributes.weightUnit, '::text') : Prisma.empty}
     WHERE id = ${id}::uuid`;
}

/** Adds to the quantity of a line and sets the given attributes (a line merged into it). */
export async function addToLine(tx: Tx, id: string, quantity: number, attributes: LineAttributes) {
  const [row] = await tx.$queryRaw<(LineIdentity & { quantity: bigint })[]>`
    SELECT product_id AS "productId", warehouse_id AS "warehouseId", position_id AS "positionId", batch_number AS "batchNumber",
           serial_number AS "serialNumber", expires_at AS "expiresAt", state::text AS state, reason::text AS reason, quantity
      FROM inventory_items WHERE id = ${id}::uuid`;
  await updateLine(tx, id, row!, Number(row!.quantity) + quantity, attributes);
}

/** Deletes lines by id; returns what each held. */
export async function deleteLines(tx: Tx, tenantId: string, ids: string[]) {
  const rows = await tx.$queryRaw<
    { id: string; productId: string; warehouseId: string; positionId: string | null; quantity: bigint }[]
  >`
    DELETE FROM inventory_items WHERE tenant_id = ${tenantId}::uuid AND id = ANY(${ids}::uuid[])
    RETURNING id, product_id AS "productId", warehouse_id AS "warehouseId", position_id AS "positionId", quantity`;
  return rows.map((row) => ({ ...row, quantity: Number(row.quantity) }));
}

// ---------------------------------------------------------------------------------------------
// The ledger

const pairKey = (productId: string, warehouseId: string) => `${productId}:${warehouseId}`;

/** On-hand quantity of each product at each warehouse (all positions and states). */
async function onHandTotals(tx: Tx, tenantId: string, pairs: { productId: string; warehouseId: string }[]) {
  const rows = await tx.$queryRaw<{ productId: string; warehouseId: string; quantity: bigint }[]>`
    SELECT pair.product_id AS "productId", pair.warehouse_id AS "warehouseId", coalesce(sum(i.quantity), 0)::bigint AS quantity
      FROM unnest(${pairs.map((p) => p.productId)}::uuid[], ${pairs.map((p) => p.warehouseId)}::uuid[]) AS pair(product_id, warehouse_id)
      LEFT JOIN inventory_items i
        ON i.tenant_id = ${tenantId}::uuid AND i.product_id = pair.product_id AND i.warehouse_id = pair.warehouse_id
     GROUP BY pair.product_id, pair.warehouse_id`;
  return new Map(rows.map((row) => [pairKey(row.productId, row.warehouseId), Number(row.quantity)]));
}

export interface MutationContext {
  source: StockMutationSource;
  actor: StockActor;
  references: StockReference[];
}

/**
 * Writes one ledger row per change, in the order the changes were applied. Call it after applying
 * the changes and while holding the stock locks of their products and warehouses: `new_quantity`
 * of the last change of a pair is the pair's current total, and each earlier one is the next one
 * minus the next one's delta.
 */
export async function recordMutations(tx: Tx, tenantId: string, context: MutationContext, changes: LineChangeRecord[]) {
  if (changes.length === 0) return;
  const pairs = [...new Map(changes.map((c) => [pairKey(c.productId, c.warehouseId), c])).values()];
  const totals = await onHandTotals(tx, tenantId, pairs);
  const newQuantities = new Array<number>(changes.length);
  for (let index = changes.length - 1; index >= 0; index -= 1) {
    const change = changes[index]!;
    const key = pairKey(change.productId, change.warehouseId);
    const after = totals.get(key)!;
    newQuantities[index] = after;
    totals.set(key, after - change.delta);
  }
  await tx.$executeRaw`
    INSERT INTO stock_mutations (id, tenant_id, source, status, delta, new_quantity, product_id, warehouse_id,
      position_id,
                                 inventory_item_id, actor_type, actor_id, "references", created_at)
    SELECT v.id, ${tenantId}::uuid, ${context.source}::stock_mutation_source, 'PROCESSED', v.delta, v.new_quantity,
      v.product_id,
           v.warehouse_id, v.position_id, v.item_id, ${context.actor.type}, ${context.actor.id},
           ${JSON.stringify(context.references)}::jsonb, clock_timestamp()
      FROM unnest(${changes.map((c) => c.id)}::uuid[], ${changes.map((c) => String(c.delta))}::bigint[],
                  ${newQuantities.map(String)}::bigint[], ${changes.map((c) => c.productId)}::uuid[],
                  ${changes.map((c) => c.warehouseId)}::uuid[], ${changes.map((c) => c.positionId)}::uuid[],
                  ${changes.map((c) => c.lineId)}::uuid[]) WITH ORDINALITY
           AS v(id, delta, new_quantity, product_id, warehouse_id, position_id, item_id, n)
     ORDER BY v.n`;
}

export interface LineChangeRecord {
  /** Id of the ledger row. */
  id: string;
  lineId: string;
  productId: string;
  warehouseId: string;
  positionId: string | null;
  delta: number;
}

// ---------------------------------------------------------------------------------------------
// Reads

/** Which lines a read is about; every given filter must hold. */
export interface LineFilter {
  ids?: string[];
  productIds?: string[];
  skus?: string[];
  warehouseIds?: string[];
  businessIds?: string[];
  /** Warehouse ids or position ids. */
  locationIds?: string[];
  /** Exactly this position (null: lines without a position). */
  positionId?: string | null;
  states?: InventoryItemState[];
  batchNumbers?: string[];
  serialNumbers?: string[];
  quantity?: Inequality;
}

export interface Inequality {
  eq?: number | null;
  gt?: number | null;
  gte?: number | null;
  lt?: number | null;
  lte?: number | null;
}

const bigint = (value: number) => Prisma.sql`${String(value)}::bigint`;
/** Unix milliseconds as an exact timestamp (no floating point on the way). */
const timestamp = (ms: number) => Prisma.sql`(TIMESTAMPTZ 'epoch' + ${String(ms)}::bigint * INTERVAL '1 millisecond')`;

function inequality(column: Sql, filter: Inequality | undefined, value: (n: number) => Sql = bigint): Sql[] {
  if (!filter) return [];
  const conditions: Sql[] = [];
  if (filter.eq != null) conditions.push(Prisma.sql`${column} = ${value(filter.eq)}`);
  if (filter.gt != null) conditions.push(Prisma.sql`${column} > ${value(filter.gt)}`);
  if (filter.gte != null) conditions.push(Prisma.sql`${column} >= ${value(filter.gte)}`);
  if (filter.lt != null) conditions.push(Prisma.sql`${column} < ${value(filter.lt)}`);
  if (filter.lte != null) conditions.push(Prisma.sql`${column} <= ${value(filter.lte)}`);
  return conditions;
}

/** Conditions on a table with tenant_id, product_id, warehouse_id and position_id columns (alias `alias`). */
function stockConditions(alias: string, tenantId: string, filter: LineFilter): Sql[] {
  const a = (column: string) => Prisma.raw(`${alias}.${column}`);
  const conditions: Sql[] = [Prisma.sql`${a('tenant_id')} = ${tenantId}::uuid`];
  if (filter.productIds) conditions.push(Prisma.sql`${a('product_id')} = ANY(${filter.productIds}::uuid[])`);
  if (filter.skus) {
    conditions.push(
      Prisma.sql`${a('product_id')} IN (SELECT id FROM products WHERE tenant_id = ${tenantId}::uuid AND sku = ANY(${filter.skus}::text[]))`,
    );
  }
  if (filter.warehouseIds) conditions.push(Prisma.sql`${a('warehouse_id')} = ANY(${filter.warehouseIds}::uuid[])`);
  if (filter.businessIds) {
    conditions.push(
      Prisma.sql`${a('warehouse_id')} IN (SELECT id FROM warehouses WHERE tenant_id = ${tenantId}::uuid AND business_id = ANY(${filter.businessIds}::uuid[]))`,
    );
  }
  if (filter.locationIds) {
    conditions.push(
      Prisma.sql`(${a('warehouse_id')} = ANY(${filter.locationIds}::uuid[]) OR ${a('position_id')} = ANY(${filter.locationIds}::uuid[]))`,
    );
  }
  if (filter.positionId !== undefined)
    conditions.push(Prisma.sql`${a('position_id')} IS NOT DISTINCT FROM ${filter.positionId}::uuid`);
  return conditions;
}

const and = (conditions: Sql[]) => (conditions.length === 0 ? Prisma.sql`TRUE` : Prisma.join(conditions, ' AND '));

function lineConditions(tenantId: string, filter: LineFilter): Sql[] {
  const conditions = stockConditions('i', tenantId, filter);
  if (filter.ids) conditions.push(Prisma.sql`i.id = ANY(${filter.ids}::uuid[])`);
  if (filter.states) conditions.push(Prisma.sql`i.state::text = ANY(${filter.states}::text[])`);
  if (filter.batchNumbers) conditions.push(Prisma.sql`i.batch_number = ANY(${filter.batchNumbers}::text[])`);
  if (filter.serialNumbers) conditions.push(Prisma.sql`i.serial_number = ANY(${filter.serialNumbers}::text[])`);
  conditions.push(...inequality(Prisma.sql`i.quantity`, filter.quantity));
  return conditions;
}

/** A page of lines in id (creation) order. */
export async function listLines(db: DbOrTx, tenantId: string, filter: LineFilter, query: KeysetQuery<string>) {
  const conditions = lineConditions(tenantId, filter);
  if (query.after !== undefined) conditions.push(Prisma.sql`i.id > ${query.after}::uuid`);
  if (query.before !== undefined) conditions.push(Prisma.sql`i.id < ${query.before}::uuid`);
  const rows = await db.$queryRaw<RawLine[]>`${LINE_SELECT} WHERE ${and(conditions)}
    ORDER BY i.id ${Prisma.raw(query.backwards ? 'DESC' : 'ASC')} LIMIT ${query.take}`;
  return rows.map(toLine);
}

export async function lineExistsBeside(
  db: DbOrTx,
  tenantId: string,
  filter: LineFilter,
  direction: 'before' | 'after',
  id: string,
) {
  const conditions = lineConditions(tenantId, filter);
  conditions.push(direction === 'before' ? Prisma.sql`i.id < ${id}::uuid` : Prisma.sql`i.id > ${id}::uuid`);
  const rows = await db.$queryRaw<unknown[]>`SELECT 1 FROM inventory_items i WHERE ${and(conditions)} LIMIT 1`;
  return rows.length > 0;
}

/** Sort key of a group: SKU, warehouse id, position id (the nil UUID for no position). */
export type GroupKey = [string, string, string];

const GROUP_KEY = Prisma.sql`(p.sku, g.warehouse_id, coalesce(g.position_id, ${NIL_UUID}::uuid))`;

/**
 * The groups (product, warehouse, position) of lines and announced stock, with every quantity. A
 * group with only announced stock has quantity 0 and no ids.
 */
function groupQuery(tenantId: string, filter: LineFilter, extra: Sql[]) {
  const having: Sql[] = [...inequality(Prisma.sql`g.quantity`, filter.quantity), ...extra];
  if (filter.ids) having.push(Prisma.sql`g.ids && ${filter.ids}::uuid[]`);
  return Prisma.sql`
    WITH lines AS (
      SELECT i.product_id, i.warehouse_id, i.position_id, i.id, i.quantity, i.state, i.cost_amount, i.cost_currency,
             0::bigint AS expected
        FROM inventory_items i WHERE ${and(stockConditions('i', tenantId, filter))}
      UNION ALL
      SELECT s.product_id, s.warehouse_id, s.position_id, NULL, 0, NULL, NULL, NULL, s.quantity
        FROM incoming_stock s WHERE ${and(stockConditions('s', tenantId, filter))}
      UNION ALL
      -- A reservation stops holding stock at its expires_at, before the sweeper releases it: its
      -- units count as available (the total is unchanged).
      SELECT a.product_id, a.warehouse_id, a.position_id, NULL, x.sign * a.quantity, x.state, NULL, NULL, 0
        FROM stock_allocations a
        JOIN reservations r ON r.id = a.reservation_id AND r.status = 'ACTIVE' AND r.expires_at <= now()
        CROSS JOIN (VALUES (-1, 'RESERVED'::inventory_item_state), (1, 'AVAILABLE'::inventory_item_state)) AS x(sign,
          state)
       WHERE ${and(stockConditions('a', tenantId, filter))}
    ), g AS (
      SELECT product_id, warehouse_id, position_id,
             coalesce(array_agg(id ORDER BY id) FILTER (WHERE id IS NOT NULL), '{}') AS ids,
             sum(quantity)::bigint AS quantity,
             coalesce(sum(quantity) FILTER (WHERE state = 'AVAILABLE'), 0)::bigint AS "quantityAvailable",
             coalesce(sum(quantity) FILTER (WHERE state = 'COMMITTED'), 0)::bigint AS "quantityCommitted",
             coalesce(sum(quantity) FILTER (WHERE state = 'RESERVED'), 0)::bigint AS "quantityReserved",
             coalesce(sum(quantity) FILTER (WHERE state = 'UNAVAILABLE'), 0)::bigint AS "quantityUnavailable",
             sum(expected)::bigint AS "quantityExpected",
             CASE WHEN count(DISTINCT cost_currency) = 1 THEN
               coalesce(round(sum(cost_amount * quantity) FILTER (WHERE cost_amount IS NOT NULL)
                              / nullif(sum(quantity) FILTER (WHERE cost_amount IS NOT NULL), 0)),
                        round(avg(cost_amount)))::bigint
             END AS "costAmount",
             CASE WHEN count(DISTINCT cost_currency) = 1 THEN min(cost_currency) END AS "costCurrency"
        FROM lines GROUP BY product_id, warehouse_id, position_id
    )
    SELECT g.product_id AS "productId", p.sku, g.warehouse_id AS "warehouseId", g.position_id AS "positionId", g.ids,
           g.quantity, g."quantityAvailable", g."quantityCommitted", g."quantityReserved", g."quantityUnavailable",
           g."quantityExpected", g."costAmount", g."costCurrency"
      FROM g JOIN products p ON p.id = g.product_id
     WHERE ${and(having)}`;
}

type RawGroup = Omit<InventoryGroup, `quantity${string}` | 'costAmount'> &
  Record<
    | 'quantity'
    | 'quantityAvailable'
    | 'quantityCommitted'
    | 'quantityReserved'
    | 'quantityUnavailable'
    | 'quantityExpected',
    bigint
  > & {
    costAmount: bigint | null;
  };

const toGroup = (row: RawGroup): InventoryGroup => ({
  ...row,
  quantity: Number(row.quantity),
  quantityAvailable: Number(row.quantityAvailable),
  quantityCommitted: Number(row.quantityCommitted),
  quantityReserved: Number(row.quantityReserved),
  quantityUnavailable: Number(row.quantityUnavailable),
  quantityExpected: Number(row.quantityExpected),
  costAmount: num(row.costAmount),
});

export const groupKeyOf = (group: InventoryGroup): GroupKey => [
  group.sku,
  group.warehouseId,
  group.positionId ?? NIL_UUID,
];

/** A page of inventory groups ordered by SKU, warehouse id and position id. */
export async function listGroups(db: DbOrTx, tenantId: string, filter: LineFilter, query: KeysetQuery<GroupKey>) {
  const extra: Sql[] = [];
  if (query.after)
    extra.push(Prisma.sql`${GROUP_KEY} > (${query.after[0]}::text, ${query.after[1]}::uuid, ${query.after[2]}::uuid)`);
  if (query.before)
    extra.push(
      Prisma.sql`${GROUP_KEY} < (${query.before[0]}::text, ${query.before[1]}::uuid, ${query.before[2]}::uuid)`,
    );
  const direction = Prisma.raw(query.backwards ? 'DESC' : 'ASC');
  const rows = await db.$queryRaw<RawGroup[]>`${groupQuery(tenantId, filter, extra)}
    ORDER BY p.sku ${direction}, g.warehouse_id ${direction}, coalesce(g.position_id, ${NIL_UUID}::uuid) ${direction}
    LIMIT ${query.take}`;
  return rows.map(toGroup);
}

export async function groupExistsBeside(
  db: DbOrTx,
  tenantId: string,
  filter: LineFilter,
  direction: 'before' | 'after',
  key: GroupKey,
) {
  const comparison = Prisma.raw(direction === 'before' ? '<' : '>');
  const rows = await db.$queryRaw<unknown[]>`SELECT 1 FROM (${groupQuery(tenantId, filter, [
    Prisma.sql`${GROUP_KEY} ${comparison} (${key[0]}::text, ${key[1]}::uuid, ${key[2]}::uuid)`,
  ])}) AS page LIMIT 1`;
  return rows.length > 0;
}

// The ledger, read

export interface LedgerFilter extends Pick<
  LineFilter,
  'skus' | 'productIds' | 'warehouseIds' | 'businessIds' | 'locationIds'
> {
  positionIds?: string[];
  inventoryItemIds?: string[];
  sources?: string[];
  statuses?: string[];
  actorTypes?: string[];
  actorIds?: string[];
  createdAt?: Inequality;
  newQuantity?: Inequality;
  delta?: Inequality;
}

export type LedgerSortField = 'created_at' | 'new_quantity';
/** Sort value (Unix milliseconds or quantity), then the write sequence. */
export type LedgerKey = [number, number];

function ledgerConditions(tenantId: string, filter: LedgerFilter): Sql[] {
  const conditions = stockConditions('m', tenantId, filter);
  if (filter.positionIds) conditions.push(Prisma.sql`m.position_id = ANY(${filter.positionIds}::uuid[])`);
  if (filter.inventoryItemIds)
    conditions.push(Prisma.sql`m.inventory_item_id = ANY(${filter.inventoryItemIds}::uuid[])`);
  if (filter.sources) conditions.push(Prisma.sql`m.source::text = ANY(${filter.sources}::text[])`);
  if (filter.statuses) conditions.push(Prisma.sql`m.status::text = ANY(${filter.statuses}::text[])`);
  if (filter.actorTypes) conditions.push(Prisma.sql`m.actor_type = ANY(${filter.actorTypes}::text[])`);
  if (filter.actorIds) conditions.push(Prisma.sql`m.actor_id = ANY(${filter.actorIds}::text[])`);
  conditions.push(...inequality(Prisma.sql`m.created_at`, filter.createdAt, timestamp));
  conditions.push(...inequality(Prisma.sql`m.new_quantity`, filter.newQuantity));
  conditions.push(...inequality(Prisma.sql`m.delta`, filter.delta));
  return conditions;
}

const sortValue = (field: LedgerSortField) =>
  field === 'created_at' ? Prisma.sql`m.created_at` : Prisma.sql`m.new_quantity`;
const keyValue = (field: LedgerSortField, value: number) => (field === 'created_at' ? timestamp(value) : bigint(value));

/** The tuple comparison that selects rows past `key` in the walking direction. */
function ledgerKeyCondition(field: LedgerSortField, key: LedgerKey, ascending: boolean) {
  return Prisma.sql`(${sortValue(field)}, m.sequence) ${Prisma.raw(ascending ? '>' : '<')} (${keyValue(field, key[0])}, ${bigint(key[1])})`;
}

type RawLedgerRow = Omit<LedgerEntry, 'delta' | 'newQuantity' | 'sequence'> & {
  delta: bigint;
  newQuantity: bigint;
  sequence: bigint;
};

/** A page of the ledger sorted by `sort` (then by write order), `descending` or not. */
export async function listLedger(
  db: DbOrTx,
  tenantId: string,
  filter: LedgerFilter,
  sort: { field: LedgerSortField; descending: boolean },
  query: KeysetQuery<LedgerKey>,
) {
  const conditions = ledgerConditions(tenantId, filter);
  // Walking backwards flips the order; `after` and `before` name sides of the sorted list.
  const ascending = sort.descending === query.backwards;
  if (query.after) conditions.push(ledgerKeyCondition(sort.field, query.after, !sort.descending));
  if (query.before) conditions.push(ledgerKeyCondition(sort.field, query.before, sort.descending));
  const direction = Prisma.raw(ascending ? 'ASC' : 'DESC');
  const rows = await db.$queryRaw<RawLedgerRow[]>`
    SELECT m.id, m.source::text AS source, m.status::text AS status, m.delta, m.new_quantity AS "newQuantity",
           m.product_id AS "productId", m.warehouse_id AS "warehouseId", m.position_id AS "positionId",
           m.inventory_item_id AS "inventoryItemId", m.actor_type AS "actorType", m.actor_id AS "actorId",
           m."references", m.messages, m.created_at AS "createdAt", m.sequence
      FROM stock_mutations m WHERE ${and(conditions)}
     ORDER BY ${sortValue(sort.field)} ${direction}, m.sequence ${direction} LIMIT ${query.take}`;
  return rows.map((row): LedgerEntry => ({
    ...row,
    delta: Number(row.delta),
    newQuantity: Number(row.newQuantity),
    sequence: Number(row.sequence),
  }));
}

export async function ledgerExistsBeside(
  db: DbOrTx,
  tenantId: string,
  filter: LedgerFilter,
  sort: { field: LedgerSortField; descending: boolean },
  direction: 'before' | 'after',
  key: LedgerKey,
) {
  const conditions = ledgerConditions(tenantId, filter);
  conditions.push(ledgerKeyCondition(sort.field, key, direction === 'after' ? !sort.descending : sort.descending));
  const rows = await db.$queryRaw<unknown[]>`SELECT 1 FROM stock_mutations m WHERE ${and(conditions)} LIMIT 1`;
  return rows.length > 0;
}

export const ledgerKeyOf = (entry: LedgerEntry, field: LedgerSortField): LedgerKey => [
  field === 'created_at' ? entry.createdAt.getTime() : entry.newQuantity,
  entry.sequence,
];
