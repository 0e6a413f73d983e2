import type { Module } from '../context';
import { shippingOperations } from './shipping.routes';
import { shippingResolvers } from './shipping.resolvers';
import { ShippingService } from './shipping.service';

declare module '../context' {
  interface Services {
    shipping: ShippingService;
  }
}

/** Shipping methods per sales channel, their rates, pickup at its warehouses, and the options of a checkout. */
export const shippingModule: Module = {
  name: 'shipping',
  services: ({ db, cursors }) => ({ shipping: new ShippingService(db, cursors) }),
  rest: shippingOperations,
  graphql: {
    schema: 'shipping.graphql',
    resolvers: [shippingResolvers],
    mappers: { ShippingMethod: './shipping.types#ShippingMethodShape' },
  },
};

/*
 * The face the checkout composes (`services.shipping.optionsFor`, see ShippingService) and the
 * records it answers; the rate arithmetic.
 */
export type { ShippingService } from './shipping.service';
export type { FulfillmentOptionQuote, FulfillmentQuery, ShippingMethodRecord } from './shipping.types';
export { parcelWeight, shippingCharge } from './rates';
