/**
 * Bundles (kits) in the catalog: defined by `setBundleComponents`, shown as `Product.is_bundle` and
 * `Product.components`; no bundle inside a bundle, no stock of a bundle's own, and bad or hostile
 * input refused with nothing changed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../helpers/app';
import { sql } from '../helpers/db';
import { addStock, createStockWorld, type StockWorld } from './orders.fixtures';
import { graphqlData, graphqlError } from './stock.fixtures';

const t = await startTestApp();
let world: StockWorld;

const SET = `mutation($input: SetBundleComponentsInput!) { setBundleComponents(input: $input) {
  product { id sku is_bundle components { product { sku } quantity } } } }`;

const set = (input: Record<string, unknown>) => graphqlData(t, world.tenant.key, SET, { input });
const refused = (code: string, input: Record<string, unknown>) =>
  graphqlError(t, world.tenant.key, code, SET, { input });

async function createProduct(sku: string) {
  const data = await graphqlData(
    t,
    world.tenant.key,
    `mutation($input: CreateProductInput!) { createProduct(input: $input) { product { id } } }`,
    { input: { sku, name: `Product ${sku}` } },
  );
  return data.createProduct.product.id;
}

/** What the bundle definitions of the tenant are, for "a refused write changed nothing". */
const definitions = async () => ({
  components: await sql(
    t.databaseUrl,
    'SELECT bundle_id, component_id, quantity::text, position FROM bundle_components WHERE tenant_id = $1 ORDER BY 1, 4',
    [world.tenant.id],
  ),
  bundles: await sql(t.databaseUrl, 'SELECT id FROM products WHERE tenant_id = $1 AND is_bundle ORDER BY 1', [
    world.tenant.id,
  ]),
});

beforeAll(async () => {
  world = await createStockWorld(t, 'Bundle tenant', 3);
  for (const sku of ['KIT-1', 'KIT-2', 'KIT-3']) await createProduct(sku);
});

describe('setBundleComponents', () => {
  it('makes a product a bundle, by sku or id, and back a plain product with no components', async () => {
    const data = await set({
      sku: 'KIT-1',
      components: [
        { sku: 'SKU-2', quantity: 2 },
        { sku: 'SKU-1', quantity: 1 },
      ],
    });
    expect(data.setBundleComponents.product).toMatchObject({
      sku: 'KIT-1',
      is_bundle: true,
      components: [
        { product: { sku: 'SKU-2' }, quantity: 2 },
        { product: { sku: 'SKU-1' }, quantity: 1 },
      ],
    });
    const id = data.setBundleComponents.product.id;
    const again = await set({ product_id: id, components: [{ sku: 'SKU-3', quantity: 5 }] });
    expect(again.setBundleComponents.product.components).toEqual([{ product: { sku: 'SKU-3' }, quantity: 5 }]);
    const plain = await set({ product_id: id, components: [] });
    expect(plain.setBundleComponents.product).toMatchObject({ is_bundle: false, components: [] });
    const read = await graphqlData(t, world.tenant.key, `query($id: ID!) { product(id: $id) { is_bundle } }`, { id });
    expect(read.product.is_bundle).toBe(false);
  });

  it('lets a component be in several bundles', async () => {
    await set({ sku: 'KIT-1', components: [{ sku: 'SKU-1', quantity: 1 }] });
    await set({ sku: 'KIT-2', components: [{ sku: 'SKU-1', quantity: 3 }] });
    expect((await definitions()).bundles).toHaveLength(2);
  });

  it('refuses bad input with VALIDATION_ERROR naming the field, changing nothing', async () => {
    const before = await definitions();
    const cases: [Record<string, unknown>, string][] = [
      [{ sku: 'KIT-3', components: [{ sku: 'KIT-3', quantity: 1 }] }, 'input.components[0].sku'],
      [{ sku: 'KIT-3', components: [{ sku: 'KIT-1', quantity: 1 }] }, 'input.components[0].sku'],
      [{ sku: 'KIT-3', components: [{ sku: 'NOPE', quantity: 1 }] }, 'input.components[0].sku'],
      [
        {
          sku: 'KIT-3',
          components: [
            { sku: 'SKU-2', quantity: 1 },
            { sku: 'SKU-2', quantity: 1 },
          ],
        },
        'input.components[1].sku',
      ],
      [{ sku: 'KIT-3', components: [{ sku: 'SKU-2', quantity: 0 }] }, 'input.components[0].quantity'],
      [{ sku: 'KIT-3', components: [{ sku: 'SKU-2', quantity: 1_000_001 }] }, 'input.components[0].quantity'],
      [{ sku: 'KIT-3', components: [{ sku: 'SKU-2', quantity: 2 ** 53 - 1 }] }, 'input.components[0].quantity'],
      [{ sku: 'KIT-3', product_id: world.catalog.productIds.get('SKU-1'), components: [] }, 'input.product_id'],
      [{ components: [] }, 'input.product_id'],
      // A component of a bundle cannot become one: no bundle inside a bundle.
      [{ sku: 'SKU-1', components: [{ sku: 'SKU-2', quantity: 1 }] }, 'input.sku'],
    ];
    for (const [input, field] of cases) {
      const error = await refused('VALIDATION_ERROR', input);
      expect(error.extensions?.field, JSON.stringify(input)).toBe(field);
    }
    expect(await definitions()).toEqual(before);
  });

  it('refuses 1 000 components, and accepts 100', async () => {
    const before = await definitions();
    const many = Array.from({ length: 1000 }, (_, index) => ({ sku: `MANY-${index}`, quantity: 1 }));
    const error = await refused('VALIDATION_ERROR', { sku: 'KIT-3', components: many });
    expect(error.extensions?.field).toBe('input.components');
    expect(await definitions()).toEqual(before);
    for (let index = 0; index < 100; index += 1) await createProduct(`PART-${index}`);
    const hundred = Array.from({ length: 100 }, (_, index) => ({ sku: `PART-${index}`, quantity: 1_000_000 }));
    const data = await set({ sku: 'KIT-3', components: hundred });
    expect(data.setBundleComponents.product.components).toHaveLength(100);
    await set({ sku: 'KIT-3', components: [] });
  });

  it('answers NOT_FOUND for an unknown product', async () => {
    await refused('NOT_FOUND', { sku: 'NO-SUCH', components: [] });
    await refused('NOT_FOUND', { product_id: 'not-an-id', components: [] });
  });

  it('refuses with CONFLICT a product with inventory lines', async () => {
    await addStock(t, world, 'SKU-3', 4);
    await createProduct('STOCKED');
    const before = await definitions();
    // SKU-3 has lines now.
    const error = await refused('CONFLICT', { sku: 'SKU-3', components: [{ sku: 'STOCKED', quantity: 1 }] });
    expect(error.message).toContain('inventory lines');
    expect(await definitions()).toEqual(before);
  });

  it('needs catalog:write', async () => {
    const key = await import('../helpers/app').then(({ createKey }) =>
      createKey(t.rest, world.tenant.id, ['catalog:read']),
    );
    await graphqlError(t, key, 'FORBIDDEN', SET, { input: { sku: 'KIT-3', components: [] } });
  });
});

describe('a bundle has no stock of its own', () => {
  const refusedRest = async (path: string, body: unknown, field: string) => {
    const before = await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM inventory_items WHERE tenant_id = $1', [
      world.tenant.id,
    ]);
    const response = await t.rest.post(path, { token: world.tenant.key, body });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    const details = (response.body as { error: { details: { field: string; message: string }[] } }).error.details;
    expect(details).toContainEqual({ field, message: expect.stringContaining('is a bundle') });
    expect(
      await sql(t.databaseUrl, 'SELECT count(*)::int AS n FROM inventory_items WHERE tenant_id = $1', [
        world.tenant.id,
      ]),
    ).toEqual(before);
  };

  it('POST /api/inventory/items refuses a bundle SKU', async () => {
    await refusedRest(
      '/api/inventory/items',
      {
        data: [{ sku: 'KIT-1', quantity: 1, warehouseId: world.warehouseId, businessId: world.catalog.businessId }],
      },
      'body.data[0].sku',
    );
  });

  it('an announcement (and so a supply) and a transfer refuse a bundle SKU', async () => {
    const before = await definitions();
    const announcement = await graphqlError(
      t,
      world.tenant.key,
      'VALIDATION_ERROR',
      `mutation($input: CreateAnnouncementInput!) { createAnnouncement(input: $input) { announcement { id } } }`,
      {
        input: {
          business_id: world.catalog.businessId,
          warehouse_id: world.warehouseId,
          items: [{ sku: 'KIT-1', quantity: 1 }],
        },
      },
    );
    expect(announcement.message).toContain('is a bundle');
    const transfer = await graphqlError(
      t,
      world.tenant.key,
      'VALIDATION_ERROR',
      `mutation($input: CreateTransferInput!) { createTransfer(input: $input) { transfer { id } } }`,
      {
        input: {
          from_warehouse_id: world.catalog.warehouseIds[0],
          to_warehouse_id: world.catalog.warehouseIds[1],
          items: [{ sku: 'KIT-1', quantity: 1 }],
        },
      },
    );
    expect(transfer.message).toContain('is a bundle');
    expect(await definitions()).toEqual(before);
  });

  it('a product with a bundle in it cannot be deleted; a bundle can', async () => {
    const component = world.catalog.productIds.get('SKU-2')!;
    await set({ sku: 'KIT-3', components: [{ sku: 'SKU-2', quantity: 1 }] });
    await graphqlError(
      t,
      world.tenant.key,
      'CONFLICT',
      `mutation($input: DeleteProductInput!) { deleteProduct(input: $input) { id } }`,
      { input: { id: component } },
    );
    const kit = (await set({ sku: 'KIT-3', components: [{ sku: 'SKU-2', quantity: 1 }] })).setBundleComponents.product;
    await graphqlData(
      t,
      world.tenant.key,
      `mutation($input: DeleteProductInput!) { deleteProduct(input: $input) { id } }`,
      {
        input: { id: kit.id },
      },
    );
    expect(
      await sql(t.databaseUrl, 'SELECT 1 FROM bundle_components WHERE tenant_id = $1 AND bundle_id = $2', [
        world.tenant.id,
        kit.id,
      ]),
    ).toEqual([]);
  });
});
