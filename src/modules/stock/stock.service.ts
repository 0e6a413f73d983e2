import type { CursorCodec } from '../../kernel/cursor';
import { writeTransaction, type Db, type Tx } from '../../kernel/db';
import { AppError, notFound, type FieldProblem } from '../../kernel/errors';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import { isUuid, uuidv7 } from '../../kernel/ids';
import { paginate, type PageArguments } from '../../kernel/pagination';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import * as catalog from '../catalog';
import type { InventoryItemCreateInput, InventoryItemRecord, InventoryItemUpdateInput } from './inventory.schemas';
import type { InventoryArguments, QuantityCount, StockFilterArguments } from './stock.schemas';
import { invalidInput } from '../../kernel/validation';
import { parseMutationQuery } from './mutation-query';
import { sqlKeysetSource } from '../../kernel/keyset';
import type { LineFilter } from './repository/filters';
import { groupList, lineList } from './repository/inventory-reads';
import * as ledger from './repository/ledger';
import type { MutationContext } from './repository/ledger';
import * as lineRepository from './repository/lines';
import type { LineAddition, LineAttributes, LineIdentity } from './repository/lines';
import { addLines, correctLines, removeLines, type LineCorrection } from './writes/lines';
import type { InventoryLine, StockMutationSource } from './stock.types';

const connectionParameters = { after: 'after', before: 'before' };

export function toRecord(line: InventoryLine): InventoryItemRecord {
  return {
    id: line.id,
    sku: line.sku,
    warehouseId: line.warehouseId,
    businessId: line.businessId,
    position: line.positionCode,
    quantity: line.quantity,
    state: line.state,
    reason: line.state === 'UNAVAILABLE' ? line.reason : null,
    gtin: line.gtin,
    rfid: line.rfid,
    cost:
      line.costAmount !== null && line.costCurrency !== null
        ? { amount: line.costAmount, currency: line.costCurrency }
        : null,
    batchNumber: line.batchNumber,
    serialNumber: line.serialNumber,
    weight:
      line.weightAmount !== null && line.weightUnit !== null
        ? { amount: line.weightAmount, unit: line.weightUnit }
        : null,
    expiresAt: line.expiresAt?.getTime() ?? null,
    createdAt: line.createdAt.getTime(),
    updatedAt: line.updatedAt.getTime(),
  };
}

/** The attributes a write sets: undefined leaves them, null clears them. */
function attributesOf(
  input: Partial<Pick<InventoryItemUpdateInput, 'cost' | 'gtin' | 'rfid' | 'weight'>>,
): LineAttributes {
  return {
    costAmount: input.cost === undefined ? undefined : (input.cost?.amount ?? null),
    costCurrency: input.cost === undefined ? undefined : (input.cost?.currency ?? null),
    gtin: input.gtin === undefined ? undefined : (input.gtin ?? []),
    rfid: input.rfid,
    weightAmount: input.weight === undefined ? undefined : (input.weight?.amount ?? null),
    weightUnit: input.weight === undefined ? undefined : (input.weight?.unit ?? null),
  };
}

/** The 404 of lines that do not exist (the first ten named). */
const noSuchLines = (ids: string[]) =>
  notFound(
    `no inventory line with id ${ids
      .slice(0, 10)
      .map((id) => `"${id}"`)
      .join(', ')}${ids.length > 10 ? ', ...' : ''}`,
  );

/**
 * The 409 of a compare-and-set whose lines hold other quantities than the request expected: every
 * such line in `details`, with its id, the expected and the actual quantity.
 */
function staleQuantities(
  stale: { index: number; id: string; expected: number; actual: number }[],
  fieldOf: (index: number) => string,
) {
  const first = stale[0]!;
  const more = stale.length > 1 ? ` (and ${stale.length - 1} more)` : '';
  return new AppError(
    'CONFLICT',
    `line "${first.id}" holds ${first.actual}, not the expected ${first.expected}${more}: ` +
      'nothing was changed; read the lines again and resend',
    {
      details: stale.map(({ index, id, expected, actual }) => ({
        field: fieldOf(index),
        message: `line "${id}" holds ${actual}, not ${expected}`,
        id,
        expected,
        actual,
      })),
    },
  );
}

/** Both a single-value argument and a list filter of the same key: values satisfying both. */
function both(single: string | null | undefined, list: string[] | undefined): string[] | undefined {
  if (single == null) return list;
  return list ? list.filter((value) => value === single) : [single];
}

/** Stock: inventory lines, their REST writes, the ledger and the stock queries. */
export class StockService {
  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
  ) {}

  private mutationContext(principal: Principal, source: StockMutationSource): MutationContext {
    return {
      source,
      actor: { type: principal.actor.type, id: principal.actor.id },
      references: [{ type: 'InventoryList', id: uuidv7() }],
    };
  }

  private async linesInOrder(tx: Tx, tenantId: string, ids: string[]): Promise<InventoryItemRecord[]> {
    const unique = [...new Set(ids)];
    const byId = new Map((await lineRepository.findLines(tx, tenantId, unique)).map((line) => [line.id, line]));
    return unique.map((id) => toRecord(byId.get(id)!));
  }

  // ---------------------------------------------------------------------------------------------
  // REST writes

  /**
   * Adds stock (`POST /api/inventory/items`): validates every entry, then adds all of them or none.
   * Entries with the same identity, and an existing line with it, become one line; each line that
   * changed gets one REGISTER mutation.
   */
  async addItems(
    principal: Principal,
    entries: InventoryItemCreateInput[],
    idempotency?: Idempotency,
  ): Promise<InventoryItemRecord[]> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    return writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        const additions = await this.resolveAdditions(tx, tenantId, entries);
        const lineIds = await addLines(
          tx,
          tenantId,
          additions.map((addition, index) => ({ ...addition, field: `[${index}].position` })),
          this.mutationContext(principal, 'REGISTER'),
        );
        return this.linesInOrder(tx, tenantId, lineIds);
      }),
    );
  }

  /** Checks every entry against the catalog and merges entries of the same identity, in order of first appearance. */
  private async resolveAdditions(
    tx: Tx,
    tenantId: string,
    entries: InventoryItemCreateInput[],
  ): Promise<LineAddition[]> {
    const ids = (values: string[]) => [...new Set(values.filter(isUuid).map((v) => v.toLowerCase()))];
    const [products, warehouses, businesses] = await Promise.all([
      catalog.productsBySkus(tx, tenantId, [...new Set(entries.map((e) => e.sku))]),
      catalog.warehousesByIds(tx, tenantId, ids(entries.map((e) => e.warehouseId))),
      catalog.businessesByIds(tx, tenantId, ids(entries.map((e) => e.businessId))),
    ]);
    const codes = [...new Set(entries.flatMap((e) => (e.position !== undefined ? [e.position] : [])))];
    const positions = codes.length
      ? await catalog.positionsByCodes(
          tx,
          tenantId,
          warehouses.map((w) => w.id),
          codes,
        )
      : [];
    const productBySku = new Map(products.map((p) => [p.sku, p]));
    const warehouseById = new Map(warehouses.map((w) => [w.id, w]));
    const businessIds = new Set(businesses.map((b) => b.id));
    const positionByCode = new Map(positions.map((p) => [`${p.warehouseId}:${p.code}`, p]));

    const problems: FieldProblem[] = [];
    const merged = new Map<string, LineAddition>();
    entries.forEach((entry, index) => {
      const at = (field: string, message: string) => problems.push({ field: `[${index}].${field}`, message });
      const product = productBySku.get(entry.sku);
      const warehouse = warehouseById.get(entry.warehouseId.toLowerCase());
      const businessId = entry.businessId.toLowerCase();
      if (!product) at('sku', `"${entry.sku}" is not a product of the tenant`);
      else if (product.isBundle) at('sku', catalog.bundleHasNoStock(entry.sku));
      if (!warehouse) at('warehouseId', `"${entry.warehouseId}" is not a warehouse of the tenant`);
      if (!businessIds.has(businessId)) at('businessId', `"${entry.businessId}" is not a business of the tenant`);
      else if (warehouse && warehouse.businessId !== businessId) {
        at(
          'businessId',
          `warehouse "${warehouse.id}" belongs to business "${warehouse.businessId}", not "${entry.businessId}"`,
        );
      }
      const position =
        warehouse && entry.position !== undefined ? positionByCode.get(`${warehouse.id}:${entry.position}`) : undefined;
      if (warehouse && entry.position !== undefined && !position)
        at('position', `warehouse "${warehouse.id}" has no position "${entry.position}"`);
      const state = entry.state ?? 'AVAILABLE';
      if (entry.reason === 'BROKEN' && state !== 'UNAVAILABLE')
        at('reason', 'BROKEN is only allowed with state UNAVAILABLE');
      if (problems.length > 0 || !product || !warehouse) return;

      const identity: LineIdentity = {
        productId: product.id,
        warehouseId: warehouse.id,
        positionId: position?.id ?? null,
        batchNumber: entry.batchNumber ?? null,
        serialNumber: entry.serialNumber ?? null,
        expiresAt: entry.expiresAt !== undefined ? new Date(entry.expiresAt) : null,
        state,
        reason: state === 'UNAVAILABLE' ? (entry.reason ?? 'NONE') : 'NONE',
      };
      const key = lineRepository.identityKey(identity);
      const attributes = attributesOf(entry);
      const quantity = entry.quantity ?? 1;
      const earlier = merged.get(key);
      if (earlier) {
        earlier.quantity += quantity;
        for (const [name, value] of Object.entries(attributes)) {
          if (value !== undefined) (earlier.attributes as Record<string, unknown>)[name] = value;
        }
      } else {
        merged.set(key, { ...identity, id: '', quantity, attributes });
      }
    });
    if (problems.length > 0) throw invalidInput(problems);
    // UUIDv7s of one millisecond are not ordered among themselves: sorted, new lines keep entry order.
    const additions = [...merged.values()];
    const lineIds = additions.map(() => uuidv7()).sort();
    return additions.map((addition, index) => ({ ...addition, id: lineIds[index]! }));
  }

  /**
   * Corrects lines (`PATCH /api/inventory/items`), all or nothing, entries applied in order: every
   * field given replaces the line's value. A line whose identity then equals another line's is
   * merged into that line. One CORRECTION mutation per entry. An entry with `expectedQuantity` is
   * applied only if its line holds that quantity (compare-and-set; otherwise 409 and nothing is
   * applied). Returns the resulting lines, each once.
   */
  async updateItems(
    principal: Principal,
    entries: InventoryItemUpdateInput[],
    idempotency?: Idempotency,
  ): Promise<InventoryItemRecord[]> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const problems: FieldProblem[] = [];
    const seen = new Set<string>();
    entries.forEach((entry, index) => {
      const id = entry.id.toLowerCase();
      if (seen.has(id)) problems.push({ field: `[${index}].id`, message: `"${entry.id}" appears more than once` });
      seen.add(id);
      if (Object.keys(entry).every((key) => key === 'id' || key === 'expectedQuantity'))
        problems.push({ field: `[${index}]`, message: 'changes nothing: give at least one field to set' });
    });
    if (problems.length > 0) throw invalidInput(problems);
    return this.correctLines(
      principal,
      entries,
      idempotency,
      (index) => `[${index}].expectedQuantity`,
      (tx, resultIds) => this.linesInOrder(tx, tenantId, resultIds),
    );
  }

  /**
   * Records counted quantities (GraphQL `setInventoryQuantities`), all or nothing: each item's line
   * gets the quantity, and an item with `change_from_quantity` only if its line still holds that
   * quantity (otherwise a 409 CONFLICT naming the line, the expected and the actual quantity). One
   * CORRECTION mutation per item.
   */
  async setQuantities(
    principal: Principal,
    items: QuantityCount[],
    idempotency?: Idempotency,
  ): Promise<InventoryLine[]> {
    requireScope(principal, 'inventory:write');
    const seen = new Set<string>();
    const problems: FieldProblem[] = [];
    items.forEach((item, index) => {
      const id = item.item_id.toLowerCase();
      if (seen.has(id))
        problems.push({ field: `items[${index}].item_id`, message: `"${item.item_id}" appears more than once` });
      seen.add(id);
    });
    if (problems.length > 0) throw invalidInput(problems);
    const entries = items.map((item): InventoryItemUpdateInput => ({
      id: item.item_id,
      quantity: item.quantity,
      ...(item.change_from_quantity != null ? { expectedQuantity: item.change_from_quantity } : {}),
    }));
    // The ids are what an idempotent replay returns: the lines are read afresh either way.
    const resultIds = await this.correctLines(
      principal,
      entries,
      idempotency,
      (index) => `items[${index}].change_from_quantity`,
      async (_tx, ids) => ids,
    );
    const lines = await lineRepository.findLines(this.db, principal.tenantId, resultIds);
    const byId = new Map(lines.map((line) => [line.id, line]));
    return [...new Set(resultIds)].map((id) => byId.get(id)!);
  }

  /**
   * The transaction of a correction: the entries applied in order, after every `expectedQuantity`
   * was compared with its line as the request found it (under the stock locks). Returns the id of
   * the line each entry ended in, through `result` (what an idempotent replay returns).
   */
  private correctLines<T>(
    principal: Principal,
    entries: InventoryItemUpdateInput[],
    idempotency: Idempotency | undefined,
    expectedField: (index: number) => string,
    result: (tx: Tx, resultIds: string[]) => Promise<T>,
  ): Promise<T> {
    const { tenantId } = principal;
    return writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        const ids = entries.map((entry) => entry.id.toLowerCase());
        const found = await this.existingLines(tx, tenantId, ids);
        const targetPositions = await this.resolvePatchPositions(tx, tenantId, entries, found);
        const change = this.mutationContext(principal, 'CORRECTION');
        const resultIds = await correctLines(tx, tenantId, [...found.values()], change, async () => {
          // Read again under the locks: a concurrent writer may have changed or removed a line.
          const current = await this.existingLines(tx, tenantId, ids, true);
          const stale = entries.flatMap((entry, index) => {
            const actual = current.get(ids[index]!)!.quantity;
            return entry.expectedQuantity !== undefined && entry.expectedQuantity !== actual
              ? [{ index, id: ids[index]!, expected: entry.expectedQuantity, actual }]
              : [];
          });
          if (stale.length > 0) throw staleQuantities(stale, expectedField);
          const corrections: LineCorrection[] = [];
          const endedIn: string[] = [];
          for (const [index, entry] of entries.entries()) {
            // Fresh: an earlier entry may have merged another line into this one.
            const [line] = await lineRepository.findLines(tx, tenantId, [ids[index]!], { forUpdate: true });
            const state = entry.state ?? line!.state;
            const identity: LineIdentity = {
              productId: line!.productId,
              warehouseId: line!.warehouseId,
              positionId: entry.position !== undefined ? targetPositions.get(index)! : line!.positionId,
              batchNumber: entry.batchNumber !== undefined ? entry.batchNumber : line!.batchNumber,
              serialNumber: entry.serialNumber !== undefined ? entry.serialNumber : line!.serialNumber,
              expiresAt:
                entry.expiresAt !== undefined
                  ? entry.expiresAt === null
                    ? null
                    : new Date(entry.expiresAt)
                  : line!.expiresAt,
              state,
              reason:
                state !== 'UNAVAILABLE'
                  ? 'NONE'
                  : (entry.reason ?? (line!.state === 'UNAVAILABLE' ? line!.reason : 'NONE')),
            };
            const quantity = entry.quantity ?? line!.quantity;
            const attributes = attributesOf(entry);
            const changedIdentity = lineRepository.identityKey(identity) !== lineRepository.identityKey(line!);
            const other = changedIdentity
              ? await lineRepository.findLineByIdentity(tx, tenantId, identity, line!.id)
              : null;
            if (other) {
              await lineRepository.deleteLines(tx, tenantId, [line!.id]);
              await lineRepository.addToLine(tx, other.id, quantity, attributes);
            } else {
              await lineRepository.updateLine(tx, line!.id, identity, quantity, attributes);
            }
            const resultId = other?.id ?? line!.id;
            endedIn.push(resultId);
            corrections.push({ line: identity, lineId: resultId, delta: quantity - line!.quantity });
          }
          const moved = entries.flatMap((entry, index) =>
            entry.position !== undefined ? [{ ...found.get(ids[index]!)!, field: `[${index}].position` }] : [],
          );
          return { corrections, moved, result: endedIn };
        });
        return result(tx, resultIds);
      }),
    );
  }

  /** The tenant's lines with these ids; 404 naming the ids that do not exist. */
  private async existingLines(tx: Tx, tenantId: string, ids: string[], forUpdate = false) {
    const lines = await lineRepository.findLines(tx, tenantId, ids.filter(isUuid), { forUpdate });
    const byId = new Map(lines.map((line) => [line.id, line]));
    const missing = ids.filter((id) => !byId.has(id));
    if (missing.length > 0) throw noSuchLines(missing);
    return byId;
  }

  /**
   * The position id each entry moves its line to (entry index → id or null); 400 for unknown codes and bad
   * reasons.
   */
  private async resolvePatchPositions(
    tx: Tx,
    tenantId: string,
    entries: InventoryItemUpdateInput[],
    lines: Map<string, InventoryLine>,
  ) {
    const codes = [...new Set(entries.flatMap((e) => (typeof e.position === 'string' ? [e.position] : [])))];
    const warehouseIds = [...new Set([...lines.values()].map((line) => line.warehouseId))];
    const positions = codes.length ? await catalog.positionsByCodes(tx, tenantId, warehouseIds, codes) : [];
    const byCode = new Map(positions.map((p) => [`${p.warehouseId}:${p.code}`, p.id]));
    const problems: FieldProblem[] = [];
    const result = new Map<number, string | null>();
    entries.forEach((entry, index) => {
      const line = lines.get(entry.id.toLowerCase())!;
      if (entry.position === null) result.set(index, null);
      else if (entry.position !== undefined) {
        const id = byCode.get(`${line.warehouseId}:${entry.position}`);
        if (id === undefined) {
          problems.push({
            field: `[${index}].position`,
            message: `warehouse "${line.warehouseId}" has no position "${entry.position}"`,
          });
        }
        result.set(index, id ?? null);
      }
      if (entry.reason === 'BROKEN' && (entry.state ?? line.state) !== 'UNAVAILABLE') {
        problems.push({
          field: `[${index}].reason`,
          message: 'BROKEN is only allowed with state UNAVAILABLE',
        });
      }
    });
    if (problems.length > 0) throw invalidInput(problems);
    return result;
  }

  /** Removes whole lines (`DELETE /api/inventory/items`), all or none; one CORRECTION mutation per line. */
  async removeItems(principal: Principal, ids: string[]): Promise<void> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
    await writeTransaction(this.db, async (tx) => {
      const found = await this.existingLines(tx, tenantId, unique);
      // Removed by another write since they were read: the 404 names those, not the ones just deleted.
      await removeLines(
        tx,
        tenantId,
        unique.map((id) => found.get(id)!),
        this.mutationContext(principal, 'CORRECTION'),
        noSuchLines,
      );
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Queries

  /** Stock grouped per SKU, warehouse and position. */
  async inventory(principal: Principal, args: InventoryArguments, page: PageArguments) {
    requireScope(principal, 'inventory:read');
    const { tenantId } = principal;
    const filters = args.filters ?? {};
    const filter: LineFilter = {
      skus: both(args.sku, filters.sku ?? undefined),
      warehouseIds: both(args.warehouse_id, filters.warehouse_id ?? undefined),
      businessIds: both(args.business_id, filters.business_id ?? undefined),
      locationIds: filters.location_id ?? undefined,
      ids: filters.ids ?? undefined,
      quantity: filters.quantity ?? undefined,
      channelId: filters.channel_id ?? undefined,
    };
    return paginate(
      this.cursors,
      // Groups per channel and per warehouse have different keys: a cursor belongs to one of them.
      `inventory:${tenantId}:${filter.channelId ?? ''}`,
      page,
      sqlKeysetSource(this.db, groupList(tenantId, filter)),
      connectionParameters,
    );
  }

  /** Inventory lines matching at least one filter. */
  async inventoryItems(principal: Principal, filters: StockFilterArguments, page: PageArguments) {
    requireScope(principal, 'inventory:read');
    const filter: LineFilter = {
      ids: filters.ids ?? undefined,
      skus: filters.sku ?? undefined,
      warehouseIds: filters.warehouse_id ?? undefined,
      businessIds: filters.business_id ?? undefined,
      locationIds: filters.location_id ?? undefined,
      states: filters.status ?? undefined,
      batchNumbers: filters.batch_number ?? undefined,
      serialNumbers: filters.serial_number ?? undefined,
      quantity: filters.quantity ?? undefined,
    };
    return this.pageOfLines(principal.tenantId, filter, page);
  }

  /** The lines at one position of a warehouse (given by code), or those without a position. */
  async inventoryAtLocation(
    principal: Principal,
    warehouseId: string,
    positionCode: string | null | undefined,
    page: PageArguments,
  ) {
    requireScope(principal, 'inventory:read');
    const { tenantId } = principal;
    const warehouse = isUuid(warehouseId) ? await catalog.findWarehouse(this.db, tenantId, warehouseId) : null;
    if (!warehouse) throw notFound(`no warehouse with id "${warehouseId}"`);
    let positionId: string | null = null;
    if (positionCode != null) {
      const [position] = await catalog.positionsByCodes(this.db, tenantId, [warehouse.id], [positionCode]);
      if (!position) throw notFound(`warehouse "${warehouse.id}" has no position "${positionCode}"`);
      positionId = position.id;
    }
    return this.pageOfLines(tenantId, { warehouseIds: [warehouse.id], positionId }, page);
  }

  private pageOfLines(tenantId: string, filter: LineFilter, page: PageArguments) {
    return paginate(
      this.cursors,
      `inventory-items:${tenantId}`,
      page,
      sqlKeysetSource(this.db, lineList(tenantId, filter)),
      connectionParameters,
    );
  }

  /** The ledger, filtered and sorted by a `stockMutations` query string. */
  async stockMutations(principal: Principal, query: string | null | undefined, page: PageArguments) {
    requireScope(principal, 'inventory:read');
    const { tenantId } = principal;
    const { filter, sort } = parseMutationQuery(query);
    return paginate(
      this.cursors,
      `stock-mutations:${tenantId}:${sort.descending ? '-' : ''}${sort.field}`,
      page,
      sqlKeysetSource(this.db, ledger.ledgerList(tenantId, filter, sort)),
      connectionParameters,
    );
  }
}
