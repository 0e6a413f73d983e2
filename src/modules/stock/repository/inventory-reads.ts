/**
 * Inventory reads: pages of lines and of groups (the lines of a SKU at a warehouse position,
 * summed), each described once as a keyset list.
 */
import { z } from 'zod';
import { and, type SqlKeysetList } from '../../../kernel/keyset';
import { int8, int8OrNull, uuid, type RowModel } from '../../../kernel/rows';
import { Prisma } from '../../../__generated__/prisma/client';
import type { InventoryGroup, InventoryLine } from '../stock.types';
import { inequality, stockConditions, type LineFilter } from './filters';
import { bundleGroupCtes } from './bundle-reads';
import { LINE_SELECT, LineRow } from './lines';

type Sql = Prisma.Sql;

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** The lines matching `filter`, in id (creation) order. */
export function lineList(tenantId: string, filter: LineFilter): SqlKeysetList<InventoryLine, string> {
  const where = stockConditions('i', tenantId, filter);
  if (filter.ids) where.push(Prisma.sql`i.id = ANY(${filter.ids}::uuid[])`);
  if (filter.states) where.push(Prisma.sql`i.state::text = ANY(${filter.states}::text[])`);
  if (filter.batchNumbers) where.push(Prisma.sql`i.batch_number = ANY(${filter.batchNumbers}::text[])`);
  if (filter.serialNumbers) where.push(Prisma.sql`i.serial_number = ANY(${filter.serialNumbers}::text[])`);
  where.push(...inequality(Prisma.sql`i.quantity`, filter.quantity));
  return {
    select: LINE_SELECT,
    where,
    key: [Prisma.sql`i.id`],
    values: (id) => [Prisma.sql`${id}::uuid`],
    row: LineRow,
    keyOf: (line) => line.id,
  };
}

/** Sort key of a group: SKU, warehouse id, position id (the nil UUID for none). */
export type GroupKey = [string, string, string];

/**
 * The groups (product, warehouse, position) of lines and announced stock, with every quantity. A
 * group with only announced stock has quantity 0 and no ids. With a sales channel, a group is a
 * product over all the channel's warehouses (no warehouse, no position).
 */
function groupSelect(tenantId: string, filter: LineFilter) {
  const place =
    filter.channelId !== undefined
      ? Prisma.sql`NULL::uuid AS warehouse_id, NULL::uuid AS position_id`
      : Prisma.sql`warehouse_id, position_id`;
  // Over a channel's warehouses each keeps its own back; a warehouse's group at a position shows
  // the warehouse's whole safety stock against the units at that position.
  const safety =
    filter.channelId !== undefined
      ? Prisma.sql`
          (SELECT coalesce(sum(k.safety), 0) FROM kept k WHERE k.product_id = g.product_id)::bigint
            AS "quantitySafety",
          CASE WHEN g.bundled THEN g."quantityAvailable" ELSE
            (SELECT coalesce(sum(greatest(k.available - k.safety, 0)), 0) FROM kept k
              WHERE k.product_id = g.product_id)::bigint END AS "quantitySellable"`
      : Prisma.sql`
          coalesce(k.safety, 0)::bigint AS "quantitySafety",
          greatest(g."quantityAvailable" - coalesce(k.safety, 0), 0)::bigint AS "quantitySellable"`;
  const keptJoin =
    filter.channelId !== undefined
      ? Prisma.empty
      : Prisma.sql`LEFT JOIN kept k ON k.product_id = g.product_id AND k.warehouse_id = g.warehouse_id`;
  const bundles = bundleGroupCtes(tenantId, filter);
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
        JOIN reservations r ON r.tenant_id = a.tenant_id AND r.id = a.reservation_id AND r.status = 'ACTIVE'
         AND r.expires_at <= now()
        CROSS JOIN (VALUES (-1, 'RESERVED'::inventory_item_state), (1, 'AVAILABLE'::inventory_item_state)) AS x(sign,
          state)
       WHERE ${and(stockConditions('a', tenantId, filter))}
    ), placed AS (
      SELECT product_id, ${place}, id, quantity, state, cost_amount, cost_currency, expected FROM lines
    ), line_groups AS (
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
        FROM placed GROUP BY product_id, warehouse_id, position_id
    ), kept AS (
      -- Per product and warehouse: what is available and the safety stock kept back there.
      SELECT product_id, warehouse_id,
             coalesce(sum(quantity) FILTER (WHERE state = 'AVAILABLE'), 0)::bigint AS available,
             stock_safety_stock(${tenantId}::uuid, product_id, warehouse_id,
               ${filter.channelId ?? null}::uuid) AS safety
        FROM lines GROUP BY product_id, warehouse_id
    ), ${
      bundles ??
      Prisma.sql`bundle_groups AS (
      SELECT NULL::uuid AS product_id, NULL::uuid AS warehouse_id, NULL::uuid AS position_id, '{}'::uuid[] AS ids,
             0::bigint AS available WHERE false
    )`
    }, g AS (
      SELECT *, false AS bundled FROM line_groups
      UNION ALL
      -- A bundle's group: every unit it can be sold as is available.
      SELECT product_id, warehouse_id, position_id, ids, available, available, 0, 0, 0, 0, NULL, NULL, true
        FROM bundle_groups
    )
    SELECT g.product_id AS "productId", p.sku, g.warehouse_id AS "warehouseId", g.position_id AS "positionId", g.ids,
           g.quantity, g."quantityAvailable", g."quantityCommitted", g."quantityReserved", g."quantityUnavailable",
           g."quantityExpected", g."costAmount", g."costCurrency", ${safety}
      FROM g JOIN products p ON p.id = g.product_id ${keptJoin}`;
}

const GroupRow: RowModel<InventoryGroup> = z.object({
  productId: uuid,
  sku: z.string(),
  warehouseId: uuid.nullable(),
  positionId: uuid.nullable(),
  ids: z.array(uuid),
  quantity: int8,
  quantityAvailable: int8,
  quantityCommitted: int8,
  quantityReserved: int8,
  quantityUnavailable: int8,
  quantityExpected: int8,
  quantitySafety: int8,
  quantitySellable: int8,
  costAmount: int8OrNull,
  costCurrency: z.string().nullable(),
});

/** The groups matching `filter`, ordered by SKU, warehouse id and position id. */
export function groupList(tenantId: string, filter: LineFilter): SqlKeysetList<InventoryGroup, GroupKey> {
  const where: Sql[] = inequality(Prisma.sql`g.quantity`, filter.quantity);
  if (filter.ids) where.push(Prisma.sql`g.ids && ${filter.ids}::uuid[]`);
  return {
    select: groupSelect(tenantId, filter),
    where,
    key: [
      Prisma.sql`p.sku`,
      Prisma.sql`coalesce(g.warehouse_id, ${NIL_UUID}::uuid)`,
      Prisma.sql`coalesce(g.position_id, ${NIL_UUID}::uuid)`,
    ],
    values: ([sku, warehouseId, positionId]) => [
      Prisma.sql`${sku}::text`,
      Prisma.sql`${warehouseId}::uuid`,
      Prisma.sql`${positionId}::uuid`,
    ],
    row: GroupRow,
    keyOf: (group) => [group.sku, group.warehouseId ?? NIL_UUID, group.positionId ?? NIL_UUID],
  };
}
