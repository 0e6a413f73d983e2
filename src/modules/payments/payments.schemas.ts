/** The payments' GraphQL inputs, parsed at the edge: the service receives them valid and typed. */
import { z } from 'zod';
import { IdempotencyKey } from '../../kernel/graphql/idempotency';
import { id } from '../../kernel/validation';

export const SetPaymentSettingsInput = z.strictObject({ sandbox_enabled: z.boolean() });

export const OrderPaymentInput = z.strictObject({ order_id: id(), idempotency_key: IdempotencyKey });

export const RefundOrderInput = z.strictObject({
  order_id: id(),
  amount: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).nullish(),
  idempotency_key: IdempotencyKey,
});
