/**
 * The catalog over GraphQL: businesses, warehouses, positions, products and sales channels
 * (create, update, delete, fetch by id, connections), with conflicts, refused deletes while stock
 * refers to an entity, validation, tenant isolation and scopes.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, createTenant, startTestApp, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { graphqlData, graphqlError } from './stock.fixtures';

const t = await startTestApp();
const { rest } = t;

let tenant: Tenant;
let other: Tenant;

beforeAll(async () => {
  tenant = await createTenant(rest, 'Catalog tenant');
  other = await createTenant(rest, 'Other catalog tenant');
});

const run = (query: string, variables?: Record<string, unknown>, token = tenant.key) =>
  graphqlData(t, token, query, variables);

async function createBusiness(name = 'Acme BV', token = tenant.key) {
  return (
    await run(
      `mutation($input: CreateBusinessInput!) { createBusiness(input: $input) { business { id name created_at updated_at } } }`,
      { input: { name } },
      token,
    )
  ).createBusiness.business;
}
async function createWarehouse(businessId: string, name = 'Main warehouse', token = tenant.key) {
  return (
    await run(
      `mutation($input: CreateWarehouseInput!) { createWarehouse(input: $input) { warehouse { id name business { id name } created_at } } }`,
      { input: { business_id: businessId, name } },
      token,
    )
  ).createWarehouse.warehouse;
}
async function createPosition(warehouseId: string, code: string) {
  return (
    await run(
      `mutation($input: CreatePositionInput!) { createPosition(input: $input) { position { id code warehouse { id } } } }`,
      { input: { warehouse_id: warehouseId, code } },
    )
  ).createPosition.position;
}
async function createProduct(sku: string, extra: Record<string, unknown> = {}, token = tenant.key) {
  return (
    await run(
      `mutation($input: CreateProductInput!) { createProduct(input: $input) { product { id sku name gtin created_at updated_at } } }`,
      { input: { sku, name: `Product ${sku}`, ...extra } },
      token,
    )
  ).createProduct.product;
}

describe('businesses', () => {
  it('are created, fetched, renamed, listed and deleted', async () => {
    const business = await createBusiness('Acme BV');
    expect(business).toEqual({
      id: expect.any(String),
      name: 'Acme BV',
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    });
    expect((await run(`query($id: ID!) { business(id: $id) { id name } }`, { id: business.id })).business).toEqual({
      id: business.id,
      name: 'Acme BV',
    });
    const renamed = (
      await run(
        `mutation($input: UpdateBusinessInput!) { updateBusiness(input: $input) { business { id name updated_at } } }`,
        { input: { id: business.id, name: 'Acme Holding' } },
      )
    ).updateBusiness.business;
    expect(renamed.name).toBe('Acme Holding');
    expect(renamed.updated_at).toBeGreaterThanOrEqual(business.updated_at);
    const list = (await run(`{ businesses(first: 10) { edges { node { id } } pageInfo { hasNextPage } } }`)).businesses;
    expect(list.edges.map((edge: any) => edge.node.id)).toContain(business.id);
    expect(
      (
        await run(`mutation($input: DeleteBusinessInput!) { deleteBusiness(input: $input) { id } }`, {
          input: { id: business.id },
        })
      ).deleteBusiness,
    ).toEqual({ id: business.id });
    await graphqlError(t, tenant.key, 'NOT_FOUND', `query($id: ID!) { business(id: $id) { id } }`, { id: business.id });
  });

  it('cannot be deleted while they own a warehouse', async () => {
    const business = await createBusiness('Owner');
    await createWarehouse(business.id);
    const error = await graphqlError(
      t,
      tenant.key,
      'CONFLICT',
      `mutation($input: DeleteBusinessInput!) { deleteBusiness(input: $input) { id } }`,
      { input: { id: business.id } },
    );
    expect(error.message).toMatch(/still owns warehouses/);
    expect(error.path).toEqual(['deleteBusiness']);
  });

  it('refuse a blank name with VALIDATION_ERROR naming the field', async () => {
    const error = await graphqlError(
      t,
      tenant.key,
      'VALIDATION_ERROR',
      `mutation { createBusiness(input: { name: "  " }) { business { id } } }`,
    );
    expect(error.extensions?.field).toBe('input.name');
  });

  it.each([
    ['a NUL character', 'Acme\u0000BV'],
    ['an unpaired surrogate', 'Acme \ud800'],
  ])('refuse a name with %s before it reaches the database, storing nothing', async (_what, name) => {
    const before = await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM businesses');
    const mutation = `mutation($input: CreateBusinessInput!) { createBusiness(input: $input) { business { id } } }`;
    const error = await graphqlError(t, tenant.key, 'VALIDATION_ERROR', mutation, { input: { name } });
    expect(error.extensions?.field).toBe('input.name');
    expect(error.message).toContain('must not contain U+0000 or unpaired surrogates');
    expect(await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM businesses')).toEqual(before);
  });
});

describe('warehouses and positions', () => {
  it('belong to a business and a warehouse', async () => {
    const business = await createBusiness();
    const warehouse = await createWarehouse(business.id, 'North');
    expect(warehouse).toMatchObject({ name: 'North', business: { id: business.id, name: business.name } });
    const position = await createPosition(warehouse.id, 'A-01');
    expect(position).toEqual({ id: expect.any(String), code: 'A-01', warehouse: { id: warehouse.id } });
    const renamed = (
      await run(`mutation($input: UpdatePositionInput!) { updatePosition(input: $input) { position { code } } }`, {
        input: { id: position.id, code: 'A-02' },
      })
    ).updatePosition.position;
    expect(renamed.code).toBe('A-02');
    const positions = (
      await run(`query($id: ID!) { positions(warehouse_id: $id) { edges { node { id code } } } }`, { id: warehouse.id })
    ).positions;
    expect(positions.edges.map((edge: any) => edge.node)).toEqual([{ id: position.id, code: 'A-02' }]);
    expect(
      (await run(`query($id: ID!) { position(id: $id) { warehouse { name } } }`, { id: position.id })).position
        .warehouse.name,
    ).toBe('North');
    const byBusiness = (
      await run(`query($id: ID) { warehouses(business_id: $id) { edges { node { id } } } }`, { id: business.id })
    ).warehouses;
    expect(byBusiness.edges.map((edge: any) => edge.node.id)).toEqual([warehouse.id]);
  });

  it('refuse a duplicate position code in one warehouse with ID_TAKEN, allow it in another', async () => {
    const business = await createBusiness();
    const [one, two] = [await createWarehouse(business.id, 'One'), await createWarehouse(business.id, 'Two')];
    await createPosition(one.id, 'X-1');
    await graphqlError(
      t,
      tenant.key,
      'ID_TAKEN',
      `mutation($input: CreatePositionInput!) { createPosition(input: $input) { position { id } } }`,
      {
        input: { warehouse_id: one.id, code: 'X-1' },
      },
    );
    expect((await createPosition(two.id, 'X-1')).code).toBe('X-1');
  });

  it('answer NOT_FOUND for an unknown or foreign business or warehouse', async () => {
    const foreign = await createBusiness('Foreign', other.key);
    await graphqlError(
      t,
      tenant.key,
      'NOT_FOUND',
      `mutation($input: CreateWarehouseInput!) { createWarehouse(input: $input) { warehouse { id } } }`,
      {
        input: { business_id: foreign.id, name: 'W' },
      },
    );
    await graphqlError(
      t,
      tenant.key,
      'NOT_FOUND',
      `mutation { createWarehouse(input: { business_id: "nope", name: "W" }) { warehouse { id } } }`,
    );
    const foreignWarehouse = await createWarehouse(foreign.id, 'Theirs', other.key);
    await graphqlError(t, tenant.key, 'NOT_FOUND', `query($id: ID!) { warehouse(id: $id) { id } }`, {
      id: foreignWarehouse.id,
    });
    await graphqlError(
      t,
      tenant.key,
      'NOT_FOUND',
      `query($id: ID!) { positions(warehouse_id: $id) { edges { cursor } } }`,
      { id: foreignWarehouse.id },
    );
    await graphqlError(
      t,
      tenant.key,
      'NOT_FOUND',
      `mutation($input: CreatePositionInput!) { createPosition(input: $input) { position { id } } }`,
      {
        input: { warehouse_id: foreignWarehouse.id, code: 'P' },
      },
    );
    await graphqlError(
      t,
      tenant.key,
      'NOT_FOUND',
      `mutation($input: DeleteWarehouseInput!) { deleteWarehouse(input: $input) { id } }`,
      { input: { id: foreignWarehouse.id } },
    );
  });
});

describe('products', () => {
  it('are created with a SKU unique per tenant, changed and fetched', async () => {
    const product = await createProduct('P-100', { gtin: ['8712345678906'] });
    expect(product).toMatchObject({ sku: 'P-100', name: 'Product P-100', gtin: ['8712345678906'] });
    const error = await graphqlError(
      t,
      tenant.key,
      'ID_TAKEN',
      `mutation { createProduct(input: { sku: "P-100", name: "Again" }) { product { id } } }`,
    );
    expect(error.message).toMatch(/sku "P-100" already exists/);
    // Another tenant may use the same SKU.
    expect((await createProduct('P-100', {}, other.key)).sku).toBe('P-100');
    const changed = (
      await run(
        `mutation($input: UpdateProductInput!) { updateProduct(input: $input) { product { sku name gtin } } }`,
        { input: { id: product.id, name: 'Renamed', gtin: [] } },
      )
    ).updateProduct.product;
    expect(changed).toEqual({ sku: 'P-100', name: 'Renamed', gtin: [] });
    await createProduct('P-101');
    await graphqlError(
      t,
      tenant.key,
      'ID_TAKEN',
      `mutation($input: UpdateProductInput!) { updateProduct(input: $input) { product { id } } }`,
      { input: { id: product.id, sku: 'P-101' } },
    );
    expect((await run(`query($id: ID!) { product(id: $id) { sku name } }`, { id: product.id })).product).toEqual({
      sku: 'P-100',
      name: 'Renamed',
    });
  });

  it('still list with products(first, after)', async () => {
    const first = (await run(`{ products(first: 1) { edges { node { sku } } pageInfo { hasNextPage endCursor } } }`))
      .products;
    expect(first.pageInfo.hasNextPage).toBe(true);
    const next = (
      await run(`query($after: String) { products(first: 100, after: $after) { edges { node { sku } } } }`, {
        after: first.pageInfo.endCursor,
      })
    ).products;
    expect([...first.edges, ...next.edges].map((edge: any) => edge.node.sku)).toEqual(['P-100', 'P-101']);
  });

  it('refuse a malformed SKU or too many barcodes with VALIDATION_ERROR', async () => {
    expect(
      (
        await graphqlError(
          t,
          tenant.key,
          'VALIDATION_ERROR',
          `mutation { createProduct(input: { sku: " padded ", name: "x" }) { product { id } } }`,
        )
      ).extensions?.field,
    ).toBe('input.sku');
    const gtin = Array.from({ length: 21 }, (_, i) => `${i}`);
    expect(
      (
        await graphqlError(
          t,
          tenant.key,
          'VALIDATION_ERROR',
          `mutation($gtin: [String!]) { createProduct(input: { sku: "G", name: "x", gtin: $gtin }) { product { id } } }`,
          { gtin },
        )
      ).extensions?.field,
    ).toBe('input.gtin');
  });
});

describe('sales channels', () => {
  it('are created, renamed, listed, fetched and deleted', async () => {
    const channel = (
      await run(`mutation { createSalesChannel(input: { name: "Web shop" }) { sales_channel { id name } } }`)
    ).createSalesChannel.sales_channel;
    const renamed = (
      await run(
        `mutation($input: UpdateSalesChannelInput!) { updateSalesChannel(input: $input) { sales_channel { name } } }`,
        { input: { id: channel.id, name: 'Marketplace' } },
      )
    ).updateSalesChannel.sales_channel;
    expect(renamed.name).toBe('Marketplace');
    expect(
      (await run(`{ salesChannels { edges { node { id name } } } }`)).salesChannels.edges.map((edge: any) => edge.node),
    ).toEqual([{ id: channel.id, name: 'Marketplace' }]);
    expect(
      (await run(`{ salesChannels { edges { node { id } } } }`, undefined, other.key)).salesChannels.edges,
    ).toEqual([]);
    await graphqlError(t, other.key, 'NOT_FOUND', `query($id: ID!) { salesChannel(id: $id) { id } }`, {
      id: channel.id,
    });
    await run(`mutation($input: DeleteSalesChannelInput!) { deleteSalesChannel(input: $input) { id } }`, {
      input: { id: channel.id },
    });
    await graphqlError(
      t,
      tenant.key,
      'NOT_FOUND',
      `mutation($input: DeleteSalesChannelInput!) { deleteSalesChannel(input: $input) { id } }`,
      { input: { id: channel.id } },
    );
  });
});

describe('deleting what stock refers to', () => {
  it('is refused with CONFLICT for the product, warehouse and position of a line, and allowed once nothing refers to them', async () => {
    const business = await createBusiness('Stocked');
    const warehouse = await createWarehouse(business.id, 'Stocked warehouse');
    const position = await createPosition(warehouse.id, 'S-1');
    const product = await createProduct('STOCKED-1');
    const added = await rest.post('/api/inventory/items', {
      token: tenant.key,
      body: {
        data: [{ sku: 'STOCKED-1', warehouseId: warehouse.id, businessId: business.id, position: 'S-1', quantity: 2 }],
      },
    });
    expect(added.status).toBe(201);
    const remove = async (mutation: string, id: string) =>
      (
        await graphqlError(
          t,
          tenant.key,
          'CONFLICT',
          `mutation($input: ${mutation[0]!.toUpperCase()}${mutation.slice(1)}Input!) { ${mutation}(input: $input) { id } }`,
          { input: { id } },
        )
      ).message;
    expect(await remove('deleteProduct', product.id)).toMatch(/referred to by inventory lines/);
    expect(await remove('deleteWarehouse', warehouse.id)).toMatch(/referred to by inventory lines/);
    expect(await remove('deletePosition', position.id)).toMatch(/referred to by inventory lines/);
    expect(await remove('deleteBusiness', business.id)).toMatch(/owns warehouses/);
    // Removing the line leaves the ledger, which keeps its history.
    const deleted = await rest.delete(`/api/inventory/items?filter[id][eq]=${added.body.data[0].id}`, {
      token: tenant.key,
    });
    expect(deleted.status).toBe(204);
    expect(await remove('deleteProduct', product.id)).toMatch(/stock mutations/);
    expect(await sql(t.databaseUrl, 'SELECT id FROM products WHERE id = $1', [product.id])).toHaveLength(1);
    // A product, warehouse and position that never held stock go.
    const spare = await createWarehouse(business.id, 'Spare');
    await createPosition(spare.id, 'P-1');
    const spareProduct = await createProduct('SPARE-1');
    await run(`mutation($input: DeleteProductInput!) { deleteProduct(input: $input) { id } }`, {
      input: { id: spareProduct.id },
    });
    await run(`mutation($input: DeleteWarehouseInput!) { deleteWarehouse(input: $input) { id } }`, {
      input: { id: spare.id },
    });
    expect(await sql(t.databaseUrl, 'SELECT id FROM positions WHERE warehouse_id = $1', [spare.id])).toEqual([]);
  });

  it("looks only at the tenant's own stock: another tenant's lines on the same SKU neither block nor leak", async () => {
    const theirs = await createBusiness('Their stock', other.key);
    const theirWarehouse = await createWarehouse(theirs.id, 'Their warehouse', other.key);
    const theirProduct = await createProduct('SHARED-SKU', {}, other.key);
    const added = await rest.post('/api/inventory/items', {
      token: other.key,
      body: { data: [{ sku: 'SHARED-SKU', warehouseId: theirWarehouse.id, businessId: theirs.id, quantity: 3 }] },
    });
    expect(added.status).toBe(201);
    const ours = await createProduct('SHARED-SKU');
    const ourBusiness = await createBusiness('Our empty business');
    await run(`mutation($input: DeleteProductInput!) { deleteProduct(input: $input) { id } }`, {
      input: { id: ours.id },
    });
    await run(`mutation($input: DeleteBusinessInput!) { deleteBusiness(input: $input) { id } }`, {
      input: { id: ourBusiness.id },
    });
    expect(
      await sql(t.databaseUrl, 'SELECT id FROM products WHERE id = ANY($1::uuid[])', [[ours.id, theirProduct.id]]),
    ).toEqual([{ id: theirProduct.id }]);
    // Their product stays theirs: to us it does not exist.
    await graphqlError(
      t,
      tenant.key,
      'NOT_FOUND',
      `mutation($input: DeleteProductInput!) { deleteProduct(input: $input) { id } }`,
      {
        input: { id: theirProduct.id },
      },
    );
  });
});

describe('scopes', () => {
  it('catalog reads need catalog:read, writes catalog:write', async () => {
    const reader = await createKey(rest, tenant.id, ['catalog:read']);
    const stockOnly = await createKey(rest, tenant.id, ['inventory:read']);
    expect(
      (
        await graphqlError(
          t,
          reader,
          'FORBIDDEN',
          `mutation { createBusiness(input: { name: "x" }) { business { id } } }`,
        )
      ).message,
    ).toMatch(/catalog:write/);
    expect((await graphqlError(t, stockOnly, 'FORBIDDEN', `{ businesses { edges { cursor } } }`)).message).toMatch(
      /catalog:read/,
    );
    await graphqlError(t, stockOnly, 'FORBIDDEN', `{ warehouses { edges { cursor } } }`);
    await graphqlError(t, stockOnly, 'FORBIDDEN', `{ salesChannels { edges { cursor } } }`);
    expect(
      (await run(`{ businesses { edges { cursor } } }`, undefined, reader)).businesses.edges.length,
    ).toBeGreaterThan(0);
  });
});
