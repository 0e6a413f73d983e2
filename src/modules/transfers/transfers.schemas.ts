/** The transfers' GraphQL inputs, parsed at the edge: the service receives them valid and typed. */
import { z } from 'zod';
import { IdempotencyKey } from '../../kernel/graphql/idempotency';
import { id } from '../../kernel/validation';
import { ItemInput, ItemQuantity, MAX_ITEMS } from '../stock';

export const CreateTransferInput = z
  .object({
    id: id().nullish(),
    from_warehouse_id: id(),
    to_warehouse_id: id(),
    items: z
      .array(ItemInput)
      .min(1, 'must hold at least one item')
      .max(MAX_ITEMS, `may hold at most ${MAX_ITEMS} items`),
    idempotency_key: IdempotencyKey,
  })
  .superRefine((input, context) => {
    if (input.from_warehouse_id === input.to_warehouse_id)
      context.addIssue({
        code: 'custom',
        path: ['to_warehouse_id'],
        message: 'must be another warehouse than from_warehouse_id',
      });
  });
export type CreateTransferInput = z.output<typeof CreateTransferInput>;

/** Ship or cancel a whole transfer. */
export const TransferIdInput = z.object({ id: z.string(), idempotency_key: IdempotencyKey });

const ReceivedItem = z.object({ item_id: z.string(), quantity: ItemQuantity });
export type ReceivedItem = z.output<typeof ReceivedItem>;

export const ReceiveTransferInput = z.object({
  id: z.string(),
  location_id: z.string().nullish(),
  items: z.array(ReceivedItem).min(1, 'must name at least one item').max(MAX_ITEMS).nullish(),
  idempotency_key: IdempotencyKey,
});
export type ReceiveTransferInput = z.output<typeof ReceiveTransferInput>;
