import type { Db } from '../../kernel/db';
import type { Tx } from '../../kernel/idempotency';
import type { KeysetQuery } from '../../kernel/pagination';
import { Prisma } from '../../__generated__/prisma/client';

type Client = Db | Tx;

export type ReservationStatus = 'ACTIVE' | 'REMOVED' | 'EXPIRED';

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
  createdAt: Date;
  items: ReservationItemRecord[];
}

export interface ReservationItemRecord {
  productId: string;
  sku: string;
  quantity: number;
}

export interface NewReservation {
  id: string;
  businessId: string;
  warehouseId: string;
  channelId: string;
  customer: ReservationContact;
  notes: string | null;
  expiresAt: Date;
  items: { id: string; productId: string; quantity: number }[];
}

export async function insertReservation(tx: Tx, tenantId: string, reservation: NewReservation) {
  await tx.$executeRaw`
    INSERT INTO reservations (id, tenant_id, business_id, warehouse_id, channel_id, customer, notes, expires_at)
    VALUES (${reservation.id}::uuid, ${tenantId}::uuid, ${reservation.businessId}::uuid, ${reservation.warehouseId}::uuid,
            ${reservation.channelId}::uuid, ${JSON.stringify(reservation.customer)}::jsonb, ${reservation.notes},
            ${reservation.expiresAt.toISOString()}::timestamptz)`;
  await tx.$executeRaw`
    INSERT INTO reservation_items (id, tenant_id, reservation_id, product_id, quantity)
    SELECT v.id, ${tenantId}::uuid, ${reservation.id}::uuid, v.product_id, v.quantity
      FROM unnest(${reservation.items.map((i) => i.id)}::uuid[], ${reservation.items.map((i) => i.productId)}::uuid[],
                  ${reservation.items.map((i) => String(i.quantity))}::bigint[]) AS v(id, product_id, quantity)`;
}

export async function reservationExists(db: Client, id: string) {
  return (await db.$queryRaw<unknown[]>`SELECT 1 FROM reservations WHERE id = ${id}::uuid`).length > 0;
}

const RESERVATION_SELECT = Prisma.sql`
  SELECT r.id, r.business_id AS "businessId", r.warehouse_id AS "warehouseId", r.channel_id AS "channelId", r.customer, r.notes,
         r.expires_at AS "expiresAt", r.status::text AS status, r.released_at AS "releasedAt", r.created_at AS "createdAt",
         coalesce((SELECT json_agg(json_build_object('productId', i.product_id, 'sku', p.sku, 'quantity', i.quantity) ORDER BY i.id)
                     FROM reservation_items i JOIN products p ON p.id = i.product_id WHERE i.reservation_id = r.id), '[]') AS items
    FROM reservations r`;

export async function findReservations(db: Client, tenantId: string, ids: readonly string[]): Promise<ReservationRecord[]> {
  return db.$queryRaw<ReservationRecord[]>`${RESERVATION_SELECT} WHERE r.tenant_id = ${tenantId}::uuid AND r.id = ANY(${[...ids]}::uuid[])`;
}

/** Conditions of a reservations list: the effective status (ACTIVE past its expiry is EXPIRED). */
function listConditions(tenantId: string, status: ReservationStatus | undefined) {
  const conditions = [Prisma.sql`r.tenant_id = ${tenantId}::uuid`];
  if (status === 'ACTIVE') conditions.push(Prisma.sql`r.status = 'ACTIVE' AND r.expires_at > now()`);
  if (status === 'EXPIRED') conditions.push(Prisma.sql`(r.status = 'EXPIRED' OR (r.status = 'ACTIVE' AND r.expires_at <= now()))`);
  if (status === 'REMOVED') conditions.push(Prisma.sql`r.status = 'REMOVED'`);
  return conditions;
}

export async function listReservations(db: Client, tenantId: string, status: ReservationStatus | undefined, query: KeysetQuery<string>) {
  const conditions = listConditions(tenantId, status);
  if (query.after !== undefined) conditions.push(Prisma.sql`r.id > ${query.after}::uuid`);
  if (query.before !== undefined) conditions.push(Prisma.sql`r.id < ${query.before}::uuid`);
  return db.$queryRaw<ReservationRecord[]>`${RESERVATION_SELECT} WHERE ${Prisma.join(conditions, ' AND ')}
    ORDER BY r.id ${Prisma.raw(query.backwards ? 'DESC' : 'ASC')} LIMIT ${query.take}`;
}

export async function reservationExistsBeside(db: Client, tenantId: string, status: ReservationStatus | undefined, direction: 'before' | 'after', id: string) {
  const conditions = listConditions(tenantId, status);
  conditions.push(direction === 'before' ? Prisma.sql`r.id < ${id}::uuid` : Prisma.sql`r.id > ${id}::uuid`);
  return (await db.$queryRaw<unknown[]>`SELECT 1 FROM reservations r WHERE ${Prisma.join(conditions, ' AND ')} LIMIT 1`).length > 0;
}

/** Active reservations of any tenant whose time ran out, oldest expiry first. */
export async function expiredReservations(db: Client, limit: number) {
  return db.$queryRaw<{ id: string; tenantId: string }[]>`
    SELECT id, tenant_id AS "tenantId" FROM reservations
     WHERE status = 'ACTIVE' AND expires_at <= now() ORDER BY expires_at LIMIT ${limit}`;
}
