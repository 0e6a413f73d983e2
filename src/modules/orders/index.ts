import type { Module } from '../context';
import { orderResolvers } from './orders.resolvers';
import { OrderService } from './orders.service';

declare module '../context' {
  interface Services {
    orders: OrderService;
  }
}

/** Orders: units committed, shipped, deallocated, restocked and corrected. */
export const ordersModule: Module = {
  name: 'orders',
  services: ({ db, cursors }) => ({ orders: new OrderService(db, cursors) }),
  graphql: {
    schema: 'orders.graphql',
    resolvers: [orderResolvers],
    mappers: {
      Order: './orders.resolvers#OrderParent',
      OrderItem: './orders.repository#OrderItemRecord',
      OrderItemAllocation: './orders.repository#OrderItemAllocationRecord',
    },
  },
};

/** What the supply module does to backordered order items when stock arrives (see `backorders.ts`). */
export { backorderedItems, markBackorderAllocated } from './backorders';
/** The orders' inputs, for every interface that names an order (MCP's tools). */
export { OrderIdInput } from './orders.schemas';
/** Orders with money: placed by a checkout from its hold, in the checkout's transaction. */
export {
  lockOrderForPayment,
  placeOrder,
  setPaymentStatus,
  type PlaceOrderInput,
  type PlaceOrderLine,
} from './order-placing';
export { loadOrder } from './order-changes';
export type { OrderMoneySteps } from './order-money-steps';
export type * from './order-money';
export type { OrderRecord } from './orders.repository';
