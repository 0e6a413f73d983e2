import type { Resolvers } from '../../__generated__/graphql';
import { connectionArguments, toConnection } from '../../kernel/graphql/connection';
import type { GraphQLContext } from '../context';
import { byIdLoader, requestLoader } from '../../kernel/graphql/loaders';
import { idempotencyOf } from '../../kernel/graphql/idempotency';
import DataLoader from 'dataloader';
import { placeResolvers, productLoader, warehouseLoader } from '../catalog';
import type { StockReference } from '../stock';
import type { OrderItemAllocationRecord, OrderRecord } from './orders.repository';
import {
  CreateOrderInput,
  CreateShipmentInput,
  OrderIdInput,
  OrderItemsInput,
  OrderItemsToLocationInput,
  ReturnOrderItemsInput,
} from './orders.schemas';
import { withInput } from '../../kernel/validation';

/** What an Order field receives: a loaded order, or the `{type, id}` reference a stock mutation holds. */
export type OrderParent = OrderRecord | StockReference;

const orderLoader = (context: GraphQLContext) =>
  requestLoader(context, 'order', () =>
    byIdLoader((ids) => context.services.orders.ordersByIds(context.principal.tenantId, ids)),
  );

/** The order itself: a reference is loaded (once per request: the loader keeps it), a record passes. */
async function full(parent: OrderParent, context: GraphQLContext): Promise<OrderRecord> {
  if ('items' in parent) return parent;
  return (await orderLoader(context).load(parent.id))!;
}

/** The allocations of order items, per item, batched over the request. */
const itemAllocationsLoader = (context: GraphQLContext) =>
  requestLoader(
    context,
    'order-item-allocations',
    () =>
      new DataLoader<string, OrderItemAllocationRecord[]>((ids) =>
        context.services.orders.allocationsOfItems(context.principal.tenantId, ids),
      ),
  );

export const orderResolvers: Resolvers = {
  Query: {
    order: (_parent, args, { principal, services }) => services.orders.order(principal, args.id),
    orders: async (_parent, args, { principal, services }) =>
      toConnection(await services.orders.orders(principal, args.status, connectionArguments(args))),
  },
  Mutation: {
    createOrder: (_parent, { input }, { principal, services }) =>
      withInput(CreateOrderInput, input, async (valid) => ({
        order: await services.orders.createOrder(principal, valid, idempotencyOf('createOrder', valid)),
      })),
    shipOrder: (_parent, { input }, { principal, services }) =>
      withInput(OrderIdInput, input, async (valid) => ({
        order: await services.orders.shipOrder(principal, valid.id, idempotencyOf('shipOrder', valid)),
      })),
    createShipment: (_parent, { input }, { principal, services }) =>
      withInput(CreateShipmentInput, input, async (valid) => {
        const { order, shippedItemIds } = await services.orders.createShipment(
          principal,
          valid.order_id,
          valid.items,
          idempotencyOf('createShipment', valid),
        );
        return { order, shipped_items: shippedItemIds.map((id) => order.items.find((item) => item.id === id)!) };
      }),
    cancelOrder: (_parent, { input }, { principal, services }) =>
      withInput(OrderIdInput, input, async (valid) => ({
        order: await services.orders.cancelOrder(principal, valid.id, idempotencyOf('cancelOrder', valid)),
      })),
    returnOrderItems: (_parent, { input }, { principal, services }) =>
      withInput(ReturnOrderItemsInput, input, async (valid) => ({
        order: await services.orders.returnOrderItems(
          principal,
          valid.order_id,
          valid.items,
          idempotencyOf('returnOrderItems', valid),
          valid.refund_amount,
        ),
      })),
    deallocateOrderItems: (_parent, { input }, { principal, services }) =>
      withInput(OrderItemsInput, input, async (valid) => ({
        order: await services.orders.deallocateOrderItems(
          principal,
          valid.order_id,
          valid.items,
          idempotencyOf('deallocateOrderItems', valid),
        ),
      })),
    restockOrderItems: (_parent, { input }, { principal, services }) =>
      withInput(OrderItemsToLocationInput, input, async (valid) => ({
        order: await services.orders.restockOrderItems(
          principal,
          valid.order_id,
          valid.items,
          idempotencyOf('restockOrderItems', valid),
        ),
      })),
    markItemsAsMissing: (_parent, { input }, { principal, services }) =>
      withInput(OrderItemsInput, input, async (valid) => ({
        order: await services.orders.markItemsAsMissing(
          principal,
          valid.order_id,
          valid.items,
          idempotencyOf('markItemsAsMissing', valid),
        ),
      })),
    markItemsAsUnavailable: (_parent, { input }, { principal, services }) =>
      withInput(OrderItemsInput, input, async (valid) => ({
        order: await services.orders.markItemsAsUnavailable(
          principal,
          valid.order_id,
          valid.items,
          idempotencyOf('markItemsAsUnavailable', valid),
        ),
      })),
    markItemsAsAvailable: (_parent, { input }, { principal, services }) =>
      withInput(OrderItemsToLocationInput, input, async (valid) => ({
        order: await services.orders.markItemsAsAvailable(
          principal,
          valid.order_id,
          valid.items,
          idempotencyOf('markItemsAsAvailable', valid),
        ),
      })),
  },
  Order: {
    id: (parent) => parent.id,
    ...placeResolvers(full),
    status: async (parent, _args, context) => (await full(parent, context)).status,
    items: async (parent, _args, context) => (await full(parent, context)).items,
    created_at: async (parent, _args, context) => (await full(parent, context)).createdAt.getTime(),
    updated_at: async (parent, _args, context) => (await full(parent, context)).updatedAt.getTime(),
    money: async (parent, _args, context) => {
      const money = (await full(parent, context)).money;
      if (!money) return null;
      const { totals } = money;
      return {
        checkout_id: money.checkoutId,
        buyer_email: money.buyer.email,
        buyer_name: money.buyer.name,
        buyer_phone: money.buyer.phone,
        currency: money.currency,
        tax_inclusive: money.taxInclusive,
        totals: (['subtotal', 'discount', 'fulfillment', 'tax', 'total'] as const).map((type) => ({
          type,
          amount: totals[type],
        })),
        tax_lines: money.taxLines.map((line) => ({
          name: line.name,
          rate_basis_points: line.rateBasisPoints,
          amount: line.amount,
        })),
        discounts: money.discounts.map(({ code, title, amount }) => ({ code, title, amount })),
        payment_status: money.paymentStatus,
        fulfillment_title: money.fulfillment?.title ?? null,
      };
    },
  },
  StockMutation: {
    // The order's `{type, id}` reference; the Order resolvers load the rest.
    order: (entry) => entry.references.find((reference) => reference.type === 'Order') ?? null,
  },
  OrderItem: {
    product: async (item, _args, context) => (await productLoader(context).load(item.productId))!,
    shipped_at: (item) => item.shippedAt,
    unit_price: (item) => item.unitPrice,
    allocations: (item, _args, context) => itemAllocationsLoader(context).load(item.id),
  },
  OrderItemAllocation: {
    warehouse: async (allocation, _args, context) => (await warehouseLoader(context).load(allocation.warehouseId))!,
  },
};
