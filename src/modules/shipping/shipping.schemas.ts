/** Every input of shipping methods, one zod schema per operation (REST bodies and GraphQL inputs). */
import { z } from '../../kernel/rest/schemas';
import { isUuid } from '../../kernel/ids';
import { displayName } from '../../kernel/validation';
import { SHIPPING_METHOD_TYPES, SHIPPING_RATE_KINDS } from './shipping.types';

/** The largest amount in minor units (GraphQL `Int`: 2^31 − 1). */
export const MAX_AMOUNT = 2_147_483_647;
/** Most countries one method serves (there are 249 ISO 3166-1 codes). */
export const MAX_COUNTRIES = 250;
/** Most weight brackets of one method. */
export const MAX_WEIGHT_BRACKETS = 50;
/** Most warehouses one pickup method is collected at. */
export const MAX_PICKUP_WAREHOUSES = 100;
/** The heaviest bracket: 1 000 tonnes in grams. */
export const MAX_GRAMS = 1_000_000_000;

const Id = (description: string) =>
  z
    .string()
    .max(64)
    .refine(isUuid, { message: 'is not a valid id' })
    .transform((value) => value.toLowerCase())
    .openapi({ description });

const Amount = (description: string) => z.int().min(0).max(MAX_AMOUNT).openapi({ description });

const Country = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code (ISO 3166-1 alpha-2)')
  .transform((value) => value.toUpperCase());

const Countries = z
  .array(Country)
  .max(MAX_COUNTRIES, `may hold at most ${MAX_COUNTRIES} countries`)
  .refine((countries) => new Set(countries).size === countries.length, { message: 'names a country twice' })
  .openapi({
    description:
      'ISO 3166-1 alpha-2 codes of the destinations served (a pickup: where its buyers may live); empty: none.',
  });

const Brackets = <T extends z.ZodType<{ upToGrams: number; amount: number }>>(bracket: T) =>
  z
    .array(bracket)
    .max(MAX_WEIGHT_BRACKETS, `may hold at most ${MAX_WEIGHT_BRACKETS} brackets`)
    .refine(
      (brackets) =>
        brackets.every((bracket, index) => index === 0 || bracket.upToGrams > brackets[index - 1]!.upToGrams),
      { message: 'must be in ascending order of weight, no weight twice' },
    );

const Grams = z.int().min(1).max(MAX_GRAMS);

/** A method as the service takes it. */
export interface ShippingMethodInput {
  channelId: string;
  title: string;
  type: (typeof SHIPPING_METHOD_TYPES)[number];
  countries: string[];
  rateKind: (typeof SHIPPING_RATE_KINDS)[number];
  flatAmount: number;
  freeAbove: number | null;
  weightBrackets: { upToGrams: number; amount: number }[];
  pickupWarehouseIds: string[];
  active: boolean;
}

const WeightBracketInput = z
  .object({
    upToGrams: Grams.openapi({ description: 'The heaviest parcel (grams) this bracket charges for, 1 to 10^9.' }),
    amount: Amount('The charge in minor units.'),
  })
  .strict()
  .openapi('WeightBracket');

/** The REST body's method (camelCase, as the REST interface names fields). */
export const ShippingMethodWrite = z
  .object({
    channelId: Id('The sales channel the method belongs to; its currency is the currency of every amount.'),
    title: displayName(100).openapi({ description: 'What the buyer sees, 1 to 100 characters.' }),
    type: z.enum(SHIPPING_METHOD_TYPES).openapi({ description: 'SHIPPING to an address, or PICKUP at a warehouse.' }),
    countries: Countries,
    rateKind: z.enum(SHIPPING_RATE_KINDS).openapi({ description: 'FLAT: `flatAmount`; WEIGHT: by `weightBrackets`.' }),
    flatAmount: Amount('The charge of a FLAT method in minor units; default 0.').optional(),
    freeAbove: Amount('A subtotal (minor units) at or above which the method is free; null or left out: never.')
      .nullable()
      .optional(),
    weightBrackets: Brackets(WeightBracketInput).optional().openapi({
      description: 'For WEIGHT (at least one): the first bracket the parcel fits charges; heavier: not offered.',
    }),
    pickupWarehouseIds: z
      .array(Id('A warehouse of the channel.'))
      .max(MAX_PICKUP_WAREHOUSES, `may hold at most ${MAX_PICKUP_WAREHOUSES} warehouses`)
      .optional()
      .openapi({ description: 'For PICKUP (at least one): warehouses of the sales channel the buyer collects at.' }),
    active: z.boolean().optional().openapi({ description: 'Whether the method is offered; default true.' }),
  })
  .strict()
  .openapi('ShippingMethodInput');

export const ShippingMethodBody = z.object({ data: ShippingMethodWrite }).strict();

export const fromRest = (input: z.output<typeof ShippingMethodWrite>): ShippingMethodInput => ({
  channelId: input.channelId,
  title: input.title,
  type: input.type,
  countries: input.countries,
  rateKind: input.rateKind,
  flatAmount: input.flatAmount ?? 0,
  freeAbove: input.freeAbove ?? null,
  weightBrackets: input.weightBrackets ?? [],
  pickupWarehouseIds: input.pickupWarehouseIds ?? [],
  active: input.active ?? true,
});

export const ShippingMethodSchema = z
  .object({
    id: z.string(),
    channelId: z.string(),
    currency: z.string().openapi({ description: "The channel's currency: the currency of every amount." }),
    title: z.string(),
    type: z.enum(SHIPPING_METHOD_TYPES),
    countries: z.array(z.string()),
    rateKind: z.enum(SHIPPING_RATE_KINDS),
    flatAmount: z.int(),
    freeAbove: z.int().nullable(),
    weightBrackets: z.array(z.object({ upToGrams: z.int(), amount: z.int() })),
    pickupWarehouseIds: z.array(z.string()),
    active: z.boolean(),
    createdAt: z.int().openapi({ description: 'Unix milliseconds.' }),
    updatedAt: z.int().openapi({ description: 'Unix milliseconds.' }),
  })
  .openapi('ShippingMethod');

// GraphQL inputs (snake_case, as the GraphQL API names fields)

const GraphQLMethodFields = {
  channel_id: Id('The sales channel.'),
  title: displayName(100),
  type: z.enum(SHIPPING_METHOD_TYPES),
  countries: Countries,
  rate_kind: z.enum(SHIPPING_RATE_KINDS),
  flat_amount: z.int().min(0).max(MAX_AMOUNT).nullish(),
  free_above: z.int().min(0).max(MAX_AMOUNT).nullish(),
  weight_brackets: Brackets(
    z
      .object({ up_to_grams: Grams, amount: z.int().min(0).max(MAX_AMOUNT) })
      .transform((bracket) => ({ upToGrams: bracket.up_to_grams, amount: bracket.amount })),
  ).nullish(),
  pickup_warehouse_ids: z.array(Id('A warehouse.')).max(MAX_PICKUP_WAREHOUSES).nullish(),
  active: z.boolean().nullish(),
};

export const CreateShippingMethodInput = z.object(GraphQLMethodFields);
export const UpdateShippingMethodInput = z.object({ id: z.string().max(64), ...GraphQLMethodFields });
export const DeleteShippingMethodInput = z.object({ id: z.string().max(64) });

export const fromGraphQL = (input: z.output<typeof CreateShippingMethodInput>): ShippingMethodInput => ({
  channelId: input.channel_id,
  title: input.title,
  type: input.type,
  countries: input.countries,
  rateKind: input.rate_kind,
  flatAmount: input.flat_amount ?? 0,
  freeAbove: input.free_above ?? null,
  weightBrackets: input.weight_brackets ?? [],
  pickupWarehouseIds: input.pickup_warehouse_ids ?? [],
  active: input.active ?? true,
});

/** `optionsFor`'s query as the face takes it (checked at the door of the face). */
export const FulfillmentQuerySchema = z.object({
  channelId: z.string(),
  currency: z.string(),
  destination: z
    .object({ country: z.string(), region: z.string().nullish(), postalCode: z.string().nullish() })
    .nullable(),
  subtotal: z.number().int().refine(Number.isSafeInteger),
  lines: z.array(
    z.object({
      key: z.string(),
      productId: z.string(),
      quantity: z.number().int().min(1).refine(Number.isSafeInteger),
    }),
  ),
});
