import type { GraphQLContext } from '../context';
import { byIdLoader, requestLoader } from '../../kernel/graphql/loaders';

/** Per-request batched loads of catalog rows by id, for nested fields (`warehouse`, `position`, ...). */
export const productLoader = (context: GraphQLContext) =>
  requestLoader(context, 'product', () =>
    byIdLoader((ids) => context.services.catalog.productsByIds(context.principal.tenantId, ids)),
  );

export const businessLoader = (context: GraphQLContext) =>
  requestLoader(context, 'business', () =>
    byIdLoader((ids) => context.services.catalog.businessesByIds(context.principal.tenantId, ids)),
  );

export const warehouseLoader = (context: GraphQLContext) =>
  requestLoader(context, 'warehouse', () =>
    byIdLoader((ids) => context.services.catalog.warehousesByIds(context.principal.tenantId, ids)),
  );

export const positionLoader = (context: GraphQLContext) =>
  requestLoader(context, 'position', () =>
    byIdLoader((ids) => context.services.catalog.positionsByIds(context.principal.tenantId, ids)),
  );
