/** The batcher behind reservations: bounded calls per key, arrival order, one outcome per request. */
import { describe, expect, it } from 'vitest';
import { HotKeyBatcher, type BatchOutcome } from '../../src/kernel/hot-key-batcher';

/** A `run` whose calls stay open until the test settles them. */
function controlledRun() {
  const calls: { requests: string[]; settle: (outcomes: BatchOutcome<string>[] | Error) => void }[] = [];
  const run = (requests: string[]) =>
    new Promise<BatchOutcome<string>[]>((resolve, reject) => {
      calls.push({
        requests,
        settle: (outcomes) => (outcomes instanceof Error ? reject(outcomes) : resolve(outcomes)),
      });
    });
  return { calls, run };
}

const echo = (requests: string[]): BatchOutcome<string>[] =>
  requests.map((request) => ({ ok: true, value: `done ${request}` }));
const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('HotKeyBatcher', () => {
  it('runs at most inFlightPerKey calls per key and sends what arrived meanwhile together, in arrival order', async () => {
    const { calls, run } = controlledRun();
    const batcher = new HotKeyBatcher<string, string>({ inFlightPerKey: 2, maxBatch: 100, run });
    const results = ['a', 'b', 'c', 'd', 'e'].map((request) => batcher.submit('sku-1', request));
    await flush();
    expect(calls.map((call) => call.requests)).toEqual([['a'], ['b']]);

    calls[0]!.settle(echo(['a']));
    await expect(results[0]).resolves.toBe('done a');
    await flush();
    expect(calls.map((call) => call.requests)).toEqual([['a'], ['b'], ['c', 'd', 'e']]);
    calls[1]!.settle(echo(['b']));
    calls[2]!.settle(echo(['c', 'd', 'e']));
    expect(await Promise.all(results)).toEqual(['done a', 'done b', 'done c', 'done d', 'done e']);
  });

  it('keeps keys apart and caps a batch at maxBatch', async () => {
    const { calls, run } = controlledRun();
    const batcher = new HotKeyBatcher<string, string>({ inFlightPerKey: 1, maxBatch: 2, run });
    const results = [
      batcher.submit('x', 'x1'),
      batcher.submit('y', 'y1'),
      batcher.submit('x', 'x2'),
      batcher.submit('x', 'x3'),
      batcher.submit('x', 'x4'),
    ];
    await flush();
    expect(calls.map((call) => call.requests)).toEqual([['x1'], ['y1']]);
    calls[0]!.settle(echo(['x1']));
    calls[1]!.settle(echo(['y1']));
    await flush();
    expect(calls.map((call) => call.requests).slice(2)).toEqual([['x2', 'x3']]);
    calls[2]!.settle(echo(['x2', 'x3']));
    await flush();
    expect(calls.map((call) => call.requests).slice(3)).toEqual([['x4']]);
    calls[3]!.settle(echo(['x4']));
    expect(await Promise.all(results)).toEqual(['done x1', 'done y1', 'done x2', 'done x3', 'done x4']);
  });

  it('gives each request its own outcome, fails a whole batch when the call throws, and goes on with the next', async () => {
    const { calls, run } = controlledRun();
    const batcher = new HotKeyBatcher<string, string>({ inFlightPerKey: 1, maxBatch: 100, run });
    const first = batcher.submit('k', 'first');
    await flush();
    const [second, third] = [batcher.submit('k', 'second'), batcher.submit('k', 'third')];
    calls[0]!.settle(new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await flush();
    expect(calls[1]!.requests).toEqual(['second', 'third']);
    calls[1]!.settle([
      { ok: false, error: new Error('out of stock') },
      { ok: true, value: 'reserved' },
    ]);
    await expect(second).rejects.toThrow('out of stock');
    await expect(third).resolves.toBe('reserved');
  });

  it('sends the next batch before the callers of the one before go on', async () => {
    const { calls, run } = controlledRun();
    const batcher = new HotKeyBatcher<string, string>({ inFlightPerKey: 1, maxBatch: 100, run });
    const events: string[] = [];
    const answered = ['a', 'b', 'c'].map((request) =>
      batcher.submit('k', request).then((value) => events.push(`${value}; calls: ${calls.length}`)),
    );
    await flush();
    expect(calls.map((call) => call.requests)).toEqual([['a']]);
    calls[0]!.settle(echo(['a']));
    await answered[0];
    // When the first caller went on, the call of the two that waited had been made.
    expect(events).toEqual(['done a; calls: 2']);
    expect(calls[1]!.requests).toEqual(['b', 'c']);
    calls[1]!.settle(echo(['b', 'c']));
    await Promise.all(answered);
    expect(events).toEqual(['done a; calls: 2', 'done b; calls: 2', 'done c; calls: 2']);
  });

  it('fails a request the call gave no outcome for', async () => {
    const batcher = new HotKeyBatcher<string, string>({ inFlightPerKey: 1, maxBatch: 100, run: async () => [] });
    await expect(batcher.submit('k', 'lost')).rejects.toThrow('answered 0 of 1');
  });
});
