/**
 * The holds of a checkout's lines: one reservation per line (through the reservations module, so
 * that channel allocation, bundles, safety stock and the hot-SKU batching apply), expiring with
 * the checkout. A change re-holds only what changed: a line whose product and quantity stay keeps
 * its hold (its expiry moved to the checkout's new one).
 */
import { AppError } from '../../kernel/errors';
import { uuidv7 } from '../../kernel/ids';
import type { Principal } from '../../kernel/principal';
import type { ReservationService } from '../reservations';
import { lineMessage } from './checkout-totals';
import type { CheckoutLine, CheckoutMessage } from './checkout.types';

/** Which lines keep their hold, which get a new one (its id chosen now) and which holds go. */
export interface HoldPlan {
  lines: CheckoutLine[];
  /** Line ids whose hold is new (to be made under `holdId`). */
  fresh: Set<string>;
  /** Holds of the checkout's previous lines that no line keeps. */
  released: string[];
}

/** `wanted` lines (no hold yet) against the checkout's `current` ones; `holdable` says which to hold at all. */
export function planHolds(current: CheckoutLine[], wanted: CheckoutLine[], holdable: (line: CheckoutLine) => boolean) {
  const fresh = new Set<string>();
  const kept = new Set<string>();
  const lines = wanted.map((line) => {
    if (!holdable(line)) return { ...line, holdId: null };
    const before = current.find((old) => old.productId === line.productId && old.holdId !== null);
    if (before && before.quantity === line.quantity) {
      kept.add(before.holdId!);
      return { ...line, holdId: before.holdId };
    }
    fresh.add(line.id);
    return { ...line, holdId: uuidv7() };
  });
  const released = current.flatMap((line) => (line.holdId !== null && !kept.has(line.holdId) ? [line.holdId] : []));
  return { lines, fresh, released } satisfies HoldPlan;
}

export interface HoldContext {
  principal: Principal;
  checkoutId: string;
  businessId: string;
  channelId: string;
  buyerName: string;
  buyerEmail: string | null;
  expiresAt: Date;
}

/**
 * Makes the plan's holds: kept ones move to the new expiry (one that ended meanwhile is held
 * anew), fresh ones are made. A line that cannot be held loses its hold id and gets a message on
 * its path. Returns the lines as held and the messages.
 */
export async function applyHolds(
  reservations: ReservationService,
  context: HoldContext,
  plan: HoldPlan,
): Promise<{ lines: CheckoutLine[]; messages: CheckoutMessage[] }> {
  const messages: CheckoutMessage[] = [];
  const lines: CheckoutLine[] = [];
  for (const [index, line] of plan.lines.entries()) {
    if (line.holdId === null) {
      lines.push(line);
      continue;
    }
    if (!plan.fresh.has(line.id) && (await reservations.extend(context.principal, line.holdId, context.expiresAt))) {
      lines.push(line);
      continue;
    }
    // A kept hold that ended (it expired) is held again under a new id.
    const holdId = plan.fresh.has(line.id) ? line.holdId : uuidv7();
    try {
      await reservations.hold(context.principal, {
        id: holdId,
        business_id: context.businessId,
        channel_id: context.channelId,
        warehouse_id: null,
        items: [{ sku: line.sku!, quantity: line.quantity }],
        customer: { name: context.buyerName, email: context.buyerEmail, phone: null },
        expires_at: context.expiresAt.getTime(),
        notes: `checkout ${context.checkoutId}`,
      });
      lines.push({ ...line, holdId });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      lines.push({ ...line, holdId: null });
      messages.push(
        error.key === 'OUT_OF_STOCK'
          ? lineMessage.outOfStock(index, line.sku!, line.quantity)
          : lineMessage.notAvailable(index, line.sku!, error.message),
      );
    }
  }
  return { lines, messages };
}

/** Releases holds a checkout no longer names; one that already ended is skipped. */
export async function releaseHolds(reservations: ReservationService, principal: Principal, holdIds: string[]) {
  for (const holdId of holdIds) await reservations.release(principal, holdId);
}
