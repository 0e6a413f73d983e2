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

/** What `reserveStock` did: see the `reserve_stock` function of the database. */
export type ReserveOutcome =
  | { outcome: 'RESERVED'; createdAt: Date }
  | { outcome: 'TAKEN' }
  | { outcome: 'EXPIRED' }
  | { outcome: 'SHORT'; itemIndex: number; requested: number; available: number };

/**
 * The whole reservation in one statement (the `reserve_stock` database function): the stock locks
 * of `lockKeys` (ascending), the availability check of every SKU's summed quantity, the reservation
 * and its items, the moves from AVAILABLE to RESERVED lines, the allocations, one ALLOCATION ledger
 * row per line moved from and their broadcasts. Writes nothing unless the outcome is RESERVED;
 * takes no lock when an expired reservation still holds units of these SKUs (EXPIRED).
 */
export async function reserveStock(
  db: Client,
  tenantId: string,
  reservation: NewReservation,
  options: { lockKeys: bigint[]; checkId: boolean; actor: { type: string; id: string }; references: unknown },
): Promise<ReserveOutcome> {
  const [row] = await db.$queryRaw<{ outcome: string; item_index: number | null; requested: bigint | null; available: bigint | null; created_at: Date | null }[]>`
    SELECT * FROM reserve_stock(
      ${tenantId}::uuid, ${reservation.id}::uuid, ${reservation.businessId}::uuid, ${reservation.warehouseId}::uuid,
      ${reservation.channelId}::uuid, ${JSON.stringify(reservation.customer)}::jsonb, ${reservation.notes}::text,
      ${reservation.expiresAt.toISOString()}::timestamptz, ${reservation.items.map((i) => i.id)}::uuid[],
      ${reservation.items.map((i) => i.productId)}::uuid[], ${reservation.items.map((i) => String(i.quantity))}::bigint[],
      ${options.lockKeys.map(String)}::text[]::bigint[], ${options.actor.type}::text, ${options.actor.id}::text,
      ${JSON.stringify(options.references)}::jsonb, ${options.checkId}::boolean)`;
  if (!row) throw new Error('reserve_stock returned no row');
  switch (row.outcome) {
    case 'RESERVED':
      return { outcome: 'RESERVED', createdAt: row.created_at! };
    case 'SHORT':
      return { outcome: 'SHORT', itemIndex: row.item_index! - 1, requested: Number(row.requested), available: Number(row.available) };
    case 'TAKEN':
    case 'EXPIRED':
      return { outcome: row.outcome };
    default:
      throw new Error(`reserve_stock returned "${row.outcome}"`);
  }
}
