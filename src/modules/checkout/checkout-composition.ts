/**
 * What the checkout asks the other selling modules on every change, through their faces only:
 * the discounts (`services.discounts.evaluate`: applied ones allocated over the lines, rejected
 * codes as messages) and the fulfillment options (`services.shipping.optionsFor`: a chosen option
 * that no longer applies is dropped with a message).
 */
import type { Services } from '../context';
import type { AppliedDiscount } from '../discounts';
import type { FulfillmentOptionQuote } from '../shipping';
import type { CheckoutDestination, CheckoutLine, CheckoutMessage } from './checkout.types';

/** The lines with their discounts, the discounts applied, and a message per rejected code. */
export async function applyDiscounts(
  services: Services,
  tenantId: string,
  query: { channelId: string; currency: string; codes: string[]; buyerEmail: string | null; lines: CheckoutLine[] },
): Promise<{ lines: CheckoutLine[]; applied: AppliedDiscount[]; messages: CheckoutMessage[] }> {
  const priced = query.lines.filter((line) => line.productId !== null && line.unitPrice !== null);
  if (priced.length === 0 && query.codes.length === 0) return { lines: query.lines, applied: [], messages: [] };
  const { applied, rejected } = await services.discounts.evaluate(tenantId, {
    channelId: query.channelId,
    currency: query.currency,
    codes: query.codes,
    buyerEmail: query.buyerEmail,
    lines: priced.map((line) => ({
      key: line.id,
      productId: line.productId!,
      categoryIds: [],
      amount: line.unitPrice! * line.quantity,
    })),
    now: new Date(),
  });
  const off = new Map<string, number>();
  for (const discount of applied)
    for (const { lineKey, amount } of discount.allocations) off.set(lineKey, (off.get(lineKey) ?? 0) + amount);
  const messages = rejected.map((rejection): CheckoutMessage => {
    const index = query.codes.findIndex((code) => code.toLowerCase() === rejection.code.toLowerCase());
    return {
      type: 'warning',
      code: `discount_code_${rejection.reason}`,
      path: `$.discounts.codes[${Math.max(index, 0)}]`,
      content: rejection.message,
      severity: null,
    };
  });
  return { lines: query.lines.map((line) => ({ ...line, discount: off.get(line.id) ?? 0 })), applied, messages };
}

/** The options that can serve the destination and the lines, and the chosen one if it still applies. */
export async function chooseFulfillment(
  services: Services,
  tenantId: string,
  query: {
    channelId: string;
    currency: string;
    destination: CheckoutDestination | null;
    lines: CheckoutLine[];
    chosenId: string | null;
  },
): Promise<{ options: FulfillmentOptionQuote[]; chosen: FulfillmentOptionQuote | null; messages: CheckoutMessage[] }> {
  const lines = query.lines.filter((line) => line.productId !== null && line.unitPrice !== null);
  if (lines.length === 0) return { options: [], chosen: null, messages: [] };
  const subtotal = lines.reduce((sum, line) => sum + line.unitPrice! * line.quantity - line.discount, 0);
  const options = await services.shipping.optionsFor(tenantId, {
    channelId: query.channelId,
    currency: query.currency,
    destination: query.destination && {
      country: query.destination.country,
      region: query.destination.region,
      postalCode: query.destination.postalCode,
    },
    subtotal,
    lines: lines.map((line) => ({ key: line.id, productId: line.productId!, quantity: line.quantity })),
  });
  const chosen = options.find((option) => option.id === query.chosenId) ?? null;
  const messages: CheckoutMessage[] = [];
  if (query.chosenId !== null && chosen === null)
    messages.push({
      type: 'warning',
      code: 'fulfillment_option_unavailable',
      path: '$.fulfillment.selected_option_id',
      content: `The fulfillment option "${query.chosenId}" no longer applies to this checkout and was dropped.`,
      severity: null,
    });
  return { options, chosen, messages };
}
