import type { DbOrTx, Tx } from '../../kernel/db';
import type { KeysetQuery } from '../../kernel/pagination';
import { Prisma } from '../../__generated__/prisma/client';


export type OrderStatus = 'OPEN' | 'SHIPPED' | 'CANCELLED';
export type OrderItemState = 'ALLOCATED' | 'BACKORDERED' | 'DEALLOCATED' | 'SHIPPED' | 'RETURNED' | 'CANCELLED' | 'RESTOCKED' | 'MISSING' | 'UNAVAILABLE';

export interface OrderItemRecord {
  id: string;
  productId: string;
  sku: string;
  quantity: number;
  state: OrderItemState;
  /** Unix milliseconds; null until shipped. */
  shippedAt: number | null;
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
}

export async function insertOrder(
  tx: Tx,
  tenantId: string,
  order: { id: string; businessId: string; warehouseId: string; channelId: string; items: { id: string; productId: string; quantity: number }[] },
) {
  await tx.$executeRaw`
    INSERT INTO orders (id, tenant_id, business_id, warehouse_id, channel_id)
    VALUES (${order.id}::uuid, ${tenantId}::uuid, ${order.businessId}::uuid, ${order.warehouseId}::uuid, ${order.channelId}::uuid)`;
  await tx.$executeRaw`
    INSERT INTO order_items (id, tenant_id, order_id, product_id, quantity, state)
    SELECT v.id, ${tenantId}::uuid, ${order.id}::uuid, v.product_id, v.quantity, 'ALLOCATED'
      FROM unnest(${order.items.map((i) => i.id)}::uuid[], ${order.items.map((i) => i.productId)}::uuid[],
                  ${order.items.map((i) => String(i.quantity))}::bigint[]) AS v(id, product_id, quantity)`;
}

export async function orderExists(db: DbOrTx, id: string) {
  return (await db.$queryRaw<unknown[]>`SELECT 1 FROM orders WHERE id = ${id}::uuid`).length > 0;
}

const ORDER_SELECT = Prisma.sql`
  SELECT o.id, o.business_id AS "businessId", o.warehouse_id AS "warehouseId", o.channel_id AS "channelId", o.status::text AS status,
         o.created_at AS "createdAt", o.updated_at AS "updatedAt",
         coalesce((SELECT json_agg(json_build_object('id', i.id, 'productId', i.product_id, 'sku', p.sku, 'quantity', i.quantity,
                                                     'state', i.state, 'shippedAt', (extract(epoch FROM i.shipped_at) * 1000)::bigint) ORDER BY i.id)
                     FROM order_items i JOIN products p ON p.id = i.product_id WHERE i.order_id = o.id), '[]') AS items
    FROM orders o`;

export async function findOrders(db: DbOrTx, tenantId: string, ids: readonly string[]): Promise<OrderRecord[]> {
  return db.$queryRaw<OrderRecord[]>`${ORDER_SELECT} WHERE o.tenant_id = ${tenantId}::uuid AND o.id = ANY(${[...ids]}::uuid[])`;
}

/** Locks the order row: writers of one order run one after the other. */
export async function lockOrder(tx: Tx, id: string) {
  await tx.$queryRaw`SELECT 1 FROM orders WHERE id = ${id}::uuid FOR UPDATE`;
}

export async function setOrderStatus(tx: Tx, id: string, status: OrderStatus) {
  await tx.$executeRaw`UPDATE orders SET status = ${status}::order_status, updated_at = now() WHERE id = ${id}::uuid`;
}

export async function setItemStates(tx: Tx, ids: string[], state: OrderItemState, options: { shipped?: boolean } = {}) {
  if (ids.length === 0) return;
  await tx.$executeRaw`
    UPDATE order_items SET state = ${state}::order_item_state, updated_at = now()
           ${options.shipped ? Prisma.sql`, shipped_at = now()` : Prisma.empty}
     WHERE id = ANY(${ids}::uuid[])`;
}

function listConditions(tenantId: string, status: OrderStatus | undefined) {
  const conditions = [Prisma.sql`o.tenant_id = ${tenantId}::uuid`];
  if (status) conditions.push(Prisma.sql`o.status = ${status}::order_status`);
  return conditions;
}

export async function listOrders(db: DbOrTx, tenantId: string, status: OrderStatus | undefined, query: KeysetQuery<string>) {
  const conditions = listConditions(tenantId, status);
  if (query.after !== undefined) conditions.push(Prisma.sql`o.id > ${query.after}::uuid`);
  if (query.before !== undefined) conditions.push(Prisma.sql`o.id < ${query.before}::uuid`);
  return db.$queryRaw<OrderRecord[]>`${ORDER_SELECT} WHERE ${Prisma.join(conditions, ' AND ')}
    ORDER BY o.id ${Prisma.raw(query.backwards ? 'DESC' : 'ASC')} LIMIT ${query.take}`;
}

export async function orderExistsBeside(db: DbOrTx, tenantId: string, status: OrderStatus | undefined, direction: 'before' | 'after', id: string) {
  const conditions = listConditions(tenantId, status);
  conditions.push(direction === 'before' ? Prisma.sql`o.id < ${id}::uuid` : Prisma.sql`o.id > ${id}::uuid`);
  return (await db.$queryRaw<unknown[]>`SELECT 1 FROM orders o WHERE ${Prisma.join(conditions, ' AND ')} LIMIT 1`).length > 0;
}
