/** Every input of discounts: the REST body, the GraphQL inputs and the face's query, as zod schemas. */
import { isUuid } from '../../kernel/ids';
import { z } from '../../kernel/rest/schemas';
import { displayName } from '../../kernel/validation';
import { DISCOUNT_KINDS, DISCOUNT_TARGETS } from './discounts.types';

/** The largest amount in minor units (GraphQL `Int`: 2^31 − 1). */
export const MAX_AMOUNT = 2_147_483_647;
/** Most products and categories one discount names. */
export const MAX_DISCOUNT_PRODUCTS = 1_000;
export const MAX_DISCOUNT_CATEGORIES = 100;
/** Longest code a buyer can type. */
export const MAX_CODE_LENGTH = 64;
/** Most codes one evaluation weighs, and most lines. */
export const MAX_CODES_PER_QUERY = 20;
export const MAX_LINES_PER_QUERY = 1_000;

const Id = (description: string) =>
  z
    .string()
    .max(64)
    .refine(isUuid, { message: 'is not a valid id' })
    .transform((value) => value.toLowerCase())
    .openapi({ description });

export const DiscountCode = z
  .string()
  .min(1)
  .max(MAX_CODE_LENGTH)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'must be letters, digits, "-", "_" and ".", starting with a letter or digit')
  .openapi({ description: 'What the buyer types, 1 to 64 characters; matched without regard to case.' });

const Currency = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 currency code in upper case, for example EUR')
  .openapi({ description: 'ISO 4217 currency code in upper case, for example `EUR`.' });

const Instant = (description: string) =>
  z.iso
    .datetime({ offset: true })
    .transform((value) => new Date(value))
    .nullable()
    .optional()
    .openapi({ description });

const Limit = (description: string) => z.int().min(1).max(MAX_AMOUNT).nullable().optional().openapi({ description });

const CategoryId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

/** The fields of a discount as the REST interface names them. */
const discountFields = {
  code: DiscountCode.nullable()
    .optional()
    .openapi({ description: 'The code; null or left out: an automatic promotion, applied without a code.' }),
  title: displayName(200).openapi({ description: 'What the buyer sees, 1 to 200 characters, e.g. `10 % off tea`.' }),
  channelId: Id('Only in this sales channel; null or left out: in every channel.').nullable().optional(),
  kind: z.enum(DISCOUNT_KINDS).openapi({ description: '`PERCENT` off, or a `FIXED` amount off.' }),
  percentBasisPoints: z
    .int()
    .min(1)
    .max(10_000)
    .nullable()
    .optional()
    .openapi({ description: 'PERCENT: the share off in basis points, 1 to 10000 (1000 is 10 %).' }),
  amount: z
    .int()
    .min(1)
    .max(MAX_AMOUNT)
    .nullable()
    .optional()
    .openapi({ description: 'FIXED: the amount off in minor units of `currency`.' }),
  currency: Currency.nullable().optional().openapi({ description: 'FIXED: the currency of `amount`.' }),
  target: z.enum(DISCOUNT_TARGETS).openapi({
    description: '`ORDER`: off the whole order, split over its lines; `ITEMS`: off the lines it names only.',
  }),
  productIds: z
    .array(Id('A product.'))
    .max(MAX_DISCOUNT_PRODUCTS)
    .optional()
    .openapi({ description: `ITEMS: the products it applies to (at most ${MAX_DISCOUNT_PRODUCTS}).` }),
  categoryIds: z
    .array(CategoryId)
    .max(MAX_DISCOUNT_CATEGORIES)
    .optional()
    .openapi({ description: `ITEMS: the categories it applies to (at most ${MAX_DISCOUNT_CATEGORIES}).` }),
  minimumSubtotal: z
    .int()
    .min(0)
    .max(MAX_AMOUNT)
    .nullable()
    .optional()
    .openapi({ description: "The lines' sum before discounts must be at least this (minor units)." }),
  startsAt: Instant('Valid from (ISO 8601 with offset); null: at once.'),
  endsAt: Instant('Valid until, exclusive (ISO 8601 with offset); null: without end.'),
  usageLimit: Limit('How many completed orders may use it in all; null: no limit.'),
  usageLimitPerBuyer: Limit('How many completed orders of one buyer (by e-mail) may use it; null: no limit.'),
  combinable: z
    .boolean()
    .optional()
    .openapi({ description: 'Stacks on top of other discounts (default false: only the best one applies).' }),
  active: z.boolean().optional().openapi({ description: 'Off: never applies, kept with its uses (default true).' }),
};

type Fields = z.output<z.ZodObject<typeof discountFields>>;
type Name = keyof Fields;

/** The rules across fields, naming a field as the interface does (`name`). */
const crossFieldRules = (name: (field: Name) => string) => (input: Fields, context: z.RefinementCtx) => {
  const problem = (field: Name, message: string) => context.addIssue({ code: 'custom', path: [name(field)], message });
  if (input.kind === 'PERCENT') {
    if (input.percentBasisPoints == null) problem('percentBasisPoints', 'is required for a PERCENT discount');
    if (input.amount != null) problem('amount', 'must be left out for a PERCENT discount');
    if (input.currency != null) problem('currency', 'must be left out for a PERCENT discount');
  } else {
    if (input.amount == null) problem('amount', 'is required for a FIXED discount');
    if (input.currency == null) problem('currency', 'is required for a FIXED discount');
    if (input.percentBasisPoints != null) problem('percentBasisPoints', 'must be left out for a FIXED discount');
  }
  const named = (input.productIds?.length ?? 0) + (input.categoryIds?.length ?? 0);
  if (input.target === 'ITEMS' && named === 0) problem('productIds', 'an ITEMS discount names products or categories');
  if (input.target === 'ORDER' && named > 0) problem('productIds', 'an ORDER discount names no products or categories');
  if (input.startsAt && input.endsAt && input.startsAt >= input.endsAt) problem('endsAt', 'must be after startsAt');
};

export const DiscountInput = z
  .object(discountFields)
  .strict()
  .superRefine(crossFieldRules((field) => field))
  .openapi('DiscountInput');
export type DiscountInput = z.output<typeof DiscountInput>;

export const DiscountBody = z.object({ data: DiscountInput }).strict();

export const DiscountSchema = z
  .object({
    id: z.string(),
    code: z.string().nullable(),
    title: z.string(),
    channelId: z.string().nullable(),
    kind: z.enum(DISCOUNT_KINDS),
    percentBasisPoints: z.int().nullable(),
    amount: z.int().nullable(),
    currency: z.string().nullable(),
    target: z.enum(DISCOUNT_TARGETS),
    productIds: z.array(z.string()),
    categoryIds: z.array(z.string()),
    minimumSubtotal: z.int().nullable(),
    startsAt: z.int().nullable().openapi({ description: 'Unix milliseconds.' }),
    endsAt: z.int().nullable().openapi({ description: 'Unix milliseconds.' }),
    usageLimit: z.int().nullable(),
    usageLimitPerBuyer: z.int().nullable(),
    combinable: z.boolean(),
    active: z.boolean(),
    createdAt: z.int().openapi({ description: 'Unix milliseconds.' }),
    updatedAt: z.int().openapi({ description: 'Unix milliseconds.' }),
  })
  .openapi('Discount');

/** `evaluate`'s query as the face takes it (checked at its door: amounts are safe non-negative integers). */
export const DiscountQueryInput = z.object({
  channelId: z.string().max(64),
  currency: z.string().max(3),
  codes: z.array(z.string().max(MAX_CODE_LENGTH * 2)).max(MAX_CODES_PER_QUERY),
  buyerEmail: z.string().max(320).nullable(),
  lines: z
    .array(
      z.object({
        key: z.string().max(200),
        productId: z.string().max(64),
        categoryIds: z.array(z.string().max(64)).max(MAX_DISCOUNT_CATEGORIES),
        amount: z.number().int().min(0).refine(Number.isSafeInteger, 'is not a safe integer'),
      }),
    )
    .max(MAX_LINES_PER_QUERY)
    .refine((lines) => new Set(lines.map((line) => line.key)).size === lines.length, {
      message: 'has each line key once',
    }),
  now: z.date(),
});

const snake = (field: string) => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * The GraphQL input of a discount: the same fields in snake_case (problems named so), answered in
 * the REST names the service takes.
 */
export const GraphqlDiscountInput = z
  .object(
    Object.fromEntries(Object.entries(discountFields).map(([field, schema]) => [snake(field), schema])) as {
      [K in keyof typeof discountFields as K extends string ? SnakeCase<K> : never]: (typeof discountFields)[K];
    },
  )
  .transform(
    (input) =>
      Object.fromEntries(
        Object.entries(input).map(([field, value]) => [
          field.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()),
          value,
        ]),
      ) as Fields,
  )
  .superRefine(crossFieldRules((field) => snake(field)));

type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? Head extends Uppercase<Head>
    ? Head extends Lowercase<Head>
      ? `${Head}${SnakeCase<Tail>}`
      : `_${Lowercase<Head>}${SnakeCase<Tail>}`
    : `${Head}${SnakeCase<Tail>}`
  : S;
