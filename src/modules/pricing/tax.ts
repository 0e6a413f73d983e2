/**
 * Tax of a list of items under one zone's rates, per the selling rounding rule: each item's tax is
 * computed on its own amount and rounded half-even to the minor unit (`taxOf`), then the items'
 * taxes are summed; the lines group the items by rate (name and basis points), one line per rate
 * above zero, in the order their rates are first met. An item whose class has no rate in the zone
 * is taxed at zero.
 */
import { taxOf } from './rounding';
import type { TaxInput, TaxRateRecord, TaxResult } from './pricing.types';

export function computeTax(
  rates: readonly TaxRateRecord[],
  input: Pick<TaxInput, 'items' | 'taxInclusive'>,
): TaxResult {
  const byClass = new Map(rates.map((rate) => [rate.taxClass, rate]));
  const items = new Map<string, number>();
  const lines = new Map<string, { name: string; rateBasisPoints: number; amount: number }>();
  let total = 0;
  for (const item of input.items) {
    const rate = byClass.get(item.taxClass);
    const tax = rate === undefined ? 0 : taxOf(item.amount, rate.rateBasisPoints, input.taxInclusive);
    items.set(item.key, (items.get(item.key) ?? 0) + tax);
    total += tax;
    if (rate === undefined || rate.rateBasisPoints === 0) continue;
    const lineKey = `${rate.name}\u0000${rate.rateBasisPoints}`;
    const line = lines.get(lineKey) ?? { name: rate.name, rateBasisPoints: rate.rateBasisPoints, amount: 0 };
    line.amount += tax;
    lines.set(lineKey, line);
  }
  if (!Number.isSafeInteger(total)) throw new RangeError('the tax total is beyond the safe integer range');
  return { items, lines: [...lines.values()], total };
}

/** No tax: every item zero, no lines (no destination, or no zone for it). */
export const noTax = (input: Pick<TaxInput, 'items'>): TaxResult => ({
  items: new Map(input.items.map((item) => [item.key, 0])),
  lines: [],
  total: 0,
});
