import { describe, expect, it } from 'vitest';
import { parseDocumentSelection } from '../../src/modules/search/document-selection';

describe('parseDocumentSelection', () => {
  it('is null without any parameter: the whole index', () => {
    expect(parseDocumentSelection({})).toBeNull();
    expect(parseDocumentSelection({ 'filter[id][in]': undefined })).toBeNull();
  });

  it('reads ids from eq and from a comma-separated in, without repeats', () => {
    expect(parseDocumentSelection({ 'filter[id][in]': 'a, b,a' })).toEqual({
      selection: { ids: ['a', 'b'], filters: [] },
    });
    expect(parseDocumentSelection({ 'filter[id][eq]': 'a,b' })).toEqual({ selection: { ids: ['a,b'], filters: [] } });
  });

  it('reads filters on fields, eq as an in of one value', () => {
    expect(
      parseDocumentSelection({ 'filter[brand][eq]': 'Acme', 'filter[price][lt]': '10', 'filter[id][in]': 'x' }),
    ).toEqual({
      selection: {
        ids: ['x'],
        filters: [
          { key: 'brand', operator: 'in', values: ['Acme'], parameter: 'filter[brand][eq]' },
          { key: 'price', operator: 'lt', values: ['10'], parameter: 'filter[price][lt]' },
        ],
      },
    });
  });

  it('names each parameter it cannot use', () => {
    expect(
      parseDocumentSelection({
        unknown: '1',
        'filter[x][y][z]': '1',
        'filter[brand][like]': 'a',
        'filter[id][gt]': '1',
        'filter[tag][in]': 'a,,b',
        'filter[size][eq]': ['1', '2'],
      }),
    ).toEqual({
      problems: [
        expect.objectContaining({ field: 'unknown' }),
        expect.objectContaining({ field: 'filter[x][y][z]' }),
        expect.objectContaining({ field: 'filter[brand][like]' }),
        expect.objectContaining({ field: 'filter[id][gt]' }),
        expect.objectContaining({ field: 'filter[tag][in]' }),
        { field: 'filter[size][eq]', message: 'must be given once' },
      ],
    });
    expect(parseDocumentSelection({ 'filter[id][eq]': 'a', 'filter[id][in]': 'b' })).toEqual({
      problems: [{ field: 'filter[id][in]', message: 'takes filter[id][eq] or filter[id][in], not both' }],
    });
    const many = Array.from({ length: 1001 }, (_, i) => `d${i}`).join(',');
    expect(parseDocumentSelection({ 'filter[id][in]': many })).toEqual({
      problems: [{ field: 'filter[id][in]', message: 'names more than 1000 ids' }],
    });
  });
});
