import type { Resolvers } from '../../__generated__/graphql';
import { idempotencyOf } from '../../kernel/graphql/idempotency';
import { byIdLoader, requestLoader } from '../../kernel/graphql/loaders';
import { withInput } from '../../kernel/validation';
import { productLoader, warehouseLoader } from '../catalog';
import type { GraphQLContext } from '../context';
import type { TransferRecord } from './transfers.repository';
import { CreateTransferInput, ReceiveTransferInput, TransferIdInput } from './transfers.schemas';

const transferLoader = (context: GraphQLContext) =>
  requestLoader(context, 'transfer', () =>
    byIdLoader((ids) => context.services.transfers.transfersByIds(context.principal.tenantId, ids)),
  );

/** A transfer named by a stock mutation's references arrives as `{type, id}`: load the rest. */
async function full(parent: TransferRecord | { id: string }, context: GraphQLContext): Promise<TransferRecord> {
  if ('items' in parent) return parent;
  return (await transferLoader(context).load(parent.id))!;
}

export const transferResolvers: Resolvers = {
  Query: {
    transfer: (_parent, args, { principal, services }) => services.transfers.transfer(principal, args.id),
  },
  Mutation: {
    createTransfer: (_parent, { input }, { principal, services }) =>
      withInput(CreateTransferInput, input, async (valid) => ({
        transfer: await services.transfers.createTransfer(principal, valid, idempotencyOf('createTransfer', valid)),
      })),
    shipTransfer: (_parent, { input }, { principal, services }) =>
      withInput(TransferIdInput, input, async (valid) => ({
        transfer: await services.transfers.shipTransfer(principal, valid.id, idempotencyOf('shipTransfer', valid)),
      })),
    receiveTransfer: (_parent, { input }, { principal, services }) =>
      withInput(ReceiveTransferInput, input, async (valid) => ({
        transfer: await services.transfers.receiveTransfer(
          principal,
          valid.id,
          valid,
          idempotencyOf('receiveTransfer', valid),
        ),
      })),
    cancelTransfer: (_parent, { input }, { principal, services }) =>
      withInput(TransferIdInput, input, async (valid) => ({
        transfer: await services.transfers.cancelTransfer(principal, valid.id, idempotencyOf('cancelTransfer', valid)),
      })),
  },
  Transfer: {
    id: (parent) => parent.id,
    from_warehouse: async (parent, _args, context) =>
      (await warehouseLoader(context).load((await full(parent, context)).fromWarehouseId))!,
    to_warehouse: async (parent, _args, context) =>
      (await warehouseLoader(context).load((await full(parent, context)).toWarehouseId))!,
    status: async (parent, _args, context) => (await full(parent, context)).status,
    items: async (parent, _args, context) => (await full(parent, context)).items,
    shipped_at: async (parent, _args, context) => (await full(parent, context)).shippedAt?.getTime() ?? null,
    received_at: async (parent, _args, context) => (await full(parent, context)).receivedAt?.getTime() ?? null,
    created_at: async (parent, _args, context) => (await full(parent, context)).createdAt.getTime(),
  },
  TransferItem: {
    product: async (item, _args, context) => (await productLoader(context).load(item.productId))!,
    received_quantity: (item) => item.receivedQuantity,
  },
};
