/** The precompiled router answers every request exactly as openapi-backend's own matching does. */
import { OpenAPIBackend, type Operation } from 'openapi-backend';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/kernel/rest/openapi';
import { precompileRouting } from '../../src/kernel/rest/operation-matcher';
import { restOperations } from '../../src/app';

async function backend() {
  const api = new OpenAPIBackend({
    definition: buildOpenApiDocument(restOperations) as never,
    quick: true,
    validate: false,
  });
  await api.init();
  return api;
}

/** What matching `method path` gives: the operation id, or the error openapi-backend throws. */
function outcome(api: OpenAPIBackend, method: string, path: string) {
  try {
    return (api.router.matchOperation({ method, path, headers: {} }, true) as Operation).operationId;
  } catch (error) {
    return (error as Error).message;
  }
}

describe('precompileRouting', () => {
  it('matches every operation, every other method and paths beside them as openapi-backend does', async () => {
    const [original, precompiled] = [await backend(), await backend()];
    precompileRouting(precompiled);
    const paths = original.router.getOperations().flatMap(({ path }: { path: string }) => {
      const filled = path.replace(/\{[^}]+\}/g, 'x-1');
      return [filled, `${filled}/`, `${filled}/extra`, filled.replace(/\/[^/]+$/, ''), path];
    });
    paths.push('/', '/nothing', '/api', '/api/nothing/here', '/api/storage/edge/proxies/a.b');
    const requests = [...new Set(paths)].flatMap((path) =>
      ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'].map((method) => [method, path] as const),
    );
    expect(requests.length).toBeGreaterThan(100);
    const answers = requests.map(([method, path]) => [method, path, outcome(precompiled, method, path)]);
    expect(answers).toEqual(requests.map(([method, path]) => [method, path, outcome(original, method, path)]));
    // Not a list of failures agreeing with each other: most requests find their operation.
    expect(answers.filter(([, , answer]) => !String(answer).includes('-')).length).toBeGreaterThan(
      restOperations.length,
    );
  });
});
