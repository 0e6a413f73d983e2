/**
 * The stock operations of `/mcp`: availability per SKU (and sales channel), reservations made,
 * extended and released, and the status of an order. Each calls the same services as the GraphQL
 * resolvers, for the token's tenant and under its scopes; the services' refusals (OUT_OF_STOCK,
 * NOT_FOUND, INVALID_STATE, …) come back as results with `isError` and the error's code.
 *
 * Each tool's arguments are the module's own input schema (the one GraphQL validates with), field
 * for field, so an agent is refused for exactly what a GraphQL client is; only what a tool says
 * differently is its own: ids named `reservation_id`/`order_id`, an expiry in seconds from now (an
 * agent's clock is not the server's), and an idempotency key that is required.
 */
import { z } from 'zod';
import { RequiredIdempotencyKey } from '../../kernel/graphql/idempotency';
import { requestFingerprint } from '../../kernel/idempotency';
import { defineMcpTool, fail, ok, type McpTool } from '../../kernel/mcp';
import { parseValue } from '../../kernel/validation';
import { productsBySkus } from '../catalog';
import { OrderIdInput } from '../orders';
import {
  CreateReservationInput,
  ExtendReservationInput,
  MAX_RESERVATION_MS,
  RemoveReservationInput,
  type ReservationRecord,
} from '../reservations';
import { InventoryArguments, SkuList } from '../stock';
import type { Services } from '../context';
import { defaultTarget, listLocations } from './location-tools';
import type { McpContext } from './mcp-auth';

/** Most inventory groups read for one availability check (positions × warehouses of its SKUs). */
const MAX_GROUPS = 2_000;
const DEFAULT_RESERVATION_SECONDS = 15 * 60;
const MAX_RESERVATION_SECONDS = MAX_RESERVATION_MS / 1000;

const IdempotencyKey = RequiredIdempotencyKey.describe(
  'Unique per reservation: a repeated call with the same key and arguments returns the same reservation.',
);
const Seconds = z
  .int()
  .min(60)
  .max(MAX_RESERVATION_SECONDS)
  .describe(`Seconds from now, from 60 to ${MAX_RESERVATION_SECONDS} (30 days).`);
/** When a reservation expires, from seconds from now: validated again as GraphQL's `expires_at` is. */
const expiresAt = (seconds: number) => Date.now() + seconds * 1000;
const Timestamp = z.iso.datetime().describe('ISO 8601 time (UTC).');

const ReservationOutput = z.object({
  id: z.string(),
  status: z.enum(['ACTIVE', 'REMOVED', 'EXPIRED', 'CONVERTED']),
  business_id: z.string(),
  warehouse_id: z.string().describe('Where its first units come from.'),
  channel_id: z.string(),
  items: z.array(z.object({ sku: z.string(), quantity: z.int() })),
  expires_at: Timestamp,
  released_at: Timestamp.nullable(),
  order_id: z.string().nullable().describe('The order the reservation became, once CONVERTED.'),
  created_at: Timestamp,
});

const reservationOutput = (record: ReservationRecord): z.output<typeof ReservationOutput> => ({
  id: record.id,
  status: record.status,
  business_id: record.businessId,
  warehouse_id: record.warehouseId,
  channel_id: record.channelId,
  items: record.items.map((item) => ({ sku: item.sku, quantity: item.quantity })),
  expires_at: record.expiresAt.toISOString(),
  released_at: record.releasedAt?.toISOString() ?? null,
  order_id: record.orderId,
  created_at: record.createdAt.toISOString(),
});

type InventoryQuery = Parameters<Services['stock']['inventory']>[1];
type InventoryPage = Awaited<ReturnType<Services['stock']['inventory']>>;

/** An order item as the orders service reads it. */
interface OrderItem {
  sku: string;
  quantity: number;
  state: string;
  shippedAt: number | null;
}

const checkAvailability = defineMcpTool({
  name: 'check_availability',
  title: 'Check availability',
  description:
    'Units of each SKU that can be sold now (available beyond safety stock), in total and per warehouse; with ' +
    "channel_id, over the sales channel's warehouses. A bundle counts the bundles its components make.",
  scopes: ['inventory:read'],
  input: z.object({
    skus: SkuList.describe('The SKUs, at most 100.'),
    channel_id: InventoryArguments.shape.warehouse_id.describe("A sales channel: counts only its warehouses' stock."),
    warehouse_id: InventoryArguments.shape.warehouse_id.describe('One warehouse.'),
  }),
  output: z.object({
    channel_id: z.string().nullable(),
    items: z.array(
      z.object({
        sku: z.string(),
        is_bundle: z.boolean(),
        sellable: z.int().describe('Units that can be reserved or ordered now.'),
        available: z.int().describe('Units on hand and free, before safety stock.'),
        reserved: z.int(),
        warehouses: z
          .array(z.object({ warehouse_id: z.string(), sellable: z.int() }))
          .describe('Per warehouse (empty with channel_id: the channel counts as a whole).'),
      }),
    ),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true },
  async call(args, { principal, services }) {
    const skus = [...new Set(args.skus)];
    const products = await productsBySkus(services.db, principal.tenantId, skus);
    const known = new Map(products.map((product) => [product.sku, product]));
    const unknown = skus.filter((sku) => !known.has(sku));
    if (unknown.length > 0) {
      return fail('NOT_FOUND', `no product with SKU ${unknown.map((sku) => `"${sku}"`).join(', ')}`, {
        skus: unknown,
      });
    }
    const query: InventoryQuery = {
      filters: {
        sku: skus,
        channel_id: args.channel_id ?? null,
        warehouse_id: args.warehouse_id ? [args.warehouse_id] : null,
      },
    };
    const totals = new Map(
      skus.map((sku) => [sku, { sellable: 0, available: 0, reserved: 0, at: new Map<string, number>() }]),
    );
    let after: string | null = null;
    for (let read = 0; read < MAX_GROUPS;) {
      const page: InventoryPage = await services.stock.inventory(principal, query, { size: 100, after });
      for (const group of page.items) {
        const total = totals.get(group.sku);
        if (!total) continue;
        total.sellable += group.quantitySellable;
        total.available += group.quantityAvailable;
        total.reserved += group.quantityReserved;
        if (group.warehouseId) {
          total.at.set(group.warehouseId, (total.at.get(group.warehouseId) ?? 0) + group.quantitySellable);
        }
      }
      read += page.items.length;
      if (!page.hasNextPage || !page.endCursor) break;
      after = page.endCursor;
    }
    return ok({
      channel_id: args.channel_id ?? null,
      items: skus.map((sku) => {
        const total = totals.get(sku)!;
        return {
          sku,
          is_bundle: known.get(sku)!.isBundle,
          sellable: total.sellable,
          available: total.available,
          reserved: total.reserved,
          warehouses: [...total.at].map(([warehouseId, sellable]) => ({ warehouse_id: warehouseId, sellable })),
        };
      }),
    });
  },
});

const { shape: reservation } = CreateReservationInput;
const reserveItemsInput = z.object({
  business_id: reservation.business_id
    .optional()
    .describe("The business whose stock is held; omitted: the tenant's only business (see list_locations)."),
  channel_id: reservation.channel_id
    .optional()
    .describe("The sales channel the reservation is for; omitted: the tenant's only sales channel."),
  warehouse_id: reservation.warehouse_id.describe("Omitted: the units come from the channel's warehouses."),
  items: reservation.items,
  customer: reservation.customer,
  expires_in_seconds: Seconds.optional().describe(
    `How long the units stay held; default ${DEFAULT_RESERVATION_SECONDS} (15 minutes), at most 30 days.`,
  ),
  notes: reservation.notes,
  idempotency_key: IdempotencyKey,
});

const reserveItems = defineMcpTool({
  name: 'reserve_items',
  title: 'Reserve items',
  description:
    'Holds units of SKUs for a customer until the reservation expires, all or none (OUT_OF_STOCK when a SKU is ' +
    'short). business_id and channel_id may be left out when the tenant has only one of each. Requires an ' +
    'idempotency_key: a repeated call with the same key and arguments returns the same reservation; the same ' +
    'key with other arguments is refused.',
  scopes: ['inventory:write'],
  input: reserveItemsInput,
  output: z.object({ reservation: ReservationOutput }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  async call(args, { principal, services }) {
    const { idempotency_key: key, expires_in_seconds: seconds, ...rest } = args;
    const target = await defaultTarget(services, principal.tenantId, rest);
    const input = parseValue(CreateReservationInput, {
      ...rest,
      ...target,
      expires_at: expiresAt(seconds ?? DEFAULT_RESERVATION_SECONDS),
    });
    const record = await services.reservations.createReservation(
      principal,
      input,
      // The fingerprint is of the arguments as sent (a relative expiry), so a replay matches.
      { key, fingerprint: requestFingerprint('mcp reserve_items', { ...rest, expires_in_seconds: seconds }) },
    );
    return ok({ reservation: reservationOutput(record) });
  },
});

const extendReservation = defineMcpTool({
  name: 'extend_reservation',
  title: 'Extend a reservation',
  description:
    'Moves the expiry of an ACTIVE reservation to expires_in_seconds from now (later than its current expiry).',
  scopes: ['inventory:write'],
  input: z.object({ reservation_id: ExtendReservationInput.shape.id, expires_in_seconds: Seconds }),
  output: z.object({ reservation: ReservationOutput }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  async call(args, { principal, services }) {
    const { id, expires_at } = parseValue(ExtendReservationInput, {
      id: args.reservation_id,
      expires_at: expiresAt(args.expires_in_seconds),
    });
    const record = await services.reservations.extendReservation(principal, id, expires_at);
    return ok({ reservation: reservationOutput(record) });
  },
});

const releaseReservation = defineMcpTool({
  name: 'release_reservation',
  title: 'Release a reservation',
  description: 'Ends an ACTIVE reservation: its units become available again.',
  scopes: ['inventory:write'],
  input: z.object({ reservation_id: RemoveReservationInput.shape.id }),
  output: z.object({ reservation: ReservationOutput }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  async call(args, { principal, services }) {
    const record = await services.reservations.removeReservation(principal, args.reservation_id);
    return ok({ reservation: reservationOutput(record) });
  },
});

const getOrderStatus = defineMcpTool({
  name: 'get_order_status',
  title: 'Get an order status',
  description: 'The status of an order and of each of its items (allocated, shipped, cancelled, …).',
  scopes: ['orders:read'],
  input: z.object({ order_id: OrderIdInput.shape.id }),
  output: z.object({
    order: z.object({
      id: z.string(),
      status: z.enum(['OPEN', 'PARTIALLY_SHIPPED', 'SHIPPED', 'CANCELLED']),
      business_id: z.string(),
      warehouse_id: z.string(),
      channel_id: z.string(),
      items: z.array(
        z.object({ sku: z.string(), quantity: z.int(), state: z.string(), shipped_at: Timestamp.nullable() }),
      ),
      created_at: Timestamp,
      updated_at: Timestamp,
    }),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true },
  async call(args, { principal, services }) {
    const order = await services.orders.order(principal, args.order_id);
    return ok({
      order: {
        id: order.id,
        status: order.status,
        business_id: order.businessId,
        warehouse_id: order.warehouseId,
        channel_id: order.channelId,
        items: order.items.map((item: OrderItem) => ({
          sku: item.sku,
          quantity: item.quantity,
          state: item.state,
          shipped_at: item.shippedAt === null ? null : new Date(item.shippedAt).toISOString(),
        })),
        created_at: order.createdAt.toISOString(),
        updated_at: order.updatedAt.toISOString(),
      },
    });
  },
});

/** In the order `tools/list` gives them. */
export const stockTools: McpTool<McpContext>[] = [
  listLocations,
  checkAvailability,
  reserveItems,
  extendReservation,
  releaseReservation,
  getOrderStatus,
];
