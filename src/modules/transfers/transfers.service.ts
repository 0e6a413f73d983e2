import { writeTransaction, type Db, type Tx } from '../../kernel/db';
import { invalidState, notFound, type FieldProblem } from '../../kernel/errors';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import { isUuid, uuidv7 } from '../../kernel/ids';
import { invalidInput } from '../../kernel/validation';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import { positionInWarehouse } from '../catalog';
import * as catalog from '../catalog';
import * as stock from '../stock';
import { clientIdTaken, type StockMutationSource, itemReferenceProblems } from '../stock';
import * as repository from './transfers.repository';
import type { TransferRecord, TransferStatus } from './transfers.repository';
import type { CreateTransferInput, ReceivedItem } from './transfers.schemas';

/**
 * Transfers of stock between the tenant's warehouses. The units are committed at the source on
 * creation (allocations held by the transfer's items, so no sale can take them), leave it when
 * the transfer ships, are in transit (in no warehouse) meanwhile, and go on hand at the destination
 * as they are received. Every step is in the ledger, naming the transfer.
 */
export class TransferService {
  constructor(private readonly db: Db) {}

  /** Commits the items' units at the source warehouse (source ALLOCATION), all or none. */
  async createTransfer(
    principal: Principal,
    input: CreateTransferInput,
    idempotency?: Idempotency,
  ): Promise<TransferRecord> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const problems: FieldProblem[] = [];
    const warehouses = await catalog.warehousesByIds(this.db, tenantId, [
      input.from_warehouse_id,
      input.to_warehouse_id,
    ]);
    for (const field of ['from_warehouse_id', 'to_warehouse_id'] as const) {
      if (!warehouses.some((warehouse) => warehouse.id === input[field]))
        problems.push({ field, message: `"${input[field]}" is not a warehouse of the tenant` });
    }
    const products = await catalog.productsBySkus(this.db, tenantId, [...new Set(input.items.map((item) => item.sku))]);
    const itemIds = input.items.map(() => uuidv7()).sort();
    const items = input.items.map((item, index) => {
      const product = products.find((candidate) => candidate.sku === item.sku);
      if (!product)
        problems.push({ field: `items[${index}].sku`, message: `"${item.sku}" is not a product of the tenant` });
      else if (product.isBundle)
        problems.push({ field: `items[${index}].sku`, message: catalog.bundleHasNoStock(item.sku) });
      return { id: itemIds[index]!, productId: product?.id ?? '', sku: item.sku, quantity: item.quantity };
    });
    if (problems.length > 0) throw invalidInput(problems);
    const id = input.id ?? uuidv7();
    const requests = items.map((item, index) => ({
      ...item,
      warehouseId: input.from_warehouse_id,
      field: `items[${index}].quantity`,
      holder: { transferItemId: item.id },
    }));
    await stock.withBoundedContention(tenantId, requests, () =>
      writeTransaction(this.db, (tx) =>
        runIdempotent(tx, tenantId, idempotency, async () => {
          if (input.id && (await repository.transferExists(tx, tenantId, id))) throw clientIdTaken('transfer', id);
          await repository.insertTransfer(tx, tenantId, {
            id,
            fromWarehouseId: input.from_warehouse_id,
            toWarehouseId: input.to_warehouse_id,
            items,
          });
          // A transfer sells through no channel: only the safety stock kept for every channel holds.
          const change = this.change(principal, 'ALLOCATION', id);
          await stock.commit(tx, tenantId, { requests, change, channelId: null });
          return id;
        }),
      ),
    );
    return this.load(tenantId, id);
  }

  /** The units leave the source warehouse and are in transit (source ALLOCATION). */
  async shipTransfer(principal: Principal, id: string, idempotency?: Idempotency) {
    requireScope(principal, 'inventory:write');
    return this.step(principal, id, idempotency, ['REQUESTED'], async (tx, transfer) => {
      await stock.ship(tx, principal.tenantId, held(transfer), this.change(principal, 'ALLOCATION', transfer.id));
      await repository.setTransferStatus(tx, principal.tenantId, transfer.id, 'SHIPPED');
    });
  }

  /** Cancels a transfer before it shipped: its units are available at the source again (source ALLOCATION). */
  async cancelTransfer(principal: Principal, id: string, idempotency?: Idempotency) {
    requireScope(principal, 'inventory:write');
    return this.step(principal, id, idempotency, ['REQUESTED'], async (tx, transfer) => {
      await stock.release(tx, principal.tenantId, held(transfer), this.change(principal, 'ALLOCATION', transfer.id));
      await repository.setTransferStatus(tx, principal.tenantId, transfer.id, 'CANCELLED');
    });
  }

  /**
   * Units that arrived go on hand, available, at the destination (source REGISTER): the given
   * ones, or everything still in transit. RECEIVED once nothing is in transit any more.
   */
  async receiveTransfer(
    principal: Principal,
    id: string,
    input: { location_id?: string | null; items?: ReceivedItem[] | null },
    idempotency?: Idempotency,
  ) {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const found = await this.load(tenantId, id);
    const positionId = await positionInWarehouse(this.db, tenantId, found.toWarehouseId, input.location_id);
    const problems = itemReferenceProblems(
      input.items ?? [],
      new Set(found.items.map((item) => item.id)),
      `transfer "${found.id}"`,
    );
    if (problems.length > 0) throw invalidInput(problems);
    return this.step(principal, id, idempotency, ['SHIPPED', 'PARTIALLY_RECEIVED'], async (tx, transfer) => {
      const arrived = input.items
        ? input.items.map((entry, index) => ({
            item: transfer.items.find((candidate) => candidate.id === entry.item_id.toLowerCase())!,
            quantity: entry.quantity,
            field: `items[${index}].quantity`,
          }))
        : transfer.items.map((item) => ({ item, quantity: item.quantity - item.receivedQuantity, field: 'items' }));
      for (const { item, quantity, field } of arrived) {
        const inTransit = item.quantity - item.receivedQuantity;
        if (quantity > inTransit) throw invalidState(`${quantity} units, but ${inTransit} are in transit`, field);
        if (quantity > 0) await repository.addReceived(tx, tenantId, item.id, quantity);
      }
      await stock.receive(
        tx,
        tenantId,
        arrived
          .filter(({ quantity }) => quantity > 0)
          .map(({ item, quantity }) => ({
            productId: item.productId,
            warehouseId: transfer.toWarehouseId,
            positionId,
            quantity,
            field: 'location_id',
          })),
        this.change(principal, 'REGISTER', transfer.id),
      );
      const [current] = await repository.findTransfers(tx, tenantId, [transfer.id]);
      const done = current!.items.every((item) => item.receivedQuantity === item.quantity);
      await repository.setTransferStatus(tx, tenantId, transfer.id, done ? 'RECEIVED' : 'PARTIALLY_RECEIVED');
    });
  }

  async transfer(principal: Principal, id: string): Promise<TransferRecord> {
    requireScope(principal, 'inventory:read');
    return this.load(principal.tenantId, id);
  }

  /** Transfers by id for the GraphQL loaders (references of stock mutations). */
  transfersByIds = (tenantId: string, ids: readonly string[]) => repository.findTransfers(this.db, tenantId, ids);

  /**
   * Runs a step of a transfer under the stock locks of its SKUs at both warehouses and its row lock,
   * refusing a transfer not in `statuses` with INVALID_STATE.
   */
  private async step(
    principal: Principal,
    id: string,
    idempotency: Idempotency | undefined,
    statuses: TransferStatus[],
    work: (tx: Tx, transfer: TransferRecord) => Promise<void>,
  ): Promise<TransferRecord> {
    const { tenantId } = principal;
    const transfer = await this.load(tenantId, id);
    await writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        await stock.lock(tx, tenantId, {
          pairs: transfer.items.flatMap((item) => [
            { productId: item.productId, warehouseId: transfer.fromWarehouseId },
            { productId: item.productId, warehouseId: transfer.toWarehouseId },
          ]),
        });
        const [current] = await repository.findTransfers(tx, tenantId, [transfer.id], { forUpdate: true });
        if (!statuses.includes(current!.status)) {
          throw invalidState(
            `transfer "${transfer.id}" is ${current!.status}; this needs a transfer that is ${statuses.join(' or ')}`,
            'id',
          );
        }
        await work(tx, current!);
        return transfer.id;
      }),
    );
    return this.load(tenantId, transfer.id);
  }

  private change(principal: Principal, source: StockMutationSource, id: string): stock.StockChange {
    return { source, actor: principal.actor, references: [{ type: 'Transfer', id }] };
  }

  private async load(tenantId: string, id: string) {
    const [record] = isUuid(id) ? await repository.findTransfers(this.db, tenantId, [id.toLowerCase()]) : [];
    if (!record) throw notFound(`no transfer with id "${id}"`);
    return record;
  }
}

/** What the items of a transfer hold. */
const held = (transfer: TransferRecord) => ({ transferItemIds: transfer.items.map((item) => item.id) });
