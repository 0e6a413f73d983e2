/**
 * The rules of discounts, as pure arithmetic over the lines of a checkout (no database here):
 *
 * - A percent discount takes `percentOf` (half-even) of the amount it applies to, once per
 *   discount; a fixed one its amount. Neither ever takes more than the amount it applies to.
 * - An ITEMS discount applies to the lines whose product or one of whose categories it names; an
 *   ORDER discount to every line. The amount is split over those lines in proportion to what is
 *   left of each, by largest remainder (`allocateProportionally`), so the split sums exactly.
 * - The minimum subtotal compares the sum of all the lines before any discount.
 * - Of the discounts that are not combinable, the one taking the largest amount wins (the earliest
 *   created on a tie); the others typed as codes are rejected `not_combinable`. The combinable ones
 *   then stack on top in creation order, each on what the ones before it left of the lines.
 * - Automatic promotions (no code) apply without being typed; one that does not qualify is left
 *   out silently. A typed code that does not apply is rejected with its reason.
 */
import { allocateProportionally, percentOf } from '../pricing';
import type {
  AppliedDiscount,
  DiscountEvaluation,
  DiscountQuery,
  DiscountRecord,
  RejectedCode,
  RejectionReason,
} from './discounts.types';

/** How often each discount has been used: overall, and by the query's buyer. */
export type UsageCounts = Map<string, { total: number; buyer: number }>;

type Line = DiscountQuery['lines'][number];

const matches = (discount: DiscountRecord, line: Line) =>
  discount.target === 'ORDER' ||
  discount.productIds.includes(line.productId.toLowerCase()) ||
  line.categoryIds.some((category) => discount.categoryIds.includes(category));

/** What the discount takes off `left` (the amount of each line still to pay), and how it splits. */
function take(discount: DiscountRecord, lines: readonly Line[], left: Map<string, number>) {
  const matching = lines.filter((line) => matches(discount, line));
  const base = matching.reduce((sum, line) => sum + left.get(line.key)!, 0);
  const wanted = discount.kind === 'PERCENT' ? percentOf(base, discount.percentBasisPoints!) : discount.amount!;
  const amount = Math.min(wanted, base);
  const shares = allocateProportionally(
    amount,
    matching.map((line) => left.get(line.key)!),
  );
  return { amount, allocations: matching.map((line, index) => ({ lineKey: line.key, amount: shares[index]! })) };
}

/** The sentence of a rejection, for the buyer. */
function sentence(code: string, reason: RejectionReason, discount: DiscountRecord | undefined, query: DiscountQuery) {
  switch (reason) {
    case 'unknown':
      return `The code ${code} is not a discount of this shop.`;
    case 'expired':
      return `The code ${code} has expired.`;
    case 'not_started':
      return `The code ${code} is not valid yet.`;
    case 'minimum_not_met':
      return (
        `The code ${code} needs a subtotal of at least ${discount!.minimumSubtotal} ` +
        `(in minor units of ${query.currency}).`
      );
    case 'usage_limit_reached':
      return `The code ${code} has been used as often as it may be.`;
    case 'not_combinable':
      return `The code ${code} cannot be combined with a better discount applied.`;
    case 'not_applicable':
      if (discount!.channelId !== null && discount!.channelId !== query.channelId.toLowerCase()) {
        return `The code ${code} is not valid in this shop.`;
      }
      if (discount!.kind === 'FIXED' && discount!.currency !== query.currency.toUpperCase()) {
        return `The code ${code} is valid for payments in ${discount!.currency} only.`;
      }
      return `The code ${code} does not apply to these items.`;
  }
}

/** Why the discount does not apply to the query, or null when it does. */
function refusal(
  discount: DiscountRecord,
  query: DiscountQuery,
  subtotal: number,
  usage: UsageCounts,
): RejectionReason | null {
  if (!discount.active) return 'unknown';
  if (discount.channelId !== null && discount.channelId !== query.channelId.toLowerCase()) return 'not_applicable';
  if (discount.kind === 'FIXED' && discount.currency !== query.currency.toUpperCase()) return 'not_applicable';
  if (discount.startsAt && query.now < discount.startsAt) return 'not_started';
  if (discount.endsAt && query.now >= discount.endsAt) return 'expired';
  const used = usage.get(discount.id) ?? { total: 0, buyer: 0 };
  if (discount.usageLimit !== null && used.total >= discount.usageLimit) return 'usage_limit_reached';
  if (discount.usageLimitPerBuyer !== null && query.buyerEmail !== null && used.buyer >= discount.usageLimitPerBuyer) {
    return 'usage_limit_reached';
  }
  if (discount.minimumSubtotal !== null && subtotal < discount.minimumSubtotal) return 'minimum_not_met';
  if (!query.lines.some((line) => matches(discount, line))) return 'not_applicable';
  return null;
}

/**
 * Applies the rules to `candidates`: the tenant's discounts whose code was typed, and its automatic
 * promotions, in creation order. `codes` are the codes as typed.
 */
export function evaluateDiscounts(
  candidates: readonly DiscountRecord[],
  query: DiscountQuery,
  usage: UsageCounts,
): DiscountEvaluation {
  const rejected: RejectedCode[] = [];
  const reject = (code: string, reason: RejectionReason, discount?: DiscountRecord) =>
    rejected.push({ code, reason, message: sentence(code, reason, discount, query) });
  const byCode = new Map(candidates.flatMap((d) => (d.code === null ? [] : [[d.code.toLowerCase(), d] as const])));
  const subtotal = query.lines.reduce((sum, line) => sum + line.amount, 0);

  const typed = new Map<string, string>();
  for (const code of query.codes) {
    const key = code.trim().toLowerCase();
    if (key !== '' && !typed.has(key)) typed.set(key, code.trim());
  }
  const eligible: { discount: DiscountRecord; typedAs: string | null }[] = [];
  for (const [key, code] of typed) {
    const discount = byCode.get(key);
    if (!discount) {
      reject(code, 'unknown');
      continue;
    }
    const reason = refusal(discount, query, subtotal, usage);
    if (reason) reject(code, reason, discount);
    else eligible.push({ discount, typedAs: code });
  }
  for (const discount of candidates) {
    if (discount.code === null && refusal(discount, query, subtotal, usage) === null) {
      eligible.push({ discount, typedAs: null });
    }
  }
  eligible.sort((a, b) => (a.discount.id < b.discount.id ? -1 : a.discount.id > b.discount.id ? 1 : 0));

  const full = new Map(query.lines.map((line) => [line.key, line.amount]));
  const exclusive = eligible.filter((entry) => !entry.discount.combinable);
  let best: (typeof exclusive)[number] | undefined;
  let bestAmount = -1;
  for (const entry of exclusive) {
    const { amount } = take(entry.discount, query.lines, full);
    if (amount > bestAmount) [best, bestAmount] = [entry, amount];
  }
  for (const entry of exclusive) {
    if (entry !== best && entry.typedAs !== null) reject(entry.typedAs, 'not_combinable', entry.discount);
  }

  const left = new Map(full);
  const applied: AppliedDiscount[] = [];
  for (const entry of [...(best ? [best] : []), ...eligible.filter((e) => e.discount.combinable)]) {
    const { amount, allocations } = take(entry.discount, query.lines, left);
    for (const share of allocations) left.set(share.lineKey, left.get(share.lineKey)! - share.amount);
    applied.push({
      discountId: entry.discount.id,
      code: entry.discount.code,
      title: entry.discount.title,
      amount,
      allocations,
      automatic: entry.discount.code === null,
    });
  }
  // Rejections in the order the codes were typed.
  const order = [...typed.values()];
  rejected.sort((a, b) => order.indexOf(a.code) - order.indexOf(b.code));
  return { applied, rejected };
}
