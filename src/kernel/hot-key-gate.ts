/**
 * Bounds how many transactions of this process wait on the stock lock of one SKU at one warehouse.
 * They run one at a time anyway (the lock serialises them); more in flight only hold pool
 * connections idle and make the lock holder's round trips wait behind them. Extra callers wait
 * here, in memory, in arrival order.
 */
export class HotKeyGate {
  private readonly queues = new Map<string, { active: number; waiting: (() => void)[] }>();

  constructor(private readonly perKey: number) {}

  /** Runs `work` holding a permit for every key (taken in sorted order, so callers cannot deadlock). */
  async run<T>(keys: string[], work: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort();
    const held: string[] = [];
    try {
      for (const key of sorted) {
        await this.acquire(key);
        held.push(key);
      }
      return await work();
    } finally {
      for (const key of held) this.release(key);
    }
  }

  private acquire(key: string): Promise<void> {
    const queue = this.queues.get(key) ?? { active: 0, waiting: [] };
    this.queues.set(key, queue);
    if (queue.active < this.perKey) {
      queue.active += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => queue.waiting.push(resolve));
  }

  private release(key: string) {
    const queue = this.queues.get(key)!;
    const next = queue.waiting.shift();
    if (next) next();
    else if (--queue.active === 0) this.queues.delete(key);
  }
}
