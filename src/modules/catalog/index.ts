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

/** Reads of the catalog that other modules check their input against. */
export {
  businessesByIds,
  findBusiness,
  findSalesChannel,
  findWarehouse,
  positionsByCodes,
  positionsByIds,
  productsBySkus,
  warehousesByIds,
} from './catalog.repository';
export { bundleHasNoStock } from './bundles.service';
export { componentsWithSkus as bundleComponents } from './bundles.repository';
