/**
 * GraphQL stock queries: `inventory` (grouped, every quantity field, filters, cost),
 * `inventoryItems`, `inventoryAtLocation` and `stockMutations` (the query-string grammar), with
 * pagination while rows are inserted, tenant isolation and scopes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { uuidv7 } from '../../src/kernel/ids';
import { createKey, createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { createCatalog, graphqlData, graphqlError, type Catalog, graphqlErrorField } from './stock.fixtures';
import type { InventoryConnection, StockMutationConnection } from '../../src/__generated__/graphql';

const t = await startTestApp();
const { rest } = t;
const ITEMS = '/api/inventory/items';

let tenant: Tenant;
let other: Tenant;
let catalog: Catalog;
let otherCatalog: Catalog;
let w1: string;
let w2: string;
let a01: string;

const INVENTORY_FIELDS = `id ids sku quantity quantity_available quantity_committed quantity_reserved quantity_unavailable
  quantity_expected warehouse { id } position { id code } cost { amount currency } product { sku }`;

async function add(data: Record<string, unknown>[], token = tenant.key) {
  const response = await rest.post(ITEMS, { token, body: { data } });
  expect(response.status, response.rawBody).toBe(201);
  return response.body.data as { id: string }[];
}

/**
 * The operation cost limit multiplies by a literal `first` only; the pages here are read with
 * `first` as a variable, as clients asking for full pages of nested objects do.
 */
async function inventory(args: string, token = tenant.key) {
  const data = await graphqlData(
    t,
    token,
    `query($first: Int) { inventory(first: $first${args ? ', ' + args : ''}) { edges { cursor node { ${INVENTORY_FIELDS} } } pageInfo { hasNextPage endCursor } } }`,
    { first: 100 },
  );
  return data.inventory.edges.map((edge: { node: any }) => edge.node);
}

beforeAll(async () => {
  tenant = await createTenant(rest, 'Query tenant');
  other = await createTenant(rest, 'Other query tenant');
  catalog = await createCatalog(t, tenant.key, { products: 4 });
  otherCatalog = await createCatalog(t, other.key);
  [w1, w2] = catalog.warehouseIds;
  a01 = catalog.positionIds.get(`${w1}:A-01`)!;
  const at = (warehouseId: string) => ({ warehouseId, businessId: catalog.businessId });
  await add([
    { sku: 'SKU-1', ...at(w1), quantity: 5, cost: { amount: 100, currency: 'EUR' } },
    {
      sku: 'SKU-1',
      ...at(w1),
      quantity: 2,
      state: 'UNAVAILABLE',
      reason: 'BROKEN',
      cost: { amount: 200, currency: 'EUR' },
    },
    { sku: 'SKU-1', ...at(w1), quantity: 3, position: 'A-01' },
    { sku: 'SKU-1', ...at(w2), quantity: 4 },
    { sku: 'SKU-2', ...at(w1), quantity: 10, position: 'A-01', cost: { amount: 50, currency: 'USD' } },
    {
      sku: 'SKU-2',
      ...at(w1),
      quantity: 1,
      position: 'A-01',
      batchNumber: 'L2',
      cost: { amount: 60, currency: 'EUR' },
    },
    { sku: 'SKU-3', warehouseId: catalog.otherWarehouseId, businessId: catalog.otherBusinessId, quantity: 1 },
  ]);
  await add(
    [{ sku: 'SKU-1', warehouseId: otherCatalog.warehouseIds[0], businessId: otherCatalog.businessId, quantity: 99 }],
    other.key,
  );
  // Committed and reserved stock and announced stock come from orders and supplies; written here
  // straight into their tables, the queries must count them.
  const product = (sku: string) => catalog.productIds.get(sku)!;
  await sql(
    t.databaseUrl,
    `INSERT INTO inventory_items (id, tenant_id, product_id, warehouse_id, state, quantity) VALUES
       ($1, $3, $4, $5, 'COMMITTED', 6), ($2, $3, $4, $5, 'RESERVED', 1)`,
    [...[uuidv7(), uuidv7()].sort(), tenant.id, product('SKU-1'), w1],
  );
  await sql(
    t.databaseUrl,
    `INSERT INTO incoming_stock (id, tenant_id, product_id, warehouse_id, quantity) VALUES ($1, $3, $4, $5, 7), ($2, $3, $6, $7, 12)`,
    [uuidv7(), uuidv7(), tenant.id, product('SKU-1'), w1, product('SKU-4'), w2],
  );
});

describe('inventory', () => {
  it('groups lines per SKU, warehouse and position with every quantity', async () => {
    const groups = await inventory('sku: "SKU-1", warehouse_id: "' + w1 + '"');
    expect(groups).toHaveLength(2);
    const loose = groups.find((g: any) => g.position === null);
    const placed = groups.find((g: any) => g.position !== null);
    expect(loose).toMatchObject({
      sku: 'SKU-1',
      quantity: 14,
      quantity_available: 5,
      quantity_committed: 6,
      quantity_reserved: 1,
      quantity_unavailable: 2,
      quantity_expected: 7,
      warehouse: { id: w1 },
      position: null,
      product: { sku: 'SKU-1' },
    });
    expect(loose.ids).toHaveLength(4);
    // Weighted by quantity over the costed lines: (5 x 100 + 2 x 200) / 7.
    expect(loose.cost).toEqual({ amount: 129, currency: 'EUR' });
    expect(placed).toMatchObject({
      quantity: 3,
      quantity_available: 3,
      quantity_expected: 0,
      position: { id: a01, code: 'A-01' },
      cost: { amount: null, currency: null },
    });
    expect(placed.ids).toHaveLength(1);
    expect(loose.id).not.toBe(placed.id);
  });

  it("leaves the cost empty when the lines' currencies differ", async () => {
    const [group] = await inventory('sku: "SKU-2"');
    expect(group).toMatchObject({ quantity: 11, cost: { amount: null, currency: null } });
  });

  it('shows announced stock without lines as a group with quantity 0', async () => {
    const [group] = await inventory('sku: "SKU-4"');
    expect(group).toMatchObject({
      sku: 'SKU-4',
      ids: [],
      quantity: 0,
      quantity_available: 0,
      quantity_expected: 12,
      warehouse: { id: w2 },
    });
  });

  it('filters by SKU, warehouse, business, location, line ids and quantity', async () => {
    const skuOf = (groups: any[]) =>
      groups.map(
        (g) =>
          `${g.sku}@${g.warehouse.id === w1 ? 'w1' : g.warehouse.id === w2 ? 'w2' : 'other'}${g.position ? ':' + g.position.code : ''}`,
      );
    expect(skuOf(await inventory(`filters: { sku: ["SKU-2", "SKU-3"] }`))).toEqual(['SKU-2@w1:A-01', 'SKU-3@other']);
    expect(skuOf(await inventory(`warehouse_id: "${w2}"`))).toEqual(['SKU-1@w2', 'SKU-4@w2']);
    expect(skuOf(await inventory(`business_id: "${catalog.otherBusinessId}"`))).toEqual(['SKU-3@other']);
    expect(skuOf(await inventory(`filters: { business_id: "${catalog.businessId}", location_id: "${a01}" }`))).toEqual([
      'SKU-1@w1:A-01',
      'SKU-2@w1:A-01',
    ]);
    expect(skuOf(await inventory(`filters: { location_id: ["${catalog.otherWarehouseId}"] }`))).toEqual([
      'SKU-3@other',
    ]);
    const [placed] = await inventory(`sku: "SKU-2"`);
    expect(skuOf(await inventory(`filters: { ids: ["${placed.ids[1]}"] }`))).toEqual(['SKU-2@w1:A-01']);
    expect(skuOf(await inventory(`filters: { quantity: { gte: 4, lt: 14 } }`))).toEqual(['SKU-1@w2', 'SKU-2@w1:A-01']);
    expect(skuOf(await inventory(`filters: { quantity: { eq: 0 } }`))).toEqual(['SKU-4@w2']);
    // The argument and the filter of the same key must both hold.
    expect(await inventory(`sku: "SKU-1", filters: { sku: ["SKU-2"] }`)).toEqual([]);
    expect(skuOf(await inventory(`sku: "SKU-1", warehouse_id: "${w2}", filters: { sku: ["SKU-1", "SKU-2"] }`))).toEqual(
      ['SKU-1@w2'],
    );
  });

  it('refuses empty lists and malformed ids with VALIDATION_ERROR naming the field', async () => {
    expect(
      (
        await graphqlError(
          t,
          tenant.key,
          'VALIDATION_ERROR',
          `{ inventory(filters: { sku: [] }) { edges { cursor } } }`,
        )
      ).extensions?.field,
    ).toBe('filters.sku');
    expect(
      (await graphqlError(t, tenant.key, 'VALIDATION_ERROR', `{ inventory(warehouse_id: "w1") { edges { cursor } } }`))
        .extensions?.field,
    ).toBe('warehouse_id');
    expect(
      (
        await graphqlError(
          t,
          tenant.key,
          'VALIDATION_ERROR',
          `{ inventory(filters: { quantity: { gt: "x" } }) { edges { cursor } } }`,
        )
      ).message,
    ).toMatch(/^Int64 cannot represent "x"/);
    expect(
      (await graphqlError(t, tenant.key, 'VALIDATION_ERROR', `{ inventory(first: 101) { edges { cursor } } }`)).message,
    ).toMatch(/first/);
  });

  it('shows a tenant only its own stock and needs inventory:read', async () => {
    const theirs = await inventory('', other.key);
    expect(theirs.map((g: any) => [g.sku, g.quantity])).toEqual([['SKU-1', 99]]);
    expect(await inventory(`warehouse_id: "${w1}"`, other.key)).toEqual([]);
    const catalogOnly = await createKey(rest, tenant.id, ['catalog:read']);
    expect((await graphqlError(t, catalogOnly, 'FORBIDDEN', `{ inventory { edges { cursor } } }`)).message).toMatch(
      /inventory:read/,
    );
  });
});

describe('inventoryItems', () => {
  const ITEM_FIELDS =
    'id sku quantity status reason batch_number serial_number expires_at gtin rfid weight { amount unit } cost { amount currency } warehouse { id } position { code } product { id } created_at updated_at';
  const items = async (filters: string, token = tenant.key) =>
    (
      await graphqlData(
        t,
        token,
        `query($first: Int) { inventoryItems(filters: ${filters}, first: $first) { edges { node { ${ITEM_FIELDS} } } } }`,
        { first: 100 },
      )
    ).inventoryItems.edges.map((edge: any) => edge.node);

  it('needs at least one filter', async () => {
    expect(
      await graphqlErrorField(
        t,
        tenant.key,
        'VALIDATION_ERROR',
        `{ inventoryItems(filters: {}) { edges { cursor } } }`,
      ),
    ).toBe('filters');
    await graphqlError(t, tenant.key, 'VALIDATION_ERROR', `{ inventoryItems { edges { cursor } } }`);
    expect(
      (
        await graphqlError(
          t,
          tenant.key,
          'VALIDATION_ERROR',
          `{ inventoryItems(filters: { status: [] }) { edges { cursor } } }`,
        )
      ).extensions?.field,
    ).toBe('filters.status');
  });

  it('filters lines by status, SKU, warehouse, batch and quantity, and returns their fields', async () => {
    const unavailable = await items(`{ status: UNAVAILABLE }`);
    expect(unavailable).toEqual([
      expect.objectContaining({
        sku: 'SKU-1',
        quantity: 2,
        status: 'UNAVAILABLE',
        reason: 'BROKEN',
        cost: { amount: 200, currency: 'EUR' },
        warehouse: { id: w1 },
        position: null,
        gtin: [],
      }),
    ]);
    expect(
      (await items(`{ status: [COMMITTED, RESERVED] }`)).map((l: any) => [l.status, l.quantity, l.reason]),
    ).toEqual([
      ['COMMITTED', 6, null],
      ['RESERVED', 1, null],
    ]);
    expect(
      (await items(`{ sku: "SKU-2", batch_number: "L2" }`)).map((l: any) => [l.quantity, l.position.code, l.cost]),
    ).toEqual([[1, 'A-01', { amount: 60, currency: 'EUR' }]]);
    expect((await items(`{ warehouse_id: "${w2}", quantity: { gt: 3 } }`)).map((l: any) => l.quantity)).toEqual([4]);
    expect(await items(`{ sku: "SKU-1" }`, other.key)).toHaveLength(1);
  });

  it('pages in creation order', async () => {
    const all = await items(`{ warehouse_id: "${w1}" }`);
    const first = (
      await graphqlData(
        t,
        tenant.key,
        `{ inventoryItems(filters: { warehouse_id: "${w1}" }, first: 3) { edges { node { id } } pageInfo { hasNextPage endCursor } } }`,
      )
    ).inventoryItems;
    const second = (
      await graphqlData(
        t,
        tenant.key,
        `query($after: String) { inventoryItems(filters: { warehouse_id: "${w1}" }, first: 100, after: $after) { edges { node { id } } pageInfo { hasNextPage } } }`,
        { after: first.pageInfo.endCursor },
      )
    ).inventoryItems;
    expect([...first.edges, ...second.edges].map((edge: any) => edge.node.id)).toEqual(all.map((line: any) => line.id));
    expect(all.map((line: any) => line.id)).toEqual([...all.map((line: any) => line.id)].sort());
  });
});

describe('inventoryAtLocation', () => {
  const at = async (args: string, token = tenant.key) =>
    (
      await graphqlData(
        t,
        token,
        `{ inventoryAtLocation(${args}) { edges { node { sku quantity position { code } } } } }`,
      )
    ).inventoryAtLocation.edges.map((e) => e.node);

  it('returns the lines at one position, or those without a position', async () => {
    expect((await at(`warehouse_id: "${w1}", position: "A-01"`)).map((l: any) => [l.sku, l.quantity])).toEqual([
      ['SKU-1', 3],
      ['SKU-2', 10],
      ['SKU-2', 1],
    ]);
    expect((await at(`warehouse_id: "${w1}"`)).map((l: any) => [l.sku, l.quantity, l.position])).toEqual([
      ['SKU-1', 5, null],
      ['SKU-1', 2, null],
      ['SKU-1', 6, null],
      ['SKU-1', 1, null],
    ]);
    expect(await at(`warehouse_id: "${w1}", position: "B-01"`)).toEqual([]);
  });

  it('answers NOT_FOUND for an unknown or foreign warehouse or position', async () => {
    await graphqlError(
      t,
      tenant.key,
      'NOT_FOUND',
      `{ inventoryAtLocation(warehouse_id: "${otherCatalog.warehouseIds[0]}") { edges { cursor } } }`,
    );
    await graphqlError(
      t,
      tenant.key,
      'NOT_FOUND',
      `{ inventoryAtLocation(warehouse_id: "nope") { edges { cursor } } }`,
    );
    await graphqlError(
      t,
      tenant.key,
      'NOT_FOUND',
      `{ inventoryAtLocation(warehouse_id: "${w1}", position: "Z-9") { edges { cursor } } }`,
    );
  });
});

describe('stockMutations', () => {
  const FIELDS = `id source status delta new_quantity created_at inventory_item_id product { sku } location { id warehouse { id } position { code } }
    actor { type id } references { __typename ... on InventoryList { id } } messages { channel_id }`;
  const mutations = async (query: string | null, token = tenant.key) =>
    (
      await graphqlData(
        t,
        token,
        `query($query: QueryFilter, $first: Int) { stockMutations(query: $query, first: $first) { edges { node { ${FIELDS} } } } }`,
        { query, first: 100 },
      )
    ).stockMutations.edges.map((edge: any) => edge.node);

  it('lists the ledger newest first with every field', async () => {
    const all = await mutations(null);
    expect(all.length).toBeGreaterThanOrEqual(7);
    const times = all.map((m: any) => m.created_at);
    expect(times).toEqual([...times].sort((a: number, b: number) => b - a));
    const first = all.at(-1);
    expect(first).toMatchObject({
      source: 'REGISTER',
      status: 'PROCESSED',
      delta: 5,
      new_quantity: 5,
      product: { sku: 'SKU-1' },
      location: { id: w1, warehouse: { id: w1 }, position: null },
      actor: { type: 'api_key' },
      references: [{ __typename: 'InventoryList', id: expect.any(String) }],
      messages: [],
    });
    const placed = all.find((m: any) => m.location.position?.code === 'A-01' && m.product.sku === 'SKU-1');
    expect(placed.location).toEqual({ id: a01, warehouse: { id: w1 }, position: { code: 'A-01' } });
  });

  it('filters and sorts by the query string', async () => {
    const sku2 = await mutations('sku=SKU-2&sort=created_at');
    expect(sku2.map((m: any) => [m.delta, m.new_quantity])).toEqual([
      [10, 10],
      [1, 11],
    ]);
    expect(
      (await mutations(`warehouse_id=${w2}&source=REGISTER`)).every((m: any) => m.location.warehouse.id === w2),
    ).toBe(true);
    expect((await mutations(`location_id=${a01}`)).every((m: any) => m.location.id === a01)).toBe(true);
    expect(await mutations(`source[in]=CORRECTION,ALLOCATION`)).toEqual([]);
    expect((await mutations(`business_id=${catalog.otherBusinessId}`)).map((m: any) => m.product.sku)).toEqual([
      'SKU-3',
    ]);
    // SKU-1 at w1 reached 10 with its third line (5 + 2 + 3), SKU-2 with its first.
    expect(
      (await mutations('new_quantity[gte]=10&new_quantity[lt]=11')).map((m: any) => [m.product.sku, m.new_quantity]),
    ).toEqual([
      ['SKU-2', 10],
      ['SKU-1', 10],
    ]);
    const byQuantity = await mutations('sort=-new_quantity');
    expect(byQuantity.map((m: any) => m.new_quantity)).toEqual(
      [...byQuantity.map((m: any) => m.new_quantity)].sort((a: number, b: number) => b - a),
    );
    const newest = (await mutations(null))[0];
    expect((await mutations(`created_at[gte]=${newest.created_at}&sort=created_at`)).at(-1).id).toBe(newest.id);
    expect(await mutations(`created_at[gt]=${newest.created_at}`)).toEqual([]);
  });

  it('refuses an unknown field or a malformed query with VALIDATION_ERROR naming it', async () => {
    const query = `query($query: QueryFilter) { stockMutations(query: $query) { edges { cursor } } }`;
    for (const [bad, message] of [
      ['colour=red', 'unknown field "colour"'],
      ['sku', 'term "sku" has no "="'],
      ['source=LOST', 'value "LOST" of "source"'],
      ['sort=sku', 'unknown sort "sku"'],
    ]) {
      const error = await graphqlError(t, tenant.key, 'VALIDATION_ERROR', query, { query: bad });
      expect(error.message).toContain(message);
      expect(error.extensions?.field).toBe('query');
    }
    await graphqlError(t, tenant.key, 'VALIDATION_ERROR', `{ stockMutations(query: 5) { edges { cursor } } }`);
  });

  it('refuses a cursor of another sort', async () => {
    const page = (await graphqlData(t, tenant.key, `{ stockMutations(first: 1) { pageInfo { endCursor } } }`))
      .stockMutations;
    await graphqlError(
      t,
      tenant.key,
      'VALIDATION_ERROR',
      `query($after: String) { stockMutations(query: "sort=created_at", after: $after) { edges { cursor } } }`,
      { after: page.pageInfo.endCursor },
    );
  });

  it('shows a tenant only its own ledger and needs inventory:read', async () => {
    expect((await mutations(null, other.key)).map((m: any) => [m.product.sku, m.delta])).toEqual([['SKU-1', 99]]);
    expect(await mutations(`warehouse_id=${w1}`, other.key)).toEqual([]);
    const writer = await createKey(rest, tenant.id, ['inventory:write']);
    await graphqlError(t, writer, 'FORBIDDEN', `{ stockMutations { edges { cursor } } }`);
    await graphqlError(t, writer, 'FORBIDDEN', `{ inventoryItems(filters: { sku: "SKU-1" }) { edges { cursor } } }`);
    await graphqlError(t, writer, 'FORBIDDEN', `{ inventoryAtLocation(warehouse_id: "${w1}") { edges { cursor } } }`);
  });
});

describe('paging backwards', () => {
  it('walks inventory and the ledger from the end with last/before', async () => {
    const ids = async (field: string, args: string, variables: Record<string, unknown> = {}) => {
      const declarations = ['$before: String', ...(args.includes('$q') ? ['$q: QueryFilter'] : [])].join(', ');
      const data = await graphqlData(
        t,
        tenant.key,
        `query(${declarations}) { ${field}(${args}) { edges { node { id } } pageInfo { hasPreviousPage hasNextPage startCursor } } }`,
        variables,
      );
      return data[field as keyof typeof data] as InventoryConnection | StockMutationConnection;
    };
    for (const [field, extra] of [
      ['inventory', ''],
      ['stockMutations', 'query: $q, '],
      ['inventoryItems', 'filters: { sku: "SKU-1" }, '],
    ] as const) {
      const q = extra.includes('$q') ? { q: 'sort=-new_quantity' } : {};
      const all = (await ids(field, `${extra}first: 100, before: $before`, { before: null, ...q })).edges.map(
        (edge: any) => edge.node.id,
      );
      const walked: string[] = [];
      let before: string | null = null;
      for (let round = 0; round < 20; round += 1) {
        const page: any = await ids(field, `${extra}last: 2, before: $before`, { before, ...q });
        walked.unshift(...page.edges.map((edge: any) => edge.node.id));
        if (!page.pageInfo.hasPreviousPage) break;
        before = page.pageInfo.startCursor;
      }
      expect(walked, field).toEqual(all);
    }
  });
});

describe('pagination while rows are inserted', () => {
  it('orders by SKU, warehouse and position, and pages without gaps or duplicates while rows are inserted', async () => {
    const all = await inventory('');
    const keys = all.map((g: any) => `${g.sku}|${g.warehouse.id}|${g.position?.id ?? ''}`);
    expect(keys).toEqual([...keys].sort());
    expect(all.map((g: any) => g.sku)).toEqual(['SKU-1', 'SKU-1', 'SKU-1', 'SKU-2', 'SKU-3', 'SKU-4']);

    const seen: string[] = [];
    let after: string | null = null;
    for (let round = 0; round < 10; round += 1) {
      const data: any = await graphqlData(
        t,
        tenant.key,
        `query($after: String) { inventory(first: 2, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } } }`,
        { after },
      );
      seen.push(...data.inventory.edges.map((edge: { node: { id: string } }) => edge.node.id));
      // A group written while paging, after the cursor: it shows up later; nothing repeats or goes missing.
      if (round === 0) await add([{ sku: 'SKU-1', warehouseId: w2, businessId: catalog.businessId, position: 'A-01' }]);
      if (!data.inventory.pageInfo.hasNextPage) break;
      after = data.inventory.pageInfo.endCursor;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => all.some((g: any) => g.id === id))).toEqual(all.map((g: any) => g.id));
    expect(seen).toHaveLength(all.length + 1);
  });

  it('pages without gaps or duplicates while new mutations are written', async () => {
    for (const sort of ['-created_at', 'created_at']) {
      const before = (
        await graphqlData(
          t,
          tenant.key,
          `query($q: QueryFilter, $first: Int) { stockMutations(query: $q, first: $first) { edges { node { id } } } }`,
          { q: `sort=${sort}`, first: 100 },
        )
      ).stockMutations.edges.map((edge) => edge.node.id);
      const seen: string[] = [];
      let after: string | null = null;
      for (let round = 0; round < 50; round += 1) {
        const page: any = (
          await graphqlData(
            t,
            tenant.key,
            `query($after: String, $q: QueryFilter) { stockMutations(query: $q, first: 3, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } } }`,
            { after, q: `sort=${sort}` },
          )
        ).stockMutations;
        seen.push(...page.edges.map((edge: any) => edge.node.id));
        await add([
          { sku: 'SKU-4', warehouseId: w1, businessId: catalog.businessId, batchNumber: `PAGE-${sort}-${round}` },
        ]);
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.filter((id) => before.includes(id))).toEqual(before);
      // Newest first: what was written while paging sorts before the cursor. Oldest first: after it.
      if (sort === '-created_at') expect(seen).toEqual(before);
      else expect(seen.length).toBeGreaterThan(before.length);
    }
  });
});
