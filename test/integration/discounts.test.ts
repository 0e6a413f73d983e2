/**
 * Discounts over the real database: CRUD over REST and GraphQL with their refusals and hostile
 * bodies (nothing changed), and `recordUsage` keeping the usage limits under concurrent
 * transactions on connections of their own. The rules of `evaluate`: discounts.evaluate.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { DiscountLimitReached } from '../../src/modules/discounts';
import { createKey, startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { expectRestError } from '../helpers/rest';
import { discountWorld } from './discounts.fixtures';
import { graphqlErrorField } from './stock.fixtures';

const t = await startTestApp({ poolSize: 12 });
const { rest, services } = t;

const { tenant, other, tea, mug, run, create, discount, discountCount, usageCount, query, line, evaluate } =
  await discountWorld(t);

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
