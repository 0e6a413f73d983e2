import { describe, expect, it } from 'vitest';
import { queryMatches, ruleFor, type MerchandisingRule } from '../../src/modules/search/rules';

const rule = (id: string, overrides: Partial<MerchandisingRule> = {}): MerchandisingRule => ({
  id,
  query: null,
  filters: [],
  pin: [],
  hide: [],
  ...overrides,
});

describe('queryMatches', () => {
  it('exact: the same words; contains: the words in a row, case and accents aside', () => {
    expect(queryMatches({ text: 'Desk lamp', match: 'exact' }, 'desk  LAMP')).toBe(true);
    expect(queryMatches({ text: 'desk lamp', match: 'exact' }, 'desk lamp led')).toBe(false);
    expect(queryMatches({ text: 'desk lamp', match: 'contains' }, 'led desk lamp white')).toBe(true);
    expect(queryMatches({ text: 'desk lamp', match: 'contains' }, 'lamp desk')).toBe(false);
    expect(queryMatches({ text: 'cafe', match: 'contains' }, 'Café noir')).toBe(true);
  });
});

describe('ruleFor', () => {
  const rules = [
    rule('lamps-sale', {
      query: { text: 'lamp', match: 'contains' },
      filters: [{ key: 'brand', operator: 'in', values: ['Lumo'] }],
    }),
    rule('lamps', { query: { text: 'lamp', match: 'contains' } }),
    rule('home'),
  ];

  it('is the first rule whose query and filter conditions hold', () => {
    expect(ruleFor(rules, { q: 'desk lamp' })?.id).toBe('lamps');
    expect(ruleFor(rules, { q: 'desk lamp', filters: [{ key: 'brand', operator: 'in', values: ['Lumo'] }] })?.id).toBe(
      'lamps-sale',
    );
    expect(
      ruleFor(rules, { q: 'lamp', filters: [{ key: 'brand', operator: 'in', values: ['Lumo', 'Brite'] }] })?.id,
    ).toBe('lamps');
    expect(ruleFor(rules, { q: 'chair' })?.id).toBe('home');
    expect(ruleFor([], { q: 'chair' })).toBeNull();
  });
});
