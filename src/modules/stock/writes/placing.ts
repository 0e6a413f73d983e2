/**
 * `receive`: units arriving on hand (a supply received, a transfer arriving, a restock). It takes
 * the stock locks, adds the units to lines, writes the allocations of units that arrive committed
 * to a waiting order item, checks single positions and records the ledger, in that order.
 */
import type { Tx } from '../../../kernel/db';
import { uuidv7 } from '../../../kernel/ids';
import * as repository from '../repository/allocations';
import * as ledger from '../repository/ledger';
import type { LineChangeRecord } from '../repository/ledger';
import * as lineRepository from '../repository/lines';
import * as locks from '../repository/locks';
import type { StockReference } from '../stock.types';
import { expandItems, withBundle } from './bundles';
import { checkSinglePosition } from './positions';
import type { StockChange } from './stock-change';

/** Units of a product arriving at a warehouse position (or at none). */
export interface Arrival {
  productId: string;
  warehouseId: string;
  positionId: string | null;
  quantity: number;
  /** The input field a single-position breach is reported on. */
  field: string;
  /** An order item waiting for these units: they arrive COMMITTED to it instead of AVAILABLE. */
  orderItemId?: string;
  /** The entities behind this arrival when they are not the change's. */
  references?: StockReference[];
}

/**
 * Puts the arrivals on hand as units without batch, serial number or expiry, in order, all or none;
 * one ledger row (delta +quantity) per arrival (per component of a bundle's).
 */
export async function receive(tx: Tx, tenantId: string, received: Arrival[], change: StockChange) {
  if (received.length === 0) return;
  // A bundle restocked arrives as its components.
  const arrivals = await expandItems(
    tx,
    tenantId,
    received.map((arrival, index) => ({ ...arrival, id: String(index) })),
  );
  await locks.lockStockLevels(tx, tenantId, arrivals);
  const identities = arrivals.map((arrival) => ({
    productId: arrival.productId,
    warehouseId: arrival.warehouseId,
    positionId: arrival.positionId,
    batchNumber: null,
    serialNumber: null,
    expiresAt: null,
    state: arrival.orderItemId ? ('COMMITTED' as const) : ('AVAILABLE' as const),
    reason: 'NONE' as const,
  }));
  const lineIds = await lineRepository.addToLines(
    tx,
    tenantId,
    identities.map((identity, index) => ({
      ...identity,
      id: uuidv7(),
      quantity: arrivals[index]!.quantity,
      attributes: {},
    })),
  );
  await repository.insertAllocations(
    tx,
    tenantId,
    arrivals.flatMap((arrival, index) =>
      arrival.orderItemId
        ? [
            {
              ...identities[index]!,
              id: uuidv7(),
              reservationId: null,
              orderItemId: arrival.orderItemId,
              transferItemId: null,
              quantity: arrival.quantity,
              bundleId: arrival.bundleId ?? null,
            },
          ]
        : [],
    ),
  );
  await checkSinglePosition(tx, tenantId, arrivals);
  const changes: LineChangeRecord[] = arrivals.map((arrival, index) => ({
    id: uuidv7(),
    lineId: lineIds[index]!,
    productId: arrival.productId,
    warehouseId: arrival.warehouseId,
    positionId: arrival.positionId,
    delta: arrival.quantity,
    references: withBundle(arrival.references ?? change.references, arrival.bundleId) ?? arrival.references,
  }));
  await ledger.recordMutations(tx, tenantId, change, changes);
}
