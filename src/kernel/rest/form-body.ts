import type { FastifyRequest } from 'fastify';
import { badRequest } from '../errors';
import { parameterProblem } from '../request-limits';

export const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';

/** Whether a request carries an `application/x-www-form-urlencoded` body (parameters such as charset ignored). */
export function isFormRequest(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  return typeof type === 'string' && type.split(';')[0]!.trim().toLowerCase() === FORM_CONTENT_TYPE;
}

/**
 * The `parser` of `@fastify/formbody`: one string per field, within the limits of a query string
 * (`parameterProblem`). A field sent twice is refused rather
 * than guessed at (OAuth 2.0 forbids repeated parameters); Fastify answers the thrown error.
 */
export function parseFormFields(body: string): Record<string, string> {
  const fields: Record<string, string> = Object.create(null);
  const params = new URLSearchParams(body);
  const problem = parameterProblem(params.keys(), 'body');
  if (problem) throw problem;
  for (const [name, value] of params) {
    if (Object.hasOwn(fields, name)) {
      throw badRequest(`the form field ${name} appears more than once`, [
        { field: `body.${name}`, message: 'appears more than once' },
      ]);
    }
    fields[name] = value;
  }
  return { ...fields };
}
