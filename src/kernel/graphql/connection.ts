import { AppError } from '../errors';
import type { KeysetPage, PageArguments } from '../pagination';

export const DEFAULT_FIRST = 10;
export const MAX_FIRST = 100;

interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

const invalid = (field: string, reason: string) =>
  new AppError('BAD_REQUEST', `${field} ${reason}`, { details: [{ field, message: reason }] });

/**
 * Relay arguments → a keyset page request: `first` (after `after`) pages forwards, `last` (before
 * `before`, or from the end of the list) pages backwards. The mixed forms `first`+`before` and
 * `last`+`after` are refused: a keyset page is taken next to its cursor, so they would silently
 * return a different slice than Relay's algorithm describes.
 */
export function connectionArguments(args: ConnectionArgs): PageArguments {
  if (args.first != null && args.last != null) throw invalid('first', 'cannot be combined with last');
  if (args.after != null && args.before != null) throw invalid('after', 'cannot be combined with before');
  if (args.first != null && args.before != null) throw invalid('before', 'cannot be combined with first; use last');
  if (args.last != null && args.after != null) throw invalid('after', 'cannot be combined with last; use first');
  const size = args.first ?? args.last ?? DEFAULT_FIRST;
  const field = args.last != null ? 'last' : 'first';
  if (!Number.isInteger(size) || size < 1 || size > MAX_FIRST)
    throw invalid(field, `must be between 1 and ${MAX_FIRST}`);
  return { size, after: args.after, before: args.before, fromEnd: args.last != null && args.before == null };
}

export function toConnection<T>(page: KeysetPage<T>) {
  const edges = page.items.map((node, index) => ({ node, cursor: page.cursors[index]! }));
  return {
    edges,
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage,
      startCursor: page.startCursor,
      endCursor: page.endCursor,
    },
  };
}
