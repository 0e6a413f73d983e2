/** The broadcasts module's GraphQL inputs, parsed at the edge. */
import { z } from 'zod';
import { id, storableText } from '../../kernel/validation';
import { STOCK_EVENT_TYPES } from './stock-events.repository';

const isWebUrl = (value: string) => {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
};

export const SetSalesChannelWebhookInput = z.object({
  channel_id: z.string(),
  url: z
    .string()
    .refine((value) => value.length <= 2048 && isWebUrl(value), {
      message: 'must be an http or https URL of at most 2048 characters',
    })
    // Stored as the URL parser normalises it (lower-case scheme and host, encoded path).
    .transform((value) => new URL(value).toString()),
  secret: storableText().refine((value) => value.length >= 16 && value.length <= 255, {
    message: 'must be 16 to 255 characters',
  }),
});

export const StockEventsArguments = z.object({
  sku: z.string().nullish(),
  warehouse_id: id().nullish(),
  type: z.enum(STOCK_EVENT_TYPES).nullish(),
});
