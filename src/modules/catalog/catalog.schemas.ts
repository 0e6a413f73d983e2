/** The catalog's GraphQL inputs, parsed at the edge: services receive them valid and typed. */
import { z } from 'zod';
import { isUuid } from '../../kernel/ids';
import { code, displayName } from '../../kernel/validation';

/** How an order or reservation through a sales channel splits over the channel's warehouses (stock's plan). */
export const ALLOCATION_STRATEGIES = [
  'PRIORITY',
  'MOST_STOCK',
  'SINGLE_WAREHOUSE',
  'FEWEST_SHIPMENTS',
  'CLOSEST',
] as const;
export type AllocationStrategy = (typeof ALLOCATION_STRATEGIES)[number];

/** A latitude, a longitude, and a country code (ISO 3166-1 alpha-2, in upper case): where a warehouse is. */
export const Latitude = z.number().min(-90, 'must be from -90 to 90').max(90, 'must be from -90 to 90');
export const Longitude = z.number().min(-180, 'must be from -180 to 180').max(180, 'must be from -180 to 180');
export const CountryCode = z
  .string()
  .regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code (ISO 3166-1 alpha-2)')
  .transform((value) => value.toUpperCase());

const Name = displayName();
const Sku = code(100);
const PositionCode = code(64);
const Gtins = z.array(code(64)).max(20, 'may hold at most 20 barcodes');

/** A product's tax class (GraphQL `TaxClass`, upper case) as stored: lower case. */
export const TAX_CLASSES = ['standard', 'reduced', 'zero'] as const;
export type TaxClass = (typeof TAX_CLASSES)[number];
const TaxClassInput = z.enum(['STANDARD', 'REDUCED', 'ZERO']).transform((value) => value.toLowerCase() as TaxClass);
const WeightGrams = z.number().int().min(0).max(1_000_000_000);

export const CreateProductInput = z.object({
  sku: Sku,
  name: Name,
  gtin: Gtins.nullish(),
  tax_class: TaxClassInput.nullish(),
  weight_grams: WeightGrams.nullish(),
});
export const UpdateProductInput = z.object({
  id: z.string(),
  sku: Sku.nullish(),
  name: Name.nullish(),
  gtin: Gtins.nullish(),
  tax_class: TaxClassInput.nullish(),
  weight_grams: WeightGrams.nullish(),
});
/** Businesses: a name. */
export const CreateNamedInput = z.object({ name: Name });
export const UpdateNamedInput = z.object({ id: z.string(), name: Name.nullish() });
/** The currency a sales channel sells in: ISO 4217, upper case. */
const Currency = z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 currency code in upper case, for example EUR');
/** Sales channels: a name, the currency they sell in and whether their prices include tax. */
export const CreateSalesChannelInput = z.object({
  name: Name,
  currency: Currency.nullish(),
  tax_inclusive: z.boolean().nullish(),
});
export const UpdateSalesChannelInput = z.object({
  id: z.string(),
  name: Name.nullish(),
  currency: Currency.nullish(),
  tax_inclusive: z.boolean().nullish(),
});
/** Where a warehouse is: a point (latitude and longitude together) and a country; any may be left out. */
const WarehousePlace = {
  latitude: Latitude.nullish(),
  longitude: Longitude.nullish(),
  country_code: CountryCode.nullish(),
};
const pointTogether = (place: { latitude?: number | null; longitude?: number | null }) =>
  (place.latitude == null) === (place.longitude == null);
const POINT_TOGETHER = { message: 'latitude and longitude go together', path: ['longitude'] };
export const CreateWarehouseInput = z
  .object({ business_id: z.string(), name: Name, ...WarehousePlace })
  .refine(pointTogether, POINT_TOGETHER);
export const UpdateWarehouseInput = z
  .object({ id: z.string(), name: Name.nullish(), ...WarehousePlace })
  .refine(pointTogether, POINT_TOGETHER);
export const CreatePositionInput = z.object({ warehouse_id: z.string(), code: PositionCode });
export const UpdatePositionInput = z.object({ id: z.string(), code: PositionCode.nullish() });
/** `warehouses(business_id:)`: a business id, when given. */
export const BusinessIdArgument = z.string().refine(isUuid, { message: 'is not a valid id' }).nullish();

/** Most warehouses one sales channel sells from. */
export const MAX_CHANNEL_WAREHOUSES = 50;

export const SetSalesChannelWarehousesInput = z.object({
  channel_id: z.string(),
  allocation_strategy: z.enum(ALLOCATION_STRATEGIES).nullish(),
  warehouse_ids: z
    .array(z.string())
    .max(MAX_CHANNEL_WAREHOUSES, `may hold at most ${MAX_CHANNEL_WAREHOUSES} warehouses`),
});

/** Most components of one bundle, and most units of one component in a unit of a bundle. */
export const MAX_BUNDLE_COMPONENTS = 100;
export const MAX_COMPONENT_QUANTITY = 1_000_000;

export const SetBundleComponentsInput = z
  .object({
    product_id: z.string().nullish(),
    sku: Sku.nullish(),
    components: z
      .array(z.object({ sku: Sku, quantity: z.number().int().min(1).max(MAX_COMPONENT_QUANTITY) }))
      .max(MAX_BUNDLE_COMPONENTS, `may hold at most ${MAX_BUNDLE_COMPONENTS} components`),
  })
  .refine((input) => (input.product_id == null) !== (input.sku == null), {
    message: 'name the product by product_id or by sku, not both',
    path: ['product_id'],
  });
export type SetBundleComponentsInput = z.output<typeof SetBundleComponentsInput>;
