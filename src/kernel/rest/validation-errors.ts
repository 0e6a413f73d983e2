import type { ZodError } from 'zod';
import { badRequest, type AppError, type FieldProblem } from '../errors';

interface AjvError {
  instancePath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
}

const sections: Record<string, string> = { requestBody: 'body', query: 'query', params: 'path', headers: 'header' };

/** `/requestBody/data/routes/0/path` → `body.data.routes[0].path`; `/query/page[size]` → `query.page[size]`. */
function fieldOf(instancePath: string, extra?: string): string {
  const segments = instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (extra !== undefined) segments.push(extra);
  const [section, ...rest] = segments;
  let field = sections[section ?? ''] ?? section ?? 'request';
  for (const segment of rest) field += /^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`;
  return field;
}

function describe(error: AjvError): FieldProblem {
  if (error.keyword === 'additionalProperties') {
    return {
      field: fieldOf(error.instancePath, String(error.params.additionalProperty)),
      message: 'is not a known field',
    };
  }
  if (error.keyword === 'required') {
    return { field: fieldOf(error.instancePath, String(error.params.missingProperty)), message: 'is required' };
  }
  return { field: fieldOf(error.instancePath), message: error.message ?? 'is invalid' };
}

const withCode = (code: string | undefined, reason: string) => (code ? `${code}: ${reason}` : reason);

/** Turns openapi-backend's (ajv) request validation errors into one 400 naming every field. */
export function requestValidationError(errors: AjvError[] | null | undefined, code?: string): AppError {
  const problems: FieldProblem[] = [];
  for (const error of errors ?? []) {
    // `oneOf`/`anyOf` failures repeat their branches' errors; the branches are more precise.
    if (error.keyword === 'oneOf' || error.keyword === 'anyOf' || error.keyword === 'if') continue;
    const problem = describe(error);
    if (!problems.some((p) => p.field === problem.field && p.message === problem.message)) problems.push(problem);
  }
  if (problems.length === 0) problems.push({ field: 'request', message: 'does not match the operation' });
  return badRequest(withCode(code, problems.map((p) => `${p.field} ${p.message}`).join(', ')), problems);
}

/** Turns a zod error from a rule the OpenAPI schema cannot express into a 400. */
export function zodValidationError(error: ZodError, section: string, code?: string): AppError {
  const problems = error.issues.map((issue) => ({
    field: [section, ...issue.path].reduce<string>(
      (acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${String(part)}` : String(part)),
      '',
    ),
    message: issue.message,
  }));
  return badRequest(withCode(code, problems.map((p) => `${p.field} ${p.message}`).join(', ')), problems);
}
