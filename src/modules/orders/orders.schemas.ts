/** The orders' GraphQL inputs, parsed at the edge: the service receives them valid and typed. */
import { z } from 'zod';
import { IdempotencyKey } from '../../kernel/graphql/idempotency';
import { id } from '../../kernel/validation';
import { AllocationTargetInput } from '../stock/allocation.schemas';

export const CreateOrderInput = z.object({
  id: id().nullish(),
  ...AllocationTargetInput.shape,
  idempotency_key: IdempotencyKey,
});
export type CreateOrderInput = z.output<typeof CreateOrderInput>;

/** A change of a whole order (ship, cancel). */
export const OrderIdInput = z.object({ id: z.string(), idempotency_key: IdempotencyKey });

const ItemReference = z.object({ item_id: z.string(), location_id: z.string().nullish() });
export type OrderItemReference = z.output<typeof ItemReference>;

const items = (item: z.ZodType<OrderItemReference>) =>
  z.object({
    order_id: z.string(),
    items: z.array(item).min(1, 'must name at least one item'),
    idempotency_key: IdempotencyKey,
  });

/** An operation on some items of an order. */
export const OrderItemsInput = items(ItemReference);

/** An operation that puts the items' units somewhere: every item names its `location_id`. */
export const OrderItemsToLocationInput = items(
  ItemReference.superRefine((item, context) => {
    if (item.location_id == null) context.addIssue({ code: 'custom', path: ['location_id'], message: 'is required' });
  }),
);
