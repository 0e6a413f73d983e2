// The selling part of the demo shop: channel prices for every product, a tax zone, two shipping
// methods (flat with a free-above threshold, pickup at a warehouse), the code WELCOME10 and the sandbox
// payment handler. Every step reads first and writes only what is missing or different, so a second
// run changes nothing.
import { callService, type Connection } from '../admin/connection';
import { answerError } from '../admin/quickstart';
import type { DemoProduct } from './products';

export const DEMO_SELLING = {
  taxZone: 'Netherlands',
  country: 'NL',
  countries: ['NL', 'DE', 'FR', 'BE'],
  flatShipping: 'Standard shipping',
  flatAmount: 495,
  freeAbove: 5000,
  pickup: 'Pickup at the Amsterdam store',
  code: 'WELCOME10',
} as const;

const ALIASES = 15;

interface Report {
  note(made: boolean, what: string, detail: string): void;
}

export async function seedSelling(
  connection: Connection,
  apiKey: string,
  products: DemoProduct[],
  channelName: string,
  pickupWarehouse: string,
  report: Report,
): Promise<void> {
  const graphql = async (query: string, variables: Record<string, unknown> = {}): Promise<any> => {
    const answer = await callService(connection.baseUrl, 'POST', '/graphql', {
      token: apiKey,
      body: { query, variables },
    });
    if (answer.status !== 200 || answer.body?.errors) throw answerError('run a GraphQL operation', answer);
    return answer.body.data;
  };

  const { salesChannels } = await graphql(
    '{ salesChannels(first: 100) { edges { node { id name currency warehouses { id name } } } } }',
  );
  const channel = salesChannels.edges.map((e: any) => e.node).find((c: any) => c.name === channelName);
  if (!channel) throw new Error(`the sales channel "${channelName}" is missing`);
  const currency = channel.currency as string;

  // Prices: the product's price in the channel, set where missing or different.
  const bySku = new Map(products.map((p) => [p.sku, Math.round(p.price * 100)]));
  const stale: { id: string; amount: number }[] = [];
  let after: string | null = null;
  for (;;) {
    const { products: page } = await graphql(
      'query($after: String, $c: ID!) { products(first: 100, after: $after) { edges { node { id sku price(channel_id: $c) { amount currency } } } pageInfo { hasNextPage endCursor } } }',
      { after, c: channel.id },
    );
    for (const { node } of page.edges) {
      const amount = bySku.get(node.sku);
      if (amount === undefined) continue;
      if (node.price?.amount !== amount || node.price?.currency !== currency) stale.push({ id: node.id, amount });
    }
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  for (let i = 0; i < stale.length; i += ALIASES) {
    const batch = stale.slice(i, i + ALIASES);
    const variables = Object.fromEntries(
      batch.map((p, j) => [
        `p${j}`,
        { product_id: p.id, prices: [{ currency, channel_id: channel.id, amount: p.amount }] },
      ]),
    );
    const declarations = batch.map((_, j) => `$p${j}: SetProductPricesInput!`).join(', ');
    const fields = batch.map((_, j) => `p${j}: setProductPrices(input: $p${j}) { prices { amount } }`).join(' ');
    await graphql(`mutation(${declarations}) { ${fields} }`, variables);
  }
  report.note(stale.length > 0, 'prices', `${bySku.size} in ${currency} (${stale.length} set now)`);

  // Tax zone.
  const { taxZones } = await graphql('{ taxZones(first: 100) { edges { node { id name } } } }');
  const zone = taxZones.edges.map((e: any) => e.node).find((z: any) => z.name === DEMO_SELLING.taxZone);
  if (!zone) {
    const made = await callService(connection.baseUrl, 'POST', '/api/tax-zones', {
      token: apiKey,
      body: {
        data: {
          name: DEMO_SELLING.taxZone,
          country: DEMO_SELLING.country,
          rates: [
            { taxClass: 'standard', name: 'VAT 21%', rateBasisPoints: 2100 },
            { taxClass: 'reduced', name: 'VAT 9%', rateBasisPoints: 900 },
          ],
        },
      },
    });
    if (made.status !== 201) throw answerError('create the tax zone', made);
    report.note(true, 'tax zone', `${made.body.data.id} ${DEMO_SELLING.taxZone}`);
  } else report.note(false, 'tax zone', `${zone.id} ${DEMO_SELLING.taxZone}`);

  // Shipping methods.
  const { shippingMethods } = await graphql('query($c: ID!) { shippingMethods(channel_id: $c) { id title } }', {
    c: channel.id,
  });
  const warehouse = (channel.warehouses as { id: string; name: string }[]).find((w) => w.name === pickupWarehouse);
  const wanted = [
    {
      title: DEMO_SELLING.flatShipping,
      type: 'SHIPPING',
      countries: DEMO_SELLING.countries,
      rate_kind: 'FLAT',
      flat_amount: DEMO_SELLING.flatAmount,
      free_above: DEMO_SELLING.freeAbove,
    },
    {
      title: DEMO_SELLING.pickup,
      type: 'PICKUP',
      countries: DEMO_SELLING.countries,
      rate_kind: 'FLAT',
      flat_amount: 0,
      pickup_warehouse_ids: warehouse ? [warehouse.id] : [],
    },
  ];
  for (const method of wanted) {
    let found = (shippingMethods as { id: string; title: string }[]).find((m) => m.title === method.title);
    if (!found) {
      const made = await graphql(
        'mutation($i: CreateShippingMethodInput!) { createShippingMethod(input: $i) { shipping_method { id title } } }',
        { i: { channel_id: channel.id, ...method } },
      );
      found = made.createShippingMethod.shipping_method;
    }
    report.note(
      !shippingMethods.some((m: any) => m.title === method.title),
      'shipping',
      `${found!.id} ${method.title}`,
    );
  }

  // Discount code.
  const { discounts } = await graphql('query($c: String) { discounts(first: 1, code: $c) { edges { node { id } } } }', {
    c: DEMO_SELLING.code,
  });
  const discount = discounts.edges[0]?.node;
  if (!discount) {
    const made = await graphql('mutation($i: CreateDiscountInput!) { createDiscount(input: $i) { discount { id } } }', {
      i: {
        code: DEMO_SELLING.code,
        title: '10% off your first order',
        kind: 'PERCENT',
        percent_basis_points: 1000,
        target: 'ORDER',
      },
    });
    report.note(true, 'discount', `${made.createDiscount.discount.id} ${DEMO_SELLING.code}`);
  } else report.note(false, 'discount', `${discount.id} ${DEMO_SELLING.code}`);

  // Sandbox payments.
  const { paymentSettings } = await graphql('{ paymentSettings { sandbox_enabled } }');
  if (!paymentSettings.sandbox_enabled) {
    await graphql('mutation { setPaymentSettings(input: { sandbox_enabled: true }) { settings { sandbox_enabled } } }');
  }
  report.note(!paymentSettings.sandbox_enabled, 'payments', 'sandbox handler on');
}
