/**
 * The rules of `evaluate` against hand-computed cases: percent (half-even, once per discount),
 * fixed, items by product and by category, the minimum at its boundary, the window, codes in any
 * case, stacking and not, automatic promotions. The rules are written in docs/guides/selling.md.
 */
import { describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { discountWorld, NOW } from './discounts.fixtures';

const t = await startTestApp();
const { services } = t;

const { other, tea, mug, promoChannel, discount, query, line, evaluate } = await discountWorld(t);

describe('evaluate', () => {
  it('takes a percent off the order once, half-even, split by largest remainder', async () => {
    const id = await discount({ code: 'TEN', percentBasisPoints: 1000 });
    // 10 % of 605 + 400 = 100.5 → 100 (half-even); split 60.2 / 39.8 → 60 / 39, the unit left to the larger remainder.
    const result = await evaluate(query(['ten'], [line('a', 605), line('b', 400)]));
    expect(result).toEqual({
      applied: [
        {
          discountId: id,
          code: 'TEN',
          title: 'A discount',
          amount: 100,
          allocations: [
            { lineKey: 'a', amount: 60 },
            { lineKey: 'b', amount: 40 },
          ],
          automatic: false,
        },
      ],
      rejected: [],
    });
    // 10 % of 1015 = 101.5 → 102 (half-even rounds to the even neighbour).
    expect((await evaluate(query(['TEN'], [line('a', 1015)]))).applied[0]!.amount).toBe(102);
  });

  it('takes a fixed amount in its currency, never more than the lines', async () => {
    await discount({ code: 'FIVE', kind: 'FIXED', percentBasisPoints: null, amount: 500, currency: 'EUR' });
    const small = await evaluate(query(['FIVE'], [line('a', 300), line('b', 100)]));
    expect(small.applied[0]).toMatchObject({
      amount: 400,
      allocations: [
        { lineKey: 'a', amount: 300 },
        { lineKey: 'b', amount: 100 },
      ],
    });
    const big = await evaluate(query(['FIVE'], [line('a', 3000)]));
    expect(big.applied[0]!.amount).toBe(500);
    const dollars = await evaluate(query(['FIVE'], [line('a', 3000)], { currency: 'USD' }));
    expect(dollars).toEqual({
      applied: [],
      rejected: [
        { code: 'FIVE', reason: 'not_applicable', message: 'The code FIVE is valid for payments in EUR only.' },
      ],
    });
  });

  it('takes an item discount off the matching lines only, by product and by category', async () => {
    await discount({ code: 'TEA20', percentBasisPoints: 2000, target: 'ITEMS', productIds: [tea] });
    const byProduct = await evaluate(query(['TEA20'], [line('tea', 1350, tea), line('mug', 1200, mug)]));
    // 20 % of 1350 = 270, all on the tea line.
    expect(byProduct.applied[0]).toMatchObject({ amount: 270, allocations: [{ lineKey: 'tea', amount: 270 }] });
    const none = await evaluate(query(['TEA20'], [line('mug', 1200, mug)]));
    expect(none).toMatchObject({ applied: [], rejected: [{ code: 'TEA20', reason: 'not_applicable' }] });

    await discount({
      code: 'BOOKS',
      kind: 'FIXED',
      percentBasisPoints: null,
      amount: 250,
      currency: 'EUR',
      target: 'ITEMS',
      categoryIds: ['books'],
    });
    const byCategory = await evaluate(
      query(['BOOKS'], [line('b1', 1000, mug, ['books']), line('b2', 500, mug, ['new', 'books']), line('m', 1200)]),
    );
    // 250 over 1000 / 500: 166.67 / 83.33 → 166 / 83, the unit left to the larger remainder (b1).
    expect(byCategory.applied[0]).toMatchObject({
      amount: 250,
      allocations: [
        { lineKey: 'b1', amount: 167 },
        { lineKey: 'b2', amount: 83 },
      ],
    });
  });

  it('compares the minimum with the lines before discounts, at the boundary', async () => {
    await discount({ code: 'MIN1000', minimumSubtotal: 1000 });
    expect((await evaluate(query(['MIN1000'], [line('a', 600), line('b', 399)]))).rejected).toEqual([
      { code: 'MIN1000', reason: 'minimum_not_met', message: expect.stringContaining('1000') },
    ]);
    expect((await evaluate(query(['MIN1000'], [line('a', 600), line('b', 400)]))).applied[0]!.amount).toBe(100);
  });

  it('applies within its window only: from starts_at, until before ends_at', async () => {
    await discount({ code: 'WINDOW', startsAt: NOW.toISOString(), endsAt: '2026-12-03T12:00:00Z' });
    const at = (now: string) => evaluate(query(['WINDOW'], [line('a', 1000)], { now: new Date(now) }));
    expect((await at('2026-12-02T11:59:59.999Z')).rejected[0]!.reason).toBe('not_started');
    expect((await at('2026-12-02T12:00:00Z')).applied).toHaveLength(1);
    expect((await at('2026-12-03T11:59:59.999Z')).applied).toHaveLength(1);
    expect((await at('2026-12-03T12:00:00Z')).rejected[0]!.reason).toBe('expired');
  });

  it('names unknown and inactive codes, matches in any case, and counts a code typed twice once', async () => {
    await discount({ code: 'SLEEPY', active: false });
    const result = await evaluate(query(['nope', 'Sleepy', 'ten', 'TEN '], [line('a', 1000)]));
    expect(result.applied.map((a) => a.code)).toEqual(['TEN']);
    expect(result.rejected).toEqual([
      { code: 'nope', reason: 'unknown', message: 'The code nope is not a discount of this shop.' },
      { code: 'Sleepy', reason: 'unknown', message: 'The code Sleepy is not a discount of this shop.' },
    ]);
    const otherTenant = await services.discounts.evaluate(other.id, query(['TEN'], [line('a', 1000)]));
    expect(otherTenant.rejected[0]!.reason).toBe('unknown');
  });

  it('applies the best non-combinable one, and stacks the combinable ones on what is left in creation order', async () => {
    await discount({ code: 'OFF300', kind: 'FIXED', percentBasisPoints: null, amount: 300, currency: 'EUR' });
    const c1 = await discount({ code: 'PLUS10', combinable: true });
    const c2 = await discount({ code: 'PLUS5', percentBasisPoints: 500, combinable: true });
    const lines = [line('a', 1500), line('b', 500)];
    // TEN takes 200 and OFF300 takes 300 of 2000: OFF300 wins, TEN is not combinable with it.
    const exclusive = await evaluate(query(['TEN', 'OFF300'], lines));
    expect(exclusive.applied.map((a) => [a.code, a.amount])).toEqual([['OFF300', 300]]);
    expect(exclusive.rejected).toEqual([{ code: 'TEN', reason: 'not_combinable', message: expect.any(String) }]);
    // OFF300 leaves 1125 / 375; PLUS10 takes 10 % of 1700 = 170 (127.5 / 42.5 → 128 / 42, remainders tie: the
    // first line); PLUS5 takes 5 % of 1530 = 76.5 → 76 (half-even).
    const stacked = await evaluate(query(['PLUS5', 'OFF300', 'PLUS10'], lines));
    expect(stacked.rejected).toEqual([]);
    expect(stacked.applied.map((a) => [a.code, a.amount, a.allocations.map((s) => s.amount)])).toEqual([
      ['OFF300', 300, [225, 75]],
      ['PLUS10', 170, [128, 42]],
      ['PLUS5', 76, [57, 19]],
    ]);
    expect(stacked.applied.map((a) => a.discountId).slice(1)).toEqual([c1, c2]);
    const total = stacked.applied.reduce((sum, a) => sum + a.amount, 0);
    expect(total).toBe(546);
  });

  it('never takes more than the lines, however many discounts stack', async () => {
    await discount({
      code: 'ALL',
      kind: 'FIXED',
      percentBasisPoints: null,
      amount: 10_000,
      currency: 'EUR',
      combinable: true,
    });
    const result = await evaluate(query(['OFF300', 'ALL', 'PLUS10'], [line('a', 700)]));
    expect(result.applied.map((a) => [a.code, a.amount])).toEqual([
      ['OFF300', 300],
      ['PLUS10', 40],
      ['ALL', 360],
    ]);
  });

  it('applies automatic promotions of the channel without a code', async () => {
    const auto = await discount({ title: 'Winter sale', channelId: promoChannel, percentBasisPoints: 1500 });
    await discount({ title: 'Later sale', channelId: promoChannel, startsAt: '2027-01-01T00:00:00Z' });
    const lines = [line('a', 1000)];
    const result = await evaluate(query([], lines, { channelId: promoChannel }));
    expect(result).toEqual({
      applied: [
        {
          discountId: auto,
          code: null,
          title: 'Winter sale',
          amount: 150,
          allocations: [{ lineKey: 'a', amount: 150 }],
          automatic: true,
        },
      ],
      rejected: [],
    });
    // A better non-combinable code replaces it; a worse one is rejected.
    await discount({ code: 'BIG', percentBasisPoints: 2000 });
    const better = await evaluate(query(['BIG'], lines, { channelId: promoChannel }));
    expect(better.applied.map((a) => a.code)).toEqual(['BIG']);
    const worse = await evaluate(query(['TEN'], lines, { channelId: promoChannel }));
    expect(worse.applied.map((a) => a.automatic)).toEqual([true]);
    expect(worse.rejected[0]!.reason).toBe('not_combinable');
    expect((await evaluate(query([], lines))).applied).toEqual([]);
  });

  it('keeps a channel’s discount to its channel, and the earlier of two equal ones wins', async () => {
    await discount({ code: 'PROMO-ONLY', channelId: promoChannel });
    const elsewhere = await evaluate(query(['PROMO-ONLY'], [line('a', 1000)]));
    expect(elsewhere.rejected).toEqual([
      { code: 'PROMO-ONLY', reason: 'not_applicable', message: 'The code PROMO-ONLY is not valid in this shop.' },
    ]);
    const first = await discount({
      code: 'EQUAL-A',
      kind: 'FIXED',
      percentBasisPoints: null,
      amount: 100,
      currency: 'EUR',
    });
    await discount({ code: 'EQUAL-B', kind: 'FIXED', percentBasisPoints: null, amount: 100, currency: 'EUR' });
    const tie = await evaluate(query(['EQUAL-B', 'EQUAL-A'], [line('a', 1000)]));
    expect(tie.applied.map((a) => a.discountId)).toEqual([first]);
    expect(tie.rejected.map((r) => [r.code, r.reason])).toEqual([['EQUAL-B', 'not_combinable']]);
  });

  it('refuses a query with amounts that are not safe non-negative integers, or a line key twice', async () => {
    for (const amount of [1.5, -1, 2 ** 53]) {
      await expect(evaluate(query([], [line('a', amount)]))).rejects.toMatchObject({
        problems: expect.arrayContaining([expect.objectContaining({ field: 'lines[0].amount' })]),
      });
    }
    await expect(evaluate(query([], [line('a', 1), line('a', 2)]))).rejects.toMatchObject({
      problems: [{ field: 'lines', message: 'has each line key once' }],
    });
  });
});
