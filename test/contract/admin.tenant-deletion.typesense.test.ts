/**
 * Deleting a tenant when Typesense holds the search documents (the stand-in of
 * test/helpers/typesense-stand-in.ts): the aliases and collections of the tenant's indexes are
 * dropped from Typesense as a deleted index's are, through the delivery queue in PostgreSQL, even
 * when Typesense fails at the moment of the deletion; another tenant's stay.
 */
import { afterAll, expect, it } from 'vitest';
import { createTenant, startTestApp, TEST_MASTER_KEY, type Tenant } from '../helpers/app';
import { sql } from '../helpers/db';
import { STAND_IN_API_KEY, TypesenseStandIn } from '../helpers/typesense-stand-in';

const standIn = await TypesenseStandIn.start('30.0');
afterAll(() => standIn.close());
const { rest, databaseUrl } = await startTestApp({
  env: {
    TYPESENSE_URL: standIn.url,
    TYPESENSE_API_KEY: STAND_IN_API_KEY,
    TYPESENSE_TIMEOUT_SECONDS: '0.3',
    SEARCH_DELIVERY_BACKOFF_MS: '20',
    SEARCH_DELIVERY_MAX_BACKOFF_MS: '100',
  },
});

const documents = [
  { id: 'p1', name: 'Desk lamp', price: 25 },
  { id: 'p2', name: 'Office chair', price: 150 },
];

/** A tenant with an index of two documents, delivered to Typesense; the index's Typesense alias. */
async function tenantWithIndex(name: string): Promise<{ tenant: Tenant; alias: string }> {
  const tenant = await createTenant(rest, name);
  const created = await rest.post('/api/instant/indexes', {
    token: tenant.key,
    body: {
      data: {
        name: 'Products',
        alias: 'products',
        fields: [
          { from: 'name', type: 'STRING' },
          { from: 'price', type: 'NUMBER' },
        ],
      },
    },
  });
  expect(created.status, created.rawBody).toBe(201);
  const upserted = await rest.put('/api/instant/indexes/products/documents', {
    token: tenant.key,
    body: { data: documents },
  });
  expect(upserted.status, upserted.rawBody).toBe(204);
  const alias = `idx_${(created.body.data.id as string).replaceAll('-', '')}`;
  await expect.poll(() => standIn.collections.get(standIn.aliases.get(alias) ?? '')?.documents.size).toBe(2);
  return { tenant, alias };
}

const collectionsOf = (alias: string) => [...standIn.collections.keys()].filter((name) => name.startsWith(alias));

it("drops the deleted tenant's aliases and collections from Typesense, retrying while it fails", async () => {
  const doomed = await tenantWithIndex('Doomed');
  const survivor = await tenantWithIndex('Survivor');
  expect(collectionsOf(doomed.alias)).toHaveLength(1);

  standIn.failNext(3);
  const deleted = await rest.delete(`/api/admin/tenants/${doomed.tenant.id}`, { token: TEST_MASTER_KEY });
  expect(deleted.status, deleted.rawBody).toBe(204);

  await expect.poll(() => standIn.aliases.has(doomed.alias), { timeout: 5_000 }).toBe(false);
  await expect.poll(() => collectionsOf(doomed.alias), { timeout: 5_000 }).toEqual([]);
  await expect
    .poll(async () => sql(databaseUrl, 'SELECT index_id FROM search_deliveries'), { timeout: 5_000 })
    .toEqual([]);
  expect(standIn.collections.get(standIn.aliases.get(survivor.alias)!)?.documents.size).toBe(2);
});
