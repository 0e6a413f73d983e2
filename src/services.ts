import type { Config } from './kernel/config';
import { createCursorCodec, type CursorCodec } from './kernel/cursor';
import type { Db } from './kernel/db';
import { createHmac } from 'node:crypto';
import { AdminService } from './modules/auth/admin.service';
import { createAuthenticator, type Authenticator } from './modules/auth/authenticator';
import { BroadcastService } from './modules/broadcasts/broadcasts.service';
import { CatalogService } from './modules/catalog/catalog.service';
import { EdgeService } from './modules/edge/edge.service';
import { createOAuthServices, type OAuthServices } from './modules/oauth/oauth-services';
import { ProxyService } from './modules/proxies/proxies.service';
import { createSearchServices, type SearchServices } from './modules/search/search.module';
import { OrderService } from './modules/orders/orders.service';
import { PreferenceService } from './modules/preferences/preferences.service';
import { ReservationService } from './modules/reservations/reservations.service';
import { SupplyService } from './modules/supply/supply.service';
import { StockService } from './modules/stock/stock.service';

/** Everything a request handler may use, built once per process. */
export interface Services {
  config: Config;
  db: Db;
  /** Origin used in absolute links (page URLs): PUBLIC_BASE_URL or http://HOST:PORT. */
  baseUrl: string;
  cursors: CursorCodec;
  authenticator: Authenticator;
  admin: AdminService;
  proxies: ProxyService;
  catalog: CatalogService;
  edge: EdgeService;
  oauth: OAuthServices;
  search: SearchServices;
  stock: StockService;
  reservations: ReservationService;
  orders: OrderService;
  preferences: PreferenceService;
  supply: SupplyService;
  broadcasts: BroadcastService;
}

export interface ServiceDependencies {
  config: Config;
  db: Db;
  masterKey: string;
  authCacheTtlMs?: number;
}

export function createServices({ config, db, masterKey, authCacheTtlMs }: ServiceDependencies): Services {
  // Derived from the master key so every process of a deployment signs cursors alike.
  const cursors = createCursorCodec(createHmac('sha256', masterKey).update('pagination-cursors').digest());
  const baseUrl = config.publicBaseUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  const oauth = createOAuthServices({ db, masterKey, baseUrl, forgetGrant: (grantId) => authenticator.forget(grantId) });
  const authenticator = createAuthenticator(db, masterKey, { cacheTtlMs: authCacheTtlMs, accessTokens: oauth.accessTokens });
  const edge = new EdgeService(db, authenticator, config.edge);
  return {
    config,
    db,
    baseUrl,
    cursors,
    authenticator,
    admin: new AdminService(db, authenticator),
    proxies: new ProxyService(db, cursors, (key) => edge.forgetProxy(key)),
    catalog: new CatalogService(db, cursors),
    edge,
    oauth,
    search: createSearchServices({ config, db, cursors, masterKey, baseUrl }),
    stock: new StockService(db, cursors),
    reservations: new ReservationService(db, cursors),
    orders: new OrderService(db, cursors),
    preferences: new PreferenceService(db, cursors),
    supply: new SupplyService(db),
    broadcasts: new BroadcastService(db, config.broadcasts),
  };
}
