import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoadRequest } from '../../lib/load';
import type { Measurement } from '../../lib/report';
import { startFullStack, startNodeServer } from '../../lib/stack';
import { probe, type Suite } from '../../lib/suite';

const SKU = 'BENCH-0000';
/** A bundle of three components, one unit of each. */
const BUNDLE = 'BENCH-KIT';
const COMPONENTS = ['BENCH-PART-1', 'BENCH-PART-2', 'BENCH-PART-3'];
/** Enough units that no run sells out. */
const SEEDED_UNITS = 60_000_000;

/**
 * Reservations on one hot SKU: `createReservation` of 1 unit through the full stack at 50 and at
 * 200 concurrent clients, against the floor of the same hot-row work, a bare node:http handler
 * running a raw conditional `UPDATE ... SET available = available - 1 WHERE available >= 1` on one
 * row per request.
 */
export const reservationsSuite: Suite = {
  name: 'Reservations',
  notes: [
    `"over a channel's 3 warehouses" reserves through a sales channel without a warehouse (${SEEDED_UNITS / 3} units at each of its three): the channel's warehouses and strategy come from the process's copy (kept coherent through PostgreSQL notifications), so a PRIORITY reservation goes straight to the batched path of the channel's first warehouse, which checks availability under its lock; one that finds it short is planned again under the locks of all three.`,
    `"reserve 1 unit" creates a reservation of one unit of one SKU (${SEEDED_UNITS} available at one warehouse): validation, the SKU's stock lock, the move from AVAILABLE to RESERVED, the reservation rows and the ledger row, each reservation all or none. Reservations of the SKU that arrive while earlier ones hold its lock go to the database together, in one statement. Every request contends for the same SKU.`,
    `"reserve 1 bundle" reserves one unit of a bundle of 3 components (${SEEDED_UNITS} of each at one warehouse): it joins the batched path like a single SKU: the statement reads the bundle's definition under its shared lock, takes the three components' locks in their global order and moves each, for every reservation of the batch, in one statement.`,
    `The raw row is one autocommit conditional UPDATE of one row per request over bare node:http: what the hot-row update alone costs. The 200-client row shows whether throughput holds when four times as many clients queue for the same SKU.`,
  ],
  async run({ fixture, teardown, measure, log }) {
    const { services, principal, db } = fixture;
    const business = await services.catalog.createBusiness(principal, { name: 'Reservation bench business' });
    const warehouse = await services.catalog.createWarehouse(principal, {
      business_id: business.id,
      name: 'Reservation bench warehouse',
    });
    const channel = await services.catalog.createSalesChannel(principal, { name: 'Reservation bench channel' });
    await services.stock.addItems(principal, [
      { sku: SKU, warehouseId: warehouse.id, businessId: business.id, quantity: SEEDED_UNITS },
    ]);
    await db.$executeRawUnsafe(
      'CREATE TABLE IF NOT EXISTS bench_hot_row (id int PRIMARY KEY, available bigint NOT NULL)',
    );
    await db.$executeRawUnsafe(
      `INSERT INTO bench_hot_row VALUES (1, ${SEEDED_UNITS}) ON CONFLICT (id) DO UPDATE SET available = EXCLUDED.available`,
    );
    teardown.add('drop bench_hot_row', async () => {
      await db.$executeRawUnsafe('DROP TABLE IF EXISTS bench_hot_row');
    });
    for (const sku of [...COMPONENTS, BUNDLE]) await services.catalog.createProduct(principal, { sku, name: sku });
    await services.stock.addItems(
      principal,
      COMPONENTS.map((sku) => ({ sku, warehouseId: warehouse.id, businessId: business.id, quantity: SEEDED_UNITS })),
    );
    await services.bundles.setComponents(principal, {
      sku: BUNDLE,
      components: COMPONENTS.map((sku) => ({ sku, quantity: 1 })),
    });
    log(`seeded ${SEEDED_UNITS} units of ${SKU}`);
    // The same SKU spread over three warehouses that a second channel sells from, for reservations
    // allocated across them.
    const spread = await Promise.all(
      [1, 2, 3].map((n) =>
        services.catalog.createWarehouse(principal, { business_id: business.id, name: `Spread warehouse ${n}` }),
      ),
    );
    const spreadChannel = await services.catalog.createSalesChannel(principal, { name: 'Reservation bench spread' });
    await services.catalog.setSalesChannelWarehouses(principal, {
      channel_id: spreadChannel.id,
      warehouse_ids: spread.map((w) => w.id),
    });
    await services.stock.addItems(
      principal,
      spread.map((w) => ({ sku: SKU, warehouseId: w.id, businessId: business.id, quantity: SEEDED_UNITS / 3 })),
    );

    const raw = await startNodeServer(
      (req: IncomingMessage, res: ServerResponse) => {
        req.resume();
        req.on('end', async () => {
          const updated =
            await db.$executeRaw`UPDATE bench_hot_row SET available = available - 1 WHERE id = 1 AND available >= 1`;
          const body = JSON.stringify({ reserved: updated === 1 });
          res.writeHead(updated === 1 ? 200 : 409, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          });
          res.end(body);
        });
      },
      'raw hot-row server',
      teardown,
    );
    const full = await startFullStack(fixture, teardown);
    const reserve = (connections: number, across = false, sku = SKU): LoadRequest => ({
      url: `${full.origin}/graphql`,
      method: 'POST',
      connections,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${fixture.apiKey}` },
      body: JSON.stringify({
        query: 'mutation($input: CreateReservationInput!) { createReservation(input: $input) { reservation { id } } }',
        variables: {
          input: {
            business_id: business.id,
            ...(across ? { channel_id: spreadChannel.id } : { warehouse_id: warehouse.id, channel_id: channel.id }),
            customer: { name: 'Bench' },
            items: [{ sku, quantity: 1 }],
            expires_at: Date.now() + 29 * 24 * 3_600_000,
          },
        },
      }),
    });
    const cases: (Omit<Measurement, 'result'> & { request: LoadRequest })[] = [
      {
        id: 'reserve.raw',
        label: 'hot row: raw conditional UPDATE, bare node:http (50 clients)',
        request: { url: `${raw.origin}/`, method: 'POST', connections: 50 },
      },
      {
        id: 'reserve.50',
        label: 'reserve 1 unit of a hot SKU: full stack, 50 clients',
        request: reserve(50),
        baselines: ['reserve.raw'],
      },
      {
        id: 'reserve.200',
        label: 'reserve 1 unit of a hot SKU: full stack, 200 clients',
        request: reserve(200),
        baselines: ['reserve.50'],
      },
      {
        id: 'reserve.spread',
        label: "reserve 1 unit of a hot SKU over a channel's 3 warehouses (PRIORITY), 50 clients",
        request: reserve(50, true),
        baselines: ['reserve.50'],
      },
      {
        id: 'reserve.bundle',
        label: 'reserve 1 bundle of 3 components at one warehouse: full stack, 50 clients',
        request: reserve(50, false, BUNDLE),
        baselines: ['reserve.50'],
      },
    ];
    for (const { id, request } of cases) {
      const answer = await probe(request);
      if (answer.status !== 200 || (answer.body as { errors?: unknown } | null)?.errors !== undefined) {
        throw new Error(`${id}: answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 500)}`);
      }
    }
    const results = await measure(cases.map((c) => c.request));
    return cases.map(({ id, label, baselines }, index) => ({ id, label, baselines, result: results[index]! }));
  },
};
