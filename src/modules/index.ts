/**
 * The one list of modules. The composition root (src/app.ts), the REST router, the GraphQL schema,
 * codegen and the contract tests loop over it: adding a module is its folder plus one line here.
 * Services are built in this order (a module may use those listed before it).
 */
import { authModule } from './auth';
import { broadcastsModule } from './broadcasts';
import { catalogModule } from './catalog';
import { checkoutModule } from './checkout';
import { consoleModule } from './console';
import type { Module } from './context';
import { demoModule } from './demo';
import { discountsModule } from './discounts';
import { edgeModule } from './edge';
import { housekeepingModule } from './housekeeping';
import { mcpModule } from './mcp';
import { oauthModule } from './oauth';
import { ordersModule } from './orders';
import { paymentsModule } from './payments';
import { preferencesModule } from './preferences';
import { pricingModule } from './pricing';
import { proxiesModule } from './proxies';
import { referenceModule } from './reference';
import { reservationsModule } from './reservations';
import { searchModule } from './search';
import { shippingModule } from './shipping';
import { stockModule } from './stock';
import { supplyModule } from './supply';
import { transfersModule } from './transfers';
import { ucpModule } from './ucp';

export const modules: readonly Module[] = [
  authModule,
  proxiesModule,
  edgeModule,
  oauthModule,
  searchModule,
  catalogModule,
  stockModule,
  reservationsModule,
  ordersModule,
  preferencesModule,
  supplyModule,
  transfersModule,
  broadcastsModule,
  pricingModule,
  shippingModule,
  discountsModule,
  paymentsModule,
  checkoutModule,
  ucpModule,
  mcpModule,
  housekeepingModule,
  referenceModule,
  demoModule,
  consoleModule,
];
