import type { CursorCodec } from '../../kernel/cursor';
import type { Db } from '../../kernel/db';
import { sqlKeysetSource } from '../../kernel/keyset';
import { paginate, type PageArguments } from '../../kernel/pagination';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import * as repository from './stock-events.repository';
import type { StockEventRecord } from './stock-events.repository';

/** Stock events: the falls of available stock to a reorder point or to nothing, as recorded. */
export class StockEventService {
  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
  ) {}

  /** The tenant's stock events in the order they were recorded, narrowed by SKU, warehouse and type. */
  async stockEvents(
    principal: Principal,
    args: { sku?: string | null; warehouse_id?: string | null; type?: string | null },
    page: PageArguments,
  ) {
    requireScope(principal, 'inventory:read');
    const { tenantId } = principal;
    const filter: repository.StockEventFilter = {
      skus: args.sku != null ? [args.sku] : undefined,
      warehouseIds: args.warehouse_id != null ? [args.warehouse_id] : undefined,
      types: args.type != null ? [args.type] : undefined,
    };
    return paginate<StockEventRecord, number>(
      this.cursors,
      `stock-events:${tenantId}:${JSON.stringify(filter)}`,
      page,
      sqlKeysetSource(this.db, repository.stockEventList(tenantId, filter)),
      { after: 'after', before: 'before' },
    );
  }
}
