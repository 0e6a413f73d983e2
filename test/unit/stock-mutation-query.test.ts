import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/kernel/errors';
import { parseMutationQuery } from '../../src/modules/stock/mutation-query';

const ID = '0190b3c4-1e2f-7a3b-8c4d-5e6f7a8b9c0d';

function rejection(query: string): AppError {
  try {
    parseMutationQuery(query);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error(`"${query}" was accepted`);
}

describe('parseMutationQuery', () => {
  it('defaults to no filter, newest first', () => {
    for (const query of [undefined, null, '']) {
      expect(parseMutationQuery(query)).toEqual({ filter: {}, sort: { field: 'created_at', descending: true } });
    }
  });

  it('reads equality, lists, inequalities and the sort', () => {
    expect(
      parseMutationQuery(
        `sku=ABC&source[in]=REGISTER,CORRECTION&warehouse_id=${ID}&created_at[gte]=1735689600000&created_at[lt]=1735776000000&new_quantity[gt]=-5&sort=new_quantity`,
      ),
    ).toEqual({
      filter: {
        skus: ['ABC'],
        sources: ['REGISTER', 'CORRECTION'],
        warehouseIds: [ID],
        createdAt: { gte: 1735689600000, lt: 1735776000000 },
        newQuantity: { gt: -5 },
      },
      sort: { field: 'new_quantity', descending: false },
    });
  });

  it('percent-decodes names and values, and keeps "+" literal', () => {
    expect(parseMutationQuery('sku%5Bin%5D=A%26B,C+D&sort=-created_at').filter.skus).toEqual(['A&B', 'C+D']);
    expect(parseMutationQuery(`location_id=${ID.toUpperCase()}`).filter.locationIds).toEqual([ID]);
  });

  it.each([
    ['foo=1', 'unknown field "foo"'],
    ['sku[gt]=A', 'unknown operator "gt" for "sku"'],
    ['created_at[in]=1,2', 'unknown operator "in" for "created_at"'],
    ['sort=name', 'unknown sort "name"'],
    ['sort[eq]=created_at', '"sort" takes no operator'],
    ['sort=created_at&sort=-created_at', '"sort" may appear once'],
    ['sku', 'term "sku" has no "="'],
    ['sku=A&&source=REGISTER', 'empty term'],
    ['sku=A&', 'empty term'],
    ['SKU=A', '"SKU" is not a field'],
    ['sku=%E0%A4%A', 'not valid percent-encoding'],
    ['source=MAGIC', 'value "MAGIC" of "source" is not one of'],
    ['status[in]=PROCESSED,DONE', 'value "DONE" of "status"'],
    ['warehouse_id=abc', 'value "abc" of "warehouse_id" is not an id'],
    ['created_at[gt]=yesterday', 'value "yesterday" of "created_at" is not a Unix timestamp'],
    ['created_at[gt]=-1', 'is not a Unix timestamp'],
    ['delta=1.5', 'value "1.5" of "delta" is not a whole number'],
    ['sku=', 'value "" of "sku" is not 1 to 255 characters'],
    ['sku=A&sku=B', '"sku" may appear once'],
    ['sku=A&sku[in]=B,C', '"sku" may appear once'],
    ['delta[gt]=1&delta[gt]=2', '"delta[gt]" may appear once'],
    [`sku[in]=${Array.from({ length: 101 }, (_, i) => i).join(',')}`, 'at most 100 values'],
  ])('refuses %s', (query, message) => {
    const error = rejection(query);
    expect(error.key).toBe('BAD_REQUEST');
    expect(error.message).toContain(message);
    expect(error.field).toBe('query');
  });

  it('refuses an overlong query', () => {
    expect(rejection(`sku=${'A'.repeat(5000)}`).message).toContain('longer than');
  });
});
