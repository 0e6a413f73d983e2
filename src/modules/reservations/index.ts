import { Counter } from 'prom-client';
import { deleteInBatches } from '../../kernel/batched-delete';
import type { Db } from '../../kernel/db';
import { METRICS_PREFIX } from '../../kernel/metrics';
import type { Module } from '../context';
import { startReservationSweeper } from './reservation-sweeper';
import { deleteReleasedReservations as deleteReleasedBatch } from './reservations.repository';
import { reservationResolvers } from './reservations.resolvers';
import { ReservationService } from './reservations.service';

declare module '../context' {
  interface Services {
    reservations: ReservationService;
  }
}

/** Reservations: stock held for a customer until it expires or is removed. */
export const reservationsModule: Module = {
  name: 'reservations',
  services: ({ db, cursors, channelWarehouses, reservationBatches }) => ({
    reservations: new ReservationService(db, cursors, channelWarehouses, reservationBatches),
  }),
  graphql: {
    schema: 'reservations.graphql',
    resolvers: [reservationResolvers],
    mappers: {
      Reservation: './reservations.repository#ReservationRecord',
      ReservationItem: './reservations.repository#ReservationItemRecord',
    },
  },
  // Expired reservations are released in the ledger by every process, each exactly once overall.
  workers: ({ reservations }, logError) => [startReservationSweeper(reservations, logError)],
  metrics(registry, { reservations }) {
    new Counter({
      name: `${METRICS_PREFIX}reservations_expired_total`,
      help: 'Reservations past their expiry that this process released (the sweeper).',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(reservations.expiredReleased);
      },
    });
  },
};

export { claimForOrder, findReservation } from './reservations.service';
export type { ReservationService } from './reservations.service';
export type { ReservationRecord } from './reservations.repository';
/** The reservations' inputs, which every interface that makes or changes a reservation validates with (MCP's tools). */
export {
  CreateReservationInput,
  EmailAddress,
  ExtendReservationInput,
  MAX_RESERVATION_MS,
  PhoneNumber,
  RemoveReservationInput,
} from './reservations.schemas';

/**
 * Housekeeping: deletes reservations released more than RESERVATION_RETENTION_DAYS ago, and their
 * items, in batches; never one that still holds stock. Returns how many reservations.
 */
export const deleteReleasedReservations = (db: Db, days: number, options: { stopping?: () => boolean } = {}) =>
  deleteInBatches((limit) => deleteReleasedBatch(db, days, limit), options);
