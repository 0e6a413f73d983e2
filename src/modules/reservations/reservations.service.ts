import type { CursorCodec } from '../../kernel/cursor';
import { writeInterrupted, writeTransaction, type Db, type DbOrTx, type Tx } from '../../kernel/db';
import { AppError, invalidState, notFound } from '../../kernel/errors';
import { invalidInput } from '../../kernel/validation';
import { runIdempotent, type Idempotency } from '../../kernel/idempotency';
import { isUuid, uuidv7 } from '../../kernel/ids';
import { sqlKeysetSource } from '../../kernel/keyset';
import { paginate, type PageArguments } from '../../kernel/pagination';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import {
  clientIdTaken,
  resolveAllocationTarget,
  resolveChannelTarget,
  type ChannelTarget,
  planAllocation,
} from '../stock';
import type { ChannelWarehouseCache } from '../catalog';
import * as stock from '../stock';
import * as repository from './reservations.repository';
import type { ReservationRecord, ReservationStatus } from './reservations.repository';
import type { CreateReservationInput } from './reservations.schemas';

/** A reservation at one warehouse. */
type LocatedReservationInput = CreateReservationInput & { warehouse_id: string };

/** A reservation as clients see it: ACTIVE past its expiry is EXPIRED, whether or not it was swept yet. */
function effective(record: ReservationRecord, now = Date.now()): ReservationRecord {
  const expired = record.status === 'ACTIVE' && record.expiresAt.getTime() <= now;
  return {
    ...record,
    status: expired ? 'EXPIRED' : record.status,
    items: record.items.map((item) => ({ ...item, quantity: Number(item.quantity) })),
  };
}

/** How many times one process tries to release an expired reservation before it leaves it alone. */
export const MAX_RELEASE_ATTEMPTS = 3;

/** The release of an expired reservation failed; after `MAX_RELEASE_ATTEMPTS` this process stops trying. */
export class ReleaseFailed extends Error {
  constructor(
    readonly reservationId: string,
    readonly tenantId: string,
    readonly attempts: number,
    options?: ErrorOptions,
  ) {
    const next = attempts >= MAX_RELEASE_ATTEMPTS ? 'no more attempts by this process' : 'tried again next sweep';
    super(
      `expired reservation ${reservationId} (tenant ${tenantId}) not released, attempt ${attempts}: ${next}`,
      options,
    );
  }
}

/** A reservation of the tenant as clients see it (ACTIVE past its expiry is EXPIRED); NOT_FOUND otherwise. */
export async function findReservation(db: DbOrTx, tenantId: string, id: string): Promise<ReservationRecord> {
  const [record] = isUuid(id) ? await repository.findReservations(db, tenantId, [id.toLowerCase()]) : [];
  if (!record) throw notFound(`no reservation with id "${id}"`);
  return effective(record);
}

/**
 * Ends an ACTIVE reservation as CONVERTED into `orderId`, under the stock locks of what it holds;
 * INVALID_STATE when it expired or ended meanwhile (its units may be sold).
 */
export async function claimForOrder(tx: Tx, tenantId: string, reservationId: string, orderId: string) {
  if (!(await repository.convertActiveReservation(tx, tenantId, reservationId, orderId))) {
    throw invalidState(`reservation "${reservationId}" expired or ended meanwhile: its units may be sold`);
  }
}

/** Reservations: stock held for a customer until an order exists, `expires_at` passes or it is removed. */
export class ReservationService {
  /** Expired reservations this process released (`releaseExpired`), since it started. */
  expiredReleased = 0;

  /** Expired reservations (`reservationKey`) whose release failed in this process, and how often (`releaseExpired`). */
  private readonly releaseFailures = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
    private readonly channelWarehouses: ChannelWarehouseCache,
    /** The stock module's batched path for reservations at one warehouse. */
    private readonly batches: stock.ReservationBatches,
  ) {}

  /**
   * Holds the items' units as RESERVED, all or none (ALLOCATION); refused with OUT_OF_STOCK when a
   * SKU is short. Without a warehouse, the units come from the sales channel's warehouses.
   */
  async createReservation(
    principal: Principal,
    input: CreateReservationInput,
    idempotency?: Idempotency,
  ): Promise<ReservationRecord> {
    requireScope(principal, 'inventory:write');
    return this.hold(principal, input, idempotency);
  }

  /**
   * What `createReservation` does, for another module that holds stock on its own terms (a
   * checkout's lines, under scope `checkout:write`): the caller has checked the principal.
   */
  hold(principal: Principal, input: CreateReservationInput, idempotency?: Idempotency): Promise<ReservationRecord> {
    if (input.warehouse_id == null) return this.createChannelReservation(principal, input, idempotency);
    return this.createReservationAt(principal, { ...input, warehouse_id: input.warehouse_id }, idempotency);
  }

  /**
   * Releases an ACTIVE reservation for another module (a checkout letting go of a hold); false when
   * it held nothing any more (ended, expired or converted). The caller has checked the principal.
   */
  async release(principal: Principal, id: string): Promise<boolean> {
    const ended = await writeTransaction(this.db, (tx) =>
      stock.endReservations(tx, principal.tenantId, [id], 'REMOVED', principal.actor),
    );
    return ended.length > 0;
  }

  /**
   * Moves the expiry of an ACTIVE reservation for another module (a checkout renewed); false when it
   * expired or ended meanwhile. The caller has checked the principal.
   */
  async extend(principal: Principal, id: string, expiresAt: Date): Promise<boolean> {
    const { tenantId } = principal;
    return writeTransaction(this.db, async (tx) => {
      await stock.lock(tx, tenantId, { holders: { reservationIds: [id] } });
      return repository.extendActiveReservation(tx, tenantId, id, expiresAt);
    });
  }

  /**
   * A reservation through a sales channel without a warehouse: each item's units are taken from the
   * channel's warehouses by the allocation strategy (an item may be split), all or none, under the
   * stock locks of every warehouse considered. Its `warehouse` is the one its first units come from.
   */
  private async createChannelReservation(
    principal: Principal,
    input: CreateReservationInput,
    idempotency?: Idempotency,
  ): Promise<ReservationRecord> {
    const { tenantId } = principal;
    if (!idempotency) {
      // PRIORITY, SINGLE_WAREHOUSE and FEWEST_SHIPMENTS take everything from the channel's first
      // warehouse when it has everything: the batched path of that warehouse (the hot-SKU path)
      // checks exactly that under its lock, with no read of the channel but this process's copy.
      // Anything else (MOST_STOCK, CLOSEST, a first warehouse short) is planned below.
      const channel = await this.channelWarehouses.get(tenantId, input.channel_id, input.business_id);
      const strategy = input.allocation_strategy ?? channel?.strategy;
      if (channel && (strategy === 'PRIORITY' || strategy === 'SINGLE_WAREHOUSE' || strategy === 'FEWEST_SHIPMENTS')) {
        const done = await this.tryAt(principal, { ...input, warehouse_id: channel.warehouseIds[0]! });
        if (done) return done;
      }
    }
    const target = await resolveChannelTarget(this.db, tenantId, input);
    // Most plans take every item from one warehouse: such a reservation joins the batched path of
    // that warehouse, which checks availability itself. One that finds the warehouse short by then
    // is planned again under the locks of all the channel's warehouses.
    const single = idempotency ? null : this.singleWarehousePlan(target);
    if (single !== null) {
      const done = await this.tryAt(principal, { ...input, warehouse_id: single });
      if (done) return done;
    }
    const id = input.id ?? uuidv7();
    const context = this.context(principal, id);
    const itemIds = target.items.map(() => uuidv7()).sort();
    const pairs = target.items.flatMap((item) => target.warehouseIds.map((warehouseId) => ({ ...item, warehouseId })));
    await stock.withBoundedContention(tenantId, pairs, () =>
      writeTransaction(this.db, (tx) =>
        runIdempotent(tx, tenantId, idempotency, async () => {
          if (input.id && (await repository.isReservationIdUsed(tx, tenantId, id)))
            throw clientIdTaken('reservation', id);
          await stock.reserve(tx, tenantId, {
            route: target,
            change: context,
            channelId: target.channelId,
            place: async (parts) => {
              await repository.insertReservation(tx, tenantId, {
                id,
                businessId: target.businessId,
                warehouseId: parts[0]!.warehouseId,
                channelId: target.channelId,
                customer: {
                  name: input.customer.name,
                  email: input.customer.email ?? null,
                  phone: input.customer.phone ?? null,
                },
                notes: input.notes ?? null,
                expiresAt: new Date(input.expires_at),
                items: target.items.map((item, index) => ({ ...item, id: itemIds[index]! })),
              });
              return parts.map((part) => ({
                ...target.items[part.itemIndex]!,
                warehouseId: part.warehouseId,
                quantity: part.quantity,
                holder: { reservationId: id },
              }));
            },
          });
          return id;
        }),
      ),
    );
    return this.load(tenantId, id);
  }

  /**
   * A channel reservation tried at one warehouse of the channel; null when that warehouse is short
   * or (the channel changed meanwhile) no longer fits the request: the caller plans it over all of them.
   */
  private async tryAt(principal: Principal, input: LocatedReservationInput) {
    try {
      return await this.createReservationAt(principal, input);
    } catch (error) {
      if (error instanceof AppError && (error.key === 'OUT_OF_STOCK' || error.key === 'BAD_REQUEST')) return null;
      throw error;
    }
  }

  /** The one warehouse a plan over the target's guess of availability takes every item from, or null. */
  private singleWarehousePlan(target: ChannelTarget): string | null {
    try {
      const { items, warehouseIds, availableGuess, strategy, nearest } = target;
      const parts = planAllocation(items, warehouseIds, availableGuess, strategy, nearest);
      const warehouses = new Set(parts.map((part) => part.warehouseId));
      return warehouses.size === 1 ? [...warehouses][0]! : null;
    } catch (error) {
      if (error instanceof AppError && error.key === 'OUT_OF_STOCK') return null;
      throw error;
    }
  }

  private async createReservationAt(
    principal: Principal,
    input: LocatedReservationInput,
    idempotency?: Idempotency,
  ): Promise<ReservationRecord> {
    const clientId = input.id ?? undefined;
    const id = clientId ?? uuidv7();
    const context = this.context(principal, id);
    // UUIDv7s of one millisecond are not ordered among themselves: sorted, items keep input order.
    const itemIds = input.items.map(() => uuidv7()).sort();
    const reservation: stock.BatchedReservation = {
      businessId: input.business_id,
      warehouseId: input.warehouse_id,
      channelId: input.channel_id,
      id,
      checkId: clientId !== undefined,
      customer: { name: input.customer.name, email: input.customer.email ?? null, phone: input.customer.phone ?? null },
      notes: input.notes ?? null,
      expiresAt: new Date(input.expires_at),
      items: input.items.map((item, index) => ({ id: itemIds[index]!, sku: item.sku, quantity: item.quantity })),
      actor: context.actor,
      references: context.references,
    };
    const { tenantId } = principal;
    // Whether a component of a bundle of the request is short: known once the batched path said so;
    // the general path then names the bundle's item and the component.
    let bundled = false;
    if (!idempotency) {
      // The common case: in one statement with the other reservations of these SKUs that arrive meanwhile.
      const done = await this.batches.reserve(tenantId, reservation);
      if (done.outcome !== 'EXPIRED' && done.outcome !== 'BUNDLE')
        return this.answer(tenantId, input, reservation, done);
      bundled = done.outcome === 'BUNDLE';
    }
    // With an idempotency key, when an expired reservation still holds units of these SKUs, or when a
    // bundle's component is short.
    const target = await resolveAllocationTarget(this.db, tenantId, input);
    const requests = target.items.map((item) => ({
      ...item,
      warehouseId: target.warehouseId,
      holder: { reservationId: id },
    }));
    // A bundle short in a committed snapshot is refused before its components' locks are queued for.
    if (bundled) await stock.refuseWhenShort(this.db, tenantId, requests, target.channelId);
    const createdId = await stock.withBoundedContention(tenantId, requests, () =>
      writeTransaction(this.db, (tx) =>
        runIdempotent(tx, tenantId, idempotency, async () => {
          const done = bundled
            ? { outcome: 'BUNDLE' as const }
            : await this.batches.reserveIn(tx, tenantId, reservation);
          if (done.outcome !== 'EXPIRED' && done.outcome !== 'BUNDLE')
            return (await this.answer(tenantId, input, reservation, done)).id;
          if (clientId !== undefined && (await repository.isReservationIdUsed(tx, tenantId, id)))
            throw clientIdTaken('reservation', id);
          // Release the expired reservations first (whether or not the sweeper got to them yet), then
          // reserve; a bundle's components are reserved under their own SKUs' locks.
          await repository.insertReservation(tx, tenantId, {
            ...reservation,
            items: target.items.map((item, index) => ({ ...item, id: itemIds[index]! })),
          });
          await stock.reserve(tx, tenantId, { requests, change: context, channelId: target.channelId });
          return id;
        }),
      ),
    );
    return this.load(tenantId, createdId);
  }

  /** The reservation `reserveStockBatch` created, or the error of its outcome. */
  private async answer(
    tenantId: string,
    input: LocatedReservationInput,
    reservation: stock.BatchedReservation,
    done: stock.BatchReserveOutcome,
  ) {
    switch (done.outcome) {
      case 'RESERVED':
        return effective({
          id: reservation.id,
          businessId: reservation.businessId,
          warehouseId: reservation.warehouseId,
          channelId: reservation.channelId,
          customer: reservation.customer,
          notes: reservation.notes,
          expiresAt: reservation.expiresAt,
          status: 'ACTIVE',
          releasedAt: null,
          orderId: null,
          createdAt: done.createdAt,
          items: input.items.map((item, index) => ({
            productId: done.productIds[index]!,
            sku: item.sku,
            quantity: item.quantity,
          })),
        });
      case 'TAKEN':
        throw clientIdTaken('reservation', reservation.id);
      case 'SHORT':
        throw stock.outOfStock(
          {
            sku: input.items[done.itemIndex]!.sku,
            warehouseId: reservation.warehouseId,
            field: `items[${done.itemIndex}].quantity`,
          },
          done.requested,
          done.available,
        );
      case 'INVALID':
        // Names every problem as a VALIDATION_ERROR.
        await resolveAllocationTarget(this.db, tenantId, input);
        throw writeInterrupted('the catalog changed while the reservation was checked; send it again');
      case 'EXPIRED':
      case 'BUNDLE':
        throw new Error(`an ${done.outcome} outcome takes the general path`);
    }
  }

  /** Releases a reservation early: its units become available again (ALLOCATION). */
  async removeReservation(principal: Principal, id: string, idempotency?: Idempotency): Promise<ReservationRecord> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const found = await this.load(tenantId, id);
    if (found.status !== 'ACTIVE') {
      throw invalidState(`reservation "${found.id}" is ${found.status} and holds no stock`);
    }
    await writeTransaction(this.db, (tx) =>
      runIdempotent(tx, tenantId, idempotency, async () => {
        const ended = await stock.endReservations(tx, tenantId, [found.id], 'REMOVED', principal.actor);
        if (ended.length === 0) throw invalidState(`reservation "${found.id}" was released meanwhile`);
        return found.id;
      }),
    );
    return this.load(tenantId, found.id);
  }

  /**
   * Moves the expiry of an ACTIVE reservation (later than today's, at most 30 days ahead); its
   * units stay held throughout. One that expired, even if not yet released, or that ended is
   * INVALID_STATE: its units may already be sold.
   */
  async extendReservation(principal: Principal, id: string, expiresAt: number): Promise<ReservationRecord> {
    requireScope(principal, 'inventory:write');
    const { tenantId } = principal;
    const found = await this.load(tenantId, id);
    if (found.status !== 'ACTIVE')
      throw invalidState(`reservation "${found.id}" is ${found.status} and holds no stock`);
    if (expiresAt <= found.expiresAt.getTime()) {
      throw invalidInput([
        {
          field: 'expires_at',
          message: `must be later than the reservation's expires_at (${found.expiresAt.getTime()})`,
        },
      ]);
    }
    await writeTransaction(this.db, async (tx) => {
      // Under the stock locks, so that no expired-units reuse or sweep of these SKUs runs meanwhile.
      await stock.lock(tx, tenantId, { holders: { reservationIds: [found.id] } });
      if (!(await repository.extendActiveReservation(tx, tenantId, found.id, new Date(expiresAt)))) {
        throw invalidState(`reservation "${found.id}" expired or ended meanwhile and holds no stock`);
      }
    });
    return this.load(tenantId, found.id);
  }

  /**
   * Records the release of reservations whose time ran out (the background sweeper). Safe to run
   * in several processes at once: each release is a conditional status change under the stock
   * locks, so it is recorded exactly once. Returns how many this call released.
   *
   * Each release has its own transaction, so one that fails (a constraint or trigger refusing its
   * rows) holds back no other: it goes to `report` (without one, the failures are thrown together
   * once the batch is done), and after `MAX_RELEASE_ATTEMPTS` this process leaves it out of later
   * sweeps, so that it neither loops on it nor lets it take a place in every batch. Stock loses
   * nothing meanwhile: an expired reservation stops counting at `expires_at`, released or not.
   */
  async releaseExpired(limit = 100, report?: (error: ReleaseFailed) => void): Promise<number> {
    const failures: ReleaseFailed[] = [];
    const fail = report ?? ((failure: ReleaseFailed) => failures.push(failure));
    const givenUp = [...this.releaseFailures].filter(([, count]) => count >= MAX_RELEASE_ATTEMPTS).map(([id]) => id);
    let released = 0;
    for (const { id, tenantId } of await repository.expiredReservations(this.db, limit, givenUp)) {
      const key = repository.reservationKey({ tenantId, id });
      try {
        released += await this.releaseExpiredReservation(tenantId, id);
        this.releaseFailures.delete(key);
      } catch (error) {
        // Cut off (database unreachable, deadlock) is not the reservation's fault: the next sweep goes on from here.
        if (error instanceof AppError && error.key === 'WRITE_INTERRUPTED') throw error;
        const attempts = (this.releaseFailures.get(key) ?? 0) + 1;
        this.releaseFailures.set(key, attempts);
        fail(new ReleaseFailed(id, tenantId, attempts, { cause: error }));
      }
    }
    this.expiredReleased += released;
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} expired reservations not released`);
    return released;
  }

  private releaseExpiredReservation(tenantId: string, id: string) {
    return writeTransaction(
      this.db,
      async (tx) => (await stock.endReservations(tx, tenantId, [id], 'EXPIRED', stock.EXPIRY_ACTOR)).length,
    );
  }

  async reservation(principal: Principal, id: string): Promise<ReservationRecord> {
    requireScope(principal, 'inventory:read');
    return this.load(principal.tenantId, id);
  }

  async reservations(principal: Principal, status: ReservationStatus | null | undefined, page: PageArguments) {
    requireScope(principal, 'inventory:read');
    const { tenantId } = principal;
    const result = await paginate<ReservationRecord, string>(
      this.cursors,
      `reservations:${tenantId}:${status ?? ''}`,
      page,
      sqlKeysetSource(this.db, repository.reservationList(tenantId, status ?? undefined)),
      { after: 'after', before: 'before' },
    );
    return { ...result, items: result.items.map((record) => effective(record)) };
  }

  /** Reservations by id for the GraphQL loaders (references of stock mutations). */
  async reservationsByIds(tenantId: string, ids: readonly string[]) {
    return (await repository.findReservations(this.db, tenantId, ids)).map((record) => effective(record));
  }

  private load(tenantId: string, id: string) {
    return findReservation(this.db, tenantId, id);
  }

  private context(principal: Principal, reservationId: string): stock.StockChange {
    return { source: 'ALLOCATION', actor: principal.actor, references: [{ type: 'Reservation', id: reservationId }] };
  }
}
