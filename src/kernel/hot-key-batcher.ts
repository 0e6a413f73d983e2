/** What one request of a batch came to: its result, or the error its caller gets. */
export type BatchOutcome<Result> = { ok: true; value: Result } | { ok: false; error: unknown };

interface Queue<Request, Result> {
  running: number;
  waiting: Waiting<Request, Result>[];
}

interface Waiting<Request, Result> {
  request: Request;
  resolve: (value: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Coalesces writes that contend for the same stock locks into one database call. At most
 * `inFlightPerKey` calls per key run at once; requests arriving meanwhile wait here, in arrival
 * order, and go together in the next call (at most `maxBatch` of them). The locks are then taken
 * once per batch instead of once per request, and a queue of clients on a hot SKU costs the
 * database one statement per round trip, however many clients there are.
 */
export class HotKeyBatcher<Request, Result> {
  private readonly queues = new Map<string, Queue<Request, Result>>();

  constructor(
    private readonly options: {
      inFlightPerKey: number;
      maxBatch: number;
      /** Runs one batch: one outcome per request, in order. A throw fails every request of the batch. */
      run: (requests: Request[]) => Promise<BatchOutcome<Result>[]>;
    },
  ) {}

  submit(key: string, request: Request): Promise<Result> {
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(key) ?? { running: 0, waiting: [] };
      this.queues.set(key, queue);
      queue.waiting.push({ request, resolve, reject });
      this.drain(key, queue);
    });
  }

  private drain(key: string, queue: Queue<Request, Result>) {
    while (queue.running < this.options.inFlightPerKey && queue.waiting.length > 0) {
      const batch = queue.waiting.splice(0, this.options.maxBatch);
      queue.running += 1;
      void this.runBatch(key, queue, batch);
    }
  }

  private async runBatch(key: string, queue: Queue<Request, Result>, batch: Waiting<Request, Result>[]) {
    let outcomes: BatchOutcome<Result>[];
    try {
      outcomes = await this.options.run(batch.map((entry) => entry.request));
    } catch (error) {
      outcomes = batch.map(() => ({ ok: false, error }));
    }
    // The next batch goes to the database first; this one's callers go on (and write their answers)
    // in the next turn of the event loop, while it runs. Settled at once, their continuations
    // would run before the next call had even been sent, and the database would wait for them:
    // 10-20 % fewer reservations per second on the 2-core bench machine.
    queue.running -= 1;
    if (queue.running === 0 && queue.waiting.length === 0) this.queues.delete(key);
    else this.drain(key, queue);
    setImmediate(() =>
      batch.forEach((entry, index) => {
        const outcome = outcomes[index];
        if (!outcome) entry.reject(new Error(`batch answered ${outcomes.length} of ${batch.length} requests`));
        else if (outcome.ok) entry.resolve(outcome.value);
        else entry.reject(outcome.error);
      }),
    );
  }
}
