import { z } from 'zod';
import type { DbOrTx, Tx } from '../../kernel/db';
import type { SqlKeysetList } from '../../kernel/keyset';
import { int8, int8OrNull, parseRows, timestamp, uuid } from '../../kernel/rows';
import { Prisma } from '../../__generated__/prisma/client';
import { ORDER_MONEY_JSON, OrderItemMoneyFields, OrderMoneyRow, type OrderMoney } from './order-money';

export type OrderStatus = 'OPEN' | 'PARTIALLY_SHIPPED' | 'SHIPPED' | 'CANCELLED';
export type OrderItemState =
  | 'ALLOCATED'
  | 'BACKORDERED'
  | 'DEALLOCATED'
  | 'SHIPPED'
  | 'RETURNED'
  | 'CANCELLED'
  | 'RESTOCKED'
  | 'MISSING'
  | 'UNAVAILABLE';

export interface OrderItemRecord {
  id: string;
  productId: string;
  sku: string;
  quantity: number;
  state: OrderItemState;
  /** Unix milliseconds; null until shipped. */
  shippedAt: number | null;
  /** Minor units of one unit before discounts; null (with `discount` and `tax`) on orders without money. */
  unitPrice: number | null;
  /** The discount allocated to the item, all its units. */
  discount: number | null;
  /** The item's tax, all its units, on the discounted amount. */
  tax: number | null;
}

export interface OrderRecord {
  id: string;
  businessId: string;
  warehouseId: string;
  channelId: string;
  status: OrderStatus;
  createdAt: Date;
  updatedAt: Date;
  items: OrderItemRecord[];
  /** Buyer, currency, totals, payment: null on orders made without money (`createOrder`). */
  money: OrderMoney | null;
}

export async function insertOrder(
  tx: Tx,
  tenantId: string,
  order: {
    id: string;
    businessId: string;
    warehouseId: string;
    channelId: string;
    items: { id: string; productId: string; quantity: number }[];
  },
) {
  await tx.$executeRaw`
    INSERT INTO orders (id, tenant_id, business_id, warehouse_id, channel_id)
    VALUES (${order.id}::uuid, ${tenantId}::uuid, ${order.businessId}::uuid, ${order.warehouseId}::uuid,
      ${order.channelId}::uuid)`;
  await insertItems(tx, tenantId, order.id, order.items);
}

/** The items of a new order, ALLOCATED; with their money when the order has money. */
export async function insertItems(
  tx: Tx,
  tenantId: string,
  orderId: string,
  items: { id: string; productId: string; quantity: number; unitPrice?: number; discount?: number; tax?: number }[],
) {
  const money = (pick: (item: (typeof items)[number]) => number | undefined) =>
    items.map((item) => (pick(item) === undefined ? null : String(pick(item))));
  await tx.$executeRaw`
    INSERT INTO order_items (id, tenant_id, order_id, product_id, quantity, state, unit_price, discount, tax)
    SELECT v.id, ${tenantId}::uuid, ${orderId}::uuid, v.product_id, v.quantity, 'ALLOCATED',
           v.unit_price, v.discount, v.tax
      FROM unnest(${items.map((i) => i.id)}::uuid[], ${items.map((i) => i.productId)}::uuid[],
                  ${items.map((i) => String(i.quantity))}::bigint[], ${money((i) => i.unitPrice)}::bigint[],
                  ${money((i) => i.discount)}::bigint[], ${money((i) => i.tax)}::bigint[])
           AS v(id, product_id, quantity, unit_price, discount, tax)`;
}

/** Whether the tenant has an order with this id (ids are unique per tenant). */
export async function orderExists(db: DbOrTx, tenantId: string, id: string) {
  return (
    (await db.$queryRaw<unknown[]>`SELECT 1 FROM orders WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::uuid`)
      .length > 0
  );
}

const ORDER_STATUSES = ['OPEN', 'PARTIALLY_SHIPPED', 'SHIPPED', 'CANCELLED'] as const;
const ITEM_STATES = [
  'ALLOCATED',
  'BACKORDERED',
  'DEALLOCATED',
  'SHIPPED',
  'RETURNED',
  'CANCELLED',
  'RESTOCKED',
  'MISSING',
  'UNAVAILABLE',
] as const;

const OrderRow = z.object({
  id: uuid,
  businessId: uuid,
  warehouseId: uuid,
  channelId: uuid,
  status: z.enum(ORDER_STATUSES),
  createdAt: timestamp,
  updatedAt: timestamp,
  items: z.array(
    z.object({
      id: uuid,
      productId: uuid,
      sku: z.string(),
      quantity: int8,
      state: z.enum(ITEM_STATES),
      shippedAt: int8OrNull,
      ...OrderItemMoneyFields,
    }),
  ),
  money: OrderMoneyRow.nullable(),
}) satisfies z.ZodType<OrderRecord, unknown>;

const ORDER_SELECT = Prisma.sql`
  SELECT o.id, o.business_id AS "businessId", o.warehouse_id AS "warehouseId", o.channel_id AS "channelId",
         o.status::text AS status, o.created_at AS "createdAt", o.updated_at AS "updatedAt",
         coalesce((SELECT json_agg(json_build_object('id', i.id, 'productId', i.product_id, 'sku', p.sku,
                                                     'quantity', i.quantity, 'state', i.state,
                                                     'shippedAt', (extract(epoch FROM i.shipped_at) * 1000)::bigint,
                                                     'unitPrice', i.unit_price, 'discount', i.discount, 'tax', i.tax)
                                   ORDER BY i.id)
                     FROM order_items i JOIN products p ON p.id = i.product_id
                    WHERE i.tenant_id = o.tenant_id AND i.order_id = o.id), '[]') AS items,
         ${Prisma.raw(ORDER_MONEY_JSON)} AS money
    FROM orders o`;

export async function findOrders(db: DbOrTx, tenantId: string, ids: readonly string[]): Promise<OrderRecord[]> {
  const rows = await db.$queryRaw<unknown[]>`
    ${ORDER_SELECT} WHERE o.tenant_id = ${tenantId}::uuid AND o.id = ANY(${[...ids]}::uuid[])`;
  return parseRows(OrderRow, rows);
}

/** Locks the order row: writers of one order run one after the other. */
export async function lockOrder(tx: Tx, tenantId: string, id: string) {
  await tx.$queryRaw`SELECT 1 FROM orders WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::uuid FOR UPDATE`;
}

export async function setOrderStatus(tx: Tx, tenantId: string, id: string, status: OrderStatus) {
  await tx.$executeRaw`
    UPDATE orders SET status = ${status}::order_status, updated_at = now()
     WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::uuid`;
}

export async function setItemStates(
  tx: Tx,
  tenantId: string,
  ids: string[],
  state: OrderItemState,
  options: { shipped?: boolean } = {},
) {
  if (ids.length === 0) return;
  await tx.$executeRaw`
    UPDATE order_items SET state = ${state}::order_item_state, updated_at = now()
           ${options.shipped ? Prisma.sql`, shipped_at = now()` : Prisma.empty}
     WHERE tenant_id = ${tenantId}::uuid AND id = ANY(${ids}::uuid[])`;
}

/**
 * Splits `quantity` units off an item into a new SHIPPED item of the same order and product
 * (shipped now); the item keeps the rest. With money, the new item has the same unit price and
 * takes floor(amount × quantity / the item's quantity) of its discount and of its tax; the item
 * keeps the rest, so the sums stay exact.
 */
export async function splitShippedItem(tx: Tx, tenantId: string, itemId: string, newItemId: string, quantity: number) {
  const units = Prisma.sql`${String(quantity)}::bigint`;
  await tx.$executeRaw`
    WITH old AS (
      SELECT order_id, product_id, quantity, unit_price, discount, tax FROM order_items
       WHERE tenant_id = ${tenantId}::uuid AND id = ${itemId}::uuid),
    source AS (
      UPDATE order_items i
         SET quantity = i.quantity - ${units}, discount = i.discount - i.discount * ${units} / i.quantity,
             tax = i.tax - i.tax * ${units} / i.quantity, updated_at = now()
       WHERE i.tenant_id = ${tenantId}::uuid AND i.id = ${itemId}::uuid
      RETURNING i.id)
    INSERT INTO order_items
           (id, tenant_id, order_id, product_id, quantity, state, shipped_at, unit_price, discount, tax)
    SELECT ${newItemId}::uuid, ${tenantId}::uuid, old.order_id, old.product_id, ${units}, 'SHIPPED', now(),
           old.unit_price, old.discount * ${units} / old.quantity, old.tax * ${units} / old.quantity
      FROM old, source`;
}

function listConditions(tenantId: string, status: OrderStatus | undefined) {
  const conditions = [Prisma.sql`o.tenant_id = ${tenantId}::uuid`];
  if (status) conditions.push(Prisma.sql`o.status = ${status}::order_status`);
  return conditions;
}

/** The orders of a tenant in id (creation) order, of one status or all. */
export const orderList = (tenantId: string, status: OrderStatus | undefined): SqlKeysetList<OrderRecord, string> => ({
  select: ORDER_SELECT,
  where: listConditions(tenantId, status),
  key: [Prisma.sql`o.id`],
  values: (id) => [Prisma.sql`${id}::uuid`],
  row: OrderRow,
  keyOf: (record) => record.id,
});

export interface OrderItemAllocationRecord {
  orderItemId: string;
  warehouseId: string;
  state: 'COMMITTED' | 'UNAVAILABLE';
  quantity: number;
}

/** The units each of these order items holds, summed per warehouse and state. */
export async function allocationsOfItems(db: DbOrTx, tenantId: string, itemIds: readonly string[]) {
  const rows = await db.$queryRaw<unknown[]>`
    SELECT order_item_id AS "orderItemId", warehouse_id AS "warehouseId", state::text AS state,
           sum(quantity)::bigint AS quantity
      FROM stock_allocations WHERE tenant_id = ${tenantId}::uuid AND order_item_id = ANY(${[...itemIds]}::uuid[])
     GROUP BY order_item_id, warehouse_id, state ORDER BY order_item_id, warehouse_id, state`;
  return parseRows(
    z.object({ orderItemId: uuid, warehouseId: uuid, state: z.enum(['COMMITTED', 'UNAVAILABLE']), quantity: int8 }),
    rows,
  );
}
