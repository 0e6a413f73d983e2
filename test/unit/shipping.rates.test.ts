/** The charge of a shipping method for a parcel, computed by hand: flat, free-above, weight brackets. */
import { describe, expect, it } from 'vitest';
import { parcelWeight, shippingCharge } from '../../src/modules/shipping';

const flat = { rateKind: 'FLAT' as const, flatAmount: 495, freeAbove: null, weightBrackets: [] };
const byWeight = {
  rateKind: 'WEIGHT' as const,
  flatAmount: 0,
  freeAbove: null,
  weightBrackets: [
    { upToGrams: 1000, amount: 700 },
    { upToGrams: 5000, amount: 1500 },
  ],
};

describe('parcelWeight', () => {
  it('adds weight × quantity over the lines, in grams', () => {
    expect(
      parcelWeight([
        { weightGrams: 250, quantity: 3 },
        { weightGrams: 1200, quantity: 1 },
        { weightGrams: 0, quantity: 7 },
      ]),
    ).toBe(1950);
    expect(parcelWeight([])).toBe(0);
  });

  it('is unknown when one product has no weight', () => {
    expect(
      parcelWeight([
        { weightGrams: 250, quantity: 1 },
        { weightGrams: null, quantity: 1 },
      ]),
    ).toBeNull();
  });
});

describe('shippingCharge', () => {
  it('charges a flat amount whatever the parcel, its weight known or not', () => {
    expect(shippingCharge(flat, { subtotal: 0, weightGrams: null })).toBe(495);
    expect(shippingCharge(flat, { subtotal: 999_999, weightGrams: 50_000 })).toBe(495);
  });

  it('is free from the threshold on: equal is free, one below is charged', () => {
    const rate = { ...flat, freeAbove: 5000 };
    expect(shippingCharge(rate, { subtotal: 5000, weightGrams: null })).toBe(0);
    expect(shippingCharge(rate, { subtotal: 4999, weightGrams: null })).toBe(495);
    expect(shippingCharge(rate, { subtotal: 5001, weightGrams: null })).toBe(0);
    expect(shippingCharge({ ...flat, freeAbove: 0 }, { subtotal: 0, weightGrams: null })).toBe(0);
  });

  it('charges the first bracket the weight fits, a bracket edge included', () => {
    expect(shippingCharge(byWeight, { subtotal: 0, weightGrams: 0 })).toBe(700);
    expect(shippingCharge(byWeight, { subtotal: 0, weightGrams: 1000 })).toBe(700);
    expect(shippingCharge(byWeight, { subtotal: 0, weightGrams: 1001 })).toBe(1500);
    expect(shippingCharge(byWeight, { subtotal: 0, weightGrams: 5000 })).toBe(1500);
  });

  it('cannot carry a parcel above the last bracket or of unknown weight, free threshold or not', () => {
    const freeFrom100 = { ...byWeight, freeAbove: 100 };
    expect(shippingCharge(byWeight, { subtotal: 0, weightGrams: 5001 })).toBeNull();
    expect(shippingCharge(freeFrom100, { subtotal: 1_000, weightGrams: 5001 })).toBeNull();
    expect(shippingCharge(freeFrom100, { subtotal: 1_000, weightGrams: null })).toBeNull();
    expect(shippingCharge(freeFrom100, { subtotal: 1_000, weightGrams: 4000 })).toBe(0);
    expect(shippingCharge(freeFrom100, { subtotal: 99, weightGrams: 4000 })).toBe(1500);
  });
});
