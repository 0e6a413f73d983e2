import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DATA_PLANE_ONLY_ERRORS, errorRegistry } from '../../src/kernel/errors';
import { OPENAPI_FILE, renderOpenApiYaml } from '../../src/kernel/rest/openapi-yaml';
import * as adminRoutes from '../../src/modules/auth/admin.routes';
import * as proxyRoutes from '../../src/modules/proxies/proxies.routes';
import * as edgeRoutes from '../../src/modules/edge/edge.routes';
import * as oauthAdminRoutes from '../../src/modules/oauth/oauth-admin.routes';
import * as oauthRoutes from '../../src/modules/oauth/oauth.routes';
import * as searchRoutes from '../../src/modules/search/search.routes';
import * as inventoryRoutes from '../../src/modules/stock/inventory.routes';
import { restOperations } from '../../src/rest-operations';

const committed = readFileSync(OPENAPI_FILE, 'utf8');
const document = parse(committed);

describe('openapi.yaml', () => {
  it('is what `npm run openapi` generates from the zod schemas (run it and commit the result)', () => {
    expect(committed).toBe(renderOpenApiYaml(restOperations));
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every status of the error registry as a reusable response', () => {
    const statuses = new Set(
      Object.entries(errorRegistry)
        .filter(([key]) => !DATA_PLANE_ONLY_ERRORS.includes(key as keyof typeof errorRegistry))
        .map(([, entry]) => entry.status),
    );
    const documented = new Set<number>();
    for (const pathItem of Object.values(document.paths) as Record<string, { responses: Record<string, unknown> }>[]) {
      for (const operation of Object.values(pathItem)) {
        for (const status of Object.keys(operation.responses)) documented.add(Number(status));
      }
    }
    for (const status of statuses) expect(documented).toContain(status);
    expect(Object.keys(document.components.responses).length).toBe(Object.keys(errorRegistry).length);
    for (const entry of Object.values(errorRegistry)) {
      expect(Object.values(document.components.responses).map((r) => (r as { description: string }).description)).toContain(
        entry.message,
      );
    }
  });

  it('names every operation after its handler and lists each once', () => {
    for (const module of [adminRoutes, proxyRoutes, oauthAdminRoutes, oauthRoutes, edgeRoutes, searchRoutes, inventoryRoutes]) {
      for (const [exportName, value] of Object.entries(module)) {
        if (Array.isArray(value)) continue;
        expect((value as { operationId: string }).operationId).toBe(exportName);
      }
    }
    const ids = restOperations.map((operation) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('requires a credential on every operation but the OAuth endpoints, which authenticate the client or user themselves', () => {
    for (const pathItem of Object.values(document.paths) as Record<string, { security?: unknown[]; tags?: string[]; responses: Record<string, unknown> }>[]) {
      for (const operation of Object.values(pathItem)) {
        if (operation.tags?.includes('OAuth')) {
          expect(operation.security).toEqual([]);
          continue;
        }
        expect(operation.security?.length).toBeGreaterThan(0);
        expect(operation.responses['401']).toBeDefined();
      }
    }
  });
});
