/**
 * The shared building blocks of input validation: zod schemas for the text every module stores,
 * and the one way a zod failure becomes a 400 / VALIDATION_ERROR naming each field. REST bodies
 * and GraphQL inputs are both zod schemas parsed at the edge, so services receive valid input.
 */
import { z, type ZodError } from 'zod';
import { AppError, type FieldProblem } from './errors';
import { isUuid } from './ids';

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

/** `items[2].quantity`-style paths of a zod failure, relative to the value parsed, or under `prefix`. */
export function fieldProblems(error: ZodError, prefix = ''): FieldProblem[] {
  return error.issues.map((issue) => ({
    field: issue.path.reduce<string>(
      (path, part) => (typeof part === 'number' ? `${path}[${part}]` : path ? `${path}.${String(part)}` : String(part)),
      prefix,
    ),
    message: issue.message,
  }));
}

/** The first five problems, then how many more: the reason of a validation 400. */
const describeProblems = (problems: FieldProblem[]) => {
  const shown = problems.slice(0, 5).map((problem) => `${problem.field} ${problem.message}`);
  if (problems.length > 5) shown.push(`and ${problems.length - 5} more`);
  return shown.join(', ');
};

/**
 * A 400 (GraphQL: VALIDATION_ERROR with `extensions.field` of the first) naming every problem. Its
 * fields may be relative to an input (`items[2].quantity`): `underField` puts them where the
 * transport carries that input (`input.items[2].quantity`, `body.data[2].sku`).
 */
export class InvalidInput extends AppError {
  constructor(
    readonly problems: FieldProblem[],
    readonly code?: string,
  ) {
    const reason = describeProblems(problems);
    super('BAD_REQUEST', code ? `${code}: ${reason}` : reason, { details: problems });
  }
}

export const invalidInput = (problems: FieldProblem[], code?: string): AppError => new InvalidInput(problems, code);

/** One problem of one field. */
export const invalidField = (field: string, message: string): AppError => invalidInput([{ field, message }]);

/** `field` (relative to an input) under the input's place: `input` + `items[2]` → `input.items[2]`. */
export function fieldUnder(prefix: string, field: string): string {
  if (prefix === '' || field === '') return prefix || field;
  return field.startsWith('[') ? `${prefix}${field}` : `${prefix}.${field}`;
}

/**
 * Runs `work`, naming the fields of the errors it raises under `prefix`: services report fields
 * relative to their input and the transport says where that input is.
 */
export async function underField<T>(prefix: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof AppError) || !error.details) throw error;
    const details = error.details.map((problem) => ({ ...problem, field: fieldUnder(prefix, problem.field) }));
    if (error instanceof InvalidInput) throw new InvalidInput(details, error.code);
    throw new AppError(error.key, error.reason, { details, headers: error.headers });
  }
}

/** Parses a value with its zod schema: the typed, valid value, or a 400 naming fields relative to it. */
export function parseValue<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidInput(fieldProblems(result.error));
  return result.data;
}

/**
 * A GraphQL mutation's `input`: parsed with its schema next to the module's SDL, then handed to
 * `work` (the service call). Every field problem, the schema's or the service's, is named under
 * `input.`, e.g. `input.items[2].quantity`.
 */
export function withInput<S extends z.ZodType, T>(
  schema: S,
  input: unknown,
  work: (input: z.output<S>) => Promise<T>,
): Promise<T> {
  return underField('input', () => work(parseValue(schema, input)));
}

/**
 * Parses a GraphQL argument (or any value at `prefix`) with its zod schema: the typed, valid
 * value, or a 400 naming every problem, e.g. `input.items[2].quantity`.
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, prefix = 'input'): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidInput(fieldProblems(result.error, prefix));
  return result.data;
}

/** An id (UUID), in lower case. */
export const id = () =>
  z
    .string()
    .refine(isUuid, { message: 'is not a valid id' })
    .transform((value) => value.toLowerCase());
