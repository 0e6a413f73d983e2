import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Fixture } from '../../lib/fixture';
import type { LoadRequest } from '../../lib/load';
import type { Measurement } from '../../lib/report';
import { startFullStack, startNodeServer } from '../../lib/stack';
import { probe, type Suite } from '../../lib/suite';
import * as catalog from '../../../src/modules/catalog/catalog.repository';
import { sqlKeysetSource } from '../../../src/kernel/keyset';
import { groupList } from '../../../src/modules/stock/repository/inventory-reads';
import type { InventoryGroup } from '../../../src/modules/stock/stock.types';

const SKU = 'BENCH-0000';
const PAGE_SIZE = 10;
const LINES_PER_POST = 1000;

const INVENTORY_QUERY = `{
  inventory(sku: "${SKU}", first: ${PAGE_SIZE}) {
    edges { cursor node { sku quantity quantity_available quantity_unavailable quantity_expected warehouse { id name } position { id code } } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

/**
 * The floor for `inventory(sku:)`: the same SQL (the repository's grouping query and the batched
 * warehouse and position reads the loaders make) and the same response, on bare node:http with no
 * authentication and no GraphQL.
 */
function createBareInventoryListener(fixture: Fixture): RequestListener {
  const { db, tenantId, services } = fixture;
  const groups = sqlKeysetSource(db, groupList(tenantId, { skus: [SKU] }));
  return (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', async () => {
      const rows = await groups.fetch({ take: PAGE_SIZE + 1, backwards: false });
      const page: InventoryGroup[] = rows.slice(0, PAGE_SIZE);
      const [warehouses, positions] = await Promise.all([
        catalog.warehousesByIds(db, tenantId, [
          ...new Set(page.flatMap((g) => (g.warehouseId ? [g.warehouseId] : []))),
        ]),
        catalog.positionsByIds(db, tenantId, [...new Set(page.flatMap((g) => (g.positionId ? [g.positionId] : [])))]),
      ]);
      const warehouseById = new Map(warehouses.map((w) => [w.id, { id: w.id, name: w.name }]));
      const positionById = new Map(positions.map((p) => [p.id, { id: p.id, code: p.code }]));
      const edges = page.map((group) => ({
        cursor: services.cursors.encode(`inventory:${tenantId}:`, groups.keyOf(group)),
        node: {
          sku: group.sku,
          quantity: group.quantity,
          quantity_available: group.quantityAvailable,
          quantity_unavailable: group.quantityUnavailable,
          quantity_expected: group.quantityExpected,
          warehouse: group.warehouseId ? warehouseById.get(group.warehouseId) : null,
          position: group.positionId ? positionById.get(group.positionId) : null,
        },
      }));
      const pageInfo = {
        hasNextPage: rows.length > PAGE_SIZE,
        hasPreviousPage: false,
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges.at(-1)?.cursor ?? null,
      };
      const body = JSON.stringify({ data: { inventory: { edges, pageInfo } } });
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    });
  };
}

/** Seeds a business, two warehouses with positions, and stock of every product at several places. */
async function seedStock(fixture: Fixture) {
  const { services, principal } = fixture;
  const business = await services.catalog.createBusiness(principal, { name: 'Bench business' });
  const warehouses = [
    await services.catalog.createWarehouse(principal, { business_id: business.id, name: 'Bench warehouse 1' }),
    await services.catalog.createWarehouse(principal, { business_id: business.id, name: 'Bench warehouse 2' }),
  ];
  const codes = ['A-01', 'A-02', 'B-01'];
  for (const warehouse of warehouses) {
    for (const code of codes) await services.catalog.createPosition(principal, { warehouse_id: warehouse.id, code });
  }
  const skus = Array.from({ length: fixture.productCount }, (_, i) => `BENCH-${String(i).padStart(4, '0')}`);
  const entry = (sku: string, warehouseIndex: number, code: string | undefined, batch: number) => ({
    sku,
    warehouseId: warehouses[warehouseIndex]!.id,
    businessId: business.id,
    quantity: 5,
    ...(code ? { position: code } : {}),
    batchNumber: `LOT-${batch}`,
  });
  // Every product at both warehouses, without and at each position, in two batches: 16 lines each.
  const seed = skus.flatMap((sku) =>
    [0, 1].flatMap((w) => [undefined, ...codes].flatMap((code) => [1, 2].map((batch) => entry(sku, w, code, batch)))),
  );
  for (let i = 0; i < seed.length; i += LINES_PER_POST)
    await services.stock.addItems(principal, seed.slice(i, i + LINES_PER_POST));
  // The POST case: 1000 distinct lines (products x places x batches), added to again by every request.
  const post = skus
    .flatMap((sku) => [0, 1].flatMap((w) => [undefined, ...codes].map((code) => entry(sku, w, code, 3))))
    .concat(skus.flatMap((sku) => [0, 1].flatMap((w) => [undefined, ...codes].map((code) => entry(sku, w, code, 4)))))
    .slice(0, LINES_PER_POST);
  return { post, lineCount: seed.length };
}

/**
 * Stock reads and writes: the GraphQL `inventory` query for one SKU against a bare node:http
 * handler running the same SQL, and POST /api/inventory/items with 1000 lines per request.
 */
export const stockSuite: Suite = {
  name: 'Stock',
  notes: [
    `"inventory(sku)" reads one SKU's groups (16 lines at 8 places) with their warehouse and position; the bare row runs the same grouping query and batched reads without authentication or GraphQL.`,
    `"POST ${LINES_PER_POST} lines" sends one request with ${LINES_PER_POST} entries, all adding to existing lines: lines/s = req/s x ${LINES_PER_POST}. Every request locks the same products and warehouses, so it is measured with one client: the throughput of one writer of those lines, with the ledger (one mutation per line) written in the same transaction.`,
  ],
  async run({ fixture, teardown, measure, log }) {
    const { post, lineCount } = await seedStock(fixture);
    log(`seeded ${lineCount} inventory lines`);
    const full = await startFullStack(fixture, teardown);
    const bare = await startNodeServer(createBareInventoryListener(fixture), 'bare inventory server', teardown);
    const auth = { authorization: `Bearer ${fixture.apiKey}` };
    const graphql = (origin: string, headers: Record<string, string> = {}): LoadRequest => ({
      url: `${origin}/graphql`,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query: INVENTORY_QUERY }),
    });
    const cases: (Omit<Measurement, 'result'> & { request: LoadRequest; status: number })[] = [
      {
        id: 'inventory.bare',
        label: `inventory(sku): bare node:http, same SQL, no auth`,
        request: graphql(bare.origin),
        status: 200,
      },
      {
        id: 'inventory.full',
        label: `inventory(sku): full stack (yoga in Fastify)`,
        request: graphql(full.origin, auth),
        baselines: ['inventory.bare'],
        status: 200,
      },
      {
        id: 'inventory.post',
        label: `POST ${LINES_PER_POST} lines: full stack (lines/s = req/s x ${LINES_PER_POST})`,
        request: {
          url: `${full.origin}/api/inventory/items`,
          method: 'POST',
          // One writer: more would only queue on the same stock locks, each holding a database
          // connection, and the queue left when the case ends would starve the cases after it.
          connections: 1,
          headers: { 'content-type': 'application/json', ...auth },
          body: JSON.stringify({ data: post }),
        },
        status: 201,
      },
    ];
    const bodies = new Map<string, string>();
    for (const { id, request, status } of cases) {
      const answer = await probe(request);
      if (answer.status !== status || (answer.body as { errors?: unknown } | null)?.errors !== undefined) {
        throw new Error(`${id}: answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 500)}`);
      }
      bodies.set(id, JSON.stringify(answer.body));
    }
    if (bodies.get('inventory.bare') !== bodies.get('inventory.full')) {
      log(
        `warning: the bare and full inventory rows answer different bodies:\n  ${bodies.get('inventory.bare')}\n  ${bodies.get('inventory.full')}`,
      );
    }
    const results = await measure(cases.map((c) => c.request));
    return cases.map(({ id, label, baselines }, index) => ({ id, label, baselines, result: results[index]! }));
  },
};
