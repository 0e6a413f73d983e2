import type { CodegenConfig } from '@graphql-codegen/cli';

/** Resolver signatures typed from the SDL in schema/, with GraphQL types mapped to Prisma rows. */
const config: CodegenConfig = {
  schema: 'schema/*.graphql',
  generates: {
    'src/__generated__/graphql.ts': {
      plugins: ['typescript', 'typescript-resolvers'],
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        contextType: '../kernel/graphql/context#GraphQLContext',
        scalars: { Int64: 'number', QueryFilter: 'string' },
        mappers: {
          Product: './prisma/client#Product as ProductRow',
          Business: './prisma/client#Business as BusinessRow',
          Warehouse: './prisma/client#Warehouse as WarehouseRow',
          Position: './prisma/client#Position as PositionRow',
          SalesChannel: './prisma/client#SalesChannel as SalesChannelRow',
          Inventory: '../modules/stock/stock.types#InventoryGroup',
          InventoryItem: '../modules/stock/stock.types#InventoryLine',
          StockMutation: '../modules/stock/stock.types#LedgerEntry',
          Location: '../modules/stock/stock.types#StockLocation',
          StockMutationReference: '../modules/stock/stock.types#StockReference',
          InventoryList: '../modules/stock/stock.types#StockReference',
          Reservation: '../modules/reservations/reservations.repository#ReservationRecord',
          ReservationItem: '../modules/reservations/reservations.repository#ReservationItemRecord',
          Order: '../modules/orders/orders.repository#OrderRecord',
          OrderItem: '../modules/orders/orders.repository#OrderItemRecord',
          ItemPreference: '../modules/preferences/preferences.repository#ItemPreferenceRecord',
          Announcement: '../modules/supply/supply.repository#AnnouncementRecord',
          AnnouncementItem: '../modules/supply/supply.repository#AnnouncementItemRecord',
          Supply: '../modules/supply/supply.repository#SupplyRecord',
          SupplyItem: '../modules/supply/supply.repository#SupplyItemRecord',
        },
      },
    },
  },
};

export default config;
