import type { CursorCodec } from './cursor';
import { badRequest } from './errors';

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

/** One page request in either direction: forwards after a key, or backwards before one. */
export interface KeysetQuery<K> {
  take: number;
  after?: K;
  before?: K;
  /** true: newest-last order is reversed because we walk backwards from `before`. */
  backwards: boolean;
}

export interface KeysetPage<T> {
  items: T[];
  /** One cursor per item, in item order. */
  cursors: string[];
  startCursor: string | null;
  endCursor: string | null;
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

export interface KeysetSource<T, K> {
  /** Rows strictly after `after` (ascending) or strictly before `before` (descending when backwards). */
  fetch(query: KeysetQuery<K>): Promise<T[]>;
  /** Whether any row lies strictly before (`direction` "before") or after the given key. */
  exists(direction: 'before' | 'after', key: K): Promise<boolean>;
  keyOf(item: T): K;
}

export interface PageArguments {
  size: number;
  after?: string | null;
  before?: string | null;
  /** Without `before`: take the page from the end of the list (GraphQL `last` alone). */
  fromEnd?: boolean;
}

/**
 * Keyset pagination shared by REST lists and GraphQL connections: cursors are signed keys,
 * so a page costs one indexed range scan and one existence probe whatever its depth.
 */
export async function paginate<T, K>(
  codec: CursorCodec,
  scope: string,
  args: PageArguments,
  source: KeysetSource<T, K>,
  parameterNames: { after: string; before: string } = { after: 'page[after]', before: 'page[before]' },
): Promise<KeysetPage<T>> {
  if (args.after && args.before) {
    throw badRequest(`${parameterNames.after} and ${parameterNames.before} cannot be combined`);
  }
  const after = args.after ? (codec.decode(scope, args.after, parameterNames.after) as K) : undefined;
  const before = args.before ? (codec.decode(scope, args.before, parameterNames.before) as K) : undefined;

  let items: T[];
  let hasNextPage: boolean;
  let hasPreviousPage: boolean;
  if (before !== undefined || args.fromEnd) {
    const rows = await source.fetch({ take: args.size + 1, before, backwards: true });
    hasPreviousPage = rows.length > args.size;
    items = rows.slice(0, args.size).reverse();
    const last = items.at(-1);
    // From the end nothing follows; with nothing before the cursor, the cursor's own row (if it
    // still exists) is the next page.
    if (before === undefined) hasNextPage = false;
    else hasNextPage = last ? await source.exists('after', source.keyOf(last)) : true;
  } else {
    const rows = await source.fetch({ take: args.size + 1, after, backwards: false });
    hasNextPage = rows.length > args.size;
    items = rows.slice(0, args.size);
    const first = items[0];
    hasPreviousPage = after === undefined ? false : await source.exists('before', first ? source.keyOf(first) : after);
  }
  const cursors = items.map((item) => codec.encode(scope, source.keyOf(item)));
  return {
    items,
    cursors,
    startCursor: cursors[0] ?? null,
    endCursor: cursors.at(-1) ?? null,
    hasNextPage,
    hasPreviousPage,
  };
}
