import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RestOperation } from './rest/operation';

/** A background job a module runs in every process, stopped when the application closes. */
export interface Worker {
  stop(): Promise<void>;
}

/** The GraphQL part of a module: its SDL file under `schema/`, its resolvers and its codegen mappers. */
export interface ModuleGraphQL {
  /** File name of the module's SDL in `schema/` (`extend type Query`, `extend type Mutation`). */
  schema: string;
  /** Resolver maps, merged with every other module's by @graphql-tools/schema. */
  resolvers?: object[];
  /**
   * codegen `mappers`: GraphQL type name to the TypeScript type its resolvers receive, as
   * `<path relative to the module folder>#<export>`.
   */
  mappers?: Record<string, string>;
}

/** Answers a request on the raw node:http server, before Fastify routes it; returns whether it did. */
export type RawAnswerer = (request: IncomingMessage, response: ServerResponse) => boolean;

/** What the application lends a module for answering requests outside Fastify. */
export interface RawServerKit {
  /** Counts an answer in the HTTP metrics. */
  recordAnswer(operation: string, status: number, seconds: number): void;
  /** Counts the request as in flight until its response closes: the shutdown waits for it. */
  trackInFlight(response: ServerResponse): void;
  /** Answers with an error in the envelope, as Fastify's error handler would (unknown errors are logged and masked). */
  sendError(response: ServerResponse, error: unknown, requestId: string, headers?: Record<string, string>): number;
}

/**
 * One domain of the application, declared once in its folder's `index.ts` and listed once in
 * `src/modules/index.ts`: the composition root, the REST router, the GraphQL schema, codegen and
 * the contract tests all loop over that list. Generic over the application's service container.
 */
export interface AppModule<TServices> {
  name: string;
  /**
   * Adds the module's services to the container. Modules are built in list order; a module may
   * keep the container and read a later module's service lazily (at call time).
   */
  services?(container: TServices): Partial<TServices>;
  /** The module's REST operations, in the order `openapi.yaml` lists them. */
  rest?: RestOperation<TServices>[];
  graphql?: ModuleGraphQL;
  /** Routes outside /api and /graphql (pages, well-known documents, the edge data plane). */
  http?(app: FastifyInstance, services: TServices): void | Promise<void>;
  /**
   * Fastify `rewriteUrl`: the URL a request is routed by, or undefined to leave it alone (the edge
   * claims requests for `{key}.{EDGE_DOMAIN}`).
   */
  rewriteUrl?(services: TServices): ((request: IncomingMessage) => string | undefined) | undefined;
  /**
   * Answers what it can before Fastify sees the request (the edge's data plane: no routing, hooks
   * or body parsing), for speed; everything else goes on to Fastify.
   */
  rawAnswerer?(services: TServices, kit: RawServerKit): RawAnswerer | undefined;
  /** Adds the module's metrics to the application's registry (gauges are best read on scrape: `collect`). */
  metrics?(registry: Registry, services: TServices): void;
  /**
   * What the module needs from outside the process to serve, for `GET /readyz` (the database is
   * always asked): by name, a probe that resolves while it is ready and rejects otherwise.
   */
  readiness?(services: TServices): Record<string, () => Promise<void>>;
  /** Checks run once before the application listens; a rejection stops the start with its message. */
  start?(services: TServices): Promise<void>;
  /** Background jobs started once the application is ready. */
  workers?(services: TServices, logError: (error: unknown) => void): Worker[];
  /** Called when the application closes, after the requests in flight are done. */
  close?(services: TServices): Promise<void>;
}
