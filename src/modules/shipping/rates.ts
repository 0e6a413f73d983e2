/**
 * What a shipping method charges for a parcel: pure arithmetic over integers in minor units and
 * grams, shared by the options the checkout is offered and the unit tests.
 */
import type { ShippingRate } from './shipping.types';

/**
 * The weight of the lines in grams: Σ weight × quantity; null when a product has no weight (a rate
 * by weight cannot be computed for it).
 */
export function parcelWeight(lines: readonly { weightGrams: number | null; quantity: number }[]): number | null {
  let grams = 0;
  for (const line of lines) {
    if (line.weightGrams === null) return null;
    grams += line.weightGrams * line.quantity;
  }
  return grams;
}

/**
 * The charge of a method for a parcel, or null when the method cannot carry it:
 * - free (0) when `freeAbove` is set and the subtotal is at least `freeAbove`;
 * - FLAT: `flatAmount`;
 * - WEIGHT: the amount of the first bracket whose `upToGrams` is at least the weight (brackets
 *   ascending); null when the parcel is heavier than the last bracket or its weight is unknown.
 * A free threshold does not make a WEIGHT method carry a parcel it cannot weigh or is too heavy for.
 */
export function shippingCharge(
  rate: ShippingRate,
  parcel: { subtotal: number; weightGrams: number | null },
): number | null {
  let amount: number;
  if (rate.rateKind === 'WEIGHT') {
    if (parcel.weightGrams === null) return null;
    const bracket = rate.weightBrackets.find((candidate) => parcel.weightGrams! <= candidate.upToGrams);
    if (!bracket) return null;
    amount = bracket.amount;
  } else {
    amount = rate.flatAmount;
  }
  return rate.freeAbove !== null && parcel.subtotal >= rate.freeAbove ? 0 : amount;
}
