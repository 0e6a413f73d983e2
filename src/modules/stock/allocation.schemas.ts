/** The inputs every allocating mutation shares (orders, reservations): where and what to allocate. */
import { z } from 'zod';
import { id } from '../../kernel/validation';
import { CountryCode, Latitude, Longitude } from '../catalog';

/** Most items one order, reservation or supply may hold. */
export const MAX_ITEMS = 100;
/** Most units one item may ask for. */
export const MAX_ITEM_QUANTITY = 1_000_000;

export const ItemQuantity = z
  .number()
  .refine((quantity) => Number.isInteger(quantity) && quantity >= 1 && quantity <= MAX_ITEM_QUANTITY, {
    message: `must be a whole number from 1 to ${MAX_ITEM_QUANTITY}`,
  });

/** Units of one SKU. */
export const ItemInput = z.object({ sku: z.string(), quantity: ItemQuantity });
export type ItemInput = z.output<typeof ItemInput>;

/** The business, warehouse and sales channel an order or reservation is for, and its items. */
export const AllocationTargetInput = z.object({
  business_id: id(),
  warehouse_id: id(),
  channel_id: id(),
  items: z.array(ItemInput).min(1, 'must hold at least one item').max(MAX_ITEMS, `may hold at most ${MAX_ITEMS} items`),
});
export type AllocationTargetInput = z.output<typeof AllocationTargetInput>;

/** Where an order or reservation goes, for the CLOSEST strategy: a point, a country, or both. */
export const DestinationInput = z
  .object({ latitude: Latitude.nullish(), longitude: Longitude.nullish(), country: CountryCode.nullish() })
  .superRefine((destination, context) => {
    if ((destination.latitude == null) !== (destination.longitude == null))
      context.addIssue({ code: 'custom', path: ['longitude'], message: 'latitude and longitude go together' });
    if (destination.latitude == null && destination.country == null)
      context.addIssue({ code: 'custom', message: 'needs a point (latitude and longitude) or a country' });
  });
export type DestinationInput = z.output<typeof DestinationInput>;
