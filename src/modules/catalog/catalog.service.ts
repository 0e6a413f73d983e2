import type { CursorCodec } from '../../kernel/cursor';
import { isUniqueViolation, writeTransaction, type Db } from '../../kernel/db';
import { conflict, idTaken, notFound, type FieldProblem } from '../../kernel/errors';
import { isUuid, uuidv7 } from '../../kernel/ids';
import { paginate, type PageArguments } from '../../kernel/pagination';
import type {
  Business as BusinessRow,
  Position as PositionRow,
  Product as ProductRow,
  SalesChannel as SalesChannelRow,
  Warehouse as WarehouseRow,
} from '../../__generated__/prisma/client';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import * as bundles from './bundles.repository';
import * as repository from './catalog.repository';
import type { ChannelWarehouseCache } from './channel-warehouses';
import type { AllocationStrategy, TaxClass } from './catalog.schemas';
import { invalidInput } from '../../kernel/validation';

const connectionParameters = { after: 'after', before: 'before' };

/** Whether a thrown error is PostgreSQL's foreign key violation (directly or through Prisma). */
function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: string; meta?: { driverAdapterError?: { cause?: { code?: string; kind?: string } } } };
  if (e?.code === 'P2003' || e?.code === '23503') return true;
  const cause = e?.meta?.driverAdapterError?.cause;
  return cause?.code === '23503' || cause?.kind === 'ForeignKeyConstraintViolation';
}

/** An id argument that cannot name an entity of the tenant is simply not found. */
function checkId(kind: string, id: string) {
  if (!isUuid(id)) throw notFound(`no ${kind} with id "${id}"`);
  return id;
}

type Page = PageArguments;

/** Where a warehouse is, as its inputs give it (left out: unchanged). */
interface WarehousePlace {
  latitude?: number | null;
  longitude?: number | null;
  country_code?: string | null;
}

/** The columns of the place fields given. */
const placeOf = (input: WarehousePlace) => ({
  ...(input.latitude != null ? { latitude: input.latitude, longitude: input.longitude } : {}),
  ...(input.country_code != null ? { countryCode: input.country_code } : {}),
});

/** The tenant's catalog: products, businesses, warehouses, positions and sales channels. */
export class CatalogService {
  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
    private readonly channelWarehouses: ChannelWarehouseCache,
  ) {}

  private page<Row extends { id: string }>(
    scope: string,
    model: Parameters<typeof repository.listById>[1],
    where: Record<string, unknown>,
    page: Page,
  ) {
    return paginate<Row, string>(
      this.cursors,
      scope,
      page,
      repository.listById<Row>(this.db, model, where),
      connectionParameters,
    );
  }

  // Products

  /** A page of the tenant's products in creation order. */
  async listProducts(principal: Principal, page: Page) {
    requireScope(principal, 'catalog:read');
    const { tenantId } = principal;
    return this.page<ProductRow>(`products:${tenantId}`, 'product', { tenantId }, page);
  }

  /** One product of the tenant. */
  async getProduct(principal: Principal, id: string): Promise<ProductRow> {
    requireScope(principal, 'catalog:read');
    const row = await repository.findProduct(this.db, principal.tenantId, checkId('product', id));
    if (!row) throw notFound(`no product with id "${id}"`);
    return row;
  }

  /** Creates a product; its SKU must be new to the tenant. */
  async createProduct(
    principal: Principal,
    input: {
      sku: string;
      name: string;
      gtin?: string[] | null;
      tax_class?: TaxClass | null;
      weight_grams?: number | null;
    },
  ): Promise<ProductRow> {
    requireScope(principal, 'catalog:write');
    const data = {
      id: uuidv7(),
      tenantId: principal.tenantId,
      sku: input.sku,
      name: input.name,
      gtin: input.gtin ?? [],
      taxClass: input.tax_class ?? 'standard',
      weightGrams: input.weight_grams ?? null,
    };
    try {
      return await repository.insertProduct(this.db, data);
    } catch (error) {
      if (isUniqueViolation(error)) throw idTaken(`a product with sku "${input.sku}" already exists`);
      throw error;
    }
  }

  /** Changes the given fields of a product. */
  async updateProduct(
    principal: Principal,
    input: {
      id: string;
      sku?: string | null;
      name?: string | null;
      gtin?: string[] | null;
      tax_class?: TaxClass | null;
      weight_grams?: number | null;
    },
  ): Promise<ProductRow> {
    requireScope(principal, 'catalog:write');
    const data: Record<string, unknown> = {};
    if (input.sku != null) data.sku = input.sku;
    if (input.name != null) data.name = input.name;
    if (input.gtin != null) data.gtin = input.gtin;
    if (input.tax_class != null) data.taxClass = input.tax_class;
    // Weight is the one optional column: an explicit null removes it.
    if (input.weight_grams !== undefined) data.weightGrams = input.weight_grams;
    try {
      const row = await repository.updateRow<ProductRow>(
        this.db,
        'product',
        principal.tenantId,
        checkId('product', input.id),
        data,
      );
      if (!row) throw notFound(`no product with id "${input.id}"`);
      return row;
    } catch (error) {
      if (isUniqueViolation(error)) throw idTaken(`a product with sku "${input.sku}" already exists`);
      throw error;
    }
  }

  /** Deletes a product that no stock refers to and no bundle contains; a bundle goes with its component list. */
  async deleteProduct(principal: Principal, id: string): Promise<string> {
    requireScope(principal, 'catalog:write');
    const { tenantId } = principal;
    if (isUuid(id) && (await bundles.isComponent(this.db, tenantId, id.toLowerCase())))
      throw conflict(`product "${id}" is a component of a bundle; it cannot be deleted`);
    await this.deleteStockHolder(tenantId, 'product', 'product_id', checkId('product', id));
    await bundles.replaceComponents(this.db, tenantId, id.toLowerCase(), []);
    return id;
  }

  // Businesses

  /** A page of the tenant's businesses in creation order. */
  async listBusinesses(principal: Principal, page: Page) {
    requireScope(principal, 'catalog:read');
    const { tenantId } = principal;
    return this.page<BusinessRow>(`businesses:${tenantId}`, 'business', { tenantId }, page);
  }

  /** One business of the tenant. */
  async getBusiness(principal: Principal, id: string): Promise<BusinessRow> {
    requireScope(principal, 'catalog:read');
    const row = await repository.findBusiness(this.db, principal.tenantId, checkId('business', id));
    if (!row) throw notFound(`no business with id "${id}"`);
    return row;
  }

  /** Creates a business. */
  async createBusiness(principal: Principal, input: { name: string }): Promise<BusinessRow> {
    requireScope(principal, 'catalog:write');
    return repository.insertBusiness(this.db, { id: uuidv7(), tenantId: principal.tenantId, name: input.name });
  }

  /** Changes the given fields of a business. */
  async updateBusiness(principal: Principal, input: { id: string; name?: string | null }): Promise<BusinessRow> {
    requireScope(principal, 'catalog:write');
    const data = input.name != null ? { name: input.name } : {};
    const row = await repository.updateRow<BusinessRow>(
      this.db,
      'business',
      principal.tenantId,
      checkId('business', input.id),
      data,
    );
    if (!row) throw notFound(`no business with id "${input.id}"`);
    return row;
  }

  /** Deletes a business that owns no warehouse. */
  async deleteBusiness(principal: Principal, id: string): Promise<string> {
    requireScope(principal, 'catalog:write');
    const refused = () => conflict(`business "${id}" still owns warehouses; delete them first`);
    checkId('business', id);
    if (!(await repository.findBusiness(this.db, principal.tenantId, id)))
      throw notFound(`no business with id "${id}"`);
    if (await repository.businessHasWarehouses(this.db, principal.tenantId, id)) throw refused();
    try {
      if (!(await repository.deleteRow(this.db, 'business', principal.tenantId, id)))
        throw notFound(`no business with id "${id}"`);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw refused();
      throw error;
    }
    return id;
  }

  // Warehouses

  /** A page of the tenant's warehouses (of one business, if given) in creation order. */
  async listWarehouses(principal: Principal, businessId: string | null | undefined, page: Page) {
    requireScope(principal, 'catalog:read');
    const { tenantId } = principal;
    const where = businessId != null ? { tenantId, businessId } : { tenantId };
    return this.page<WarehouseRow>(`warehouses:${tenantId}:${businessId ?? ''}`, 'warehouse', where, page);
  }

  /** One warehouse of the tenant. */
  async getWarehouse(principal: Principal, id: string): Promise<WarehouseRow> {
    requireScope(principal, 'catalog:read');
    const row = await repository.findWarehouse(this.db, principal.tenantId, checkId('warehouse', id));
    if (!row) throw notFound(`no warehouse with id "${id}"`);
    return row;
  }

  /** Creates a warehouse of one of the tenant's businesses. */
  async createWarehouse(
    principal: Principal,
    input: { business_id: string; name: string } & WarehousePlace,
  ): Promise<WarehouseRow> {
    requireScope(principal, 'catalog:write');
    const { name } = input;
    const business = await repository.findBusiness(this.db, principal.tenantId, checkId('business', input.business_id));
    if (!business) throw notFound(`no business with id "${input.business_id}"`);
    try {
      return await repository.insertWarehouse(this.db, {
        id: uuidv7(),
        tenantId: principal.tenantId,
        businessId: business.id,
        name,
        ...placeOf(input),
      });
    } catch (error) {
      // The business was deleted in between.
      if (isForeignKeyViolation(error)) throw notFound(`no business with id "${input.business_id}"`);
      throw error;
    }
  }

  /** Changes the given fields of a warehouse. */
  async updateWarehouse(
    principal: Principal,
    input: { id: string; name?: string | null } & WarehousePlace,
  ): Promise<WarehouseRow> {
    requireScope(principal, 'catalog:write');
    const data = { ...(input.name != null ? { name: input.name } : {}), ...placeOf(input) };
    const row = await repository.updateRow<WarehouseRow>(
      this.db,
      'warehouse',
      principal.tenantId,
      checkId('warehouse', input.id),
      data,
    );
    if (!row) throw notFound(`no warehouse with id "${input.id}"`);
    return row;
  }

  /** Deletes a warehouse, with its positions, that no stock refers to. */
  async deleteWarehouse(principal: Principal, id: string): Promise<string> {
    requireScope(principal, 'catalog:write');
    await this.deleteStockHolder(principal.tenantId, 'warehouse', 'warehouse_id', checkId('warehouse', id));
    return id;
  }

  // Positions

  /** A page of the positions of one of the tenant's warehouses, in creation order. */
  async listPositions(principal: Principal, warehouseId: string, page: Page) {
    requireScope(principal, 'catalog:read');
    const { tenantId } = principal;
    if (!(await repository.findWarehouse(this.db, tenantId, checkId('warehouse', warehouseId)))) {
      throw notFound(`no warehouse with id "${warehouseId}"`);
    }
    return this.page<PositionRow>(`positions:${tenantId}:${warehouseId}`, 'position', { tenantId, warehouseId }, page);
  }

  /** One position of the tenant. */
  async getPosition(principal: Principal, id: string): Promise<PositionRow> {
    requireScope(principal, 'catalog:read');
    const row = await repository.findPosition(this.db, principal.tenantId, checkId('position', id));
    if (!row) throw notFound(`no position with id "${id}"`);
    return row;
  }

  /** Creates a position in one of the tenant's warehouses; its code must be new to the warehouse. */
  async createPosition(principal: Principal, input: { warehouse_id: string; code: string }): Promise<PositionRow> {
    requireScope(principal, 'catalog:write');
    const { code } = input;
    const warehouse = await repository.findWarehouse(
      this.db,
      principal.tenantId,
      checkId('warehouse', input.warehouse_id),
    );
    if (!warehouse) throw notFound(`no warehouse with id "${input.warehouse_id}"`);
    try {
      return await repository.insertPosition(this.db, {
        id: uuidv7(),
        tenantId: principal.tenantId,
        warehouseId: warehouse.id,
        code,
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw idTaken(`warehouse "${warehouse.id}" already has a position "${code}"`);
      if (isForeignKeyViolation(error)) throw notFound(`no warehouse with id "${input.warehouse_id}"`);
      throw error;
    }
  }

  /** Changes the given fields of a position. */
  async updatePosition(principal: Principal, input: { id: string; code?: string | null }): Promise<PositionRow> {
    requireScope(principal, 'catalog:write');
    const data = input.code != null ? { code: input.code } : {};
    try {
      const row = await repository.updateRow<PositionRow>(
        this.db,
        'position',
        principal.tenantId,
        checkId('position', input.id),
        data,
      );
      if (!row) throw notFound(`no position with id "${input.id}"`);
      return row;
    } catch (error) {
      if (isUniqueViolation(error)) throw idTaken(`the warehouse already has a position "${input.code}"`);
      throw error;
    }
  }

  /** Deletes a position that no stock refers to. */
  async deletePosition(principal: Principal, id: string): Promise<string> {
    requireScope(principal, 'catalog:write');
    await this.deleteStockHolder(principal.tenantId, 'position', 'position_id', checkId('position', id));
    return id;
  }

  // Sales channels

  /** A page of the tenant's sales channels in creation order. */
  async listSalesChannels(principal: Principal, page: Page) {
    requireScope(principal, 'catalog:read');
    const { tenantId } = principal;
    return this.page<SalesChannelRow>(`sales-channels:${tenantId}`, 'salesChannel', { tenantId }, page);
  }

  /** One sales channel of the tenant. */
  async getSalesChannel(principal: Principal, id: string): Promise<SalesChannelRow> {
    requireScope(principal, 'catalog:read');
    const row = await repository.findSalesChannel(this.db, principal.tenantId, checkId('sales channel', id));
    if (!row) throw notFound(`no sales channel with id "${id}"`);
    return row;
  }

  /** Creates a sales channel. */
  async createSalesChannel(
    principal: Principal,
    input: { name: string; currency?: string | null; tax_inclusive?: boolean | null },
  ): Promise<SalesChannelRow> {
    requireScope(principal, 'catalog:write');
    return repository.insertSalesChannel(this.db, {
      id: uuidv7(),
      tenantId: principal.tenantId,
      name: input.name,
      ...(input.currency != null ? { currency: input.currency } : {}),
      ...(input.tax_inclusive != null ? { taxInclusive: input.tax_inclusive } : {}),
    });
  }

  /** Changes the given fields of a sales channel. */
  async updateSalesChannel(
    principal: Principal,
    input: { id: string; name?: string | null; currency?: string | null; tax_inclusive?: boolean | null },
  ): Promise<SalesChannelRow> {
    requireScope(principal, 'catalog:write');
    const data = {
      ...(input.name != null ? { name: input.name } : {}),
      ...(input.currency != null ? { currency: input.currency } : {}),
      ...(input.tax_inclusive != null ? { taxInclusive: input.tax_inclusive } : {}),
    };
    const row = await repository.updateRow<SalesChannelRow>(
      this.db,
      'salesChannel',
      principal.tenantId,
      checkId('sales channel', input.id),
      data,
    );
    if (!row) throw notFound(`no sales channel with id "${input.id}"`);
    return row;
  }

  /** Deletes a sales channel. */
  async deleteSalesChannel(principal: Principal, id: string): Promise<string> {
    requireScope(principal, 'catalog:write');
    if (!(await repository.deleteRow(this.db, 'salesChannel', principal.tenantId, checkId('sales channel', id)))) {
      throw notFound(`no sales channel with id "${id}"`);
    }
    this.channelWarehouses.forget(`${principal.tenantId}:${id}`);
    return id;
  }

  /**
   * Replaces the warehouses a sales channel sells from (priority order), and its allocation
   * strategy when given. Concurrent calls for one channel apply one after the other.
   */
  async setSalesChannelWarehouses(
    principal: Principal,
    input: { channel_id: string; warehouse_ids: string[]; allocation_strategy?: AllocationStrategy | null },
  ): Promise<SalesChannelRow> {
    requireScope(principal, 'catalog:write');
    const { tenantId } = principal;
    const channelId = checkId('sales channel', input.channel_id).toLowerCase();
    const ids = input.warehouse_ids.map((id) => id.toLowerCase());
    const known = new Set(
      (await repository.warehousesByIds(this.db, tenantId, ids.filter(isUuid))).map((warehouse) => warehouse.id),
    );
    const problems: FieldProblem[] = [];
    ids.forEach((id, index) => {
      const field = `warehouse_ids[${index}]`;
      if (ids.indexOf(id) !== index)
        problems.push({ field, message: `"${input.warehouse_ids[index]}" appears more than once` });
      else if (!known.has(id))
        problems.push({ field, message: `"${input.warehouse_ids[index]}" is not a warehouse of the tenant` });
    });
    if (problems.length > 0) throw invalidInput(problems);
    await writeTransaction(this.db, async (tx) => {
      if (!(await repository.lockSalesChannel(tx, tenantId, channelId))) {
        throw notFound(`no sales channel with id "${input.channel_id}"`);
      }
      await repository.replaceChannelWarehouses(tx, tenantId, channelId, ids);
      if (input.allocation_strategy != null)
        await repository.setAllocationStrategy(tx, tenantId, channelId, input.allocation_strategy);
    });
    // The other processes hear of it from the database; this one's next request must see it already.
    this.channelWarehouses.forget(`${tenantId}:${channelId}`);
    return this.getSalesChannel(principal, channelId);
  }

  // Batched reads for nested fields (the parent's scope was checked where the parent was read).

  productsByIds = (tenantId: string, ids: readonly string[]) => repository.productsByIds(this.db, tenantId, ids);
  businessesByIds = (tenantId: string, ids: readonly string[]) => repository.businessesByIds(this.db, tenantId, ids);
  warehousesByIds = (tenantId: string, ids: readonly string[]) => repository.warehousesByIds(this.db, tenantId, ids);
  positionsByIds = (tenantId: string, ids: readonly string[]) => repository.positionsByIds(this.db, tenantId, ids);
  salesChannelsByIds = (tenantId: string, ids: readonly string[]) =>
    repository.salesChannelsByIds(this.db, tenantId, ids);
  warehouseIdsOfChannels = (tenantId: string, channelIds: readonly string[]) =>
    repository.warehouseIdsOfChannels(this.db, tenantId, channelIds);

  /**
   * Deletes a product, warehouse or position unless stock lines, ledger entries or announced stock
   * refer to it. The check gives the clear message; the foreign keys close the race with a
   * concurrent stock write.
   */
  private async deleteStockHolder(
    tenantId: string,
    model: 'product' | 'warehouse' | 'position',
    column: 'product_id' | 'warehouse_id' | 'position_id',
    id: string,
  ) {
    const missing = () => notFound(`no ${model} with id "${id}"`);
    const refused = (what: string) => conflict(`${model} "${id}" is referred to by ${what}; it cannot be deleted`);
    const finders = {
      product: repository.findProduct,
      warehouse: repository.findWarehouse,
      position: repository.findPosition,
    };
    if (!(await finders[model](this.db, tenantId, id))) throw missing();
    const references = await repository.stockReferences(this.db, tenantId, column, id);
    if (references.lines) throw refused('inventory lines');
    if (references.ledger) throw refused('stock mutations (the ledger keeps its history)');
    if (references.incoming) throw refused('announced incoming stock');
    try {
      if (!(await repository.deleteRow(this.db, model, tenantId, id))) throw missing();
    } catch (error) {
      if (isForeignKeyViolation(error)) throw refused('stock');
      throw error;
    }
  }
}
