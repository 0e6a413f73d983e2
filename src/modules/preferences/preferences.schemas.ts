/** The item preferences' GraphQL inputs and arguments, parsed at the edge. */
import { z } from 'zod';
import { IdempotencyKey } from '../../kernel/graphql/idempotency';
import { id } from '../../kernel/validation';

/** Most preferences one write may hold. */
export const MAX_PREFERENCES = 100;
const MAX_LEVEL = 1_000_000_000;

const Level = z.number().refine((level) => Number.isInteger(level) && level >= 0 && level <= MAX_LEVEL, {
  message: `must be a whole number from 0 to ${MAX_LEVEL}`,
});
const Deadline = z
  .number()
  .refine((at) => Number.isSafeInteger(at) && at >= 0, { message: 'must be a time in Unix milliseconds' });

const levels = {
  minimum_quantity: Level,
  optimal_quantity: Level,
  maximum_quantity: Level,
  reorder_point: Level,
  is_backorder_allowed: z.boolean(),
  is_restricted_to_single_position: z.boolean(),
  preorder_deadline_at: Deadline.nullish(),
};
type Levels = z.output<z.ZodObject<typeof levels>>;

/** The levels must be ordered: minimum ≤ optimal ≤ maximum, and the reorder point between minimum and maximum. */
function ordered(input: Levels, context: z.RefinementCtx) {
  const at = (field: keyof Levels, message: string) => context.addIssue({ code: 'custom', path: [field], message });
  if (input.optimal_quantity < input.minimum_quantity) at('optimal_quantity', 'must be at least minimum_quantity');
  if (input.maximum_quantity < input.optimal_quantity) at('maximum_quantity', 'must be at least optimal_quantity');
  if (input.reorder_point < input.minimum_quantity || input.reorder_point > input.maximum_quantity)
    at('reorder_point', 'must lie between minimum_quantity and maximum_quantity');
}

const list = <T extends z.ZodType>(item: T, what: string) =>
  z
    .array(item)
    .min(1, `must hold 1 to ${MAX_PREFERENCES} ${what}`)
    .max(MAX_PREFERENCES, `must hold 1 to ${MAX_PREFERENCES} ${what}`);

const NewPreference = z
  .object({ id: id().nullish(), sku: z.string(), warehouse_id: z.string(), business_id: z.string(), ...levels })
  .superRefine(ordered);
export type NewPreference = z.output<typeof NewPreference>;

const ReplacedPreference = z
  .object({ id: z.string(), warehouse_id: z.string(), ...levels })
  .superRefine((input, context) => {
    ordered(input, context);
    if (input.preorder_deadline_at === undefined)
      context.addIssue({
        code: 'custom',
        path: ['preorder_deadline_at'],
        message: 'must be sent (null clears it): an update replaces the whole preference',
      });
  });
export type ReplacedPreference = z.output<typeof ReplacedPreference>;

export const CreateItemPreferencesInput = z.object({
  preferences: list(NewPreference, 'preferences'),
  idempotency_key: IdempotencyKey,
});
export const UpdateItemPreferencesInput = z.object({
  preferences: list(ReplacedPreference, 'preferences'),
  idempotency_key: IdempotencyKey,
});
export const RemoveItemPreferencesInput = z.object({ ids: list(z.string(), 'ids'), idempotency_key: IdempotencyKey });

/** `stockPreferences(sku:, warehouse_id:, business_id:)`. */
export const StockPreferencesArguments = z.object({
  sku: z.string().nullish(),
  warehouse_id: id().nullish(),
  business_id: id().nullish(),
});
