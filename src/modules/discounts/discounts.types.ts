/** The records of discounts and the shapes of the face the checkout composes (`evaluate`, `recordUsage`). */

export const DISCOUNT_KINDS = ['PERCENT', 'FIXED'] as const;
export type DiscountKind = (typeof DISCOUNT_KINDS)[number];
export const DISCOUNT_TARGETS = ['ORDER', 'ITEMS'] as const;
export type DiscountTarget = (typeof DISCOUNT_TARGETS)[number];

/** A discount as stored: a code (null: an automatic promotion) and the rules of what it takes off. */
export interface DiscountRecord {
  id: string;
  channelId: string | null;
  code: string | null;
  title: string;
  kind: DiscountKind;
  /** PERCENT: the share taken off, in basis points (1000 = 10 %). */
  percentBasisPoints: number | null;
  /** FIXED: the amount taken off, in minor units of `currency`. */
  amount: number | null;
  currency: string | null;
  target: DiscountTarget;
  productIds: string[];
  categoryIds: string[];
  minimumSubtotal: number | null;
  startsAt: Date | null;
  endsAt: Date | null;
  usageLimit: number | null;
  usageLimitPerBuyer: number | null;
  combinable: boolean;
  active: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** What `evaluate` is asked: the checkout's channel, currency, codes, buyer and lines. */
export interface DiscountQuery {
  channelId: string;
  currency: string;
  /** As the buyer typed them; matched case-insensitively. */
  codes: string[];
  buyerEmail: string | null;
  /** `amount` = unit price × quantity, in minor units. */
  lines: { key: string; productId: string; categoryIds: string[]; amount: number }[];
  now: Date;
}

/** A discount that applies, and how its amount splits over the lines. */
export interface AppliedDiscount {
  discountId: string;
  /** Null for automatic promotions. */
  code: string | null;
  title: string;
  /** Total off, minor units. */
  amount: number;
  /** How `amount` splits over line keys (sums to amount; largest remainder). */
  allocations: { lineKey: string; amount: number }[];
  automatic: boolean;
}

export const REJECTION_REASONS = [
  'unknown',
  'expired',
  'not_started',
  'minimum_not_met',
  'usage_limit_reached',
  'not_combinable',
  'not_applicable',
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

/** A code the buyer typed that does not apply, and why (a sentence for the buyer). */
export interface RejectedCode {
  code: string;
  reason: RejectionReason;
  message: string;
}

export interface DiscountEvaluation {
  applied: AppliedDiscount[];
  rejected: RejectedCode[];
}

/** What `recordUsage` counts: the discounts an order used, its buyer and the order. */
export interface DiscountUsageInput {
  discountIds: string[];
  buyerEmail: string | null;
  orderId: string;
}

/** Thrown by `recordUsage` when a use would exceed a discount's limit, overall or per buyer. */
export class DiscountLimitReached extends Error {
  constructor(
    readonly discountId: string,
    readonly code: string | null,
    readonly limit: 'overall' | 'per_buyer',
  ) {
    super(
      limit === 'overall'
        ? `the discount ${code ?? discountId} has been used as often as it may be`
        : `the discount ${code ?? discountId} has been used by this buyer as often as it may be`,
    );
    this.name = 'DiscountLimitReached';
  }
}

/** A discount as GraphQL resolves it: read (instants as dates) or just written (as Unix milliseconds). */
export type DiscountShape = Omit<DiscountRecord, 'startsAt' | 'endsAt' | 'createdAt' | 'updatedAt'> & {
  startsAt: Date | number | null;
  endsAt: Date | number | null;
  createdAt: Date | number;
  updatedAt: Date | number;
};
