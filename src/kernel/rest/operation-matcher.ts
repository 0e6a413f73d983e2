import type { OpenAPIBackend, Operation, Request } from 'openapi-backend';

/** `/proxies/{key}` → /^\/proxies\/[^/]+$/, literal parts escaped (as openapi-backend does). */
function pathPattern(path: string): RegExp {
  const literal = (part: string) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `^${path
      .replace(/\{[^}]+\}/g, '\0')
      .split('\0')
      .map(literal)
      .join('[^/]+')}$`,
  );
}

/**
 * openapi-backend rebuilds its list of operations, and a regular expression per operation, for
 * every request it routes: a cost that grows with every operation the API gains. The document
 * does not change after start, so this builds the list once and compiles the path patterns once,
 * then matches as openapi-backend does: an exact path first, then the templates by specificity
 * (the most literal characters first), 404 when no path matches and 405 when no method does.
 */
export function precompileRouting(api: OpenAPIBackend) {
  const router = api.router;
  const operations = router.getOperations();
  router.getOperations = () => operations;
  const byExactPath = new Map<string, Operation[]>();
  for (const operation of operations)
    byExactPath.set(operation.path, [...(byExactPath.get(operation.path) ?? []), operation]);
  const templates = operations
    .map((operation) => ({
      operation,
      pattern: pathPattern(operation.path),
      literalLength: operation.path.replace(/\{.*?\}/g, '').length,
    }))
    .sort((a, b) => b.literalLength - a.literalLength);
  const underRoot = (path: string) =>
    (router as unknown as { isUnderApiRoot(path: string): boolean }).isUnderApiRoot(path);

  function matchOperation(request: Request): Operation | undefined;
  function matchOperation(request: Request, strict: boolean): Operation;
  function matchOperation(request: Request, strict = false): Operation | undefined {
    const normalized = router.normalizeRequest(request);
    const fail = (message: string) => {
      if (strict) throw new Error(message);
      return undefined;
    };
    if (!underRoot(normalized.path)) return fail('404-notFound: no route matches request');
    const path = router.normalizePath(normalized.path);
    const exact = byExactPath.get(path)?.find((operation) => operation.method === normalized.method);
    if (exact) return exact;
    const matches = templates.filter((template) => template.pattern.test(path));
    if (matches.length === 0) return fail('404-notFound: no route matches request');
    return (
      matches.find((template) => template.operation.method === normalized.method)?.operation ??
      fail('405-methodNotAllowed: this method is not registered for the route')
    );
  }
  router.matchOperation = matchOperation;
}
