import { writeTransaction, type Db, type Tx } from '../../kernel/db';
import { invalidState, notFound, type FieldProblem } from '../../kernel/errors';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import { isUuid, uuidv7 } from '../../kernel/ids';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import * as catalog from '../catalog';
import * as orders from '../orders';
import * as stock from '../stock';
import { type StockReference, clientIdTaken, type ItemInput } from '../stock';
import { invalidInput } from '../../kernel/validation';
import * as repository from './supply.repository';
import type { AnnouncementRecord, SupplyRecord } from './supply.repository';
import type { CreateAnnouncementInput, CreateSupplyInput } from './supply.schemas';

/** Incoming goods: announcements grouped into supplies, expected until received. */
export class SupplyService {
  constructor(private readonly db: Db) {}

  /** Announces goods for a warehouse (step 1); items may come with it or be added next. Changes no stock yet. */
  async createAnnouncement(
    principal: Principal,
    input: CreateAnnouncementInput,
    idempotency?: Idempotency,
  ): Promise<AnnouncementRecord> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const id = input.id ?? uuidv7();
    const problems: FieldProblem[] = [];
    const [business, warehouse] = await Promise.all([
      isUuid(input.business_id) ? catalog.findBusiness(this.db, tenantId, input.business_id.toLowerCase()) : null,
      isUuid(input.warehouse_id) ? catalog.findWarehouse(this.db, tenantId, input.warehouse_id.toLowerCase()) : null,
    ]);
    if (!business)
      problems.push({ field: 'business_id', message: `"${input.business_id}" is not a business of the tenant` });
    if (!warehouse)
      problems.push({
        field: 'warehouse_id',
        message: `"${input.warehouse_id}" is not a warehouse of the tenant`,
      });
    else if (business && warehouse.businessId !== business.id)
      problems.push({ field: 'warehouse_id', message: `belongs to business "${warehouse.businessId}"` });
    if (problems.length > 0) throw invalidInput(problems);
    const items = input.items ? await this.resolveItems(tenantId, input.items) : [];
    await writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        if (await repository.isIdUsed(tx, 'announcements', tenantId, id)) throw clientIdTaken('announcement', id);
        await repository.insertAnnouncement(tx, tenantId, {
          id,
          businessId: business!.id,
          warehouseId: warehouse!.id,
          reference: input.reference ?? null,
        });
        if (items.length > 0) await repository.insertAnnouncementItems(tx, tenantId, id, items);
        return id;
      }),
    );
    return this.announcement(principal, id);
  }

  /** Adds items to an OPEN announcement (one not yet grouped into a supply). */
  async addAnnouncementItems(
    principal: Principal,
    announcementId: string,
    items: ItemInput[],
    idempotency?: Idempotency,
  ): Promise<AnnouncementRecord> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const announcement = await this.announcement(principal, announcementId);
    const resolved = await this.resolveItems(tenantId, items);
    await writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        const [current] = await repository.findAnnouncements(tx, tenantId, [announcement.id], { forUpdate: true });
        if (current!.status !== 'OPEN')
          throw invalidState(
            `announcement "${announcement.id}" is already part of supply "${current!.supplyId}"`,
            'announcement_id',
          );
        await repository.insertAnnouncementItems(tx, tenantId, announcement.id, resolved);
        return announcement.id;
      }),
    );
    return this.announcement(principal, announcement.id);
  }

  /**
   * Groups OPEN announcements of one warehouse into a supply: their items become expected stock
   * (`quantity_expected`) at `location_id` (the warehouse, or a position in it) until received.
   */
  async createSupply(principal: Principal, input: CreateSupplyInput, idempotency?: Idempotency): Promise<SupplyRecord> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const id = input.id ?? uuidv7();
    const problems: FieldProblem[] = [];
    const ids = input.announcement_ids.map((a) => a.toLowerCase());
    const found = await repository.findAnnouncements(this.db, tenantId, ids.filter(isUuid));
    ids.forEach((announcementId, index) => {
      const announcement = found.find((a) => a.id === announcementId);
      const field = `announcement_ids[${index}]`;
      if (!announcement)
        problems.push({ field, message: `"${input.announcement_ids[index]}" is not an announcement of the tenant` });
      else if (ids.indexOf(announcementId) !== index) problems.push({ field, message: 'appears twice' });
      else if (announcement.items.length === 0) problems.push({ field, message: 'has no items yet' });
      else if (announcement.warehouseId !== found[0]!.warehouseId)
        problems.push({ field, message: 'is for another warehouse than the first announcement' });
    });
    if (problems.length > 0) throw invalidInput(problems);
    const warehouseId = found[0]!.warehouseId;
    const positionId = await catalog.positionInWarehouse(this.db, tenantId, warehouseId, input.location_id);
    const dueAt = input.due_at == null ? null : new Date(input.due_at);
    await writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        if (await repository.isIdUsed(tx, 'supplies', tenantId, id)) throw clientIdTaken('supply', id);
        const current = await repository.findAnnouncements(tx, tenantId, ids, { forUpdate: true });
        const supplied = current.find((a) => a.status !== 'OPEN');
        if (supplied)
          throw invalidState(
            `is already part of supply "${supplied.supplyId}"`,
            `announcement_ids[${ids.indexOf(supplied.id)}]`,
          );
        await repository.insertSupply(tx, tenantId, {
          id,
          warehouseId,
          positionId,
          processing: input.settings.processing,
          dueAt,
          announcementIds: ids,
        });
        const items = ids.flatMap((announcementId) => current.find((a) => a.id === announcementId)!.items);
        const itemIds = items.map(() => uuidv7()).sort();
        await repository.insertSupplyItems(
          tx,
          tenantId,
          { id, warehouseId, positionId, dueAt },
          items.map((item, index) => ({
            id: itemIds[index]!,
            productId: item.productId,
            quantity: item.quantity,
            isOverage: false,
            received: false,
          })),
        );
        return id;
      }),
    );
    return this.supply(principal, id);
  }

  /**
   * Receives a supply in the warehouse: its expected units go on hand at the supply's location
   * (source REGISTER). With MATCH_ORDERS, units first fill BACKORDERED items of open orders for the
   * same SKU at the warehouse, oldest first, as far as whole items fit (committed to them at once).
   */
  async receiveSupply(principal: Principal, supplyId: string, idempotency?: Idempotency): Promise<SupplyRecord> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const supply = await this.supply(principal, supplyId);
    await writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        await stock.lock(tx, tenantId, {
          pairs: supply.items.map((item) => ({ productId: item.productId, warehouseId: supply.warehouseId })),
        });
        const [current] = await repository.findSupplies(tx, tenantId, [supply.id], { forUpdate: true });
        if (current!.status !== 'EXPECTED')
          throw invalidState(`supply "${supply.id}" was already received`, 'supply_id');
        const received = await repository.markReceived(tx, tenantId, supply.id);
        await this.register(tx, principal, current!, received);
        return supply.id;
      }),
    );
    return this.supply(principal, supply.id);
  }

  /**
   * Books units that arrived beyond the announcements: on an EXPECTED supply they are expected
   * with the rest; on a RECEIVED one they go on hand at once (source REGISTER).
   */
  async addOverage(
    principal: Principal,
    supplyId: string,
    items: ItemInput[],
    idempotency?: Idempotency,
  ): Promise<SupplyRecord> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const supply = await this.supply(principal, supplyId);
    const resolved = await this.resolveItems(tenantId, items);
    await writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        await stock.lock(tx, tenantId, {
          pairs: resolved.map((item) => ({ productId: item.productId, warehouseId: supply.warehouseId })),
        });
        const [current] = await repository.findSupplies(tx, tenantId, [supply.id], { forUpdate: true });
        const received = current!.status === 'RECEIVED';
        await repository.insertSupplyItems(
          tx,
          tenantId,
          current!,
          resolved.map((item) => ({ ...item, isOverage: true, received })),
        );
        if (received) await this.register(tx, principal, { ...current!, processing: 'REGISTER' }, resolved);
        return supply.id;
      }),
    );
    return this.supply(principal, supply.id);
  }

  /** Puts received units on hand (matching backorders first with MATCH_ORDERS) and writes their REGISTER mutations. */
  private async register(
    tx: Tx,
    principal: Principal,
    supply: SupplyRecord,
    received: { productId: string; quantity: number }[],
  ) {
    const { tenantId } = principal;
    const totals = new Map<string, number>();
    for (const item of received) totals.set(item.productId, (totals.get(item.productId) ?? 0) + item.quantity);
    const supplyReference: StockReference = { type: 'Supply', id: supply.id };
    const arrival = (productId: string, quantity: number) => ({
      productId,
      warehouseId: supply.warehouseId,
      positionId: supply.positionId,
      quantity,
      field: 'supply_id',
    });
    const arrivals: stock.Arrival[] = [];
    for (const [productId, total] of totals) {
      let left = total;
      if (supply.processing === 'MATCH_ORDERS') {
        for (const item of await orders.backorderedItems(tx, tenantId, productId, supply.warehouseId)) {
          if (item.quantity > left) continue;
          left -= item.quantity;
          arrivals.push({
            ...arrival(productId, item.quantity),
            orderItemId: item.id,
            references: [supplyReference, { type: 'Order', id: item.orderId }],
          });
          await orders.markBackorderAllocated(tx, item.id);
        }
      }
      if (left > 0) arrivals.push(arrival(productId, left));
    }
    await stock.receive(tx, tenantId, arrivals, {
      source: 'REGISTER',
      actor: principal.actor,
      references: [supplyReference],
    });
  }

  private async resolveItems(tenantId: string, items: ItemInput[]) {
    const problems: FieldProblem[] = [];
    const products = await catalog.productsBySkus(this.db, tenantId, [...new Set(items.map((i) => i.sku))]);
    const itemIds = items.map(() => uuidv7()).sort();
    const resolved = items.map((item, index) => {
      const product = products.find((p) => p.sku === item.sku);
      if (!product)
        problems.push({ field: `items[${index}].sku`, message: `"${item.sku}" is not a product of the tenant` });
      else if (product.isBundle)
        problems.push({ field: `items[${index}].sku`, message: catalog.bundleHasNoStock(item.sku) });
      return { id: itemIds[index]!, productId: product?.id ?? '', quantity: item.quantity };
    });
    if (problems.length > 0) throw invalidInput(problems);
    return resolved;
  }

  async announcement(principal: Principal, id: string) {
    requireScope(principal, 'inventory:read');
    const [record] = isUuid(id)
      ? await repository.findAnnouncements(this.db, principal.tenantId, [id.toLowerCase()])
      : [];
    if (!record) throw notFound(`no announcement with id "${id}"`);
    return record;
  }

  async supply(principal: Principal, id: string) {
    requireScope(principal, 'inventory:read');
    const [record] = isUuid(id) ? await repository.findSupplies(this.db, principal.tenantId, [id.toLowerCase()]) : [];
    if (!record) throw notFound(`no supply with id "${id}"`);
    return record;
  }

  /** Supplies by id for the GraphQL loaders (references of stock mutations). */
  suppliesByIds(tenantId: string, ids: readonly string[]) {
    return repository.findSupplies(this.db, tenantId, ids);
  }

  announcementsByIds(tenantId: string, ids: readonly string[]) {
    return repository.findAnnouncements(this.db, tenantId, ids);
  }
}
