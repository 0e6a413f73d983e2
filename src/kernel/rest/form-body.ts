import type { FastifyRequest } from 'fastify';
import { badRequest } from '../errors';

export const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';

/** Whether a request carries an `application/x-www-form-urlencoded` body (parameters such as charset ignored). */
export function isFormRequest(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  return typeof type === 'string' && type.split(';')[0]!.trim().toLowerCase() === FORM_CONTENT_TYPE;
}

/**
 * Fastify content parser for `application/x-www-form-urlencoded`: one string per field. A field
 * sent twice is refused rather than guessed at (OAuth 2.0 forbids repeated parameters).
 */
export function parseFormBody(
  _request: FastifyRequest,
  body: string,
  done: (error: Error | null, value?: unknown) => void,
) {
  const fields: Record<string, string> = Object.create(null);
  for (const [name, value] of new URLSearchParams(body)) {
    if (Object.hasOwn(fields, name)) {
      return done(
        badRequest(`the form field ${name} appears more than once`, [
          { field: `body.${name}`, message: 'appears more than once' },
        ]),
      );
    }
    fields[name] = value;
  }
  done(null, { ...fields });
}
