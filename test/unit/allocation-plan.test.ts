import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/kernel/errors';
import {
  MAX_WAREHOUSE_SETS,
  distanceKm,
  nearestFirst,
  planAllocation,
  type PlannedItem,
} from '../../src/modules/stock/allocation-plan';

const item = (productId: string, quantity: number, index = 0): PlannedItem => ({
  productId,
  sku: productId.toUpperCase(),
  quantity,
  field: `items[${index}].quantity`,
});
const stock = (entries: [string, string, number][]) => new Map(entries.map(([p, w, n]) => [`${p}:${w}`, n]));

describe('planAllocation', () => {
  const available = stock([
    ['p', 'w1', 3],
    ['p', 'w2', 5],
    ['p', 'w3', 10],
    ['q', 'w1', 1],
    ['q', 'w3', 4],
  ]);

  it('PRIORITY takes from the warehouses in order, splitting an item when one has too few', () => {
    expect(planAllocation([item('p', 6)], ['w1', 'w2', 'w3'], available, 'PRIORITY')).toEqual([
      { itemIndex: 0, warehouseId: 'w1', quantity: 3 },
      { itemIndex: 0, warehouseId: 'w2', quantity: 3 },
    ]);
  });

  it('MOST_STOCK takes from the warehouse with the most available first', () => {
    expect(planAllocation([item('p', 12), item('q', 2, 1)], ['w1', 'w2', 'w3'], available, 'MOST_STOCK')).toEqual([
      { itemIndex: 0, warehouseId: 'w3', quantity: 10 },
      { itemIndex: 0, warehouseId: 'w2', quantity: 2 },
      { itemIndex: 1, warehouseId: 'w3', quantity: 2 },
    ]);
  });

  it('SINGLE_WAREHOUSE takes every item from the first warehouse that has all of them', () => {
    expect(planAllocation([item('p', 4), item('q', 2, 1)], ['w1', 'w2', 'w3'], available, 'SINGLE_WAREHOUSE')).toEqual([
      { itemIndex: 0, warehouseId: 'w3', quantity: 4 },
      { itemIndex: 1, warehouseId: 'w3', quantity: 2 },
    ]);
    expect(() =>
      planAllocation([item('p', 4), item('q', 5, 1)], ['w1', 'w2', 'w3'], available, 'SINGLE_WAREHOUSE'),
    ).toThrow(AppError);
  });

  it('shares a SKU between its items and names the item that cannot be met', () => {
    const attempt = () => planAllocation([item('q', 3), item('q', 3, 1)], ['w1', 'w3'], available, 'PRIORITY');
    expect(attempt).toThrow(/SKU "Q" has 5 available/);
    try {
      attempt();
    } catch (error) {
      expect((error as AppError).key).toBe('OUT_OF_STOCK');
      expect((error as AppError).details).toEqual([{ field: 'items[1].quantity', message: 'out of stock' }]);
    }
  });

  it('does not count a warehouse outside the channel', () => {
    expect(() => planAllocation([item('p', 9)], ['w1', 'w2'], available, 'PRIORITY')).toThrow(/has 8 available/);
  });

  it('FEWEST_SHIPMENTS takes everything from the smallest set of warehouses, ties by priority', () => {
    // w3 alone has all of p and q: one shipment, though w1 comes first.
    expect(planAllocation([item('p', 4), item('q', 2, 1)], ['w1', 'w2', 'w3'], available, 'FEWEST_SHIPMENTS')).toEqual([
      { itemIndex: 0, warehouseId: 'w3', quantity: 4 },
      { itemIndex: 1, warehouseId: 'w3', quantity: 2 },
    ]);
    // 12 of p: no single warehouse; {w1, w3} and {w2, w3} both do, {w1, w3} comes first by priority.
    expect(planAllocation([item('p', 12)], ['w1', 'w2', 'w3'], available, 'FEWEST_SHIPMENTS')).toEqual([
      { itemIndex: 0, warehouseId: 'w1', quantity: 3 },
      { itemIndex: 0, warehouseId: 'w3', quantity: 9 },
    ]);
    // PRIORITY would ship from all three.
    expect(planAllocation([item('p', 12)], ['w1', 'w2', 'w3'], available, 'PRIORITY')).toHaveLength(3);
    expect(() => planAllocation([item('p', 19)], ['w1', 'w2', 'w3'], available, 'FEWEST_SHIPMENTS')).toThrow(
      /has 18 available/,
    );
  });

  it('FEWEST_SHIPMENTS stays bounded over a channel with very many warehouses', () => {
    const many = Array.from({ length: 200 }, (_, n) => `w${n}`);
    // One unit in each warehouse: 150 of them are needed, far beyond the sets it tries.
    const spread = new Map(many.map((w) => [`p:${w}`, 1]));
    const started = performance.now();
    const parts = planAllocation([item('p', 150)], many, spread, 'FEWEST_SHIPMENTS');
    expect(parts.reduce((sum, part) => sum + part.quantity, 0)).toBe(150);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(MAX_WAREHOUSE_SETS).toBeLessThan(10_000);
  });

  it('CLOSEST takes everything from the nearest warehouse that has it all, and splits only when none has', () => {
    const nearest = ['w2', 'w3', 'w1'];
    expect(planAllocation([item('p', 4)], ['w1', 'w2', 'w3'], available, 'CLOSEST', nearest)).toEqual([
      { itemIndex: 0, warehouseId: 'w2', quantity: 4 },
    ]);
    // w2 lacks q: the next nearest, w3, has both.
    expect(planAllocation([item('p', 4), item('q', 1, 1)], ['w1', 'w2', 'w3'], available, 'CLOSEST', nearest)).toEqual([
      { itemIndex: 0, warehouseId: 'w3', quantity: 4 },
      { itemIndex: 1, warehouseId: 'w3', quantity: 1 },
    ]);
    // No warehouse has 14: nearest first, splitting.
    expect(planAllocation([item('p', 14)], ['w1', 'w2', 'w3'], available, 'CLOSEST', nearest)).toEqual([
      { itemIndex: 0, warehouseId: 'w2', quantity: 5 },
      { itemIndex: 0, warehouseId: 'w3', quantity: 9 },
    ]);
  });
});

describe('nearestFirst', () => {
  const berlin = { id: 'berlin', latitude: 52.52, longitude: 13.405, countryCode: 'DE' };
  const paris = { id: 'paris', latitude: 48.8566, longitude: 2.3522, countryCode: 'FR' };
  const unknown = { id: 'unknown', latitude: null, longitude: null, countryCode: null };
  const lyon = { id: 'lyon', latitude: 45.764, longitude: 4.8357, countryCode: 'FR' };

  it('orders by distance to a point, warehouses without a location last', () => {
    const amsterdam = { latitude: 52.3676, longitude: 4.9041 };
    expect(nearestFirst([unknown, lyon, berlin, paris], amsterdam)).toEqual(['paris', 'berlin', 'lyon', 'unknown']);
    expect(Math.round(distanceKm(berlin, paris))).toBe(877);
  });

  it('puts the warehouses in the destination country first, in priority order', () => {
    expect(nearestFirst([berlin, unknown, lyon, paris], { country: 'fr' })).toEqual([
      'lyon',
      'paris',
      'berlin',
      'unknown',
    ]);
  });

  it('keeps priority order without a destination', () => {
    expect(nearestFirst([lyon, berlin, paris], null)).toEqual(['lyon', 'berlin', 'paris']);
  });
});
