/** The records of shipping methods and the face the checkout composes (`optionsFor`). */

export const SHIPPING_METHOD_TYPES = ['SHIPPING', 'PICKUP'] as const;
export type ShippingMethodType = (typeof SHIPPING_METHOD_TYPES)[number];
export const SHIPPING_RATE_KINDS = ['FLAT', 'WEIGHT'] as const;
export type ShippingRateKind = (typeof SHIPPING_RATE_KINDS)[number];

/** One bracket of a rate by weight: the charge of a parcel weighing at most `upToGrams`. */
export interface WeightBracket {
  upToGrams: number;
  amount: number;
}

/** How a method charges; amounts in the channel's currency, minor units. */
export interface ShippingRate {
  rateKind: ShippingRateKind;
  flatAmount: number;
  freeAbove: number | null;
  /** Ascending by `upToGrams`; used by WEIGHT only. */
  weightBrackets: WeightBracket[];
}

/** A shipping method of a sales channel, with the channel's currency. */
export interface ShippingMethodRecord extends ShippingRate {
  id: string;
  channelId: string;
  currency: string;
  title: string;
  type: ShippingMethodType;
  countries: string[];
  pickupWarehouseIds: string[];
  active: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** What the checkout asks: where the goods go, the subtotal the thresholds compare, and the lines. */
export interface FulfillmentQuery {
  channelId: string;
  currency: string;
  destination: { country: string; region?: string | null; postalCode?: string | null } | null;
  /** after item discounts, before tax; in minor units */
  subtotal: number;
  lines: { key: string; productId: string; quantity: number }[];
}

/** One way the checkout's items can reach the buyer, and what it costs. */
export interface FulfillmentOptionQuote {
  /** Stable for the same method (and warehouse, for pickup): `ship_<methodId>`, `pickup_<methodId>_<warehouseId>`. */
  id: string;
  methodId: string;
  type: 'shipping' | 'pickup';
  title: string;
  /** Minor units, in query.currency, tax-exclusive or inclusive like the channel's prices. */
  amount: number;
  /** The warehouse of a pickup; null for shipping. */
  warehouseId: string | null;
  /** How the items would ship (split shipments = several groups); each group's warehouse and line keys. */
  groups: { warehouseId: string; lineKeys: string[] }[];
}

/** A method as GraphQL resolves it: read (timestamps as dates) or just written (as Unix milliseconds). */
export type ShippingMethodShape = Omit<ShippingMethodRecord, 'createdAt' | 'updatedAt'> & {
  createdAt: Date | number;
  updatedAt: Date | number;
};
