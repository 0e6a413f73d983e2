/**
 * Where the tenant's stock is and through what it sells, for an agent that knows nothing yet: the
 * `list_locations` operation (businesses, warehouses, sales channels), and the defaults the stock
 * operations take when the tenant has exactly one business or one sales channel.
 */
import { z } from 'zod';
import { defineMcpTool, ok } from '../../kernel/mcp';
import { invalidField } from '../../kernel/validation';
import { firstLocations } from '../catalog';
import type { Services } from '../context';

/** Most businesses, warehouses and sales channels `list_locations` gives of each kind. */
export const MAX_LISTED_LOCATIONS = 100;

const LISTED_BY = 'list them with list_locations';

export const listLocations = defineMcpTool({
  name: 'list_locations',
  title: 'List businesses, warehouses and sales channels',
  description:
    "The tenant's businesses, warehouses and sales channels (at most 100 of each, oldest first), with the " +
    'business_id and channel_id that reserve_items uses when it is not given one (null when the tenant has ' +
    'several, or none).',
  scopes: ['inventory:read'],
  input: z.strictObject({}),
  output: z.object({
    businesses: z.array(z.object({ id: z.string(), name: z.string() })),
    warehouses: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        business_id: z.string(),
        country_code: z.string().nullable().describe('ISO 3166-1 alpha-2, if known.'),
      }),
    ),
    sales_channels: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        currency: z.string().describe('ISO 4217: the currency its prices are in.'),
        warehouse_ids: z.array(z.string()).describe('The warehouses it sells from, by priority.'),
      }),
    ),
    defaults: z.object({
      business_id: z.string().nullable().describe('The only business, if there is exactly one.'),
      channel_id: z.string().nullable().describe('The only sales channel, if there is exactly one.'),
    }),
    truncated: z.boolean().describe('Whether some kind has more than 100 and only the first 100 are listed.'),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true },
  async call(_args, { principal, services }) {
    const found = await firstLocations(services.db, principal.tenantId, MAX_LISTED_LOCATIONS + 1);
    const businesses = found.businesses.slice(0, MAX_LISTED_LOCATIONS);
    const warehouses = found.warehouses.slice(0, MAX_LISTED_LOCATIONS);
    const channels = found.channels.slice(0, MAX_LISTED_LOCATIONS);
    return ok({
      businesses: businesses.map((business) => ({ id: business.id, name: business.name })),
      warehouses: warehouses.map((warehouse) => ({
        id: warehouse.id,
        name: warehouse.name,
        business_id: warehouse.businessId,
        country_code: warehouse.countryCode,
      })),
      sales_channels: channels.map((channel) => ({
        id: channel.id,
        name: channel.name,
        currency: channel.currency,
        warehouse_ids: channel.warehouses.map((link) => link.warehouseId),
      })),
      defaults: {
        business_id: found.businesses.length === 1 ? found.businesses[0]!.id : null,
        channel_id: found.channels.length === 1 ? found.channels[0]!.id : null,
      },
      truncated: [found.businesses, found.warehouses, found.channels].some(
        (rows) => rows.length > MAX_LISTED_LOCATIONS,
      ),
    });
  },
});

/** The only one of `rows`, or the 400 naming `field` and saying why it cannot be left out. */
function onlyOne(rows: readonly { id: string }[], field: string, kind: [string, string]): string {
  if (rows.length === 1) return rows[0]!.id;
  const [one, many] = kind;
  const why =
    rows.length === 0
      ? `the tenant has no ${one} yet; create one first`
      : `the tenant has more than one ${one}, so name one of its ${many}; ${LISTED_BY}`;
  throw invalidField(field, `is required: ${why}`);
}

/**
 * The business and sales channel of a stock operation: those given, else the tenant's only one
 * (a 400 naming the argument when it has none or several).
 */
export async function defaultTarget(
  services: Services,
  tenantId: string,
  given: { business_id?: string | undefined; channel_id?: string | undefined },
): Promise<{ business_id: string; channel_id: string }> {
  if (given.business_id !== undefined && given.channel_id !== undefined) {
    return { business_id: given.business_id, channel_id: given.channel_id };
  }
  const found = await firstLocations(services.db, tenantId, 2);
  return {
    business_id: given.business_id ?? onlyOne(found.businesses, 'business_id', ['business', 'businesses']),
    channel_id: given.channel_id ?? onlyOne(found.channels, 'channel_id', ['sales channel', 'sales channels']),
  };
}
