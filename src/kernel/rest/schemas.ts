import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { errorRegistry } from '../errors';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../pagination';

extendZodWithOpenApi(z);

export { z };

export const FieldProblemSchema = z
  .object({
    field: z.string().openapi({ description: 'Where the problem is, e.g. `body.data.key` or `query.page[size]`.' }),
    message: z.string(),
    id: z.string().optional().openapi({ description: 'A compare-and-set conflict: the entity that changed.' }),
    expected: z
      .int()
      .optional()
      .openapi({ description: 'A compare-and-set conflict: the value the request expected.' }),
    actual: z.int().optional().openapi({ description: 'A compare-and-set conflict: the value found.' }),
  })
  .openapi('FieldProblem');

export const ErrorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z.int().openapi({ description: 'Equals the HTTP status.' }),
      message: z.string().openapi({ description: 'A fixed prefix per status, optionally followed by `; <reason>`.' }),
      details: z.array(FieldProblemSchema).nullable().openapi({
        description: 'Null, except for validation errors, which list the fields, and compare-and-set conflicts.',
      }),
    }),
    meta: z.null(),
  })
  .openapi('ErrorEnvelope', {
    example: {
      error: {
        code: errorRegistry.BAD_REQUEST.status,
        message: errorRegistry.BAD_REQUEST.message,
        details: [{ field: 'body.data.key', message: 'Too big: expected string to have <=63 characters' }],
      },
      meta: null,
    },
  });

export const PageBlockSchema = z
  .object({
    first: z.string().openapi({ description: 'URL of the first page.' }),
    next: z.string().nullable().openapi({ description: 'URL of the next page, null on the last page.' }),
    after: z.string().nullable().openapi({ description: 'Cursor to pass as `page[after]` for the next page.' }),
    previous: z.string().nullable().openapi({ description: 'URL of the previous page, null on the first page.' }),
    before: z.string().nullable().openapi({ description: 'Cursor to pass as `page[before]` for the previous page.' }),
  })
  .openapi('PageBlock');

/** `{data: T, page: null, meta: null}` */
export const singleEnvelope = <T extends z.ZodType>(data: T) => z.object({ data, page: z.null(), meta: z.null() });

/** `{data: T[], page: PageBlock, meta: null}` */
export const listEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item), page: PageBlockSchema, meta: z.null() });

/** The `page[size]`, `page[after]` and `page[before]` query parameters of every list. */
export const pageQuery = {
  'page[size]': z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .default(DEFAULT_PAGE_SIZE)
    .openapi({
      type: 'integer',
      minimum: 1,
      maximum: MAX_PAGE_SIZE,
      default: DEFAULT_PAGE_SIZE,
      description: `Page size, 1 to ${MAX_PAGE_SIZE}; default ${DEFAULT_PAGE_SIZE}.`,
    }),
  'page[after]': z
    .string()
    .min(1)
    .max(1024)
    .optional()
    .openapi({ description: 'Cursor from `page.after`: the page after it.' }),
  'page[before]': z
    .string()
    .min(1)
    .max(1024)
    .optional()
    .openapi({ description: 'Cursor from `page.before`: the page before it.' }),
};

/** The page a list operation's parsed `pageQuery` asks for. */
export const pageArguments = (query: { 'page[size]': number; 'page[after]'?: string; 'page[before]'?: string }) => ({
  size: query['page[size]'],
  after: query['page[after]'],
  before: query['page[before]'],
});
