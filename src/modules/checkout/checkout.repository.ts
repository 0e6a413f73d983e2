/** The checkouts table: the only module writing it. */
import type { Prisma } from '../../__generated__/prisma/client';
import type { DbOrTx, Tx } from '../../kernel/db';
import type { CheckoutRecord, CheckoutStatus } from './checkout.types';

type Row = Prisma.CheckoutGetPayload<object>;

/** The JSON columns hold what `CheckoutRecord` says: the checkout module wrote them. */
const toRecord = (row: Row): CheckoutRecord => ({
  id: row.id,
  businessId: row.businessId,
  channelId: row.channelId,
  status: row.status as CheckoutStatus,
  currency: row.currency,
  taxInclusive: row.taxInclusive,
  buyer: row.buyer as unknown as CheckoutRecord['buyer'],
  destination: row.destination as unknown as CheckoutRecord['destination'],
  lines: row.lines as unknown as CheckoutRecord['lines'],
  discountCodes: row.discountCodes as unknown as string[],
  fulfillmentOptionId: row.fulfillmentOptionId,
  fulfillmentOptions: row.fulfillmentOptions as unknown as CheckoutRecord['fulfillmentOptions'],
  appliedDiscounts: row.appliedDiscounts as unknown as CheckoutRecord['appliedDiscounts'],
  payment: row.payment as unknown as CheckoutRecord['payment'],
  totals: row.totals as unknown as CheckoutRecord['totals'],
  taxLines: row.taxLines as unknown as CheckoutRecord['taxLines'],
  messages: row.messages as unknown as CheckoutRecord['messages'],
  pendingReleases: row.pendingReleases as unknown as string[],
  orderId: row.orderId,
  continueUrl: row.continueUrl,
  version: row.version,
  expiresAt: row.expiresAt,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

const json = (value: unknown) => value as Prisma.InputJsonValue;
const nullableJson = (value: unknown) => (value === null ? (null as unknown as Prisma.InputJsonValue) : json(value));

/** What a write sets: everything but the keys and the timestamps it sets itself. */
export type CheckoutWrite = Omit<
  CheckoutRecord,
  'id' | 'businessId' | 'channelId' | 'version' | 'createdAt' | 'updatedAt'
>;

const columns = (write: CheckoutWrite) => ({
  status: write.status,
  currency: write.currency,
  taxInclusive: write.taxInclusive,
  buyer: write.buyer === null ? undefined : json(write.buyer),
  destination: write.destination === null ? undefined : json(write.destination),
  lines: json(write.lines),
  discountCodes: json(write.discountCodes),
  fulfillmentOptionId: write.fulfillmentOptionId,
  fulfillmentOptions: json(write.fulfillmentOptions),
  appliedDiscounts: json(write.appliedDiscounts),
  payment: write.payment === null ? undefined : json(write.payment),
  totals: json(write.totals),
  taxLines: json(write.taxLines),
  messages: json(write.messages),
  pendingReleases: json(write.pendingReleases),
  orderId: write.orderId,
  continueUrl: write.continueUrl,
  expiresAt: write.expiresAt,
});

export async function insertCheckout(
  db: DbOrTx,
  tenantId: string,
  keys: { id: string; businessId: string; channelId: string },
  write: CheckoutWrite,
): Promise<void> {
  await db.checkout.create({ data: { ...keys, tenantId, ...columns(write) } });
}

export async function findCheckout(db: DbOrTx, tenantId: string, id: string): Promise<CheckoutRecord | null> {
  const row = await db.checkout.findUnique({ where: { tenantId_id: { tenantId, id } } });
  return row ? toRecord(row) : null;
}

/**
 * Writes a checkout if it is still at `version` (nobody changed it since it was read); the JSON
 * columns a write leaves null are cleared. False when another change came first.
 */
export async function updateCheckout(
  db: DbOrTx,
  tenantId: string,
  id: string,
  version: number,
  write: CheckoutWrite,
): Promise<boolean> {
  const data = {
    ...columns(write),
    buyer: nullableJson(write.buyer),
    destination: nullableJson(write.destination),
    payment: nullableJson(write.payment),
  };
  const { count } = await db.checkout.updateMany({
    where: { tenantId, id, version },
    data: { ...data, version: { increment: 1 }, updatedAt: new Date() },
  });
  return count === 1;
}

/** Locks a checkout's row for the completion's transaction; its status and version then. */
export async function lockCheckout(tx: Tx, tenantId: string, id: string) {
  const rows = await tx.$queryRaw<{ status: CheckoutStatus; version: number }[]>`
    SELECT status, version FROM checkouts WHERE tenant_id = ${tenantId}::uuid AND id = ${id}::uuid FOR UPDATE`;
  return rows[0] ?? null;
}

/** Open checkouts past their expiry (any tenant), for the sweep that marks them canceled. */
export async function expiredCheckouts(db: DbOrTx, limit: number) {
  return db.checkout.findMany({
    where: {
      status: { in: ['incomplete', 'ready_for_complete', 'requires_escalation'] },
      expiresAt: { lte: new Date() },
    },
    select: { tenantId: true, id: true },
    take: limit,
  });
}
