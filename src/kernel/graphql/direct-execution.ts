import type { ExecutionResult, GraphQLError } from 'graphql';
import type { YogaServerInstance } from 'graphql-yoga';

interface PlainOperation {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
}

/** A JSON body that is exactly one operation with well-formed parameters (no batching, no extras). */
function plainOperation(body: unknown): PlainOperation | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { query, variables, operationName, extensions, ...rest } = body as Record<string, unknown>;
  if (typeof query !== 'string' || Object.keys(rest).length > 0 || extensions != null) return undefined;
  if (variables != null && (typeof variables !== 'object' || Array.isArray(variables))) return undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  return {
    query,
    variables: (variables ?? undefined) as Record<string, unknown> | undefined,
    operationName: operationName ?? undefined,
  };
}

/** Whether the client accepts the plain `application/json` answer (yoga's default media type). */
const acceptsJson = (accept: string | undefined) =>
  accept === undefined ||
  (!accept.includes('graphql-response+json') && (accept.includes('application/json') || accept.includes('*/*')));

/**
 * yoga's serialisation: errors without the `http` and `unexpected` extensions that steer its HTTP
 * layer, the highest status they ask for and the headers they carry.
 */
function serialise(result: ExecutionResult): DirectAnswer {
  if (!result.errors?.length) return { status: 200, json: JSON.stringify(result), headers: {} };
  let status = 200;
  const headers: Record<string, string> = {};
  const errors = result.errors.map((error: GraphQLError) => {
    const { extensions, ...rest } = error.toJSON();
    const { http, unexpected: _unexpected, ...ours } = (extensions ?? {}) as Record<string, unknown>;
    const steer = (http ?? {}) as { status?: unknown; headers?: Record<string, string> };
    if (typeof steer.status === 'number' && steer.status > status) status = steer.status;
    Object.assign(headers, steer.headers);
    return { ...rest, ...(Object.keys(ours).length > 0 ? { extensions: ours } : {}) };
  });
  return { status, json: JSON.stringify({ ...result, errors }), headers };
}

/** An answer of the direct path: its status, body and headers. */
export interface DirectAnswer {
  status: number;
  json: string;
  headers: Record<string, string>;
}

/**
 * Runs a plain JSON query or mutation through yoga's envelop pipeline (the same parser and
 * validation caches, operation limits and error masking) without yoga's Fetch API layer, which
 * costs more than a small query itself: building a Request and a streamed Response for every
 * operation. Returns undefined for anything else (another media type, a malformed body, an
 * operation that does not parse or validate), which the caller hands to yoga's full handler so
 * that it is answered exactly as yoga answers it.
 */
export async function executeDirectly<TServerContext extends Record<string, unknown>, TContext extends object>(
  yoga: YogaServerInstance<TServerContext, TContext>,
  request: { body: unknown; accept: string | undefined },
  serverContext: TServerContext,
): Promise<DirectAnswer | undefined> {
  const operation = acceptsJson(request.accept) ? plainOperation(request.body) : undefined;
  if (!operation) return undefined;
  const enveloped = yoga.getEnveloped(serverContext as never);
  let document;
  try {
    document = enveloped.parse(operation.query);
    // The operation limits report by throwing from validation: yoga's handler turns that into errors.
    if (enveloped.validate(enveloped.schema, document).length > 0) return undefined;
  } catch {
    return undefined;
  }
  const contextValue = await enveloped.contextFactory();
  const result = (await enveloped.execute({
    schema: enveloped.schema,
    document,
    contextValue,
    variableValues: operation.variables,
    operationName: operation.operationName,
  })) as ExecutionResult;
  return serialise(result);
}
