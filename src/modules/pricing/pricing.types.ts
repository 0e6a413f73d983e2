/** The records of prices and tax the pricing module hands its interfaces. */

import type { TaxClass } from '../catalog';

/** The tax classes a product can have (the catalog's vocabulary); each takes its own rate in a tax zone. */
export { TAX_CLASSES, type TaxClass } from '../catalog';

/** A price of a product in a currency (minor units); with a channel, that channel's override. */
export interface PriceRecord {
  id: string;
  productId: string;
  channelId: string | null;
  currency: string;
  amount: number;
  compareAt: number | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A price as GraphQL resolves it: read (timestamps as dates) or just written (as Unix milliseconds). */
export type PriceShape = Omit<PriceRecord, 'createdAt' | 'updatedAt'> & {
  createdAt: Date | number;
  updatedAt: Date | number;
};

/** The rate of a tax class in a zone. */
export interface TaxRateRecord {
  taxClass: TaxClass;
  name: string;
  rateBasisPoints: number;
}

/** A tax zone with its rates. */
export interface TaxZoneRecord {
  id: string;
  name: string;
  country: string;
  region: string | null;
  rates: TaxRateRecord[];
  createdAt: Date;
  updatedAt: Date;
}

/** What `priceLines` answers: the channel's currency and tax mode, and the price of each priced product. */
export interface PriceLines {
  currency: string;
  taxInclusive: boolean;
  prices: Map<string, { amount: number; compareAt: number | null; taxClass: TaxClass }>;
}

/** What `taxFor` is asked: where the goods go, whether the amounts include tax, and the items. */
export interface TaxInput {
  destination: { country: string; region?: string | null } | null;
  taxInclusive: boolean;
  items: { key: string; amount: number; taxClass: TaxClass }[];
}

/** What `taxFor` answers: the tax of each item, one line per rate, and the total. */
export interface TaxResult {
  items: Map<string, number>;
  lines: { name: string; rateBasisPoints: number; amount: number }[];
  total: number;
}
