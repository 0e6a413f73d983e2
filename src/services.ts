import type { Config } from './kernel/config';
import { createCursorCodec, type CursorCodec } from './kernel/cursor';
import type { Db } from './kernel/db';
import { createHmac } from 'node:crypto';
import { AdminService } from './modules/auth/admin.service';
import { createAuthenticator, type Authenticator } from './modules/auth/authenticator';
import { CatalogService } from './modules/catalog/catalog.service';
import { ProxyService } from './modules/proxies/proxies.service';

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
  const authenticator = createAuthenticator(db, masterKey, { cacheTtlMs: authCacheTtlMs });
  return {
    config,
    db,
    baseUrl: config.publicBaseUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`,
    cursors,
    authenticator,
    admin: new AdminService(db, authenticator),
    proxies: new ProxyService(db, cursors),
    catalog: new CatalogService(db, cursors),
  };
}
