/**
 * The opaque pagination cursor of `search_catalog`: the position of the next page, base64url JSON.
 * It is not signed: any position it may name is one the caller could ask for by paging.
 */
import { z } from '../../kernel/rest/schemas';

/** The search engine skips at most this many hits. */
export const MAX_CURSOR_OFFSET = 10_000;

const Position = z.object({ o: z.int().min(1).max(MAX_CURSOR_OFFSET) }).strict();

/** The cursor of the page starting at `offset`, or null beyond what the engine pages to. */
export function encodeCursor(offset: number): string | null {
  if (offset < 1 || offset > MAX_CURSOR_OFFSET) return null;
  return Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
}

/** The position a cursor names; throws on one this catalog never issued. */
export function decodeCursor(cursor: string): number {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) throw new Error('not a catalog cursor');
  return Position.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))).o;
}

/** A cursor as requests take it: one `encodeCursor` could have made. */
export const CatalogCursor = z
  .string()
  .max(64)
  .refine((cursor) => {
    try {
      decodeCursor(cursor);
      return true;
    } catch {
      return false;
    }
  }, 'is not a cursor of this catalog');
