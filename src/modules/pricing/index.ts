import type { Module } from '../context';
import { pricingOperations } from './pricing.routes';
import { pricingResolvers } from './pricing.resolvers';
import { PricingService } from './pricing.service';

declare module '../context' {
  interface Services {
    pricing: PricingService;
  }
}

/** Prices per product, currency and sales channel; tax zones and their rates; the tax of a list of amounts. */
export const pricingModule: Module = {
  name: 'pricing',
  services: ({ db, cursors }) => ({ pricing: new PricingService(db, cursors) }),
  rest: pricingOperations,
  graphql: {
    schema: 'pricing.graphql',
    resolvers: [pricingResolvers],
    mappers: {
      Price: './pricing.types#PriceShape',
      TaxZone: './pricing.types#TaxZoneRecord',
      TaxRate: './pricing.types#TaxRateRecord',
    },
  },
};

/*
 * The face the checkout composes (`services.pricing.priceLines`, `services.pricing.taxFor`, see
 * PricingService), the records they answer, and the money arithmetic every selling module shares:
 * half-even division, exclusive and inclusive tax, percentages and the largest-remainder split.
 */
export type { PricingService } from './pricing.service';
export type { PriceLines, TaxClass, TaxInput, TaxResult } from './pricing.types';
export { TAX_CLASSES } from './pricing.types';
export {
  allocateProportionally,
  BASIS_POINTS,
  divideHalfEven,
  exclusiveTax,
  inclusiveTax,
  percentOf,
  taxOf,
} from './rounding';
export { computeTax } from './tax';
