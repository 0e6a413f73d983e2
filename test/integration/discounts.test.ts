/**
 * Discounts over the real database: CRUD over REST and GraphQL with their refusals (nothing
 * changed), the rules of `evaluate` against hand-computed cases, and `recordUsage` keeping the
 * usage limits under concurrent transactions.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DiscountLimitReached, type DiscountQuery } from '../../src/modules/discounts';
import { createKey, createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';
import { graphqlData, graphqlErrorField } from './stock.fixtures';

const t = await startTestApp({ poolSize: 12 });
const { rest, services } = t;

let tenant: Tenant;
let other: Tenant;
let channel: string;
let promoChannel: string;
let tea: string;
let mug: string;

type Answer = Record<string, any>;
const run = (query: string, variables?: Record<string, unknown>, token = tenant.key) =>
  graphqlData<Answer>(t, token, query, variables);

const create = (data: Record<string, unknown>, headers: Record<string, string> = {}, token = tenant.key) =>
  rest.post('/api/discounts', { token, body: { data }, headers });
async function discount(data: Record<string, unknown>): Promise<string> {
  const response = await create({
    title: 'A discount',
    kind: 'PERCENT',
    percentBasisPoints: 1000,
    target: 'ORDER',
    ...data,
  });
  expect(response.status, response.rawBody).toBe(201);
  return response.body.data.id;
}
const discountCount = async (tenantId = tenant.id) =>
  Number((await sql(t.databaseUrl, `SELECT count(*)::int AS n FROM discounts WHERE tenant_id = '${tenantId}'`))[0]!.n);
const usageCount = async (discountId: string) =>
  Number(
    (await sql(t.databaseUrl, `SELECT count(*)::int AS n FROM discount_usages WHERE discount_id = '${discountId}'`))[0]!
      .n,
  );

const NOW = new Date('2026-12-02T12:00:00Z');
const query = (codes: string[], lines: DiscountQuery['lines'], extra: Partial<DiscountQuery> = {}): DiscountQuery => ({
  channelId: channel,
  currency: 'EUR',
  codes,
  buyerEmail: null,
  lines,
  now: NOW,
  ...extra,
});
const line = (key: string, amount: number, productId = mug, categoryIds: string[] = []) => ({
  key,
  productId,
  categoryIds,
  amount,
});
const evaluate = (q: DiscountQuery) => services.discounts.evaluate(tenant.id, q);

beforeAll(async () => {
  tenant = await createTenant(rest, 'Discounts tenant');
  other = await createTenant(rest, 'Other discounts tenant');
  const product = async (sku: string) =>
    (
      await run(`mutation($input: CreateProductInput!) { createProduct(input: $input) { product { id } } }`, {
        input: { sku, name: sku },
      })
    ).createProduct.product.id as string;
  const salesChannel = async (name: string) =>
    (
      await run(
        `mutation($input: CreateSalesChannelInput!) { createSalesChannel(input: $input) { sales_channel { id } } }`,
        { input: { name } },
      )
    ).createSalesChannel.sales_channel.id as string;
  tea = await product('TEA');
  mug = await product('MUG');
  channel = await salesChannel('Web');
  promoChannel = await salesChannel('Promotions');
});

describe('discounts over REST', () => {
  it('creates, reads, lists, replaces and deletes a discount', async () => {
    const created = await create({
      code: 'Welcome10',
      title: '10 % off',
      kind: 'PERCENT',
      percentBasisPoints: 1000,
      target: 'ITEMS',
      productIds: [tea.toUpperCase()],
      categoryIds: ['teas'],
      minimumSubtotal: 500,
      startsAt: '2026-01-01T00:00:00Z',
      endsAt: '2027-01-01T00:00:00+01:00',
      usageLimit: 100,
      usageLimitPerBuyer: 1,
    });
    expect(created.status, created.rawBody).toBe(201);
    const id = created.body.data.id;
    expect(created.body.data).toMatchObject({
      code: 'Welcome10',
      channelId: null,
      productIds: [tea],
      categoryIds: ['teas'],
      amount: null,
      currency: null,
      startsAt: Date.parse('2026-01-01T00:00:00Z'),
      endsAt: Date.parse('2026-12-31T23:00:00Z'),
      combinable: false,
      active: true,
    });
    const got = await rest.get(`/api/discounts/${id}`, { token: tenant.key });
    expect(got.body.data).toEqual(created.body.data);
    const byCode = await rest.get('/api/discounts?filter[code][eq]=WELCOME10', { token: tenant.key });
    expect(byCode.body.data.map((d: { id: string }) => d.id)).toEqual([id]);

    const replaced = await rest.put(`/api/discounts/${id}`, {
      token: tenant.key,
      body: {
        data: { code: 'WELCOME5', title: '5 off', kind: 'FIXED', amount: 500, currency: 'EUR', target: 'ORDER' },
      },
    });
    expect(replaced.status, replaced.rawBody).toBe(200);
    expect(replaced.body.data).toMatchObject({
      id,
      code: 'WELCOME5',
      kind: 'FIXED',
      percentBasisPoints: null,
      productIds: [],
      minimumSubtotal: null,
      usageLimit: null,
    });
    expectRestError(await rest.get(`/api/discounts/${id}`, { token: other.key }), 404);
    expect((await rest.delete(`/api/discounts/${id}`, { token: tenant.key })).status).toBe(204);
    expectRestError(await rest.delete(`/api/discounts/${id}`, { token: tenant.key }), 404);
    expectRestError(await rest.get(`/api/discounts/${id}`, { token: tenant.key }), 404);
  });

  it('pages the list in creation order', async () => {
    const ids = [
      await discount({ code: 'PAGE1' }),
      await discount({ code: 'PAGE2' }),
      await discount({ code: 'PAGE3' }),
    ];
    const first = await rest.get('/api/discounts?page[size]=2', { token: tenant.key });
    expect(first.body.data).toHaveLength(2);
    const next = await rest.get(`/api/discounts?page[size]=2&page[after]=${first.body.page.after}`, {
      token: tenant.key,
    });
    const all = [...first.body.data, ...next.body.data].map((d: { id: string }) => d.id);
    expect(all.slice(-3)).toEqual(ids);
    for (const id of ids) await rest.delete(`/api/discounts/${id}`, { token: tenant.key });
  });

  it('answers the first response again for a repeated Idempotency-Key, and 422 for the key with another body', async () => {
    const headers = { 'Idempotency-Key': 'discount-1' };
    const body = { code: 'ONCE', title: 'Once', kind: 'PERCENT', percentBasisPoints: 500, target: 'ORDER' };
    const before = await discountCount();
    const first = await create(body, headers);
    const again = await create(body, headers);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await discountCount()).toBe(before + 1);
    expectRestError(await create({ ...body, title: 'Twice' }, headers), 422);
    await rest.delete(`/api/discounts/${first.body.data.id}`, { token: tenant.key });
  });

  it('refuses a taken code in any case, bad combinations and foreign ids, changing nothing', async () => {
    const id = await discount({ code: 'TAKEN' });
    const before = await discountCount();
    expectRestError(
      await create({ code: 'taken', title: 'x', kind: 'PERCENT', percentBasisPoints: 1, target: 'ORDER' }),
      409,
      'body.data.code',
    );
    const unknownProduct = '0190a0a0-0000-7000-8000-000000000000';
    const cases: [Record<string, unknown>, string][] = [
      [{ kind: 'PERCENT', target: 'ORDER' }, 'body.data.percentBasisPoints'],
      [{ kind: 'PERCENT', percentBasisPoints: 10_001, target: 'ORDER' }, 'body.data.percentBasisPoints'],
      [{ kind: 'FIXED', amount: 100, target: 'ORDER' }, 'body.data.currency'],
      [
        { kind: 'FIXED', amount: 100, currency: 'EUR', percentBasisPoints: 5, target: 'ORDER' },
        'body.data.percentBasisPoints',
      ],
      [{ kind: 'PERCENT', percentBasisPoints: 5, target: 'ITEMS' }, 'body.data.productIds'],
      [{ kind: 'PERCENT', percentBasisPoints: 5, target: 'ORDER', categoryIds: ['x'] }, 'body.data.productIds'],
      [
        { kind: 'PERCENT', percentBasisPoints: 5, target: 'ITEMS', productIds: [unknownProduct] },
        'body.data.productIds[0]',
      ],
      [{ kind: 'PERCENT', percentBasisPoints: 5, target: 'ORDER', channelId: unknownProduct }, 'body.data.channelId'],
      [
        {
          kind: 'PERCENT',
          percentBasisPoints: 5,
          target: 'ORDER',
          startsAt: '2026-02-01T00:00:00Z',
          endsAt: '2026-01-01T00:00:00Z',
        },
        'body.data.endsAt',
      ],
      [{ kind: 'PERCENT', percentBasisPoints: 5, target: 'ORDER', code: 'has space' }, 'body.data.code'],
      [{ kind: 'PERCENT', percentBasisPoints: 5, target: 'ORDER', usageLimit: 0 }, 'body.data.usageLimit'],
      [{ kind: 'PERCENT', percentBasisPoints: 5, target: 'ORDER', extra: 1 }, 'body.data.extra'],
    ];
    for (const [body, field] of cases) expectRestError(await create({ title: 'Bad', ...body }), 400, field);
    const foreign = await rest.post('/api/discounts', {
      token: other.key,
      body: { data: { title: 'x', kind: 'PERCENT', percentBasisPoints: 5, target: 'ITEMS', productIds: [tea] } },
    });
    expectRestError(foreign, 400, 'body.data.productIds[0]');
    expect(await discountCount()).toBe(before);
    expect(await discountCount(other.id)).toBe(0);
    const unchanged = await rest.get(`/api/discounts/${id}`, { token: tenant.key });
    const put = await rest.put(`/api/discounts/${id}`, {
      token: tenant.key,
      body: { data: { code: 'TAKEN', title: 'x', kind: 'FIXED', amount: 5, target: 'ORDER' } },
    });
    expectRestError(put, 400, 'body.data.currency');
    expect((await rest.get(`/api/discounts/${id}`, { token: tenant.key })).body).toEqual(unchanged.body);
    await rest.delete(`/api/discounts/${id}`, { token: tenant.key });
  });

  it('refuses hostile bodies with the documented 400, changing nothing', async () => {
    const before = await discountCount();
    let deep: unknown = 'x';
    for (let i = 0; i < 200; i += 1) deep = [deep];
    const manyKeys = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i]));
    const valid = { title: 'x', kind: 'PERCENT', percentBasisPoints: 5, target: 'ITEMS' };
    const bodies: unknown[] = [
      { data: { ...valid, productIds: [tea], title: deep } },
      { data: { ...valid, productIds: [tea], ...manyKeys } },
      { data: { ...valid, productIds: Array.from({ length: 20_000 }, () => tea) } },
      { data: { ...valid, categoryIds: Array.from({ length: 101 }, (_, i) => `c${i}`) } },
      { data: { ...valid, productIds: [tea], title: 'x'.repeat(100_000) } },
      { data: { ...valid, categoryIds: ['c'.repeat(10_000)] } },
      { data: { ...valid, productIds: [tea], code: 'C'.repeat(65) } },
      { data: [valid] },
    ];
    for (const body of bodies) {
      const started = Date.now();
      const response = await rest.post('/api/discounts', { token: tenant.key, body });
      expectRestError(response, 400);
      expect(Date.now() - started).toBeLessThan(2_000);
    }
    expect(await discountCount()).toBe(before);
  });

  it('reads under orders:read and writes under pricing:write', async () => {
    const reader = await createKey(rest, tenant.id, ['orders:read']);
    const catalogReader = await createKey(rest, tenant.id, ['catalog:read', 'pricing:write']);
    expect((await rest.get('/api/discounts', { token: reader })).status).toBe(200);
    expectRestError(await rest.get('/api/discounts', { token: catalogReader }), 403);
    expectRestError(
      await create({ title: 'x', kind: 'PERCENT', percentBasisPoints: 5, target: 'ORDER' }, {}, reader),
      403,
    );
  });
});

describe('discounts over GraphQL', () => {
  it('creates, lists, replaces and deletes, naming problems in snake_case', async () => {
    const created = await run(
      `mutation($input: CreateDiscountInput!) { createDiscount(input: $input) { discount { id code kind target percent_basis_points product_ids combinable starts_at } } }`,
      {
        input: {
          code: 'GQL',
          title: 'GraphQL',
          kind: 'PERCENT',
          percent_basis_points: 250,
          target: 'ITEMS',
          product_ids: [mug],
          combinable: true,
          starts_at: '2026-01-01T00:00:00Z',
        },
      },
    );
    const made = created.createDiscount.discount;
    expect(made).toMatchObject({
      code: 'GQL',
      kind: 'PERCENT',
      percent_basis_points: 250,
      product_ids: [mug],
      combinable: true,
    });
    expect(made.starts_at).toBe(Date.parse('2026-01-01T00:00:00Z'));
    const listed = await run(
      `{ discounts(first: 10, code: "gql") { edges { node { id title } } pageInfo { hasNextPage } } }`,
    );
    expect(listed.discounts.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([made.id]);
    const updated = await run(
      `mutation($input: UpdateDiscountInput!) { updateDiscount(input: $input) { discount { id code kind amount currency } } }`,
      {
        input: {
          id: made.id,
          code: 'GQL2',
          title: 'Fixed',
          kind: 'FIXED',
          amount: 100,
          currency: 'EUR',
          target: 'ORDER',
        },
      },
    );
    expect(updated.updateDiscount.discount).toEqual({
      id: made.id,
      code: 'GQL2',
      kind: 'FIXED',
      amount: 100,
      currency: 'EUR',
    });
    const field = await graphqlErrorField(
      t,
      tenant.key,
      'VALIDATION_ERROR',
      `mutation($input: CreateDiscountInput!) { createDiscount(input: $input) { discount { id } } }`,
      { input: { title: 'x', kind: 'FIXED', amount: 100, target: 'ORDER' } },
    );
    expect(field).toBe('input.currency');
    const deleted = await run(`mutation($input: DeleteDiscountInput!) { deleteDiscount(input: $input) { id } }`, {
      input: { id: made.id },
    });
    expect(deleted.deleteDiscount.id).toBe(made.id);
  });

  it('refuses hostile inputs with VALIDATION_ERROR, changing nothing', async () => {
    const before = await discountCount();
    const mutation = `mutation($input: CreateDiscountInput!) { createDiscount(input: $input) { discount { id } } }`;
    const valid = { title: 'x', kind: 'PERCENT', percent_basis_points: 5, target: 'ITEMS' };
    const inputs: [Record<string, unknown>, string][] = [
      [{ ...valid, product_ids: Array.from({ length: 20_000 }, () => tea) }, 'input.product_ids'],
      [{ ...valid, product_ids: [tea], title: 'x'.repeat(100_000) }, 'input.title'],
      [{ ...valid, category_ids: ['c'.repeat(10_000)] }, 'input.category_ids[0]'],
      [{ ...valid, product_ids: [tea], starts_at: 'yesterday' }, 'input.starts_at'],
    ];
    for (const [input, field] of inputs) {
      expect(await graphqlErrorField(t, tenant.key, 'VALIDATION_ERROR', mutation, { input })).toBe(field);
    }
    expect(await discountCount()).toBe(before);
  });
});

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
    expect(dollars).toMatchObject({ applied: [], rejected: [{ code: 'FIVE', reason: 'not_applicable' }] });
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
      { code: 'PROMO-ONLY', reason: 'not_applicable', message: 'The code PROMO-ONLY does not apply to these items.' },
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

  it('refuses a query with amounts that are not safe non-negative integers', async () => {
    for (const amount of [1.5, -1, 2 ** 53]) {
      await expect(evaluate(query([], [line('a', amount)]))).rejects.toMatchObject({
        problems: expect.arrayContaining([expect.objectContaining({ field: 'lines[0].amount' })]),
      });
    }
  });
});

describe('recordUsage', () => {
  const use = (discountIds: string[], buyerEmail: string | null, hold = 20) =>
    t.db.$transaction(
      async (tx) => {
        await services.discounts.recordUsage(tx, tenant.id, { discountIds, buyerEmail, orderId: crypto.randomUUID() });
        // Keep the transaction open a moment, so the others wait on its lock rather than run after it.
        await tx.$executeRawUnsafe(`SELECT pg_sleep(${hold / 1000})`);
      },
      { timeout: 30_000, maxWait: 30_000 },
    );

  it('lets exactly usage_limit of 20 concurrent transactions use a discount', async () => {
    const id = await discount({ code: 'FIRST5', usageLimit: 5 });
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => use([id], `buyer${i}@example.com`)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    const refusals = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(refusals).toHaveLength(15);
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(DiscountLimitReached);
      expect(refusal).toMatchObject({ discountId: id, code: 'FIRST5', limit: 'overall' });
    }
    expect(await usageCount(id)).toBe(5);
    expect((await evaluate(query(['FIRST5'], [line('a', 1000)]))).rejected[0]!.reason).toBe('usage_limit_reached');
  });

  it('keeps the per-buyer limit under concurrency, by lower-cased e-mail', async () => {
    const id = await discount({ code: 'TWICE', usageLimitPerBuyer: 2 });
    const emails = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? 'Ann@Example.com' : ' ann@example.COM'));
    const results = await Promise.allSettled([
      ...emails.map((email) => use([id], email)),
      use([id], 'bob@example.com'),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ limit: 'per_buyer' });
    const rows = await sql(
      t.databaseUrl,
      `SELECT buyer_email FROM discount_usages WHERE discount_id = '${id}' ORDER BY 1`,
    );
    expect(rows.map((r) => r.buyer_email)).toEqual(['ann@example.com', 'ann@example.com', 'bob@example.com']);
    const ann = await evaluate(query(['TWICE'], [line('a', 1000)], { buyerEmail: 'ANN@example.com' }));
    expect(ann.rejected[0]!.reason).toBe('usage_limit_reached');
    const carl = await evaluate(query(['TWICE'], [line('a', 1000)], { buyerEmail: 'carl@example.com' }));
    expect(carl.applied).toHaveLength(1);
  });

  it('locks several discounts in id order, so crossing orders do not deadlock, and a refusal records none', async () => {
    const a = await discount({ code: 'CROSS-A', usageLimit: 50 });
    const b = await discount({ code: 'CROSS-B', usageLimit: 1 });
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => use(i % 2 === 0 ? [a, b] : [b, a], null, 5)),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(DiscountLimitReached);
    expect(await usageCount(a)).toBe(1);
    expect(await usageCount(b)).toBe(1);
  });
});
