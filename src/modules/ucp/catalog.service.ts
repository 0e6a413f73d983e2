/**
 * The tenants' catalogs for agents: the setting naming the catalog index and its field mapping,
 * and the catalog as the UCP operations read it, for a tenant (its `/mcp`) or through a proxy key
 * (the public storefront catalog, limited by the key's search settings).
 */
import { AppError, notFound, type FieldProblem } from '../../kernel/errors';
import type { Principal } from '../../kernel/principal';
import { invalidField, invalidInput } from '../../kernel/validation';
import { requireScope } from '../../kernel/scopes';
import type { Services } from '../context';
import type { SearchContextData } from '../search';
import type { CatalogToolContext, OpenCatalog } from './catalog-core';
import type { CatalogSettingsData, CatalogSettingsInputData } from './catalog-settings.schemas';
import * as repository from './catalog.repository';

/** SKUs whose stock is read per query; a page of search results never holds more. */
const STOCK_PAGE_SIZE = 100;

/**
 * The catalog's own reading of the tenant's index and stock. A product's availability is part of
 * the catalog any caller of it may see, so it is read for the tenant rather than with the caller's
 * scopes (a storefront caller has none).
 */
const catalogReader = (tenantId: string): Principal => ({
  tenantId,
  scopes: new Set(['indexes:read', 'search', 'inventory:read']),
  actor: { type: 'api_key', id: 'ucp-catalog' },
});

const toSettings = (row: repository.CatalogRow): CatalogSettingsData => ({
  index: row.indexAlias,
  mapping: row.mapping,
  updated_at: row.updatedAt.toISOString(),
});

export class UcpCatalogService {
  constructor(private readonly services: Services) {}

  /** The tenant's catalog setting; NOT_FOUND before one is set. */
  async getSettings(principal: Principal): Promise<CatalogSettingsData> {
    requireScope(principal, 'indexes:read');
    const row = await repository.findCatalog(this.services.db, principal.tenantId);
    if (!row) throw notFound('no catalog is set: PUT /api/agents/catalog names one');
    return toSettings(row);
  }

  /** Names the tenant's catalog index and its mapping, checked against the index's fields and filters. */
  async putSettings(principal: Principal, input: CatalogSettingsInputData): Promise<CatalogSettingsData> {
    requireScope(principal, 'indexes:write');
    let index;
    try {
      index = await this.services.search.indexes.get(catalogReader(principal.tenantId), input.index);
    } catch (error) {
      if (error instanceof AppError && error.key === 'NOT_FOUND') {
        throw invalidField('index', `no index with alias "${input.index}"`);
      }
      throw error;
    }
    const filterable = new Set([...index.filters.map((filter) => filter.key), ...index.facet_fields]);
    const { mapping } = input;
    const problems: FieldProblem[] = [];
    const needFilter = (name: 'product_id' | 'sku' | 'price' | 'categories', field: string | null) => {
      if (field !== null && !filterable.has(field)) {
        problems.push({
          field: `mapping.${name}`,
          message: `${field} is not a filter of the index ${index.alias}: add it to the index's filters`,
        });
      }
    };
    needFilter('product_id', mapping.product_id);
    needFilter('sku', mapping.sku);
    needFilter('price', mapping.price);
    needFilter('categories', mapping.categories);
    if (problems.length > 0) throw invalidInput(problems);
    return toSettings(await repository.upsertCatalog(this.services.db, principal.tenantId, index.alias, mapping));
  }

  /** The tenant's catalog, searched with the search module's per-index search. */
  forTenant(tenantId: string): CatalogToolContext {
    const reader = catalogReader(tenantId);
    return {
      open: async () => {
        const row = await repository.findCatalog(this.services.db, tenantId);
        if (!row) throw notFound('the tenant names no catalog: PUT /api/agents/catalog names one');
        return this.opened(row, async (context) => {
          const [entry] = await this.services.search.search.searchIndex(reader, row.indexAlias, [context]);
          return entry!.results[0]!;
        });
      },
    };
  }

  /**
   * The public catalog of a proxy key: refused as searching through the key is (unknown key,
   * suspended proxy, private proxy without a token of its tenant with scope `search`), and only
   * when the key's search settings include the catalog index.
   */
  async forProxy(key: string, caller: Principal | null = null): Promise<CatalogToolContext> {
    const { tenantId, settings } = await this.services.search.search.searchEngine(caller, key);
    const row = await repository.findCatalog(this.services.db, tenantId);
    if (!row)
      throw notFound(`the proxy "${key}" offers no catalog (its tenant names one with PUT /api/agents/catalog)`);
    if (!settings.indexes.some((entry) => entry.alias === row.indexAlias)) {
      throw notFound(`the search settings of "${key}" do not include the catalog index`);
    }
    return {
      open: async () =>
        this.opened(row, async (context) => {
          const [entry] = await this.services.search.search.searchProxy(caller, key, [
            { ...context, indices: [row.indexAlias] },
          ]);
          return entry!.results[0]!;
        }),
    };
  }

  private opened(row: repository.CatalogRow, search: OpenCatalog['search']): OpenCatalog {
    return {
      mapping: row.mapping,
      search: (context: Omit<SearchContextData, 'indices'>) => search(context),
      availableSkus: (skus) => this.availableSkus(row.tenantId, skus),
    };
  }

  /** The SKUs with sellable stock, summed over every warehouse (bundles by what their components make). */
  private async availableSkus(tenantId: string, skus: string[]): Promise<Set<string>> {
    const sellable = new Map<string, number>();
    let after: string | null = null;
    for (;;) {
      const page = await this.services.stock.inventory(
        catalogReader(tenantId),
        { filters: { sku: skus } },
        { size: STOCK_PAGE_SIZE, after },
      );
      for (const group of page.items) {
        sellable.set(group.sku, (sellable.get(group.sku) ?? 0) + group.quantitySellable);
      }
      if (!page.hasNextPage || !page.endCursor) break;
      after = page.endCursor;
    }
    return new Set([...sellable].filter(([, quantity]) => quantity > 0).map(([sku]) => sku));
  }
}
