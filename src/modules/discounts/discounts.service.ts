/**
 * Discounts: the writes of the back office (codes and automatic promotions) and the face the
 * checkout composes, `evaluate` (what applies to a checkout, and why a code does not) and
 * `recordUsage` (counting the uses of a completed order, never beyond a limit).
 *
 * Reads take `orders:read`, not `catalog:read`: a storefront's key reads the catalog, and codes are
 * handed to chosen buyers, so listing them is for the back office that also reads orders.
 */
import type { CursorCodec } from '../../kernel/cursor';
import { isUniqueViolation, writeTransaction, type Db, type Tx } from '../../kernel/db';
import { idTaken, notFound, type FieldProblem } from '../../kernel/errors';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import { isUuid, uuidv7 } from '../../kernel/ids';
import { sqlKeysetSource } from '../../kernel/keyset';
import { paginate, type PageArguments } from '../../kernel/pagination';
import type { Principal } from '../../kernel/principal';
import { requireScope } from '../../kernel/scopes';
import { invalidInput, parseValue } from '../../kernel/validation';
import { findSalesChannel } from '../catalog';
import * as repository from './discounts.repository';
import { DiscountQueryInput, type DiscountInput } from './discounts.schemas';
import {
  DiscountLimitReached,
  type DiscountEvaluation,
  type DiscountQuery,
  type DiscountRecord,
  type DiscountUsageInput,
} from './discounts.types';
import { evaluateDiscounts } from './evaluation';

const millis = (date: Date | null) => (date === null ? null : date.getTime());

/** A discount as the interfaces answer it (instants as Unix milliseconds). */
export const discountView = (row: DiscountRecord) => ({
  ...row,
  startsAt: millis(row.startsAt),
  endsAt: millis(row.endsAt),
  createdAt: row.createdAt.getTime(),
  updatedAt: row.updatedAt.getTime(),
});
export type DiscountView = ReturnType<typeof discountView>;

const normalEmail = (email: string | null) => (email === null ? null : email.trim().toLowerCase());

export class DiscountsService {
  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
  ) {}

  // The face the checkout composes (no scope: the caller's operation checked it)

  /** The discounts that apply to the query, and each typed code that does not with its reason (see evaluation.ts). */
  async evaluate(tenantId: string, query: DiscountQuery): Promise<DiscountEvaluation> {
    const valid = parseValue(DiscountQueryInput, query);
    const buyerEmail = normalEmail(valid.buyerEmail);
    const codes = [...new Set(valid.codes.map((code) => code.trim().toLowerCase()).filter((code) => code !== ''))];
    const found = isUuid(valid.channelId) ? await repository.candidates(this.db, tenantId, valid.channelId, codes) : [];
    const counts = await repository.usageCounts(
      this.db,
      found.filter((d) => d.usageLimit !== null || d.usageLimitPerBuyer !== null).map((d) => d.id),
      buyerEmail,
    );
    return evaluateDiscounts(
      found,
      { ...valid, buyerEmail },
      new Map(counts.map((row) => [row.discountId, { total: row.total, buyer: row.buyer }])),
    );
  }

  /**
   * Counts one use of each discount by the order, in the caller's transaction. Locks the discounts'
   * rows (in id order: no deadlock between two orders), counts their uses, and throws
   * DiscountLimitReached when one more would exceed a limit overall or for the buyer (by e-mail;
   * without one, only the overall limit counts). A discount deleted meanwhile is not counted.
   * The transaction must be READ COMMITTED (the default): each count then sees the uses committed
   * by the transactions that held the locks before it.
   */
  async recordUsage(tx: Tx, tenantId: string, usage: DiscountUsageInput): Promise<void> {
    const ids = [...new Set(usage.discountIds.map((id) => id.toLowerCase()).filter(isUuid))].sort();
    if (ids.length === 0) return;
    const buyerEmail = normalEmail(usage.buyerEmail);
    const locked = await repository.lockDiscounts(tx, tenantId, ids);
    const counts = new Map((await repository.usageCounts(tx, ids, buyerEmail)).map((row) => [row.discountId, row]));
    for (const discount of locked) {
      const used = counts.get(discount.id) ?? { total: 0, buyer: 0 };
      if (discount.usageLimit !== null && used.total >= discount.usageLimit) {
        throw new DiscountLimitReached(discount.id, discount.code, 'overall');
      }
      if (discount.usageLimitPerBuyer !== null && buyerEmail !== null && used.buyer >= discount.usageLimitPerBuyer) {
        throw new DiscountLimitReached(discount.id, discount.code, 'per_buyer');
      }
    }
    await repository.insertUsages(
      tx,
      tenantId,
      locked.map((discount) => ({ id: uuidv7(), discountId: discount.id, buyerEmail, orderId: usage.orderId })),
    );
  }

  // The back office

  async listDiscounts(
    principal: Principal,
    filter: { code?: string },
    page: PageArguments,
    parameterNames?: { after: string; before: string },
  ) {
    requireScope(principal, 'orders:read');
    const { tenantId } = principal;
    return paginate(
      this.cursors,
      `discounts:${tenantId}:${filter.code?.toLowerCase() ?? ''}`,
      page,
      sqlKeysetSource(this.db, repository.discountList(tenantId, filter)),
      parameterNames,
    );
  }

  async getDiscount(principal: Principal, id: string): Promise<DiscountRecord> {
    requireScope(principal, 'orders:read');
    const discount = isUuid(id) ? await repository.findDiscount(this.db, principal.tenantId, id) : undefined;
    if (!discount) throw notFound(`no discount with id "${id}"`);
    return discount;
  }

  /** Creates a discount; ID_TAKEN on `code` when the tenant has one with that code in any case. */
  async createDiscount(principal: Principal, input: DiscountInput, idempotency?: Idempotency): Promise<DiscountView> {
    requireScope(principal, 'pricing:write');
    const { tenantId } = principal;
    const columns = await this.columnsOf(tenantId, input);
    return this.codeWrite(input, () =>
      writeTransaction(this.db, (tx) =>
        runIdempotent(tx, tenantId, idempotency, async () =>
          discountView(await repository.insertDiscount(tx, tenantId, uuidv7(), columns)),
        ),
      ),
    );
  }

  /** Replaces a discount whole (like PUT: a field left out takes its default). Its uses stay counted. */
  async replaceDiscount(
    principal: Principal,
    id: string,
    input: DiscountInput,
    idempotency?: Idempotency,
  ): Promise<DiscountView> {
    requireScope(principal, 'pricing:write');
    const { tenantId } = principal;
    if (!isUuid(id)) throw notFound(`no discount with id "${id}"`);
    const columns = await this.columnsOf(tenantId, input);
    return this.codeWrite(input, () =>
      writeTransaction(this.db, (tx) =>
        runIdempotent(tx, tenantId, idempotency, async () => {
          const row = await repository.updateDiscount(tx, tenantId, id, columns);
          if (!row) throw notFound(`no discount with id "${id}"`);
          return discountView(row);
        }),
      ),
    );
  }

  /** Deletes a discount and its counted uses (to stop one and keep its count, set `active` false). */
  async deleteDiscount(principal: Principal, id: string): Promise<void> {
    requireScope(principal, 'pricing:write');
    if (!isUuid(id) || !(await repository.deleteDiscount(this.db, principal.tenantId, id))) {
      throw notFound(`no discount with id "${id}"`);
    }
  }

  /** The stored columns of a valid input, after checking its channel and products are the tenant's. */
  private async columnsOf(tenantId: string, input: DiscountInput): Promise<repository.DiscountColumns> {
    const productIds = [...new Set(input.productIds ?? [])];
    const categoryIds = [...new Set(input.categoryIds ?? [])];
    const problems: FieldProblem[] = [];
    if (input.channelId && !(await findSalesChannel(this.db, tenantId, input.channelId))) {
      problems.push({ field: 'channelId', message: `"${input.channelId}" is not a sales channel of the tenant` });
    }
    const known = await repository.existingProducts(this.db, tenantId, productIds);
    (input.productIds ?? []).forEach((productId, index) => {
      if (!known.has(productId) && problems.length < 100) {
        problems.push({ field: `productIds[${index}]`, message: `"${productId}" is not a product of the tenant` });
      }
    });
    if (problems.length > 0) throw invalidInput(problems);
    return {
      channelId: input.channelId ?? null,
      code: input.code ?? null,
      title: input.title,
      kind: input.kind,
      percentBasisPoints: input.percentBasisPoints ?? null,
      amount: input.amount ?? null,
      currency: input.currency ?? null,
      target: input.target,
      productIds,
      categoryIds,
      minimumSubtotal: input.minimumSubtotal ?? null,
      startsAt: input.startsAt ?? null,
      endsAt: input.endsAt ?? null,
      usageLimit: input.usageLimit ?? null,
      usageLimitPerBuyer: input.usageLimitPerBuyer ?? null,
      combinable: input.combinable ?? false,
      active: input.active ?? true,
    };
  }

  private async codeWrite(input: DiscountInput, write: () => Promise<DiscountView>): Promise<DiscountView> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error)) throw idTaken(`the code ${input.code} is taken by another discount`, 'code');
      throw error;
    }
  }
}
