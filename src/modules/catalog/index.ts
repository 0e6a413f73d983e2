import type { Module } from '../context';
import { BundleService } from './bundles.service';
import { catalogResolvers } from './catalog.resolvers';
import { CatalogService } from './catalog.service';
import { ChannelWarehouseCache, SALES_CHANNEL_CHANGED } from './channel-warehouses';

declare module '../context' {
  interface Services {
    catalog: CatalogService;
    bundles: BundleService;
    /** What each sales channel sells from, kept by this process (see `ChannelWarehouseCache`). */
    channelWarehouses: ChannelWarehouseCache;
  }
}

const prismaRow = (model: string) => `../../__generated__/prisma/client#${model} as ${model}Row`;

/** Products, businesses, warehouses, positions and sales channels. */
export const catalogModule: Module = {
  name: 'catalog',
  services: ({ db, cursors, notifications }) => {
    const channelWarehouses = new ChannelWarehouseCache(db);
    // Changes made by any process reach this one's copy of the channels.
    notifications.on(SALES_CHANNEL_CHANGED, (tenantChannel) => channelWarehouses.forget(tenantChannel));
    notifications.onReconnect(() => channelWarehouses.forgetAll());
    return {
      catalog: new CatalogService(db, cursors, channelWarehouses),
      bundles: new BundleService(db),
      channelWarehouses,
    };
  },
  graphql: {
    schema: 'catalog.graphql',
    resolvers: [catalogResolvers],
    mappers: Object.fromEntries(
      ['Product', 'Business', 'Warehouse', 'Position', 'SalesChannel'].map((model) => [model, prismaRow(model)]),
    ),
  },
};

/** The catalog's vocabulary that other modules' inputs use: allocation strategies and where a place is. */
export { ALLOCATION_STRATEGIES, CountryCode, Latitude, Longitude, TAX_CLASSES } from './catalog.schemas';
export type { AllocationStrategy, TaxClass } from './catalog.schemas';
/** The `product`, `warehouse`, ... fields of other modules' GraphQL types, batched per request. */
export { businessLoader, placeResolvers, positionLoader, productLoader, warehouseLoader } from './catalog.loaders';
export { positionInWarehouse } from './catalog.locations';
export type { ChannelWarehouseCache } from './channel-warehouses';
/** How other modules check their input against the catalog (see `catalog-reads.ts`). */
export {
  bundleComponents,
  businessesByIds,
  findBusiness,
  findSalesChannel,
  findWarehouse,
  firstLocations,
  positionsByCodes,
  positionsByIds,
  productsBySkus,
  warehousesByIds,
} from './catalog-reads';
export { bundleHasNoStock } from './bundles.service';
