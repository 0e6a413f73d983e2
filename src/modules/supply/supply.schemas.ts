/** The supply's GraphQL inputs, parsed at the edge: the service receives them valid and typed. */
import { z } from 'zod';
import { IdempotencyKey } from '../../kernel/graphql/idempotency';
import { id } from '../../kernel/validation';
import { ItemInput, MAX_ITEMS } from '../stock';

const itemList = (min: number) => {
  const message = `must hold 1 to ${MAX_ITEMS} items`;
  return z.array(ItemInput).min(min, message).max(MAX_ITEMS, message);
};

export const CreateAnnouncementInput = z.object({
  id: id().nullish(),
  business_id: z.string(),
  warehouse_id: z.string(),
  reference: z.string().min(1, 'must be 1 to 255 characters').max(255, 'must be 1 to 255 characters').nullish(),
  items: itemList(0).nullish(),
  idempotency_key: IdempotencyKey,
});
export type CreateAnnouncementInput = z.output<typeof CreateAnnouncementInput>;

export const AddAnnouncementItemsInput = z.object({
  announcement_id: z.string(),
  items: itemList(1),
  idempotency_key: IdempotencyKey,
});

export const CreateSupplyInput = z.object({
  id: id().nullish(),
  announcement_ids: z
    .array(z.string())
    .min(1, `must hold 1 to ${MAX_ITEMS} ids`)
    .max(MAX_ITEMS, `must hold 1 to ${MAX_ITEMS} ids`),
  settings: z.object({ processing: z.enum(['REGISTER', 'MATCH_ORDERS']) }),
  location_id: z.string().nullish(),
  due_at: z
    .number()
    .refine((at) => Number.isSafeInteger(at) && at >= 0, { message: 'must be a time in Unix milliseconds' })
    .nullish(),
  idempotency_key: IdempotencyKey,
});
export type CreateSupplyInput = z.output<typeof CreateSupplyInput>;

export const ReceiveSupplyInput = z.object({ supply_id: z.string(), idempotency_key: IdempotencyKey });

export const AddOverageInput = z.object({ supply_id: z.string(), items: itemList(1), idempotency_key: IdempotencyKey });
