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

export const UNSTORABLE_TEXT_MESSAGE = 'must not contain U+0000 or unpaired surrogates';

/**
 * Whether PostgreSQL can store the text: no NUL character and no UTF-16 surrogate that is not part
 * of a pair. One pass over its code units, each looked at once.
 */
export function isStorableText(value: string): boolean {
  const length = value.length;
  for (let index = 0; index < length; index += 1) {
    const unit = value.charCodeAt(index);
    if (unit === 0) return false;
    if (unit < 0xd800 || unit > 0xdfff) continue;
    // A high surrogate needs a low one next; a low one met here had no high one before it.
    if (unit > 0xdbff) return false;
    const next = index + 1 < length ? value.charCodeAt(index + 1) : 0;
    if (next < 0xdc00 || next > 0xdfff) return false;
    index += 1;
  }
  return true;
}

/** A string that can be stored (see `isStorableText`). */
export const storableText = () => z.string().refine(isStorableText, { message: UNSTORABLE_TEXT_MESSAGE });

/** Control characters a name may not hold: all but tab, line feed and carriage return. */
// eslint-disable-next-line no-control-regex
const NAME_CONTROL_CHARACTERS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
const NAME_CONTROL_MESSAGE = 'must not contain control characters other than tab, CR and LF';

/** A display name: 1 to `max` characters, not only spaces, no control characters but tab, CR and LF. */
export const displayName = (max = 255) =>
  z
    .string()
    .refine((value) => value.trim() !== '' && value.length <= max, {
      message: `must be 1 to ${max} characters, not only spaces`,
    })
    .refine((value) => !NAME_CONTROL_CHARACTERS.test(value), { message: NAME_CONTROL_MESSAGE });

/** A name stored without its surrounding spaces: 1 to `max` characters once trimmed, as `displayName` otherwise. */
export const trimmedName = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine((value) => !NAME_CONTROL_CHARACTERS.test(value), { message: NAME_CONTROL_MESSAGE });

/** A place in a value being walked: its parent's place and its key there (paths are built only when needed). */
interface Place {
  parent: Place | null;
  key: PropertyKey;
}

const pathOfPlace = (place: Place | null, last?: PropertyKey): PropertyKey[] => {
  const path: PropertyKey[] = last === undefined ? [] : [last];
  for (let at = place; at; at = at.parent) path.push(at.key);
  return path.reverse();
};

/**
 * Where a value holds text PostgreSQL cannot store, as paths into it: strings and the names of
 * object members, at any depth. Iterative, so a deeply nested body cannot exhaust the stack, and
 * linear in the size of the value: each member records only its parent's place, and a path is
 * spelled out only for a member found wanting.
 */
export function unstorableTextPaths(value: unknown): PropertyKey[][] {
  const found: PropertyKey[][] = [];
  const pending: { value: unknown; place: Place | null }[] = [{ value, place: null }];
  while (pending.length > 0) {
    const { value: current, place } = pending.pop()!;
    if (typeof current === 'string') {
      if (!isStorableText(current)) found.push(pathOfPlace(place));
    } else if (Array.isArray(current)) {
      for (let index = 0; index < current.length; index += 1)
        pending.push({ value: current[index], place: { parent: place, key: index } });
    } else if (current !== null && typeof current === 'object' && !(current instanceof Date)) {
      for (const key of Object.keys(current)) {
        if (!isStorableText(key)) found.push(pathOfPlace(place, key));
        else pending.push({ value: (current as Record<string, unknown>)[key], place: { parent: place, key } });
      }
    }
  }
  return found.reverse();
}

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

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

const FORMAT_NAMES: Record<string, string> = {
  email: 'an e-mail address',
  uuid: 'a UUID',
  url: 'a URL',
  datetime: 'an ISO 8601 date and time',
  date: 'an ISO 8601 date',
};

const plural = (count: number | bigint, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

function boundMessage(issue: { origin: string; inclusive?: boolean }, bound: number | bigint, side: 'least' | 'most') {
  if (issue.origin === 'string') return `must have at ${side} ${plural(bound, 'character')}`;
  if (issue.origin === 'array' || issue.origin === 'set') return `must have at ${side} ${plural(bound, 'item')}`;
  if (issue.inclusive === false) return `must be ${side === 'least' ? 'greater' : 'less'} than ${bound}`;
  return `must be at ${side} ${bound}`;
}

/**
 * How a failed rule reads in a 400 (REST `details[].message`, GraphQL `extensions.field`'s
 * message): the field's name comes first, so each message is the predicate, e.g. `must be an
 * integer`. Messages a schema sets itself (`refine`) take precedence.
 */
export const issueMessage: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      return `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case 'too_small':
      return boundMessage(issue, issue.minimum, 'least');
    case 'too_big':
      return boundMessage(issue, issue.maximum, 'most');
    case 'invalid_format':
      if (issue.format === 'regex') return `must match the pattern ${issue.pattern}`;
      return `must be ${FORMAT_NAMES[issue.format] ?? `a valid ${issue.format}`}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map((value) => JSON.stringify(value)).join(', ')}`;
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'unrecognized_keys':
      return 'is not a known field';
    case 'invalid_union':
      return 'matches none of the allowed forms';
    default:
      return undefined;
  }
};

/**
 * Parses with the messages of `issueMessage`; every input of the API (REST path, query, headers
 * and bodies, GraphQL arguments) is parsed through here. This is also where the one text rule
 * holds for all of them: no string and no member name anywhere in the input may hold U+0000 or an
 * unpaired surrogate, which PostgreSQL refuses (and nothing else needs), whatever the schema says.
 */
export function safeParseInput<S extends z.ZodType>(schema: S, value: unknown): z.ZodSafeParseResult<z.output<S>> {
  const result = schema.safeParse(value, { error: issueMessage });
  const unstorable = unstorableTextPaths(value);
  if (unstorable.length === 0) return result;
  const issues: z.core.$ZodIssue[] = unstorable.map((path) => ({
    code: 'custom',
    path,
    message: UNSTORABLE_TEXT_MESSAGE,
    input: undefined,
  }));
  // The schema's own complaint about the same text (a pattern it fails, say) says less than the rule.
  const named = new Set(unstorable.map((path) => path.map(String).join('\0')));
  const others = result.success
    ? []
    : result.error.issues.filter((issue) => !named.has(issue.path.map(String).join('\0')));
  return { success: false, error: new z.ZodError([...issues, ...others]) } as z.ZodSafeParseResult<z.output<S>>;
}

const pathOf = (path: readonly PropertyKey[], prefix: string) =>
  path.reduce<string>(
    (field, part) =>
      typeof part === 'number' ? `${field}[${part}]` : field ? `${field}.${String(part)}` : String(part),
    prefix,
  );

/** A branch of a union the value is not even of the type of (an object given where a list is one form). */
const isOtherType = (branch: z.core.$ZodIssue[]) =>
  branch.length === 1 && branch[0]!.code === 'invalid_type' && branch[0]!.path.length === 0;

/**
 * The problems one issue stands for, with paths from the parsed value: an unknown member is named
 * itself (`body.data.colour is not a known field`); a value matching no form of a union is
 * described by the forms of its type (one object form given an object names the object's fields),
 * or by the types it may have.
 */
function problemsOf(issue: z.core.$ZodIssue, at: readonly PropertyKey[]): { path: PropertyKey[]; message: string }[] {
  const path = [...at, ...issue.path];
  if (issue.code === 'unrecognized_keys')
    return issue.keys.map((key) => ({ path: [...path, key], message: issue.message }));
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const sameType = issue.errors.filter((branch) => !isOtherType(branch));
    if (sameType.length > 0) return sameType.flat().flatMap((branchIssue) => problemsOf(branchIssue, path));
    const types = issue.errors
      .map((branch) => branch[0]!)
      .map((typeIssue) =>
        typeIssue.code === 'invalid_type' ? (TYPE_NAMES[typeIssue.expected] ?? typeIssue.expected) : '',
      );
    return [{ path, message: `must be ${[...new Set(types)].join(' or ')}` }];
  }
  return [{ path, message: issue.message }];
}

/** The text rule's problems of a value parsed outside a zod schema (a CSV upload's rows), under `prefix`. */
export const unstorableTextProblems = (value: unknown, prefix = ''): FieldProblem[] =>
  unstorableTextPaths(value).map((path) => ({ field: pathOf(path, prefix), message: UNSTORABLE_TEXT_MESSAGE }));

/** `items[2].quantity`-style paths of a zod failure, relative to the value parsed, or under `prefix`. */
export function fieldProblems(error: ZodError, prefix = ''): FieldProblem[] {
  const problems = error.issues.flatMap((issue) => problemsOf(issue, []));
  const seen = new Set<string>();
  return problems
    .map(({ path, message }) => ({ field: pathOf(path, prefix), message }))
    .filter((problem) => {
      const key = `${problem.field}\0${problem.message}`;
      return !seen.has(key) && Boolean(seen.add(key));
    });
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
  const result = safeParseInput(schema, value);
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
  const result = safeParseInput(schema, value);
  if (!result.success) throw invalidInput(fieldProblems(result.error, prefix));
  return result.data;
}

/** An id (UUID), in lower case. */
export const id = () =>
  z
    .string()
    .refine(isUuid, { message: 'is not a valid id' })
    .transform((value) => value.toLowerCase());
