/** SQL of the payments module's tables: payments, payment_refunds, payment_settings, payment_actions. */
import { z } from 'zod';
import type { DbOrTx, Tx } from '../../kernel/db';
import { uuidv7 } from '../../kernel/ids';
import { int8, parseFirstRow, parseRows, timestamp, uuid } from '../../kernel/rows';
import { PAYMENT_RECORD_STATUSES, type PaymentRecord, type PaymentRecordStatus } from './payments.types';

const PaymentRow = z
  .object({
    id: uuid,
    order_id: uuid,
    handler: z.string(),
    reference: z.string(),
    amount: int8,
    currency: z.string(),
    status: z.enum(PAYMENT_RECORD_STATUSES),
    refunded_amount: int8,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .transform((row): PaymentRecord => ({
    id: row.id,
    orderId: row.order_id,
    handler: row.handler,
    reference: row.reference,
    amount: row.amount,
    currency: row.currency,
    status: row.status,
    refundedAmount: row.refunded_amount,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }));

export async function insertPayment(
  tx: Tx,
  tenantId: string,
  payment: Omit<PaymentRecord, 'id' | 'refundedAmount' | 'createdAt' | 'updatedAt'>,
) {
  await tx.$executeRaw`
    INSERT INTO payments (id, tenant_id, order_id, handler, reference, amount, currency, status)
    VALUES (${uuidv7()}::uuid, ${tenantId}::uuid, ${payment.orderId}::uuid, ${payment.handler}, ${payment.reference},
            ${String(payment.amount)}::bigint, ${payment.currency}, ${payment.status}::payment_status)`;
}

/** The payment of an order, locked for the rest of the transaction with `forUpdate`. */
export async function paymentOfOrder(db: DbOrTx, tenantId: string, orderId: string, forUpdate = false) {
  const rows = forUpdate
    ? await db.$queryRaw<unknown[]>`
        SELECT * FROM payments WHERE tenant_id = ${tenantId}::uuid AND order_id = ${orderId}::uuid FOR UPDATE`
    : await db.$queryRaw<unknown[]>`
        SELECT * FROM payments WHERE tenant_id = ${tenantId}::uuid AND order_id = ${orderId}::uuid`;
  return parseFirstRow(PaymentRow, rows);
}

export async function paymentsOfOrders(db: DbOrTx, tenantId: string, orderIds: readonly string[]) {
  return parseRows(
    PaymentRow,
    await db.$queryRaw<unknown[]>`
      SELECT * FROM payments WHERE tenant_id = ${tenantId}::uuid AND order_id = ANY(${[...orderIds]}::uuid[])`,
  );
}

export async function setPaymentState(
  tx: Tx,
  tenantId: string,
  paymentId: string,
  status: PaymentRecordStatus,
  refundedAmount: number,
) {
  await tx.$executeRaw`
    UPDATE payments SET status = ${status}::payment_status, refunded_amount = ${String(refundedAmount)}::bigint,
                        updated_at = now()
     WHERE tenant_id = ${tenantId}::uuid AND id = ${paymentId}::uuid`;
}

export async function insertRefund(
  tx: Tx,
  tenantId: string,
  refund: { paymentId: string; amount: number; reference: string; reason: string },
) {
  await tx.$executeRaw`
    INSERT INTO payment_refunds (id, tenant_id, payment_id, amount, reference, reason)
    VALUES (${uuidv7()}::uuid, ${tenantId}::uuid, ${refund.paymentId}::uuid, ${String(refund.amount)}::bigint,
            ${refund.reference}, ${refund.reason})`;
}

export async function refundsOfPayment(db: DbOrTx, tenantId: string, paymentId: string) {
  return parseRows(
    z.object({ amount: int8, reason: z.string(), created_at: timestamp }),
    await db.$queryRaw<unknown[]>`
      SELECT amount, reason, created_at FROM payment_refunds
       WHERE tenant_id = ${tenantId}::uuid AND payment_id = ${paymentId}::uuid ORDER BY created_at, id`,
  );
}

export async function sandboxEnabled(db: DbOrTx, tenantId: string): Promise<boolean> {
  const row = parseFirstRow(
    z.object({ sandbox_enabled: z.boolean() }),
    await db.$queryRaw<unknown[]>`SELECT sandbox_enabled FROM payment_settings WHERE tenant_id = ${tenantId}::uuid`,
  );
  return row?.sandbox_enabled ?? false;
}

export async function setSandboxEnabled(db: DbOrTx, tenantId: string, enabled: boolean) {
  await db.$executeRaw`
    INSERT INTO payment_settings (tenant_id, sandbox_enabled) VALUES (${tenantId}::uuid, ${enabled})
    ON CONFLICT (tenant_id) DO UPDATE SET sandbox_enabled = EXCLUDED.sandbox_enabled, updated_at = now()`;
}

const ActionRow = z
  .object({
    id: uuid,
    tenant_id: uuid,
    handler: z.string(),
    checkout_id: uuid,
    amount: int8,
    currency: z.string(),
    status: z.enum(['WAITING', 'APPROVED', 'DECLINED', 'USED']),
  })
  .transform((row) => ({
    id: row.id,
    tenantId: row.tenant_id,
    handler: row.handler,
    checkoutId: row.checkout_id,
    amount: row.amount,
    currency: row.currency,
    status: row.status,
  }));
export type PaymentActionRecord = z.output<typeof ActionRow>;

/** The newest action of a checkout for this handler, amount and currency that is not used up. */
export async function openAction(
  db: DbOrTx,
  tenantId: string,
  action: { handler: string; checkoutId: string; amount: number; currency: string },
) {
  return parseFirstRow(
    ActionRow,
    await db.$queryRaw<unknown[]>`
      SELECT * FROM payment_actions
       WHERE tenant_id = ${tenantId}::uuid AND checkout_id = ${action.checkoutId}::uuid AND handler = ${action.handler}
         AND amount = ${String(action.amount)}::bigint AND currency = ${action.currency} AND status <> 'USED'
       ORDER BY created_at DESC, id DESC LIMIT 1`,
  );
}

export async function insertAction(
  db: DbOrTx,
  tenantId: string,
  action: { handler: string; checkoutId: string; amount: number; currency: string },
) {
  const id = uuidv7();
  await db.$executeRaw`
    INSERT INTO payment_actions (id, tenant_id, handler, checkout_id, amount, currency)
    VALUES (${id}::uuid, ${tenantId}::uuid, ${action.handler}, ${action.checkoutId}::uuid,
            ${String(action.amount)}::bigint, ${action.currency})`;
  return id;
}

/** An action by id alone: the page a buyer opens carries no credential, only the unguessable id. */
export async function findAction(db: DbOrTx, id: string) {
  return parseFirstRow(ActionRow, await db.$queryRaw<unknown[]>`SELECT * FROM payment_actions WHERE id = ${id}::uuid`);
}

/** Moves an action from one status to another; false when it was not in `from` any more. */
export async function moveAction(
  db: DbOrTx,
  id: string,
  from: PaymentActionRecord['status'],
  to: PaymentActionRecord['status'],
) {
  const updated = await db.$executeRaw`
    UPDATE payment_actions SET status = ${to}::payment_action_status, updated_at = now()
     WHERE id = ${id}::uuid AND status = ${from}::payment_action_status`;
  return updated === 1;
}
