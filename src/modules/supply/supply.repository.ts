import { z } from 'zod';
import type { DbOrTx, Tx } from '../../kernel/db';
import { int8, int8OrNull, parseRows, timestamp, uuid } from '../../kernel/rows';
import { Prisma } from '../../__generated__/prisma/client';

export type SupplyProcessing = 'REGISTER' | 'MATCH_ORDERS';

const AnnouncementItemRow = z.object({ productId: uuid, sku: z.string(), quantity: int8 });
export type AnnouncementItemRecord = z.output<typeof AnnouncementItemRow>;

const AnnouncementRow = z.object({
  id: uuid,
  businessId: uuid,
  warehouseId: uuid,
  reference: z.string().nullable(),
  status: z.enum(['OPEN', 'SUPPLIED']),
  supplyId: uuid.nullable(),
  createdAt: timestamp,
  items: z.array(AnnouncementItemRow),
});
export type AnnouncementRecord = z.output<typeof AnnouncementRow>;

const SupplyItemRow = z.object({
  id: uuid,
  productId: uuid,
  sku: z.string(),
  quantity: int8,
  isOverage: z.boolean(),
  /** Unix milliseconds; null until received. */
  receivedAt: int8OrNull,
});
export type SupplyItemRecord = z.output<typeof SupplyItemRow>;

const SupplyRow = z.object({
  id: uuid,
  warehouseId: uuid,
  positionId: uuid.nullable(),
  processing: z.enum(['REGISTER', 'MATCH_ORDERS']),
  status: z.enum(['EXPECTED', 'RECEIVED']),
  dueAt: timestamp.nullable(),
  receivedAt: timestamp.nullable(),
  createdAt: timestamp,
  announcementIds: z.array(uuid),
  items: z.array(SupplyItemRow),
});
export type SupplyRecord = z.output<typeof SupplyRow>;

export async function insertAnnouncement(
  tx: Tx,
  tenantId: string,
  row: { id: string; businessId: string; warehouseId: string; reference: string | null },
) {
  await tx.$executeRaw`
    INSERT INTO announcements (id, tenant_id, business_id, warehouse_id, reference)
    VALUES (${row.id}::uuid, ${tenantId}::uuid, ${row.businessId}::uuid, ${row.warehouseId}::uuid, ${row.reference})`;
}

export async function insertAnnouncementItems(
  tx: Tx,
  tenantId: string,
  announcementId: string,
  items: { id: string; productId: string; quantity: number }[],
) {
  await tx.$executeRaw`
    INSERT INTO announcement_items (id, tenant_id, announcement_id, product_id, quantity)
    SELECT v.id, ${tenantId}::uuid, ${announcementId}::uuid, v.product_id, v.quantity
      FROM unnest(${items.map((i) => i.id)}::uuid[], ${items.map((i) => i.productId)}::uuid[],
        ${items.map((i) => String(i.quantity))}::bigint[])
           AS v(id, product_id, quantity)`;
}

/** Whether the tenant has an announcement or supply with this id (ids are unique per tenant). */
export async function isIdUsed(db: DbOrTx, table: 'announcements' | 'supplies', tenantId: string, id: string) {
  const rows = await db.$queryRawUnsafe<unknown[]>(
    `SELECT 1 FROM ${table} WHERE tenant_id = $1::uuid AND id = $2::uuid`,
    tenantId,
    id,
  );
  return rows.length > 0;
}

const ANNOUNCEMENT_SELECT = Prisma.sql`
  SELECT a.id, a.business_id AS "businessId", a.warehouse_id AS "warehouseId", a.reference, a.status::text AS status,
         a.supply_id AS "supplyId", a.created_at AS "createdAt",
         coalesce((SELECT json_agg(json_build_object('productId', i.product_id, 'sku', p.sku, 'quantity', i.quantity)
                                   ORDER BY i.id)
                     FROM announcement_items i JOIN products p ON p.id = i.product_id
                    WHERE i.tenant_id = a.tenant_id AND i.announcement_id = a.id), '[]') AS items
    FROM announcements a`;

export async function findAnnouncements(
  db: DbOrTx,
  tenantId: string,
  ids: readonly string[],
  options: { forUpdate?: boolean } = {},
) {
  const rows = await db.$queryRaw<unknown[]>`${ANNOUNCEMENT_SELECT}
    WHERE a.tenant_id = ${tenantId}::uuid AND a.id = ANY(${[...ids]}::uuid[])
      ${options.forUpdate ? Prisma.sql`FOR UPDATE OF a` : Prisma.empty}`;
  return parseRows(AnnouncementRow, rows);
}

export async function insertSupply(
  tx: Tx,
  tenantId: string,
  row: {
    id: string;
    warehouseId: string;
    positionId: string | null;
    processing: SupplyProcessing;
    dueAt: Date | null;
    announcementIds: string[];
  },
) {
  await tx.$executeRaw`
    INSERT INTO supplies (id, tenant_id, warehouse_id, position_id, processing, due_at)
    VALUES (${row.id}::uuid, ${tenantId}::uuid, ${row.warehouseId}::uuid, ${row.positionId}::uuid,
      ${row.processing}::supply_processing,
            ${row.dueAt?.toISOString() ?? null}::timestamptz)`;
  await tx.$executeRaw`UPDATE announcements SET status = 'SUPPLIED', supply_id = ${row.id}::uuid
     WHERE tenant_id = ${tenantId}::uuid AND id = ANY(${row.announcementIds}::uuid[])`;
}

/** Adds items to a supply; each also becomes expected stock at the supply's location unless already received. */
export async function insertSupplyItems(
  tx: Tx,
  tenantId: string,
  supply: { id: string; warehouseId: string; positionId: string | null; dueAt: Date | null },
  items: { id: string; productId: string; quantity: number; isOverage: boolean; received: boolean }[],
) {
  await tx.$executeRaw`
    INSERT INTO supply_items (id, tenant_id, supply_id, product_id, quantity, is_overage, received_at)
    SELECT v.id, ${tenantId}::uuid, ${supply.id}::uuid, v.product_id, v.quantity, v.is_overage, CASE WHEN v.received
      THEN now() END
      FROM unnest(${items.map((i) => i.id)}::uuid[], ${items.map((i) => i.productId)}::uuid[],
        ${items.map((i) => String(i.quantity))}::bigint[],
                  ${items.map((i) => i.isOverage)}::boolean[], ${items.map((i) => i.received)}::boolean[]) AS v(id,
                    product_id, quantity, is_overage, received)`;
  const expected = items.filter((item) => !item.received);
  if (expected.length === 0) return;
  await tx.$executeRaw`
    INSERT INTO incoming_stock (id, tenant_id, product_id, warehouse_id, position_id, quantity, "references",
      expected_at)
    SELECT v.id, ${tenantId}::uuid, v.product_id, ${supply.warehouseId}::uuid, ${supply.positionId}::uuid, v.quantity,
           ${JSON.stringify([{ type: 'Supply', id: supply.id }])}::jsonb,
             ${supply.dueAt?.toISOString() ?? null}::timestamptz
      FROM unnest(${expected.map((i) => i.id)}::uuid[], ${expected.map((i) => i.productId)}::uuid[],
        ${expected.map((i) => String(i.quantity))}::bigint[])
           AS v(id, product_id, quantity)`;
}

const SUPPLY_SELECT = Prisma.sql`
  SELECT s.id, s.warehouse_id AS "warehouseId", s.position_id AS "positionId", s.processing::text AS processing,
         s.status::text AS status, s.due_at AS "dueAt", s.received_at AS "receivedAt", s.created_at AS "createdAt",
         coalesce((SELECT array_agg(a.id ORDER BY a.id) FROM announcements a
                    WHERE a.tenant_id = s.tenant_id AND a.supply_id = s.id), '{}')
           AS "announcementIds",
         coalesce((SELECT json_agg(json_build_object('id', i.id, 'productId', i.product_id, 'sku', p.sku,
                                                     'quantity', i.quantity, 'isOverage', i.is_overage,
                                                     'receivedAt', (extract(epoch FROM i.received_at) * 1000)::bigint)
                                   ORDER BY i.id)
                     FROM supply_items i JOIN products p ON p.id = i.product_id
                    WHERE i.tenant_id = s.tenant_id AND i.supply_id = s.id), '[]') AS items
    FROM supplies s`;

export async function findSupplies(
  db: DbOrTx,
  tenantId: string,
  ids: readonly string[],
  options: { forUpdate?: boolean } = {},
) {
  const rows = await db.$queryRaw<unknown[]>`${SUPPLY_SELECT}
    WHERE s.tenant_id = ${tenantId}::uuid AND s.id = ANY(${[...ids]}::uuid[])
      ${options.forUpdate ? Prisma.sql`FOR UPDATE OF s` : Prisma.empty}`;
  return parseRows(SupplyRow, rows);
}

/** Marks a supply and its pending items received, and removes their expected stock. Returns the items received. */
export async function markReceived(tx: Tx, tenantId: string, supplyId: string) {
  await tx.$executeRaw`
    UPDATE supplies SET status = 'RECEIVED', received_at = now()
     WHERE tenant_id = ${tenantId}::uuid AND id = ${supplyId}::uuid`;
  await tx.$executeRaw`
    DELETE FROM incoming_stock
     WHERE id IN (SELECT id FROM supply_items
                   WHERE tenant_id = ${tenantId}::uuid AND supply_id = ${supplyId}::uuid AND received_at IS NULL)`;
  return parseRows(
    z.object({ productId: uuid, quantity: int8 }),
    await tx.$queryRaw<unknown[]>`
      UPDATE supply_items SET received_at = now()
       WHERE tenant_id = ${tenantId}::uuid AND supply_id = ${supplyId}::uuid AND received_at IS NULL
      RETURNING product_id AS "productId", quantity`,
  );
}
