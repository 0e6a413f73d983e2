import type { CursorCodec } from '../../kernel/cursor';
import type { Db } from '../../kernel/db';
import { paginate, type PageArguments } from '../../kernel/pagination';
import { requireScope, type Principal } from '../auth/scopes';
import * as repository from './catalog.repository';
import type { Product as ProductRow } from '../../__generated__/prisma/client';

const connectionParameters = { after: 'after', before: 'before' };

/** The tenant's catalog. */
export class CatalogService {
  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
  ) {}

  /** A page of the tenant's products in creation order. */
  async listProducts(principal: Principal, page: PageArguments) {
    requireScope(principal, 'catalog:read');
    const { tenantId } = principal;
    return paginate<ProductRow, string>(
      this.cursors,
      `products:${tenantId}`,
      page,
      {
        fetch: (query) => repository.listProducts(this.db, tenantId, query),
        exists: (direction, id) => repository.productExistsBeside(this.db, tenantId, direction, id),
        keyOf: (row) => row.id,
      },
      connectionParameters,
    );
  }
}
