/**
 * The engine called directly and the two peer engines over the same products, measured in the same
 * interleaved rounds. The peers' indexes are built here and are garbage once this returns, so the
 * rows measured after them do not carry their heap.
 */
import type { LoadResult, LoadSettings } from '../../lib/load';
import { DOCUMENTS } from './catalogue';
import { buildFlexSearch, searchFlexSearch } from './flexsearch';
import { heapOf, measureInProcess } from './measure';
import { buildMiniSearch, searchMiniSearch } from './minisearch';

export interface PeerRun {
  result: LoadResult;
  /** JS heap and array buffers held by its index. */
  heapMb: number;
  buildMs: number;
  /** Matches of the suite's query. */
  count: number;
}

/** An index built by `build`, its build time (without the collections around it) and the memory it holds. */
async function built<T>(build: () => T, count: (index: T) => number) {
  const { value, heapMb } = await heapOf(async () => {
    const start = performance.now();
    return { index: build(), buildMs: performance.now() - start };
  });
  return { ...value, heapMb, count: count(value.index) };
}

export async function measureWithPeers(
  direct: () => unknown,
  load: LoadSettings,
  log: (line: string) => void,
): Promise<{ direct: LoadResult; miniSearch: PeerRun; flexSearch: PeerRun }> {
  log(`building the same ${DOCUMENTS} products in MiniSearch`);
  const mini = await built(buildMiniSearch, (index) => searchMiniSearch(index).count);
  log(`building the same ${DOCUMENTS} products in FlexSearch`);
  const flex = await built(buildFlexSearch, (index) => searchFlexSearch(index).count);
  log('measuring the engine called directly, MiniSearch and FlexSearch, interleaved');
  const [directResult, miniResult, flexResult] = await measureInProcess(
    [direct, () => searchMiniSearch(mini.index), () => searchFlexSearch(flex.index)],
    load,
  );
  const run = (peer: { heapMb: number; buildMs: number; count: number }, result: LoadResult): PeerRun => ({
    result,
    heapMb: peer.heapMb,
    buildMs: peer.buildMs,
    count: peer.count,
  });
  return { direct: directResult!, miniSearch: run(mini, miniResult!), flexSearch: run(flex, flexResult!) };
}
