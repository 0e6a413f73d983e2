/**
 * The groups of bundles in inventory reads: a bundle has no lines, so its group at a warehouse (or
 * over a sales channel's warehouses) holds what its components allow: the minimum over them of
 * floor(sellable / quantity per bundle), sellable being available beyond the safety stock.
 */
import { Prisma } from '../../../__generated__/prisma/client';
import { and } from '../../../kernel/keyset';
import { stockConditions, type LineFilter } from './filters';

type Sql = Prisma.Sql;

/**
 * CTEs (`bundle_groups` last) with the columns of a group: product_id, warehouse_id, position_id
 * (null), ids (none) and the quantities, every unit available. None for a read of given lines or
 * locations (a bundle has neither).
 */
export function bundleGroupCtes(tenantId: string, filter: LineFilter): Sql | null {
  if (filter.ids || filter.locationIds || filter.positionId !== undefined || filter.productIds) return null;
  // The components' units count wherever the bundle's read looks, whichever SKUs it names.
  const placeFilter: LineFilter = { ...filter, skus: undefined };
  const bundleSkus = filter.skus ? Prisma.sql`AND b.sku = ANY(${filter.skus}::text[])` : Prisma.empty;
  const channel = filter.channelId ?? null;
  const perPlace =
    filter.channelId !== undefined
      ? Prisma.sql`NULL::uuid AS warehouse_id, sum(s.sellable) AS sellable`
      : Prisma.sql`s.warehouse_id, sum(s.sellable) AS sellable`;
  const groupBy =
    filter.channelId !== undefined
      ? Prisma.sql`s.bundle_id, s.component_id, s.per_bundle`
      : Prisma.sql`s.bundle_id, s.component_id, s.per_bundle, s.warehouse_id`;
  return Prisma.sql`
    parts AS (
      SELECT c.bundle_id, c.component_id, c.quantity AS per_bundle
        FROM bundle_components c JOIN products b ON b.tenant_id = c.tenant_id AND b.id = c.bundle_id
       WHERE c.tenant_id = ${tenantId}::uuid ${bundleSkus}
    ), part_lines AS (
      -- Every line places the bundle at its warehouse; only AVAILABLE units count.
      SELECT i.product_id, i.warehouse_id,
             CASE WHEN i.state = 'AVAILABLE' THEN i.quantity ELSE 0 END AS quantity FROM inventory_items i
       WHERE ${and(stockConditions('i', tenantId, placeFilter))} AND i.product_id IN (SELECT component_id FROM parts)
      UNION ALL
      -- Units of expired reservations not yet swept are available, as in the components' groups.
      SELECT a.product_id, a.warehouse_id, a.quantity FROM stock_allocations a
        JOIN reservations r ON r.tenant_id = a.tenant_id AND r.id = a.reservation_id AND r.status = 'ACTIVE'
         AND r.expires_at <= now()
       WHERE ${and(stockConditions('a', tenantId, placeFilter))} AND a.product_id IN (SELECT component_id FROM parts)
    ), part_places AS (
      SELECT DISTINCT warehouse_id FROM part_lines
    ), part_sellable AS (
      SELECT p.bundle_id, p.component_id, p.per_bundle, w.warehouse_id,
             greatest(coalesce((SELECT sum(l.quantity) FROM part_lines l
                                 WHERE l.product_id = p.component_id AND l.warehouse_id = w.warehouse_id), 0)
                      - stock_safety_stock(${tenantId}::uuid, p.component_id, w.warehouse_id, ${channel}::uuid), 0)
               AS sellable
        FROM parts p CROSS JOIN part_places w
    ), part_totals AS (
      SELECT s.bundle_id, s.component_id, s.per_bundle, ${perPlace} FROM part_sellable s GROUP BY ${groupBy}
    ), bundle_groups AS (
      SELECT t.bundle_id AS product_id, t.warehouse_id, NULL::uuid AS position_id, '{}'::uuid[] AS ids,
             min(floor(t.sellable / t.per_bundle))::bigint AS available
        FROM part_totals t GROUP BY t.bundle_id, t.warehouse_id
    )`;
}
