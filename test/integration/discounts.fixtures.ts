/**
 * The world of the discounts tests: a tenant with two products and two sales channels (the second
 * for automatic promotions, so they touch no other case), another tenant, and helpers to create
 * discounts, evaluate a checkout's lines and count rows.
 */
import { expect } from 'vitest';
import type { DiscountQuery } from '../../src/modules/discounts';
import { createTenant, type TestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { graphqlData } from './stock.fixtures';

/** The instant the evaluations happen at, unless a case says otherwise. */
export const NOW = new Date('2026-12-02T12:00:00Z');

export async function discountWorld(t: TestApp) {
  const { rest, services } = t;
  const tenant = await createTenant(rest, 'Discounts tenant');
  const other = await createTenant(rest, 'Other discounts tenant');
  // The answers are checked field by field by the cases; their shapes are the queries'.
  const run = (query: string, variables?: Record<string, unknown>, token = tenant.key) =>
    graphqlData<Record<string, any>>(t, token, query, variables);
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
  const tea = await product('TEA');
  const mug = await product('MUG');
  const channel = await salesChannel('Web');
  const promoChannel = await salesChannel('Promotions');

  const create = (data: Record<string, unknown>, headers: Record<string, string> = {}, token = tenant.key) =>
    rest.post('/api/discounts', { token, body: { data }, headers });
  /** Creates a discount (10 % off the order unless `data` says otherwise) and answers its id. */
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
  const count = async (statement: string) => Number((await sql(t.databaseUrl, statement))[0]!.n);
  const discountCount = (tenantId = tenant.id) =>
    count(`SELECT count(*)::int AS n FROM discounts WHERE tenant_id = '${tenantId}'`);
  const usageCount = (discountId: string) =>
    count(`SELECT count(*)::int AS n FROM discount_usages WHERE discount_id = '${discountId}'`);

  const query = (
    codes: string[],
    lines: DiscountQuery['lines'],
    extra: Partial<DiscountQuery> = {},
  ): DiscountQuery => ({
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

  return {
    tenant,
    other,
    tea,
    mug,
    channel,
    promoChannel,
    run,
    create,
    discount,
    discountCount,
    usageCount,
    query,
    line,
    evaluate,
  };
}
export type DiscountWorld = Awaited<ReturnType<typeof discountWorld>>;
