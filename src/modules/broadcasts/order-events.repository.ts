/**
 * Order events to the webhook of the order's sales channel: queued in the transaction of the
 * change they announce (nothing is queued for a channel without a webhook), claimed and recorded
 * by the broadcast worker like the stock broadcasts.
 */
import { z } from 'zod';
import type { Db, Tx } from '../../kernel/db';
import { uuidv7 } from '../../kernel/ids';
import { parseRows, timestamp, uuid } from '../../kernel/rows';

export const ORDER_EVENT_TYPES = [
  'order.placed',
  'order.paid',
  'order.shipped',
  'order.canceled',
  'order.refunded',
] as const;
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];

export interface OrderEvent {
  orderId: string;
  type: OrderEventType;
  /** What the event says beyond its type and order: the payment status, amounts in minor units. */
  data: Record<string, string | number | null>;
}

/** Queues the event for the webhook of the order's channel, if it has one, in the caller's transaction. */
export async function queueOrderEvent(tx: Tx, tenantId: string, event: OrderEvent) {
  await tx.$executeRaw`
    INSERT INTO order_event_deliveries (id, tenant_id, channel_id, order_id, type, data)
    SELECT ${uuidv7()}::uuid, w.tenant_id, w.channel_id, o.id, ${event.type}, ${JSON.stringify(event.data)}::jsonb
      FROM orders o JOIN channel_webhooks w ON w.channel_id = o.channel_id AND w.tenant_id = o.tenant_id
     WHERE o.tenant_id = ${tenantId}::uuid AND o.id = ${event.orderId}::uuid`;
}

const ClaimedOrderEvent = z.object({
  id: uuid,
  tenantId: uuid,
  channelId: uuid,
  orderId: uuid,
  type: z.string(),
  data: z.record(z.string(), z.unknown()),
  attempts: z.number().int(),
  url: z.string(),
  secret: z.string(),
  createdAt: timestamp,
});
export type ClaimedOrderEvent = z.output<typeof ClaimedOrderEvent>;

/** Claims due order event deliveries for `claimMs`, skipping those other workers hold. */
export async function claimDueOrderEvents(db: Db, limit: number, claimMs: number) {
  return parseRows(
    ClaimedOrderEvent,
    await db.$queryRaw<unknown[]>`
      WITH due AS (
        SELECT id FROM order_event_deliveries
         WHERE status = 'PENDING' AND next_attempt_at <= now() AND (claimed_until IS NULL OR claimed_until < now())
         ORDER BY next_attempt_at LIMIT ${limit}
           FOR UPDATE SKIP LOCKED),
      claimed AS (
        UPDATE order_event_deliveries d
           SET claimed_until = now() + make_interval(secs => ${claimMs / 1000}), attempts = attempts + 1
          FROM due WHERE d.id = due.id
        RETURNING d.*)
      SELECT c.id, c.tenant_id AS "tenantId", c.channel_id AS "channelId", c.order_id AS "orderId", c.type, c.data,
             c.attempts, w.url, w.secret, c.created_at AS "createdAt"
        FROM claimed c JOIN channel_webhooks w ON w.channel_id = c.channel_id`,
  );
}

/** Records one attempt and releases the claim (the next attempt is due in `retryInMs`; null: none). */
export async function recordOrderEventAttempt(
  db: Db,
  id: string,
  outcome: { status: 'PENDING' | 'PROCESSED' | 'FAILING'; message: string; retryInMs: number | null },
) {
  const retryInSeconds = outcome.retryInMs === null ? null : outcome.retryInMs / 1000;
  await db.$executeRaw`
    UPDATE order_event_deliveries
       SET status = ${outcome.status}::broadcast_status, last_message = ${outcome.message}, updated_at = now(),
           next_attempt_at = coalesce(now() + make_interval(secs => ${retryInSeconds}::float8), next_attempt_at),
           claimed_until = NULL
     WHERE id = ${id}::uuid`;
}

/** Retention, as for stock broadcasts: deletes at most `limit` order event deliveries done more than `days` ago. */
export const deleteFinishedOrderEvents = (db: Db, days: number, limit: number) =>
  db.$executeRaw`
    DELETE FROM order_event_deliveries WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM order_event_deliveries
       WHERE status IN ('PROCESSED', 'FAILING') AND updated_at < now() - make_interval(days => ${days})
       LIMIT ${limit} FOR UPDATE SKIP LOCKED))`;
