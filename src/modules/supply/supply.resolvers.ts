import type { Resolvers } from '../../__generated__/graphql';
import type { GraphQLContext } from '../context';
import { byIdLoader, requestLoader } from '../../kernel/graphql/loaders';
import { idempotencyOf } from '../../kernel/graphql/idempotency';
import { businessLoader, positionLoader, productLoader, warehouseLoader } from '../catalog';
import type { SupplyRecord } from './supply.repository';
import { withInput } from '../../kernel/validation';
import {
  AddAnnouncementItemsInput,
  AddOverageInput,
  CreateAnnouncementInput,
  CreateSupplyInput,
  ReceiveSupplyInput,
} from './supply.schemas';

const supplyLoader = (context: GraphQLContext) =>
  requestLoader(context, 'supply', () =>
    byIdLoader((ids) => context.services.supply.suppliesByIds(context.principal.tenantId, ids)),
  );

/** A supply named by a stock mutation's references arrives as `{type, id}`: load the rest. */
async function full(parent: SupplyRecord | { id: string }, context: GraphQLContext): Promise<SupplyRecord> {
  if ('items' in parent) return parent;
  return (await supplyLoader(context).load(parent.id))!;
}

export const supplyResolvers: Resolvers = {
  Query: {
    announcement: (_parent, args, { principal, services }) => services.supply.announcement(principal, args.id),
    supply: (_parent, args, { principal, services }) => services.supply.supply(principal, args.id),
  },
  Mutation: {
    createAnnouncement: (_parent, { input }, { principal, services }) =>
      withInput(CreateAnnouncementInput, input, async (valid) => ({
        announcement: await services.supply.createAnnouncement(
          principal,
          valid,
          idempotencyOf('createAnnouncement', valid),
        ),
      })),
    addAnnouncementItems: (_parent, { input }, { principal, services }) =>
      withInput(AddAnnouncementItemsInput, input, async (valid) => ({
        announcement: await services.supply.addAnnouncementItems(
          principal,
          valid.announcement_id,
          valid.items,
          idempotencyOf('addAnnouncementItems', valid),
        ),
      })),
    createSupply: (_parent, { input }, { principal, services }) =>
      withInput(CreateSupplyInput, input, async (valid) => ({
        supply: await services.supply.createSupply(principal, valid, idempotencyOf('createSupply', valid)),
      })),
    receiveSupply: (_parent, { input }, { principal, services }) =>
      withInput(ReceiveSupplyInput, input, async (valid) => ({
        supply: await services.supply.receiveSupply(principal, valid.supply_id, idempotencyOf('receiveSupply', valid)),
      })),
    addOverage: (_parent, { input }, { principal, services }) =>
      withInput(AddOverageInput, input, async (valid) => ({
        supply: await services.supply.addOverage(
          principal,
          valid.supply_id,
          valid.items,
          idempotencyOf('addOverage', valid),
        ),
      })),
  },
  Announcement: {
    business: async (announcement, _args, context) => (await businessLoader(context).load(announcement.businessId))!,
    warehouse: async (announcement, _args, context) => (await warehouseLoader(context).load(announcement.warehouseId))!,
    supply_id: (announcement) => announcement.supplyId,
    created_at: (announcement) => announcement.createdAt.getTime(),
  },
  AnnouncementItem: {
    product: async (item, _args, context) => (await productLoader(context).load(item.productId))!,
  },
  Supply: {
    id: (parent) => parent.id,
    warehouse: async (parent, _args, context) =>
      (await warehouseLoader(context).load((await full(parent, context)).warehouseId))!,
    position: async (parent, _args, context) => {
      const positionId = (await full(parent, context)).positionId;
      return positionId ? positionLoader(context).load(positionId) : null;
    },
    processing: async (parent, _args, context) => (await full(parent, context)).processing,
    status: async (parent, _args, context) => (await full(parent, context)).status,
    due_at: async (parent, _args, context) => (await full(parent, context)).dueAt?.getTime() ?? null,
    received_at: async (parent, _args, context) => (await full(parent, context)).receivedAt?.getTime() ?? null,
    announcement_ids: async (parent, _args, context) => (await full(parent, context)).announcementIds,
    items: async (parent, _args, context) => (await full(parent, context)).items,
    created_at: async (parent, _args, context) => (await full(parent, context)).createdAt.getTime(),
  },
  SupplyItem: {
    product: async (item, _args, context) => (await productLoader(context).load(item.productId))!,
    is_overage: (item) => item.isOverage,
    received_at: (item) => item.receivedAt,
  },
};
