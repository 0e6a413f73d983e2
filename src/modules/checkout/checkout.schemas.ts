/** The checkouts' GraphQL inputs, parsed at the edge: the service receives them valid and typed. */
import { z } from 'zod';
import { IdempotencyKey } from '../../kernel/graphql/idempotency';
import { displayName, id } from '../../kernel/validation';
import { CountryCode } from '../catalog';
import { EmailAddress, PhoneNumber } from '../reservations';
import { ItemQuantity } from '../stock';

/** Most lines one checkout holds. */
export const MAX_CHECKOUT_LINES = 100;
/** Most discount codes one checkout carries. */
export const MAX_DISCOUNT_CODES = 10;

const Text = (max: number) => z.string().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

/** A line: a product by id or by SKU (exactly one of them), and a quantity. */
const LineInput = z
  .object({ product_id: id().nullish(), sku: Text(255).nullish(), quantity: ItemQuantity })
  .refine((line) => (line.product_id == null) !== (line.sku == null), {
    message: 'needs exactly one of product_id and sku',
  });
export type CheckoutLineInput = z.output<typeof LineInput>;

/** The buyer, by the same rules as a reservation's customer. */
const BuyerInput = z.object({
  email: EmailAddress.nullish(),
  first_name: displayName(255).nullish(),
  last_name: displayName(255).nullish(),
  full_name: displayName(255).nullish(),
  phone_number: PhoneNumber.nullish(),
});
export type BuyerInput = z.output<typeof BuyerInput>;

const DestinationInput = z.object({
  country: CountryCode,
  region: z
    .string()
    .regex(/^[A-Za-z0-9]{1,3}$/, 'must be an ISO 3166-2 subdivision code without the country')
    .transform((region) => region.toUpperCase())
    .nullish(),
  postal_code: z
    .string()
    .regex(/^[A-Za-z0-9 -]{1,16}$/, 'must be a postal code')
    .nullish(),
});
export type CheckoutDestinationInput = z.output<typeof DestinationInput>;

const PaymentInput = z.object({
  handler: z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, 'must be a payment handler id'),
  // An instrument token, never a card number (a run of 13 or more digits is refused).
  token: Text(512)
    .refine((token) => !/\d{13,}/.test(token.replace(/[\s-]/g, '')), { message: 'must be a token, not a card number' })
    .nullish(),
});
export type CheckoutPaymentInput = z.output<typeof PaymentInput>;

/** What the buyer chose: every field of a create, and of an update, which replaces all of them. */
const CheckoutFields = {
  line_items: z.array(LineInput).max(MAX_CHECKOUT_LINES, `may hold at most ${MAX_CHECKOUT_LINES} lines`),
  buyer: BuyerInput.nullish(),
  destination: DestinationInput.nullish(),
  discount_codes: z.array(Text(64)).max(MAX_DISCOUNT_CODES, `may hold at most ${MAX_DISCOUNT_CODES} codes`).nullish(),
  fulfillment_option_id: Text(255).nullish(),
  payment: PaymentInput.nullish(),
};

export const CreateCheckoutInput = z.object({
  business_id: id(),
  channel_id: id(),
  ...CheckoutFields,
  idempotency_key: IdempotencyKey,
});
export type CreateCheckoutInput = z.output<typeof CreateCheckoutInput>;

export const UpdateCheckoutInput = z.object({ id: id(), ...CheckoutFields, idempotency_key: IdempotencyKey });
export type UpdateCheckoutInput = z.output<typeof UpdateCheckoutInput>;

/** What a buyer sets on a checkout, the same for a create and an update. */
export type CheckoutChoices = Omit<CreateCheckoutInput, 'business_id' | 'channel_id' | 'idempotency_key'>;

export const CheckoutIdInput = z.object({ id: id(), idempotency_key: IdempotencyKey });
