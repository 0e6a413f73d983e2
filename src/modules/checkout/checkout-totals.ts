/**
 * A checkout's totals and messages, computed by the server on every change (clients never send
 * amounts), in this order: line subtotals (unit price × quantity), discounts allocated over the
 * lines, the fulfillment amount, tax per line on (subtotal − discount) and on the fulfillment
 * amount (standard class), and total = subtotal − discount + fulfillment + (inclusive ? 0 : tax).
 */
import type { PricingService } from '../pricing';
import type {
  CheckoutBuyer,
  CheckoutDestination,
  CheckoutLine,
  CheckoutMessage,
  CheckoutStatus,
  CheckoutTotals,
} from './checkout.types';

/** The tax item of the fulfillment amount (a line id is a UUID, so it never collides). */
const FULFILLMENT_KEY = 'fulfillment';

export interface Priced {
  lines: CheckoutLine[];
  totals: CheckoutTotals;
  taxLines: { name: string; rateBasisPoints: number; amount: number }[];
}

/** The lines' tax and the checkout's totals; lines without a price count nothing. */
export async function priceCheckout(
  pricing: PricingService,
  tenantId: string,
  input: { lines: CheckoutLine[]; destination: CheckoutDestination | null; taxInclusive: boolean; fulfillment: number },
): Promise<Priced> {
  const priced = input.lines.filter((line) => line.unitPrice !== null);
  const items = priced.map((line) => ({
    key: line.id,
    amount: line.unitPrice! * line.quantity - line.discount,
    taxClass: line.taxClass,
  }));
  if (input.fulfillment > 0) items.push({ key: FULFILLMENT_KEY, amount: input.fulfillment, taxClass: 'standard' });
  const tax = await pricing.taxFor(tenantId, {
    destination: input.destination && { country: input.destination.country, region: input.destination.region },
    taxInclusive: input.taxInclusive,
    items,
  });
  const lines = input.lines.map((line) => ({
    ...line,
    tax: line.unitPrice === null ? 0 : (tax.items.get(line.id) ?? 0),
  }));
  const subtotal = priced.reduce((sum, line) => sum + line.unitPrice! * line.quantity, 0);
  const discount = priced.reduce((sum, line) => sum + line.discount, 0);
  const total = subtotal - discount + input.fulfillment + (input.taxInclusive ? 0 : tax.total);
  return {
    lines,
    totals: { subtotal, discount, fulfillment: input.fulfillment, tax: tax.total, total },
    taxLines: tax.lines,
  };
}

const error = (code: string, path: string, content: string, severity: CheckoutMessage['severity']) => ({
  type: 'error' as const,
  code,
  path,
  content,
  severity,
});

/** What the buyer still has to give before the checkout can complete, each on its path. */
export function missingMessages(input: {
  lines: CheckoutLine[];
  buyer: CheckoutBuyer | null;
  destination: CheckoutDestination | null;
  fulfillmentRequired: boolean;
  fulfillmentOptionId: string | null;
  payment: { handler: string } | null;
}): CheckoutMessage[] {
  const messages: CheckoutMessage[] = [];
  if (input.lines.length === 0)
    messages.push(error('missing', '$.line_items', 'The checkout has no line items.', 'requires_buyer_input'));
  if (!input.buyer?.email)
    messages.push(
      error('missing', '$.buyer.email', 'The buyer\u2019s e-mail address is missing.', 'requires_buyer_input'),
    );
  if (!input.destination)
    messages.push(error('missing', '$.destination', 'The destination is missing.', 'requires_buyer_input'));
  if (input.fulfillmentRequired && !input.fulfillmentOptionId)
    messages.push(
      error('missing', '$.fulfillment.selected_option_id', 'No fulfillment option is chosen.', 'requires_buyer_input'),
    );
  if (!input.payment)
    messages.push(error('missing', '$.payment', 'No payment handler is chosen.', 'requires_buyer_input'));
  return messages;
}

/** A line's problem: an unknown product, no price in the channel, or stock it could not hold. */
export const lineMessage = {
  unknownProduct: (index: number, reference: string) =>
    error('unknown_product', `$.line_items[${index}]`, `No product "${reference}".`, 'recoverable'),
  noPrice: (index: number, sku: string) =>
    error('no_price', `$.line_items[${index}]`, `Product "${sku}" has no price in this sales channel.`, 'recoverable'),
  outOfStock: (index: number, sku: string, quantity: number) =>
    error(
      'out_of_stock',
      `$.line_items[${index}].quantity`,
      `Product "${sku}" does not have ${quantity} units available.`,
      'recoverable',
    ),
  notAvailable: (index: number, sku: string, reason: string) =>
    error('not_available', `$.line_items[${index}]`, `Product "${sku}" cannot be held: ${reason}`, 'recoverable'),
};

/** The status the messages leave an open checkout in. */
export const statusOf = (messages: CheckoutMessage[]): CheckoutStatus =>
  messages.some((message) => message.type === 'error') ? 'incomplete' : 'ready_for_complete';
