/**
 * Addresses that keep sending bodies refused as hostile (nested deeper than the door allows) get
 * their next refusals late. Refusing such a body is cheap, but a client that sends the next one as
 * soon as the last is answered (a script in a loop) would still take a share of the process for
 * as long as it runs, from every other client. Holding its answers back for a second costs a timer
 * and an idle connection, and slows such a loop to one body per second per connection. A client
 * that sends one such body by mistake gets its 400 at once: only refusals beyond the first
 * `freeRefusals` of an address within `windowMs` wait.
 */
import { LRUCache } from 'lru-cache';
import { clientAddressKey } from './client-address';

export interface HostileSendersOptions {
  /** Refusals of one address within the window answered at once. */
  freeRefusals: number;
  windowMs: number;
  /** How long each further refusal's answer waits. */
  holdMs: number;
  /** Answers held at once, across addresses; beyond, answers go at once (a held answer keeps a socket open). */
  maxHeld: number;
  /** Addresses remembered; the least recently refused are forgotten first. */
  maxAddresses: number;
}

export const HOSTILE_SENDERS_DEFAULTS: HostileSendersOptions = {
  freeRefusals: 10,
  windowMs: 60_000,
  holdMs: 1_000,
  maxHeld: 1_000,
  maxAddresses: 10_000,
};

export class HostileSenders {
  private readonly refusals: LRUCache<string, { count: number }>;
  private held = 0;

  constructor(private readonly options: HostileSendersOptions = HOSTILE_SENDERS_DEFAULTS) {
    // The window starts at an address's first refusal and is not extended by later ones.
    this.refusals = new LRUCache({ max: options.maxAddresses, ttl: options.windowMs, updateAgeOnGet: false });
  }

  /** Records a refusal of a body from `address` and calls `answer` now or once its wait is over. */
  refused(address: string | undefined, answer: () => void): void {
    const key = clientAddressKey(address ?? '');
    const entry = this.refusals.get(key);
    if (entry) entry.count += 1;
    else this.refusals.set(key, { count: 1 });
    const count = entry?.count ?? 1;
    const free = count <= this.options.freeRefusals || this.options.holdMs === 0;
    if (free || this.held >= this.options.maxHeld) return answer();
    this.held += 1;
    setTimeout(() => {
      this.held -= 1;
      answer();
    }, this.options.holdMs).unref();
  }

  /** Answers waiting now. */
  get holding(): number {
    return this.held;
  }
}
