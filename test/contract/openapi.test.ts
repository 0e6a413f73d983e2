import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DATA_PLANE_ONLY_ERRORS, errorRegistry } from '../../src/kernel/errors';
import { OPENAPI_FILE, renderOpenApiYaml } from '../../src/kernel/rest/openapi-yaml';
import { restOperations } from '../../src/app';
import { modules } from '../../src/modules';

const MODULES_DIR = resolve(import.meta.dirname, '../../src/modules');

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
      expect(
        Object.values(document.components.responses).map((r) => (r as { description: string }).description),
      ).toContain(entry.message);
    }
  });

  it("names every operation after its handler, exported from its module's routes, and lists each once", async () => {
    for (const module of modules) {
      const routeFiles = readdirSync(join(MODULES_DIR, module.name)).filter((file) => file.endsWith('.routes.ts'));
      const exported = new Map<unknown, string>();
      for (const file of routeFiles) {
        const routes = (await import(join(MODULES_DIR, module.name, file))) as Record<string, unknown>;
        for (const [exportName, value] of Object.entries(routes)) {
          if (Array.isArray(value) || typeof value !== 'object' || value === null || !('operationId' in value))
            continue;
          expect((value as { operationId: string }).operationId).toBe(exportName);
          exported.set(value, exportName);
        }
      }
      for (const operation of module.rest ?? []) expect(exported.get(operation)).toBe(operation.operationId);
    }
    const ids = restOperations.map((operation) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('requires a credential on every operation but the OAuth endpoints, which authenticate the client or user themselves', () => {
    // The token, revocation and introspection endpoints authenticate the client; the authorization
    // session, the user; registration is open, and its management takes the registration token.
    const ownAuthentication = [
      'obtainToken',
      'revokeToken',
      'introspectToken',
      'getAuthorization',
      'registerClient',
      'getClientRegistration',
      'deleteClientRegistration',
    ];
    const withoutCredential: string[] = [];
    for (const pathItem of Object.values(document.paths) as Record<
      string,
      { operationId: string; security?: unknown[]; tags?: string[]; responses: Record<string, unknown> }
    >[]) {
      for (const operation of Object.values(pathItem)) {
        if (operation.security?.length === 0) {
          withoutCredential.push(operation.operationId);
          expect(operation.tags).toContain('OAuth');
          continue;
        }
        expect(operation.security?.length).toBeGreaterThan(0);
        expect(operation.responses['401']).toBeDefined();
      }
    }
    expect(withoutCredential.sort()).toEqual(ownAuthentication.sort());
  });
});
