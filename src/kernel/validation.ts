/**
 * The shared building blocks of input validation: zod schemas for the text every module stores,
 * and the one way a zod failure becomes a 400 / VALIDATION_ERROR naming each field. REST bodies
 * and GraphQL inputs are both zod schemas parsed at the edge, so services receive valid input.
 */
import { z, type ZodError } from 'zod';
import { badRequest, type AppError, type FieldProblem } from './errors';

// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\x00-\x1f\x7f]/;
/** NUL, which PostgreSQL cannot store in text, and UTF-16 surrogates that are not part of a pair. */
// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\x00|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const UNSTORABLE_TEXT_MESSAGE = 'must not contain U+0000 or unpaired surrogates';

/** Whether PostgreSQL can store the text: no NUL character and no unpaired surrogate. */
export const isStorableText = (value: string) => !UNSTORABLE.test(value);

/** A string that can be stored (see `isStorableText`). */
export const storableText = () => z.string().refine(isStorableText, { message: UNSTORABLE_TEXT_MESSAGE });

/** A display name: 1 to `max` characters, not only spaces. */
export const displayName = (max = 255) =>
  storableText().refine((value) => value.trim() !== '' && value.length <= max, {
    message: `must be 1 to ${max} characters, not only spaces`,
  });

/** A code (SKU, position code, barcode): 1 to `max` characters, no surrounding spaces, no control characters. */
export const code = (max: number) =>
  z
    .string()
    .refine(
      (value) => value !== '' && value.length <= max && value.trim() === value && !CONTROL_CHARACTERS.test(value),
      {
        message: `must be 1 to ${max} characters without surrounding spaces or control characters`,
      },
    );

/** `items[2].quantity`-style paths of a zod failure, under `prefix` (`input`, `body`, `query`...). */
export function fieldProblems(error: ZodError, prefix: string): FieldProblem[] {
  return error.issues.map((issue) => ({
    field: [prefix, ...issue.path].reduce<string>(
      (path, part) => (typeof part === 'number' ? `${path}[${part}]` : path ? `${path}.${String(part)}` : String(part)),
      '',
    ),
    message: issue.message,
  }));
}

/** One 400 (GraphQL: VALIDATION_ERROR with `extensions.field` of the first) naming every problem. */
export function invalidInput(problems: FieldProblem[], code?: string): AppError {
  const reason = problems.map((problem) => `${problem.field} ${problem.message}`).join(', ');
  return badRequest(code ? `${code}: ${reason}` : reason, problems);
}

/**
 * Parses a GraphQL mutation's `input` argument (or any value at `prefix`) with its zod schema:
 * the typed, valid value, or a 400 naming every problem, e.g. `input.items[2].quantity`.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, prefix = 'input'): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidInput(fieldProblems(result.error, prefix));
  return result.data;
}
