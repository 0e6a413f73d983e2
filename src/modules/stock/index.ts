import type { Module } from '../context';
import { inventoryOperations } from './inventory.routes';
import { stockResolvers } from './stock.resolvers';
import { SafetyStockService } from './safety-stock.service';
import { StockService } from './stock.service';
import { ReservationBatches } from './writes/batched';

declare module '../context' {
  interface Services {
    stock: StockService;
    safetyStock: SafetyStockService;
    reservationBatches: ReservationBatches;
  }
}

/** Inventory lines, the grouped inventory, the stock ledger and the REST inventory writes. */
export const stockModule: Module = {
  name: 'stock',
  services: ({ db, cursors }) => ({
    stock: new StockService(db, cursors),
    safetyStock: new SafetyStockService(db),
    reservationBatches: new ReservationBatches(db),
  }),
  rest: inventoryOperations,
  graphql: {
    schema: 'stock.graphql',
    resolvers: [stockResolvers],
    mappers: {
      Inventory: './stock.types#InventoryGroup',
      InventoryItem: './stock.types#InventoryLine',
      StockMutation: './stock.types#LedgerEntry',
      Location: './stock.types#StockLocation',
      StockMutationReference: './stock.types#StockReference',
      InventoryList: './stock.types#StockReference',
      BundleReference: './stock.types#StockReference',
      SafetyStock: './stock.types#SafetyStockRecord',
    },
  },
};

/*
 * The one face for writing stock. Every other module changes stock through these verbs, inside its
 * own transaction; each takes the stock locks, moves the lines, writes the allocations, checks
 * single positions and records the ledger, in that order. `repository/` is the stock module's own.
 */
export { commit, outOfStock, refuseWhenShort, reserve, withBoundedContention } from './writes/allocating';
export type { Allocating, AllocationRequest, Pair } from './writes/allocating';
export { commitReserved, endReservations, EXPIRY_ACTOR, lock, move, release, ship, writeOff } from './writes/held';
export type { Allocation, HeldUnits, Holders, MoveTarget } from './writes/held';
export { receive, type Arrival } from './writes/placing';
export type { StockChange } from './writes/stock-change';
export type { BatchedReservation, BatchReserveOutcome, ReservationBatches } from './writes/batched';

/*
 * What the allocating modules (orders, reservations, supply, transfers) share with stock: the items
 * and targets of their inputs, how a target is resolved to lines of the catalog and a plan over a
 * channel's warehouses, and the vocabulary of the ledger their writes are recorded in.
 */
export { AllocationTargetInput, DestinationInput, ItemInput, ItemQuantity, MAX_ITEMS } from './allocation.schemas';
export { clientIdTaken, resolveAllocationTarget, resolveChannelTarget } from './allocation-target';
export type { ChannelTarget } from './allocation-target';
export { planAllocation } from './allocation-plan';
export { itemReferenceProblems } from './item-references';
export type { StockMutationSource, StockReference } from './stock.types';
/** The stock queries' arguments, for every interface that reads stock (MCP's availability check). */
export { InventoryArguments, SkuList } from './stock.schemas';
