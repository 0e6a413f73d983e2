import { Counter } from 'prom-client';
import { METRICS_PREFIX } from '../../kernel/metrics';
import { startPoller } from '../../kernel/poller';
import type { Module } from '../context';
import { checkoutResolvers } from './checkout.resolvers';
import { CheckoutService } from './checkout.service';

declare module '../context' {
  interface Services {
    checkout: CheckoutService;
  }
}

/** How long each process waits after a sweep before it looks for expired checkouts again. */
const SWEEP_INTERVAL_MS = 5_000;
const SWEEP_BATCH = 100;

/** Carts and checkout sessions: lines held from the first change to the order, totals computed by the server. */
export const checkoutModule: Module = {
  name: 'checkout',
  services: (services) => ({ checkout: new CheckoutService(services) }),
  graphql: {
    schema: 'checkout.graphql',
    resolvers: [checkoutResolvers],
    mappers: { Checkout: './checkout-view#CheckoutView' },
  },
  // Open checkouts past their expiry are marked canceled by every process, each once overall
  // (their holds expire with them and the reservations' sweeper releases them).
  workers: ({ checkout }, logError) => [
    startPoller(
      async (stopping) => {
        while (!stopping() && (await checkout.markExpired(SWEEP_BATCH)) === SWEEP_BATCH);
      },
      SWEEP_INTERVAL_MS,
      logError,
    ),
  ],
  metrics(registry, { checkout }) {
    new Counter({
      name: `${METRICS_PREFIX}checkouts_expired_total`,
      help: 'Checkouts past their expiry that this process marked canceled.',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(checkout.expiredMarked);
      },
    });
  },
};

export type { CheckoutService } from './checkout.service';
export type { CheckoutView } from './checkout-view';
