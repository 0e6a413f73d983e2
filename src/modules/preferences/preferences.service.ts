import type { CursorCodec } from '../../kernel/cursor';
import { isUniqueViolation, writeTransaction, type Db, type DbOrTx, type Tx } from '../../kernel/db';
import { AppError, idTaken, type FieldProblem } from '../../kernel/errors';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import { isUuid, uuidv7 } from '../../kernel/ids';
import { sqlKeysetSource } from '../../kernel/keyset';
import { paginate, type PageArguments } from '../../kernel/pagination';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import * as catalog from '../catalog';
import * as stock from '../stock';
import { TransactionalEvent } from '../../kernel/transactional-event';
import { invalidInput } from '../../kernel/validation';
import * as repository from './preferences.repository';
import type { ItemPreferenceRecord } from './preferences.repository';
import type { NewPreference, ReplacedPreference } from './preferences.schemas';

/**
 * Whether a preference lets orders exceed what is available now: backorders allowed, and the preorder deadline (if any)
 * not passed.
 */
export const allowsBackorder = (preference: ItemPreferenceRecord | undefined, now = Date.now()) =>
  preference !== undefined &&
  preference.isBackorderAllowed &&
  (preference.preorderDeadlineAt === null || now < preference.preorderDeadlineAt.getTime());

/**
 * Whether each request may be backordered: its SKU's preference at the warehouse allows it now.
 * Read once, before the stock locks or under them.
 */
export async function backorderPolicy(
  db: DbOrTx,
  tenantId: string,
  pairs: { productId: string; warehouseId: string }[],
) {
  const preferences = await repository.preferencesOfPairs(db, tenantId, pairs);
  return (request: { productId: string; warehouseId: string }) =>
    allowsBackorder(
      preferences.find((p) => p.productId === request.productId && p.warehouseId === request.warehouseId),
    );
}

/** Preferences whose reorder point may have changed, by (product, warehouse). */
export interface ReorderPointsChange {
  tenantId: string;
  pairs: { productId: string; warehouseId: string }[];
}

const values = (input: NewPreference | ReplacedPreference) => ({
  minimumQuantity: input.minimum_quantity,
  optimalQuantity: input.optimal_quantity,
  maximumQuantity: input.maximum_quantity,
  reorderPoint: input.reorder_point,
  isBackorderAllowed: input.is_backorder_allowed,
  isRestrictedToSinglePosition: input.is_restricted_to_single_position,
  preorderDeadlineAt: input.preorder_deadline_at == null ? null : new Date(input.preorder_deadline_at),
});

/** Item preferences: the stock policy of a SKU at a warehouse of a business. */
export class PreferenceService {
  /**
   * Raised under the pairs' stock locks, in the transaction that created, replaced or deleted their
   * preferences, for what depends on a reorder point (the low-stock alerts of the broadcasts module
   * store the pairs' level as it is now, so that a change of the preference itself never counts as
   * a fall of the stock).
   */
  readonly reorderPointsChanged = new TransactionalEvent<ReorderPointsChange>();

  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
  ) {}

  /** Creates preferences, all or none; CONFLICT naming the entry when its SKU and warehouse already have one. */
  async createItemPreferences(
    principal: Principal,
    entries: NewPreference[],
    idempotency?: Idempotency,
  ): Promise<ItemPreferenceRecord[]> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const problems: FieldProblem[] = [];
    const ids = (values: string[]) => [...new Set(values.filter(isUuid).map((v) => v.toLowerCase()))];
    const [products, warehouses, businesses] = await Promise.all([
      catalog.productsBySkus(this.db, tenantId, [...new Set(entries.map((e) => e.sku))]),
      catalog.warehousesByIds(this.db, tenantId, ids(entries.map((e) => e.warehouse_id))),
      catalog.businessesByIds(this.db, tenantId, ids(entries.map((e) => e.business_id))),
    ]);
    const seen = new Set<string>();
    const rows = entries.map((entry, index) => {
      const prefix = `preferences[${index}]`;
      const at = (field: string, message: string) => problems.push({ field: `${prefix}.${field}`, message });
      const product = products.find((p) => p.sku === entry.sku);
      const warehouse = warehouses.find((w) => w.id === entry.warehouse_id.toLowerCase());
      const business = businesses.find((b) => b.id === entry.business_id.toLowerCase());
      if (!product) at('sku', `"${entry.sku}" is not a product of the tenant`);
      if (!business) at('business_id', `"${entry.business_id}" is not a business of the tenant`);
      if (!warehouse) at('warehouse_id', `"${entry.warehouse_id}" is not a warehouse of the tenant`);
      else if (business && warehouse.businessId !== business.id)
        at('warehouse_id', `belongs to business "${warehouse.businessId}", not "${business.id}"`);
      const key = `${product?.id}:${warehouse?.id}`;
      if (product && warehouse && seen.has(key)) at('sku', 'appears twice for the same warehouse');
      seen.add(key);
      if (entry.id != null && seen.has(`id:${entry.id.toLowerCase()}`)) at('id', 'appears twice');
      if (entry.id != null) seen.add(`id:${entry.id.toLowerCase()}`);
      return {
        id: entry.id ?? uuidv7(),
        productId: product?.id ?? '',
        warehouseId: warehouse?.id ?? '',
        businessId: business?.id ?? '',
        ...values(entry),
      };
    });
    if (problems.length > 0) throw invalidInput(problems);
    const created = await this.write(principal, idempotency, async (tx) => {
      const chosen = entries.flatMap((entry, index) => (entry.id == null ? [] : [{ id: rows[index]!.id, index }]));
      const existingIds = new Set(
        (
          await repository.findPreferences(
            tx,
            tenantId,
            chosen.map(({ id }) => id),
          )
        ).map((p) => p.id),
      );
      const idsTaken = chosen.filter(({ id }) => existingIds.has(id.toLowerCase()));
      if (idsTaken.length > 0) {
        const details = idsTaken.map(({ id, index }) => ({
          field: `preferences[${index}].id`,
          message: `a preference with id "${id}" already exists`,
        }));
        throw new AppError('ID_TAKEN', details.map((p) => `${p.field} ${p.message}`).join(', '), { details });
      }
      const existing = await repository.preferencesOfPairs(tx, tenantId, rows);
      const taken = rows.flatMap((row, index) =>
        existing.some((e) => e.productId === row.productId && e.warehouseId === row.warehouseId)
          ? [
              {
                field: `preferences[${index}].sku`,
                message: `already has a preference at warehouse "${row.warehouseId}"; update it instead`,
              },
            ]
          : [],
      );
      if (taken.length > 0)
        throw new AppError('ID_TAKEN', taken.map((p) => `${p.field} ${p.message}`).join(', '), { details: taken });
      await repository.insertPreferences(tx, tenantId, rows);
      await this.rebaseStockLevels(tx, tenantId, rows);
      return rows.map((row) => row.id);
    });
    return this.inOrder(tenantId, created);
  }

  /**
   * Replaces whole preferences: every value is sent again; an omitted `preorder_deadline_at` is an error, null clears
   * it.
   */
  async updateItemPreferences(
    principal: Principal,
    entries: ReplacedPreference[],
    idempotency?: Idempotency,
  ): Promise<ItemPreferenceRecord[]> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const problems: FieldProblem[] = [];
    const found = await repository.findPreferences(
      this.db,
      tenantId,
      entries
        .map((e) => e.id)
        .filter(isUuid)
        .map((id) => id.toLowerCase()),
    );
    const warehouses = await catalog.warehousesByIds(
      this.db,
      tenantId,
      entries
        .map((e) => e.warehouse_id)
        .filter(isUuid)
        .map((id) => id.toLowerCase()),
    );
    const seen = new Set<string>();
    const rows = entries.map((entry, index) => {
      const prefix = `preferences[${index}]`;
      const at = (field: string, message: string) => problems.push({ field: `${prefix}.${field}`, message });
      const preference = found.find((p) => p.id === entry.id.toLowerCase());
      const warehouse = warehouses.find((w) => w.id === entry.warehouse_id.toLowerCase());
      if (!preference) at('id', `"${entry.id}" is not an item preference of the tenant`);
      else if (seen.has(preference.id)) at('id', 'appears twice');
      if (preference) seen.add(preference.id);
      if (!warehouse) at('warehouse_id', `"${entry.warehouse_id}" is not a warehouse of the tenant`);
      else if (preference && warehouse.businessId !== preference.businessId)
        at('warehouse_id', `belongs to business "${warehouse.businessId}", not "${preference.businessId}"`);
      return {
        id: preference?.id ?? '',
        productId: preference?.productId ?? '',
        warehouseId: warehouse?.id ?? '',
        ...values(entry),
      };
    });
    if (problems.length > 0) throw invalidInput(problems);
    const updated = await this.write(principal, idempotency, async (tx) => {
      await repository.replacePreferences(tx, tenantId, rows);
      // A preference moved to another warehouse leaves its old one without a reorder point.
      await this.rebaseStockLevels(tx, tenantId, [...rows, ...found]);
      return rows.map((row) => row.id);
    });
    return this.inOrder(tenantId, updated);
  }

  /** Removes preferences, all or none; NOT_FOUND-free: unknown ids are a VALIDATION_ERROR naming them. */
  async removeItemPreferences(principal: Principal, ids: string[], idempotency?: Idempotency): Promise<string[]> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const found = new Set(
      (
        await repository.findPreferences(
          this.db,
          tenantId,
          ids.filter(isUuid).map((id) => id.toLowerCase()),
        )
      ).map((p) => p.id),
    );
    const problems = ids.flatMap((id, index) =>
      found.has(id.toLowerCase())
        ? []
        : [{ field: `ids[${index}]`, message: `"${id}" is not an item preference of the tenant` }],
    );
    if (problems.length > 0) throw invalidInput(problems);
    return this.write(principal, idempotency, async (tx) => {
      const removed = await repository.deletePreferences(tx, tenantId, [...found]);
      await this.rebaseStockLevels(tx, tenantId, removed);
      return removed.map((preference) => preference.id);
    });
  }

  async stockPreferences(
    principal: Principal,
    args: { sku?: string | null; warehouse_id?: string | null; business_id?: string | null },
    page: PageArguments,
  ) {
    requireScope(principal, 'inventory:read');
    const { tenantId } = principal;
    const filter: repository.PreferenceFilter = {
      skus: args.sku != null ? [args.sku] : undefined,
      warehouseIds: args.warehouse_id != null ? [args.warehouse_id] : undefined,
      businessIds: args.business_id != null ? [args.business_id] : undefined,
    };
    return paginate<ItemPreferenceRecord, string>(
      this.cursors,
      `preferences:${tenantId}:${JSON.stringify(filter)}`,
      page,
      sqlKeysetSource(this.db, repository.preferenceList(tenantId, filter)),
      { after: 'after', before: 'before' },
    );
  }

  private async write<T>(
    principal: Principal,
    idempotency: Idempotency | undefined,
    work: (tx: Tx) => Promise<T>,
  ): Promise<T> {
    try {
      return await writeTransaction(this.db, (tx) =>
        runIdempotent(tx, principal.tenantId, idempotency, () => work(tx)),
      );
    } catch (error) {
      if (isUniqueViolation(error))
        throw idTaken('a preference for this SKU and warehouse was created meanwhile; update it instead');
      throw error;
    }
  }

  private async inOrder(tenantId: string, ids: string[]) {
    const byId = new Map((await repository.findPreferences(this.db, tenantId, ids)).map((p) => [p.id, p]));
    return ids.map((id) => byId.get(id)!);
  }

  /** Announces the pairs' preference change under their stock locks, like every change of their stock. */
  private async rebaseStockLevels(tx: Tx, tenantId: string, pairs: { productId: string; warehouseId: string }[]) {
    await stock.lock(tx, tenantId, { pairs });
    await this.reorderPointsChanged.publish(tx, { tenantId, pairs });
  }
}
