import type { Resolvers } from '../../__generated__/graphql';
import { connectionArguments, toConnection } from '../../kernel/graphql/connection';
import type { GraphQLContext } from '../context';
import { byIdLoader, requestLoader } from '../../kernel/graphql/loaders';
import { idempotencyOf } from '../../kernel/graphql/idempotency';
import { placeResolvers, productLoader } from '../catalog';
import type { ReservationRecord } from './reservations.repository';
import { CreateReservationInput, ExtendReservationInput, RemoveReservationInput } from './reservations.schemas';
import { withInput } from '../../kernel/validation';

const reservationLoader = (context: GraphQLContext) =>
  requestLoader(context, 'reservation', () =>
    byIdLoader((ids) => context.services.reservations.reservationsByIds(context.principal.tenantId, ids)),
  );

/** A reservation named by a stock mutation's references arrives as `{type, id}`: load the rest. */
async function full(parent: ReservationRecord | { id: string }, context: GraphQLContext): Promise<ReservationRecord> {
  if ('expiresAt' in parent) return parent;
  return (await reservationLoader(context).load(parent.id))!;
}

export const reservationResolvers: Resolvers = {
  Query: {
    reservation: (_parent, args, { principal, services }) => services.reservations.reservation(principal, args.id),
    reservations: async (_parent, args, { principal, services }) =>
      toConnection(await services.reservations.reservations(principal, args.status, connectionArguments(args))),
  },
  Mutation: {
    createReservation: (_parent, { input }, { principal, services }) =>
      withInput(CreateReservationInput, input, async (valid) => ({
        reservation: await services.reservations.createReservation(
          principal,
          valid,
          idempotencyOf('createReservation', valid),
        ),
      })),
    extendReservation: (_parent, { input }, { principal, services }) =>
      withInput(ExtendReservationInput, input, async (valid) => ({
        reservation: await services.reservations.extendReservation(principal, valid.id, valid.expires_at),
      })),
    removeReservation: (_parent, { input }, { principal, services }) =>
      withInput(RemoveReservationInput, input, async (valid) => ({
        reservation: await services.reservations.removeReservation(
          principal,
          valid.id,
          idempotencyOf('removeReservation', valid),
        ),
      })),
  },
  Reservation: {
    id: (parent) => parent.id,
    ...placeResolvers(full),
    customer: async (parent, _args, context) => (await full(parent, context)).customer,
    items: async (parent, _args, context) => (await full(parent, context)).items,
    expires_at: async (parent, _args, context) => (await full(parent, context)).expiresAt.getTime(),
    notes: async (parent, _args, context) => (await full(parent, context)).notes,
    status: async (parent, _args, context) => (await full(parent, context)).status,
    released_at: async (parent, _args, context) => (await full(parent, context)).releasedAt?.getTime() ?? null,
    created_at: async (parent, _args, context) => (await full(parent, context)).createdAt.getTime(),
    order_id: async (parent, _args, context) => (await full(parent, context)).orderId,
  },
  ReservationItem: {
    product: async (item, _args, context) => (await productLoader(context).load(item.productId))!,
  },
};
