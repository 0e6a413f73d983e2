import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import type { Resolvers } from '../../__generated__/graphql';
import { connectionArguments, toConnection } from '../../kernel/graphql/connection';
import { positionLoader, productLoader, warehouseLoader } from '../catalog';
import { idempotencyOf } from '../../kernel/graphql/idempotency';
import { parseValue, withInput } from '../../kernel/validation';
import {
  InventoryArguments,
  InventoryItemsArguments,
  SafetyStockInput,
  SetInventoryQuantitiesInput,
} from './stock.schemas';
import type { InventoryGroup, InventoryLine, StockReference } from './stock.types';

const notAString = () =>
  new GraphQLError('QueryFilter must be a string such as "sku=ABC&sort=-created_at"', {
    extensions: { code: 'VALIDATION_ERROR' },
  });

/** `stockMutations(query:)`: a query string, parsed by the service (see mutation-query.ts). */
export const QueryFilter = new GraphQLScalarType({
  name: 'QueryFilter',
  serialize: (value) => value,
  parseValue(value) {
    if (typeof value !== 'string') throw notAString();
    return value;
  },
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw notAString();
    return ast.value;
  },
});

/** Inventory id: the group's product, warehouse and position, opaque to clients. */
const inventoryId = (group: InventoryGroup) =>
  Buffer.from(`${group.productId}:${group.warehouseId ?? ''}:${group.positionId ?? ''}`).toString('base64url');

const lineStock = {
  product: async (parent: { productId: string }, _args: unknown, context: Parameters<typeof productLoader>[0]) =>
    (await productLoader(context).load(parent.productId))!,
  warehouse: async (parent: { warehouseId: string }, _args: unknown, context: Parameters<typeof warehouseLoader>[0]) =>
    (await warehouseLoader(context).load(parent.warehouseId))!,
  position: (parent: { positionId: string | null }, _args: unknown, context: Parameters<typeof positionLoader>[0]) =>
    parent.positionId ? positionLoader(context).load(parent.positionId) : null,
};

export const stockResolvers: Resolvers = {
  QueryFilter,
  Query: {
    inventory: async (_parent, args, { principal, services }) =>
      toConnection(
        await services.stock.inventory(principal, parseValue(InventoryArguments, args), connectionArguments(args)),
      ),
    inventoryItems: async (_parent, args, { principal, services }) =>
      toConnection(
        await services.stock.inventoryItems(
          principal,
          parseValue(InventoryItemsArguments, args).filters,
          connectionArguments(args),
        ),
      ),
    inventoryAtLocation: async (_parent, args, { principal, services }) =>
      toConnection(
        await services.stock.inventoryAtLocation(
          principal,
          args.warehouse_id,
          args.position,
          connectionArguments(args),
        ),
      ),
    stockMutations: async (_parent, args, { principal, services }) =>
      toConnection(await services.stock.stockMutations(principal, args.query, connectionArguments(args))),
    safetyStocks: (_parent, args, { principal, services }) => services.safetyStock.safetyStocks(principal, args),
  },
  Mutation: {
    setInventoryQuantities: (_parent, { input }, { principal, services }) =>
      withInput(SetInventoryQuantitiesInput, input, async (valid) => ({
        items: await services.stock.setQuantities(
          principal,
          valid.items,
          idempotencyOf('setInventoryQuantities', valid),
        ),
      })),
    setSafetyStock: (_parent, { input }, { principal, services }) =>
      withInput(SafetyStockInput, input, async (valid) => ({
        safety_stock: await services.safetyStock.setSafetyStock(principal, valid),
      })),
  },
  SafetyStock: {
    product: lineStock.product,
    warehouse: lineStock.warehouse,
    channel_id: (row) => row.channelId,
    updated_at: (row) => row.updatedAt.getTime(),
  },
  Inventory: {
    id: inventoryId,
    quantity_available: (group) => group.quantityAvailable,
    quantity_committed: (group) => group.quantityCommitted,
    quantity_reserved: (group) => group.quantityReserved,
    quantity_unavailable: (group) => group.quantityUnavailable,
    quantity_expected: (group) => group.quantityExpected,
    quantity_safety: (group) => group.quantitySafety,
    quantity_sellable: (group) => group.quantitySellable,
    cost: (group) => ({ amount: group.costAmount, currency: group.costCurrency }),
    ...lineStock,
    // None when the group sums a sales channel's warehouses.
    warehouse: (group, args, context) =>
      group.warehouseId === null ? null : lineStock.warehouse({ warehouseId: group.warehouseId }, args, context),
  },
  InventoryItem: {
    cost: (line) => ({ amount: line.costAmount, currency: line.costCurrency }),
    batch_number: (line) => line.batchNumber,
    serial_number: (line) => line.serialNumber,
    expires_at: (line) => line.expiresAt?.getTime() ?? null,
    status: (line) => line.state,
    reason: (line: InventoryLine) => (line.state === 'UNAVAILABLE' ? line.reason : null),
    weight: (line) =>
      line.weightAmount !== null && line.weightUnit !== null
        ? { amount: line.weightAmount, unit: line.weightUnit }
        : null,
    created_at: (line) => line.createdAt.getTime(),
    updated_at: (line) => line.updatedAt.getTime(),
    ...lineStock,
  },
  StockMutation: {
    new_quantity: (entry) => entry.newQuantity,
    product: lineStock.product,
    location: (entry) => ({ warehouseId: entry.warehouseId, positionId: entry.positionId }),
    inventory_item_id: (entry) => entry.inventoryItemId,
    actor: (entry) => ({ type: entry.actorType, id: entry.actorId }),
    created_at: (entry) => entry.createdAt.getTime(),
    safety_stock: (entry) => entry.safetyStock,
    safety_channel_id: (entry) => entry.safetyChannelId,
  },
  Location: {
    id: (location) => location.positionId ?? location.warehouseId,
    warehouse: lineStock.warehouse,
    position: lineStock.position,
  },
  StockMutationReference: {
    __resolveType: (reference: StockReference) => (reference.type === 'Bundle' ? 'BundleReference' : reference.type),
  },
  BundleReference: {
    product: (reference, args, context) => lineStock.product({ productId: reference.id }, args, context),
  },
};
