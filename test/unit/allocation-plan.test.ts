import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/kernel/errors';
import { planAllocation, type PlannedItem } from '../../src/modules/stock/allocation-plan';

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
});
