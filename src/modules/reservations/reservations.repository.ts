import { z } from 'zod';
import type { DbOrTx, Tx } from '../../kernel/db';
import type { SqlKeysetList } from '../../kernel/keyset';
import { int8, parseRows, timestamp, uuid } from '../../kernel/rows';
import { Prisma } from '../../__generated__/prisma/client';

export type ReservationStatus = 'ACTIVE' | 'REMOVED' | 'EXPIRED' | 'CONVERTED';

export interface ReservationContact {
  name: string;
  email?: string | null;
  phone?: string | null;
}

export interface ReservationRecord {
  id: string;
  businessId: string;
  warehouseId: string;
  channelId: string;
  customer: ReservationContact;
  notes: string | null;
  expiresAt: Date;
  /** As stored: an ACTIVE reservation past `expiresAt` is reported EXPIRED (see the service). */
  status: ReservationStatus;
  releasedAt: Date | null;
  /** The order a CONVERTED reservation became. */
  orderId: string | null;
  createdAt: Date;
  items: ReservationItemRecord[];
}

export interface ReservationItemRecord {
  productId: string;
  sku: string;
  quantity: number;
}

/** What a new reservation is made of, before any stock moves. */
type ReservationHeader = Pick<
  ReservationRecord,
  'id' | 'businessId' | 'warehouseId' | 'channelId' | 'customer' | 'notes' | 'expiresAt'
>;

export interface NewReservation extends ReservationHeader {
  items: { id: string; productId: string; quantity: number }[];
}

export async function insertReservation(tx: Tx, tenantId: string, reservation: NewReservation) {
  await tx.$executeRaw`
    INSERT INTO reservations (id, tenant_id, business_id, warehouse_id, channel_id, customer, notes, expires_at)
    VALUES (${reservation.id}::uuid, ${tenantId}::uuid,
            ${reservation.businessId}::uuid, ${reservation.warehouseId}::uuid, ${reservation.channelId}::uuid,
            ${JSON.stringify(reservation.customer)}::jsonb, ${reservation.notes},
            ${reservation.expiresAt.toISOString()}::timestamptz)`;
  await tx.$executeRaw`
    INSERT INTO reservation_items (id, tenant_id, reservation_id, product_id, quantity)
    SELECT v.id, ${tenantId}::uuid, ${reservation.id}::uuid, v.product_id, v.quantity
      FROM unnest(${reservation.items.map((i) => i.id)}::uuid[], ${reservation.items.map((i) => i.productId)}::uuid[],
                  ${reservation.items.map((i) => String(i.quantity))}::bigint[]) AS v(id, product_id, quantity)`;
}

/** Whether the tenant has a reservation with this id. */
export async function isReservationIdUsed(db: DbOrTx, tenantId: string, id: string) {
  const rows = await db.$queryRaw<unknown[]>`
    SELECT 1 FROM reservations WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::uuid`;
  return rows.length > 0;
}

const ReservationRow = z.object({
  id: uuid,
  businessId: uuid,
  warehouseId: uuid,
  channelId: uuid,
  customer: z.object({ name: z.string(), email: z.string().nullish(), phone: z.string().nullish() }),
  notes: z.string().nullable(),
  expiresAt: timestamp,
  status: z.enum(['ACTIVE', 'REMOVED', 'EXPIRED', 'CONVERTED']),
  releasedAt: timestamp.nullable(),
  orderId: uuid.nullable(),
  createdAt: timestamp,
  items: z.array(z.object({ productId: uuid, sku: z.string(), quantity: int8 })),
}) satisfies z.ZodType<ReservationRecord, unknown>;

const RESERVATION_SELECT = Prisma.sql`
  SELECT r.id, r.business_id AS "businessId", r.warehouse_id AS "warehouseId", r.channel_id AS "channelId",
         r.customer, r.notes, r.expires_at AS "expiresAt", r.status::text AS status,
         r.released_at AS "releasedAt", r.order_id AS "orderId", r.created_at AS "createdAt",
         coalesce((SELECT json_agg(json_build_object('productId', i.product_id, 'sku', p.sku, 'quantity', i.quantity)
                                   ORDER BY i.id)
                     FROM reservation_items i JOIN products p ON p.id = i.product_id
                    WHERE i.tenant_id = r.tenant_id AND i.reservation_id = r.id), '[]') AS items
    FROM reservations r`;

export async function findReservations(
  db: DbOrTx,
  tenantId: string,
  ids: readonly string[],
): Promise<ReservationRecord[]> {
  const rows = await db.$queryRaw<unknown[]>`
    ${RESERVATION_SELECT} WHERE r.tenant_id = ${tenantId}::uuid AND r.id = ANY(${[...ids]}::uuid[])`;
  return parseRows(ReservationRow, rows);
}

/** Conditions of a reservations list: the effective status (ACTIVE past its expiry is EXPIRED). */
function listConditions(tenantId: string, status: ReservationStatus | undefined) {
  const conditions = [Prisma.sql`r.tenant_id = ${tenantId}::uuid`];
  if (status === 'ACTIVE') conditions.push(Prisma.sql`r.status = 'ACTIVE' AND r.expires_at > now()`);
  if (status === 'EXPIRED')
    conditions.push(Prisma.sql`(r.status = 'EXPIRED' OR (r.status = 'ACTIVE' AND r.expires_at <= now()))`);
  if (status === 'REMOVED') conditions.push(Prisma.sql`r.status = 'REMOVED'`);
  if (status === 'CONVERTED') conditions.push(Prisma.sql`r.status = 'CONVERTED'`);
  return conditions;
}

/** The reservations of a tenant in id (creation) order, with one effective status or all. */
export const reservationList = (
  tenantId: string,
  status: ReservationStatus | undefined,
): SqlKeysetList<ReservationRecord, string> => ({
  select: RESERVATION_SELECT,
  where: listConditions(tenantId, status),
  key: [Prisma.sql`r.id`],
  values: (id) => [Prisma.sql`${id}::uuid`],
  row: ReservationRow,
  keyOf: (record) => record.id,
});

/**
 * Moves the expiry of an ACTIVE reservation whose time has not run out (by the clock, not the
 * transaction's start); false when it ended or expired meanwhile.
 */
export async function extendActiveReservation(tx: Tx, tenantId: string, id: string, expiresAt: Date) {
  const extended = await tx.$executeRaw`
    UPDATE reservations SET expires_at = ${expiresAt.toISOString()}::timestamptz
     WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::uuid AND status = 'ACTIVE' AND expires_at > clock_timestamp()`;
  return extended === 1;
}

/**
 * Ends an ACTIVE reservation whose time has not run out as CONVERTED into `orderId`; false when it
 * ended or expired meanwhile. The caller holds the stock locks of its allocations.
 */
export async function convertActiveReservation(tx: Tx, tenantId: string, id: string, orderId: string) {
  const converted = await tx.$executeRaw`
    UPDATE reservations SET status = 'CONVERTED', released_at = now(), order_id = ${orderId}::uuid
     WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::uuid AND status = 'ACTIVE' AND expires_at > clock_timestamp()`;
  return converted === 1;
}

const ExpiredRow = z.object({ id: uuid, tenantId: uuid });

/** `tenantId/id`: what names a reservation across tenants (ids are unique per tenant). */
export const reservationKey = ({ tenantId, id }: { tenantId: string; id: string }) => `${tenantId}/${id}`;

/** Active reservations of any tenant whose time ran out, oldest expiry first, but `skipped` (`reservationKey`s). */
export async function expiredReservations(db: DbOrTx, limit: number, skipped: string[] = []) {
  return parseRows(
    ExpiredRow,
    await db.$queryRaw<unknown[]>`
      SELECT id, tenant_id AS "tenantId" FROM reservations
       WHERE status = 'ACTIVE' AND expires_at <= now() AND tenant_id::text || '/' || id::text <> ALL(${skipped}::text[])
       ORDER BY expires_at LIMIT ${limit}`,
  );
}

/**
 * Retention: deletes at most `limit` reservations released (removed, expired or converted) more
 * than `days` days ago, found through the index on `released_at`, with their items (the foreign
 * key cascades). One that still holds stock (an allocation names it) is kept: stock levels never
 * depend on what retention deletes. Rows another process is deleting are skipped.
 */
export const deleteReleasedReservations = (db: DbOrTx, days: number, limit: number) =>
  db.$executeRaw`
    DELETE FROM reservations WHERE ctid = ANY(ARRAY(
      SELECT r.ctid FROM reservations r
       WHERE r.released_at < now() - make_interval(days => ${days}) AND r.status <> 'ACTIVE'
         AND NOT EXISTS (SELECT 1 FROM stock_allocations a WHERE a.reservation_id = r.id AND a.tenant_id = r.tenant_id)
       LIMIT ${limit} FOR UPDATE OF r SKIP LOCKED))`;
