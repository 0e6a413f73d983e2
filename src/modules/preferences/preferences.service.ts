import type { CursorCodec } from '../../kernel/cursor';
import { isUniqueViolation, writeTransaction, type Db, type Tx } from '../../kernel/db';
import { AppError, idTaken, type FieldProblem } from '../../kernel/errors';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import { isUuid, uuidv7 } from '../../kernel/ids';
import { sqlKeysetSource } from '../../kernel/keyset';
import { paginate, type PageArguments } from '../../kernel/pagination';
import { requireScope, type Principal } from '../auth/scopes';
import * as catalog from '../catalog/catalog.repository';
import { rejected } from '../stock/allocation-input';
import * as repository from './preferences.repository';
import type { ItemPreferenceRecord } from './preferences.repository';

/** Most preferences one write may hold. */
export const MAX_PREFERENCES = 100;
const MAX_LEVEL = 1_000_000_000;

interface Levels {
  minimum_quantity: number;
  optimal_quantity: number;
  maximum_quantity: number;
  reorder_point: number;
  is_backorder_allowed: boolean;
  is_restricted_to_single_position: boolean;
  preorder_deadline_at?: number | null;
}

export interface CreateItemPreferenceInput extends Levels {
  id?: string | null;
  sku: string;
  warehouse_id: string;
  business_id: string;
}

export interface UpdateItemPreferenceInput extends Levels {
  id: string;
  warehouse_id: string;
}

/**
 * Whether a preference lets orders exceed what is available now: backorders allowed, and the preorder deadline (if any)
 * not passed.
 */
export const allowsBackorder = (preference: ItemPreferenceRecord | undefined, now = Date.now()) =>
  preference !== undefined &&
  preference.isBackorderAllowed &&
  (preference.preorderDeadlineAt === null || now < preference.preorderDeadlineAt.getTime());

/**
 * Called after a write placed units: refuses it (the caller's transaction rolls back) when a SKU
 * restricted to a single position now has units at more than one position of the warehouse
 * (stock without a position counts as a position). The caller holds the stock locks of the
 * pairs, so no concurrent write can slip a second position in.
 */
export async function checkSinglePosition(
  tx: Tx,
  tenantId: string,
  placements: { productId: string; warehouseId: string; field: string }[],
) {
  const restricted = (await repository.preferencesOfPairs(tx, tenantId, placements)).filter(
    (p) => p.isRestrictedToSinglePosition,
  );
  const problems: FieldProblem[] = [];
  for (const placement of placements) {
    const preference = restricted.find(
      (p) => p.productId === placement.productId && p.warehouseId === placement.warehouseId,
    );
    if (!preference) continue;
    const held = await repository.positionsHolding(tx, tenantId, placement.productId, placement.warehouseId);
    if (held.length > 1) {
      problems.push({
        field: placement.field,
        message: `would place SKU "${preference.sku}", which is restricted to a single position, at a second position of warehouse "${placement.warehouseId}"`,
      });
    }
  }
  if (problems.length > 0) {
    throw new AppError('CONFLICT', problems.map((p) => `${p.field} ${p.message}`).join(', '), { details: problems });
  }
}

function checkLevels(prefix: string, input: Levels, problems: FieldProblem[], requireDeadlineKey: boolean) {
  const at = (field: string, message: string) => problems.push({ field: `${prefix}.${field}`, message });
  for (const field of ['minimum_quantity', 'optimal_quantity', 'maximum_quantity', 'reorder_point'] as const) {
    if (!Number.isInteger(input[field]) || input[field] < 0 || input[field] > MAX_LEVEL)
      at(field, `must be a whole number from 0 to ${MAX_LEVEL}`);
  }
  if (input.optimal_quantity < input.minimum_quantity) at('optimal_quantity', 'must be at least minimum_quantity');
  if (input.maximum_quantity < input.optimal_quantity) at('maximum_quantity', 'must be at least optimal_quantity');
  if (input.reorder_point < input.minimum_quantity || input.reorder_point > input.maximum_quantity) {
    at('reorder_point', 'must lie between minimum_quantity and maximum_quantity');
  }
  if (requireDeadlineKey && input.preorder_deadline_at === undefined)
    at('preorder_deadline_at', 'must be sent (null clears it): an update replaces the whole preference');
  if (
    input.preorder_deadline_at != null &&
    (!Number.isSafeInteger(input.preorder_deadline_at) || input.preorder_deadline_at < 0)
  ) {
    at('preorder_deadline_at', 'must be a time in Unix milliseconds');
  }
}

const values = (input: Levels) => ({
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
  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
  ) {}

  /** Creates preferences, all or none; CONFLICT naming the entry when its SKU and warehouse already have one. */
  async createItemPreferences(
    principal: Principal,
    entries: CreateItemPreferenceInput[],
    idempotency?: Idempotency,
  ): Promise<ItemPreferenceRecord[]> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const problems: FieldProblem[] = [];
    if (entries.length === 0 || entries.length > MAX_PREFERENCES)
      problems.push({ field: 'input.preferences', message: `must hold 1 to ${MAX_PREFERENCES} preferences` });
    const ids = (values: string[]) => [...new Set(values.filter(isUuid).map((v) => v.toLowerCase()))];
    const [products, warehouses, businesses] = await Promise.all([
      catalog.productsBySkus(this.db, tenantId, [...new Set(entries.map((e) => e.sku))]),
      catalog.warehousesByIds(this.db, tenantId, ids(entries.map((e) => e.warehouse_id))),
      catalog.businessesByIds(this.db, tenantId, ids(entries.map((e) => e.business_id))),
    ]);
    const seen = new Set<string>();
    const rows = entries.map((entry, index) => {
      const prefix = `input.preferences[${index}]`;
      const at = (field: string, message: string) => problems.push({ field: `${prefix}.${field}`, message });
      if (entry.id != null && !isUuid(entry.id)) at('id', 'is not a valid id');
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
      checkLevels(prefix, entry, problems, false);
      return {
        id: entry.id?.toLowerCase() ?? uuidv7(),
        productId: product?.id ?? '',
        warehouseId: warehouse?.id ?? '',
        businessId: business?.id ?? '',
        ...values(entry),
      };
    });
    if (problems.length > 0) throw rejected(problems);
    const created = await this.write(principal, idempotency, async (tx) => {
      const existing = await repository.preferencesOfPairs(tx, tenantId, rows);
      const taken = rows.flatMap((row, index) =>
        existing.some((e) => e.productId === row.productId && e.warehouseId === row.warehouseId)
          ? [
              {
                field: `input.preferences[${index}].sku`,
                message: `already has a preference at warehouse "${row.warehouseId}"; update it instead`,
              },
            ]
          : [],
      );
      if (taken.length > 0)
        throw new AppError('ID_TAKEN', taken.map((p) => `${p.field} ${p.message}`).join(', '), { details: taken });
      await repository.insertPreferences(tx, tenantId, rows);
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
    entries: UpdateItemPreferenceInput[],
    idempotency?: Idempotency,
  ): Promise<ItemPreferenceRecord[]> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const problems: FieldProblem[] = [];
    if (entries.length === 0 || entries.length > MAX_PREFERENCES)
      problems.push({ field: 'input.preferences', message: `must hold 1 to ${MAX_PREFERENCES} preferences` });
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
      const prefix = `input.preferences[${index}]`;
      const at = (field: string, message: string) => problems.push({ field: `${prefix}.${field}`, message });
      const preference = found.find((p) => p.id === entry.id.toLowerCase());
      const warehouse = warehouses.find((w) => w.id === entry.warehouse_id.toLowerCase());
      if (!preference) at('id', `"${entry.id}" is not an item preference of the tenant`);
      else if (seen.has(preference.id)) at('id', 'appears twice');
      if (preference) seen.add(preference.id);
      if (!warehouse) at('warehouse_id', `"${entry.warehouse_id}" is not a warehouse of the tenant`);
      else if (preference && warehouse.businessId !== preference.businessId)
        at('warehouse_id', `belongs to business "${warehouse.businessId}", not "${preference.businessId}"`);
      checkLevels(prefix, entry, problems, true);
      return {
        id: preference?.id ?? '',
        productId: preference?.productId ?? '',
        warehouseId: warehouse?.id ?? '',
        ...values(entry),
      };
    });
    if (problems.length > 0) throw rejected(problems);
    const updated = await this.write(principal, idempotency, async (tx) => {
      await repository.replacePreferences(tx, tenantId, rows);
      return rows.map((row) => row.id);
    });
    return this.inOrder(tenantId, updated);
  }

  /** Removes preferences, all or none; NOT_FOUND-free: unknown ids are a VALIDATION_ERROR naming them. */
  async removeItemPreferences(principal: Principal, ids: string[], idempotency?: Idempotency): Promise<string[]> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    if (ids.length === 0 || ids.length > MAX_PREFERENCES)
      throw rejected([{ field: 'input.ids', message: `must hold 1 to ${MAX_PREFERENCES} ids` }]);
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
        : [{ field: `input.ids[${index}]`, message: `"${id}" is not an item preference of the tenant` }],
    );
    if (problems.length > 0) throw rejected(problems);
    return this.write(principal, idempotency, (tx) => repository.deletePreferences(tx, tenantId, [...found]));
  }

  async stockPreferences(
    principal: Principal,
    args: { sku?: string | null; warehouse_id?: string | null; business_id?: string | null },
    page: PageArguments,
  ) {
    requireScope(principal, 'inventory:read');
    const { tenantId } = principal;
    for (const field of ['warehouse_id', 'business_id'] as const) {
      if (args[field] != null && !isUuid(args[field]!)) throw rejected([{ field, message: 'is not a valid id' }]);
    }
    const filter: repository.PreferenceFilter = {
      skus: args.sku != null ? [args.sku] : undefined,
      warehouseIds: args.warehouse_id != null ? [args.warehouse_id.toLowerCase()] : undefined,
      businessIds: args.business_id != null ? [args.business_id.toLowerCase()] : undefined,
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
}
