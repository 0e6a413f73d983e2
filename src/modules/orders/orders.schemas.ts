/** The orders' GraphQL inputs, parsed at the edge: the service receives them valid and typed. */
import { z } from 'zod';
import { IdempotencyKey } from '../../kernel/graphql/idempotency';
import { id } from '../../kernel/validation';
import { ALLOCATION_STRATEGIES } from '../catalog';
import { AllocationTargetInput, DestinationInput, ItemQuantity, MAX_ITEMS } from '../stock';

const TARGET_FIELDS = ['business_id', 'warehouse_id', 'channel_id'] as const;

/**
 * `createOrder(input:)`: a business, warehouse, channel and items, or a reservation to convert
 * (`reservation_id`, optionally with fewer items), never both.
 */
export const CreateOrderInput = z
  .object({
    id: id().nullish(),
    business_id: AllocationTargetInput.shape.business_id.nullish(),
    warehouse_id: AllocationTargetInput.shape.warehouse_id.nullish(),
    channel_id: AllocationTargetInput.shape.channel_id.nullish(),
    items: AllocationTargetInput.shape.items.nullish(),
    reservation_id: id().nullish(),
    allocation_strategy: z.enum(ALLOCATION_STRATEGIES).nullish(),
    destination: DestinationInput.nullish(),
    idempotency_key: IdempotencyKey,
  })
  .superRefine((input, context) => {
    const issue = (field: string, message: string) => context.addIssue({ code: 'custom', path: [field], message });
    if (input.reservation_id != null) {
      for (const field of [...TARGET_FIELDS, 'allocation_strategy', 'destination'] as const) {
        if (input[field] != null) issue(field, "must be left out with reservation_id: the reservation's is used");
      }
      return;
    }
    for (const field of ['business_id', 'channel_id', 'items'] as const) {
      if (input[field] == null) issue(field, 'is required without reservation_id');
    }
    if (input.warehouse_id != null && input.allocation_strategy != null)
      issue('allocation_strategy', "only applies without warehouse_id, across the channel's warehouses");
    if (input.warehouse_id != null && input.destination != null)
      issue('destination', "only applies without warehouse_id, across the channel's warehouses");
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

/** `returnOrderItems(input:)`: the items, and optionally an amount of the order's payment to refund. */
export const ReturnOrderItemsInput = items(ItemReference).extend({
  refund_amount: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).nullish(),
});

/** An operation that puts the items' units somewhere: every item names its `location_id`. */
export const OrderItemsToLocationInput = items(
  ItemReference.superRefine((item, context) => {
    if (item.location_id == null) context.addIssue({ code: 'custom', path: ['location_id'], message: 'is required' });
  }),
);

/** `createShipment(input:)`: units of some items of one order. */
export const CreateShipmentInput = z.object({
  order_id: z.string(),
  items: z
    .array(z.object({ item_id: z.string(), quantity: ItemQuantity }))
    .min(1, 'must name at least one item')
    .max(MAX_ITEMS, `may hold at most ${MAX_ITEMS} items`),
  idempotency_key: IdempotencyKey,
});
