/**
 * The REST router (Fastify routes built from the contract) answers every documented path and
 * method as the contract's own matcher (openapi-backend's) says: the operation, a 405 naming the
 * path's methods, the CORS preflight of browser-callable paths, or a 404.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { OpenAPIBackend, type Operation } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restOperations } from '../../src/app';
import { installErrorHandling } from '../../src/kernel/http-errors';
import { buildOpenApiDocument } from '../../src/kernel/rest/openapi';
import { mountRestApi } from '../../src/kernel/rest/router';

/** A value every path parameter of the API accepts (ids are UUIDs, keys and aliases are slugs). */
const PARAMETER = '0190b0a4-0000-7000-8000-000000000001';
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Every operation answers its own id, unauthenticated and without input, so that only routing decides. */
const echoing = restOperations.map((operation) => ({
  ...operation,
  security: 'none' as const,
  query: undefined,
  headers: undefined,
  body: undefined,
  limitPerAddress: undefined,
  handler: async () => ({ status: 200, body: { operationId: operation.operationId } }),
}));

let app: FastifyInstance;
let contract: OpenAPIBackend;

beforeAll(async () => {
  app = Fastify();
  installErrorHandling(app);
  await mountRestApi(
    app,
    echoing,
    {},
    {
      authenticate: async () => ({}) as never,
      isMasterKey: () => true,
      limitAddress: async () => {},
    },
  );
  await app.ready();
  contract = new OpenAPIBackend({ definition: buildOpenApiDocument(restOperations) as never, quick: true });
  await contract.init();
});
afterAll(() => app.close());

const concretePaths = [...new Set(restOperations.map((operation) => operation.path))].map((path) =>
  path.replace(/\{[^}]+\}/g, PARAMETER),
);

/** What the contract says `method path` is: an operation id, or 404 / 405 with the path's methods. */
function expected(method: string, path: string) {
  const match = (m: string) => contract.matchOperation({ method: m, path, headers: {} }) as Operation | undefined;
  const operation = match(method === 'HEAD' ? 'GET' : method);
  const isCors = (operationId: string | undefined) => restOperations.find((o) => o.operationId === operationId)!.cors;
  if (operation) return { status: 200, operationId: operation.operationId, cors: isCors(operation.operationId) };
  const allowed = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => match(m));
  if (allowed.length === 0) return { status: 404 };
  const cors = allowed.filter((m) => isCors(match(m)!.operationId));
  const withHead = (methods: string[]) => (methods.includes('GET') ? [...methods, 'HEAD'] : methods);
  if (method === 'OPTIONS' && cors.length > 0) return { status: 204, corsMethods: withHead(cors).sort() };
  return { status: 405, allow: withHead(allowed).sort() };
}

describe('REST routing', () => {
  it('has a route for every documented path and method, as the contract matches them', async () => {
    let checked = 0;
    for (const path of concretePaths) {
      for (const url of [path, `${path}/`]) {
        for (const method of METHODS) {
          const want = expected(method, path);
          const response = await app.inject({ method, url });
          const where = `${method} ${url}`;
          expect(response.statusCode, where).toBe(want.status);
          if (want.operationId && method !== 'HEAD') expect(response.json().operationId, where).toBe(want.operationId);
          if (want.allow) expect(String(response.headers.allow).split(', ').sort(), where).toEqual(want.allow);
          if (want.corsMethods) {
            const methods = String(response.headers['access-control-allow-methods']).split(', ').sort();
            expect(methods, where).toEqual(want.corsMethods);
          }
          if (want.corsMethods || want.cors) {
            expect(response.headers['access-control-allow-origin'], where).toBe('*');
          } else {
            expect(response.headers['access-control-allow-origin'], where).toBeUndefined();
          }
          checked += 1;
        }
      }
    }
    expect(checked).toBe(concretePaths.length * 2 * METHODS.length);
  });

  it('answers paths beside the documented ones with 404, whatever the method', async () => {
    for (const url of ['/api', '/api/unknown', `/api/storage/edge/proxies/${PARAMETER}/cache/more`, '/apis/x']) {
      for (const method of METHODS) {
        const response = await app.inject({ method, url });
        expect(response.statusCode, `${method} ${url}`).toBe(404);
        if (method !== 'HEAD') expect(response.json().error.message, `${method} ${url}`).toMatch(/no such path/);
      }
    }
  });

  it('refuses an undocumented query parameter, naming it', async () => {
    const response = await app.inject({ method: 'GET', url: `/api/storage/edge/proxies/${PARAMETER}?debug=1` });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details).toEqual([{ field: 'query.debug', message: 'is not a known field' }]);
  });
});
