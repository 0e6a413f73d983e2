/** Safety stock: what each warehouse keeps back of a product, for every sales channel or for one. */
import { writeTransaction, type Db } from '../../kernel/db';
import type { FieldProblem } from '../../kernel/errors';
import { isUuid, uuidv7 } from '../../kernel/ids';
import { invalidInput } from '../../kernel/validation';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import * as catalog from '../catalog';
import * as ledger from './repository/ledger';
import * as locks from './repository/locks';
import * as repository from './repository/safety-stocks';
import type { SafetyStockInput } from './stock.schemas';
import type { SafetyStockRecord } from './stock.types';

export class SafetyStockService {
  constructor(private readonly db: Db) {}

  /**
   * Sets how many units of a SKU a warehouse keeps back, for every sales channel or (with
   * `channel_id`) for that one instead: no allocation takes them, and every availability figure
   * leaves them out. Under the SKU's stock lock, with a ledger row (CORRECTION, delta 0) that
   * carries the new safety stock.
   */
  async setSafetyStock(principal: Principal, input: SafetyStockInput): Promise<SafetyStockRecord> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const [products, warehouse, channel] = await Promise.all([
      catalog.productsBySkus(this.db, tenantId, [input.sku]),
      catalog.findWarehouse(this.db, tenantId, input.warehouse_id),
      input.channel_id == null ? null : catalog.findSalesChannel(this.db, tenantId, input.channel_id),
    ]);
    const problems: FieldProblem[] = [];
    if (products.length === 0)
      problems.push({ field: 'sku', message: `"${input.sku}" is not a product of the tenant` });
    if (!warehouse)
      problems.push({ field: 'warehouse_id', message: `"${input.warehouse_id}" is not a warehouse of the tenant` });
    if (input.channel_id != null && !channel)
      problems.push({ field: 'channel_id', message: `"${input.channel_id}" is not a sales channel of the tenant` });
    if (problems.length > 0) throw invalidInput(problems);
    const pair = { productId: products[0]!.id, warehouseId: warehouse!.id };
    return writeTransaction(this.db, async (tx) => {
      await locks.lockStockLevels(tx, tenantId, [pair]);
      const row = await repository.upsertSafetyStock(tx, tenantId, {
        id: uuidv7(),
        ...pair,
        channelId: input.channel_id ?? null,
        quantity: input.quantity,
      });
      await ledger.recordMutations(tx, tenantId, { source: 'CORRECTION', actor: principal.actor, references: [] }, [
        {
          id: uuidv7(),
          lineId: null,
          ...pair,
          positionId: null,
          delta: 0,
          safetyStock: row.quantity,
          safetyChannelId: row.channelId,
        },
      ]);
      return row;
    });
  }

  /** The tenant's safety stocks, narrowed to some SKUs or warehouses. */
  async safetyStocks(principal: Principal, filter: { sku?: string | null; warehouse_id?: string | null }) {
    requireScope(principal, 'inventory:read');
    if (filter.warehouse_id != null && !isUuid(filter.warehouse_id)) return [];
    return repository.safetyStocks(this.db, principal.tenantId, {
      skus: filter.sku == null ? undefined : [filter.sku],
      warehouseIds: filter.warehouse_id == null ? undefined : [filter.warehouse_id.toLowerCase()],
    });
  }
}
