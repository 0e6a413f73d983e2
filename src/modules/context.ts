/**
 * The application's service container and request contexts. Each module adds its services to
 * `Services` from its own `index.ts` (`declare module '../context'`), so adding a module needs no
 * edit here.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../kernel/config';
import type { CursorCodec } from '../kernel/cursor';
import type { DatabaseNotifications } from '../kernel/database-notifications';
import type { Db } from '../kernel/db';
import type { AppModule } from '../kernel/module';
import type { Principal } from '../kernel/principal';
import type { RateLimits } from '../kernel/rate-limit';
import { operationDefiner } from '../kernel/rest/operation';
import type { Scope } from '../kernel/scopes';

/** Everything a request handler may use, built once per process. */
export interface Services {
  config: Config;
  db: Db;
  masterKey: string;
  /** Origin used in absolute links (page URLs): PUBLIC_BASE_URL or http://HOST:PORT. */
  baseUrl: string;
  cursors: CursorCodec;
  /** LISTEN/NOTIFY between the processes of a deployment, for keeping their caches coherent. */
  notifications: DatabaseNotifications;
  /** Requests per minute per credential, counted in PostgreSQL for every process. */
  rateLimits: RateLimits;
  log: FastifyBaseLogger;
  /** How long a verified credential is trusted without asking the database again (tests shorten it). */
  authCacheTtlMs?: number;
}

/** What every resolver receives: the authenticated caller and the process's services. */
export interface GraphQLContext {
  principal: Principal;
  services: Services;
  requestId: string;
}

export type Module = AppModule<Services>;

/** Declares one REST operation of a module: its schemas, scopes and handler. */
export const defineOperation = operationDefiner<Services, Scope>();
