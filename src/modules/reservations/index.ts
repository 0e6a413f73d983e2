import type { Module } from '../context';
import { startReservationSweeper } from './reservation-sweeper';
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
  services: ({ db, cursors }) => ({ reservations: new ReservationService(db, cursors) }),
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
};
