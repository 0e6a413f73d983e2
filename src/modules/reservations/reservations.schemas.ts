/** The reservations' GraphQL inputs, parsed at the edge: the service receives them valid and typed. */
import { z } from 'zod';
import { IdempotencyKey } from '../../kernel/graphql/idempotency';
import { displayName, id } from '../../kernel/validation';
import { ALLOCATION_STRATEGIES } from '../catalog';
import { AllocationTargetInput, DestinationInput } from '../stock';

/** How far ahead a reservation may expire. */
export const MAX_RESERVATION_MS = 30 * 24 * 60 * 60 * 1000;

/** An e-mail address of a customer or buyer. */
export const EmailAddress = z
  .string()
  .refine((email) => email.length <= 254 && /^[^\s@]+@[^\s@]+$/.test(email), { message: 'must be an e-mail address' });

/** A phone number of a customer or buyer. */
export const PhoneNumber = z.string().regex(/^[+0-9 ()-]{3,32}$/, 'must be a phone number');

const Contact = z.object({
  name: displayName(255),
  email: EmailAddress.nullish(),
  phone: PhoneNumber.nullish(),
});

/** When a reservation stops holding stock: in the future, at most 30 days ahead. */
const ExpiresAt = z.number().refine(
  (at) => {
    const now = Date.now();
    return Number.isSafeInteger(at) && at > now && at <= now + MAX_RESERVATION_MS;
  },
  { message: 'must be a time (Unix milliseconds) in the future, at most 30 days ahead' },
);

export const CreateReservationInput = z.object({
  id: id().nullish(),
  ...AllocationTargetInput.shape,
  // Left out: the units come from the sales channel's warehouses, by allocation strategy.
  warehouse_id: AllocationTargetInput.shape.warehouse_id.nullish(),
  allocation_strategy: z.enum(ALLOCATION_STRATEGIES).nullish(),
  // For the CLOSEST strategy: where the reservation's goods will go.
  destination: DestinationInput.nullish(),
  customer: Contact,
  expires_at: ExpiresAt,
  notes: z.string().max(2000, 'must be at most 2000 characters').nullish(),
  idempotency_key: IdempotencyKey,
});
export type CreateReservationInput = z.output<typeof CreateReservationInput>;

export const RemoveReservationInput = z.object({ id: z.string(), idempotency_key: IdempotencyKey });

export const ExtendReservationInput = z.object({ id: z.string(), expires_at: ExpiresAt });
