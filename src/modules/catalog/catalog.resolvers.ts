import type { Resolvers } from '../../__generated__/graphql';
import {
  BusinessIdArgument,
  CreateNamedInput,
  CreatePositionInput,
  CreateProductInput,
  CreateSalesChannelInput,
  CreateWarehouseInput,
  UpdateWarehouseInput,
  SetBundleComponentsInput,
  SetSalesChannelWarehousesInput,
  UpdateNamedInput,
  UpdatePositionInput,
  UpdateProductInput,
  UpdateSalesChannelInput,
} from './catalog.schemas';
import { parseInput, withInput } from '../../kernel/validation';
import type { Warehouse as WarehouseRow } from '../../__generated__/prisma/client';
import { connectionArguments, toConnection } from '../../kernel/graphql/connection';
import { businessLoader, channelWarehousesLoader, warehouseLoader } from './catalog.loaders';

const timestamps = {
  created_at: (row: { createdAt: Date }) => row.createdAt.getTime(),
  updated_at: (row: { updatedAt: Date }) => row.updatedAt.getTime(),
};

export const catalogResolvers: Resolvers = {
  Query: {
    products: async (_parent, args, { principal, services }) =>
      toConnection(await services.catalog.listProducts(principal, connectionArguments(args))),
    product: (_parent, { id }, { principal, services }) => services.catalog.getProduct(principal, id),
    businesses: async (_parent, args, { principal, services }) =>
      toConnection(await services.catalog.listBusinesses(principal, connectionArguments(args))),
    business: (_parent, { id }, { principal, services }) => services.catalog.getBusiness(principal, id),
    warehouses: async (_parent, args, { principal, services }) =>
      toConnection(
        await services.catalog.listWarehouses(
          principal,
          parseInput(BusinessIdArgument, args.business_id, 'business_id'),
          connectionArguments(args),
        ),
      ),
    warehouse: (_parent, { id }, { principal, services }) => services.catalog.getWarehouse(principal, id),
    positions: async (_parent, args, { principal, services }) =>
      toConnection(await services.catalog.listPositions(principal, args.warehouse_id, connectionArguments(args))),
    position: (_parent, { id }, { principal, services }) => services.catalog.getPosition(principal, id),
    salesChannels: async (_parent, args, { principal, services }) =>
      toConnection(await services.catalog.listSalesChannels(principal, connectionArguments(args))),
    salesChannel: (_parent, { id }, { principal, services }) => services.catalog.getSalesChannel(principal, id),
  },
  Mutation: {
    createProduct: async (_parent, { input }, { principal, services }) => ({
      product: await services.catalog.createProduct(principal, parseInput(CreateProductInput, input)),
    }),
    updateProduct: async (_parent, { input }, { principal, services }) => ({
      product: await services.catalog.updateProduct(principal, parseInput(UpdateProductInput, input)),
    }),
    deleteProduct: async (_parent, { input }, { principal, services }) => ({
      id: await services.catalog.deleteProduct(principal, input.id),
    }),
    createBusiness: async (_parent, { input }, { principal, services }) => ({
      business: await services.catalog.createBusiness(principal, parseInput(CreateNamedInput, input)),
    }),
    updateBusiness: async (_parent, { input }, { principal, services }) => ({
      business: await services.catalog.updateBusiness(principal, parseInput(UpdateNamedInput, input)),
    }),
    deleteBusiness: async (_parent, { input }, { principal, services }) => ({
      id: await services.catalog.deleteBusiness(principal, input.id),
    }),
    createWarehouse: async (_parent, { input }, { principal, services }) => ({
      warehouse: await services.catalog.createWarehouse(principal, parseInput(CreateWarehouseInput, input)),
    }),
    updateWarehouse: async (_parent, { input }, { principal, services }) => ({
      warehouse: await services.catalog.updateWarehouse(principal, parseInput(UpdateWarehouseInput, input)),
    }),
    deleteWarehouse: async (_parent, { input }, { principal, services }) => ({
      id: await services.catalog.deleteWarehouse(principal, input.id),
    }),
    createPosition: async (_parent, { input }, { principal, services }) => ({
      position: await services.catalog.createPosition(principal, parseInput(CreatePositionInput, input)),
    }),
    updatePosition: async (_parent, { input }, { principal, services }) => ({
      position: await services.catalog.updatePosition(principal, parseInput(UpdatePositionInput, input)),
    }),
    deletePosition: async (_parent, { input }, { principal, services }) => ({
      id: await services.catalog.deletePosition(principal, input.id),
    }),
    createSalesChannel: async (_parent, { input }, { principal, services }) => ({
      sales_channel: await services.catalog.createSalesChannel(principal, parseInput(CreateSalesChannelInput, input)),
    }),
    updateSalesChannel: async (_parent, { input }, { principal, services }) => ({
      sales_channel: await services.catalog.updateSalesChannel(principal, parseInput(UpdateSalesChannelInput, input)),
    }),
    setSalesChannelWarehouses: (_parent, { input }, { principal, services }) =>
      withInput(SetSalesChannelWarehousesInput, input, async (valid) => ({
        sales_channel: await services.catalog.setSalesChannelWarehouses(principal, valid),
      })),
    deleteSalesChannel: async (_parent, { input }, { principal, services }) => ({
      id: await services.catalog.deleteSalesChannel(principal, input.id),
    }),
    setBundleComponents: async (_parent, { input }, { principal, services }) => ({
      product: await services.bundles.setComponents(principal, parseInput(SetBundleComponentsInput, input)),
    }),
  },
  Product: {
    gtin: (product) => product.gtin ?? [],
    is_bundle: (product) => product.isBundle,
    tax_class: (product) => product.taxClass.toUpperCase() as 'STANDARD' | 'REDUCED' | 'ZERO',
    weight_grams: (product) => product.weightGrams,
    components: (product, _args, { services }) =>
      product.isBundle ? services.bundles.componentsOfProduct(product.tenantId, product.id) : [],
    ...timestamps,
  },
  Business: timestamps,
  Warehouse: {
    business: async (warehouse, _args, context) => (await businessLoader(context).load(warehouse.businessId))!,
    country_code: (warehouse) => warehouse.countryCode,
    ...timestamps,
  },
  Position: {
    warehouse: async (position, _args, context) => (await warehouseLoader(context).load(position.warehouseId))!,
    ...timestamps,
  },
  SalesChannel: {
    allocation_strategy: (channel) => channel.allocationStrategy,
    tax_inclusive: (channel) => channel.taxInclusive,
    warehouses: async (channel, _args, context) => {
      const ids = await channelWarehousesLoader(context).load(channel.id);
      return (await warehouseLoader(context).loadMany(ids)).filter(
        (warehouse): warehouse is WarehouseRow => warehouse !== null && !(warehouse instanceof Error),
      );
    },
    ...timestamps,
  },
};
