/**
 * Money arithmetic of selling, exact in integers. Amounts are integers in a currency's minor units;
 * rates are basis points (2000 = 20 %). Every division goes through `divideHalfEven`, in BigInt, so
 * no amount is ever a float and amounts beyond 2^53 / 10 000 lose nothing on the way.
 */

/** Basis points in one whole (100 %). */
export const BASIS_POINTS = 10_000;

/** `numerator / denominator` rounded to the nearest integer, ties to the even neighbour (banker's rounding). */
export function divideHalfEven(numerator: bigint, denominator: bigint): bigint {
  if (denominator === 0n) throw new RangeError('division by zero');
  if (denominator < 0n) return divideHalfEven(-numerator, -denominator);
  if (numerator < 0n) return -divideHalfEven(-numerator, denominator);
  const quotient = numerator / denominator;
  const twiceRemainder = (numerator % denominator) * 2n;
  if (twiceRemainder > denominator) return quotient + 1n;
  if (twiceRemainder < denominator) return quotient;
  return quotient % 2n === 0n ? quotient : quotient + 1n;
}

const toNumber = (value: bigint): number => {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw new RangeError(`amount ${value} is beyond the safe integer range`);
  return number;
};

const checkAmount = (amount: number) => {
  if (!Number.isSafeInteger(amount)) throw new RangeError(`amount ${amount} is not a safe integer`);
  return BigInt(amount);
};

const checkRate = (rateBasisPoints: number) => {
  if (!Number.isSafeInteger(rateBasisPoints) || rateBasisPoints < 0) {
    throw new RangeError(`rate ${rateBasisPoints} is not a non-negative integer of basis points`);
  }
  return BigInt(rateBasisPoints);
};

/** Tax on top of a net amount: round(amount × rate), half-even. */
export function exclusiveTax(amount: number, rateBasisPoints: number): number {
  return toNumber(divideHalfEven(checkAmount(amount) * checkRate(rateBasisPoints), BigInt(BASIS_POINTS)));
}

/** Tax inside a gross amount: amount − round(amount / (1 + rate)), half-even. */
export function inclusiveTax(amount: number, rateBasisPoints: number): number {
  const gross = checkAmount(amount);
  const net = divideHalfEven(gross * BigInt(BASIS_POINTS), BigInt(BASIS_POINTS) + checkRate(rateBasisPoints));
  return toNumber(gross - net);
}

/** The tax of one amount at one rate, the amount including tax or not. */
export const taxOf = (amount: number, rateBasisPoints: number, taxInclusive: boolean): number =>
  taxInclusive ? inclusiveTax(amount, rateBasisPoints) : exclusiveTax(amount, rateBasisPoints);

/** `amount × percentBasisPoints / 10 000`, half-even: a percentage of an amount (a percent discount). */
export const percentOf = (amount: number, basisPoints: number): number => exclusiveTax(amount, basisPoints);

/**
 * Splits `total` over `weights` in proportion, largest remainder first: each share is the floor of
 * its exact part, and the units left go one each to the largest remainders (earlier entries first
 * on equal remainders), so the shares sum exactly to `total`. Weights are non-negative; all zero
 * weights split evenly. `total` is non-negative.
 */
export function allocateProportionally(total: number, weights: readonly number[]): number[] {
  if (weights.length === 0) return [];
  const sum = checkAmount(total);
  if (sum < 0n) throw new RangeError('total must be non-negative');
  const big = weights.map((weight) => {
    const value = checkAmount(weight);
    if (value < 0n) throw new RangeError('weights must be non-negative');
    return value;
  });
  const weightSum = big.reduce((a, b) => a + b, 0n);
  const parts = weightSum === 0n ? big.map(() => 1n) : big;
  const partSum = weightSum === 0n ? BigInt(big.length) : weightSum;
  const shares = parts.map((part) => (sum * part) / partSum);
  const remainders = parts.map((part, index) => ({ index, remainder: (sum * part) % partSum }));
  let left = sum - shares.reduce((a, b) => a + b, 0n);
  remainders.sort((a, b) => (a.remainder === b.remainder ? a.index - b.index : a.remainder > b.remainder ? -1 : 1));
  for (const { index } of remainders) {
    if (left === 0n) break;
    shares[index]! += 1n;
    left -= 1n;
  }
  return shares.map(toNumber);
}
