/**
 * An index read in one consistent snapshot (REPEATABLE READ, read only), on a connection of the
 * pool under Prisma, for the embedded engine to build or catch up its copy. The documents of a
 * large index come through a cursor in chunks, each read while the caller takes the one before,
 * and straight from pg, without Prisma's work per row: a rebuild reads every document there is.
 */
import type pg from 'pg';
import { poolOf, type Db } from '../../kernel/db';
import { parseFirstRow } from '../../kernel/rows';
import * as repository from './search.repository';

/** Documents fetched at a time from the cursor. */
const CHUNK = 5_000;

export interface IndexSnapshot {
  index: repository.IndexRow;
  /**
   * Hands every stored document (its `data`) to `take`, a chunk at a time in id order; the next
   * chunk is on its way while `take` works.
   */
  allDocuments(take: (chunk: unknown[]) => void): Promise<void>;
  /** The documents written after `version`, in id order. */
  documentsSince(version: number): Promise<repository.StoredDocument[]>;
  /** Ids of the documents deleted after `version`. */
  deletionsSince(version: number): Promise<string[]>;
}

/**
 * Documents are read as their JSON text (`data::text`) and parsed here, a chunk at a time: pg's own
 * parser for jsonb, called as each row arrives, takes about 100 ms more per 100 000 documents, and
 * a rebuild reads every document. Their shape is fixed by the columns, so they are taken as they
 * come rather than checked one by one.
 */
type DocumentRow = { id: string; data: string };

const DOCUMENT_COLUMNS = 'id, data::text AS data';

/** The rows with their documents parsed, in place. */
function parsed(rows: DocumentRow[]): repository.StoredDocument[] {
  const documents = rows as repository.StoredDocument[];
  for (let i = 0; i < rows.length; i++) documents[i]!.data = JSON.parse(rows[i]!.data);
  return documents;
}

async function allDocuments(client: pg.PoolClient, indexId: string, take: (chunk: unknown[]) => void) {
  await client.query({
    text: `DECLARE search_documents_snapshot NO SCROLL CURSOR FOR
             SELECT data::text FROM search_documents WHERE index_id = $1::uuid ORDER BY id`,
    values: [indexId],
  });
  // Rows as arrays: pg makes no object per row, and the ids are in the documents.
  const fetch = () =>
    client.query<[string]>({ text: `FETCH ${CHUNK} FROM search_documents_snapshot`, rowMode: 'array' });
  let next = fetch();
  for (;;) {
    const { rows } = await next;
    const more = rows.length === CHUNK;
    // pg sends the next FETCH at once; PostgreSQL answers it while this chunk is taken.
    if (more) next = fetch();
    const documents: unknown[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) documents[i] = JSON.parse(rows[i]![0]);
    try {
      take(documents);
    } catch (error) {
      // The transaction rolls back; the fetch under way fails or finishes unread.
      if (more) next.catch(() => undefined);
      throw error;
    }
    if (!more) return;
  }
}

/**
 * Runs `read` on a snapshot of the index, or returns null when there is no such index. The
 * snapshot ends (read only: nothing to keep) when `read` settles.
 */
export async function readIndexSnapshot<T>(
  db: Db,
  indexId: string,
  read: (snapshot: IndexSnapshot) => Promise<T>,
): Promise<T | null> {
  const client = await poolOf(db).connect();
  let outcome: { value: T | null } | { error: unknown };
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  } catch (error) {
    client.release(error as Error);
    throw error;
  }
  try {
    const { rows } = await client.query({
      text: `SELECT ${repository.INDEX_COLUMNS} FROM search_indexes WHERE id = $1::uuid`,
      values: [indexId],
    });
    const index = parseFirstRow(repository.IndexListRow, rows);
    outcome = { value: index ? await read(snapshotOf(client, index)) : null };
  } catch (error) {
    outcome = { error };
  }
  try {
    // Also ends a transaction that failed, and the cursor with it.
    await client.query('COMMIT');
  } catch (error) {
    // A connection whose transaction could not end is not handed to anyone else.
    client.release(error as Error);
    throw 'error' in outcome ? outcome.error : error;
  }
  client.release();
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

const snapshotOf = (client: pg.PoolClient, index: repository.IndexRow): IndexSnapshot => ({
  index,
  allDocuments: (take) => allDocuments(client, index.id, take),
  documentsSince: async (version) =>
    parsed(
      (
        await client.query<DocumentRow>({
          text: `SELECT ${DOCUMENT_COLUMNS} FROM search_documents
                  WHERE index_id = $1::uuid AND version > $2 ORDER BY id`,
          values: [index.id, version],
        })
      ).rows,
    ),
  deletionsSince: async (version) =>
    (
      await client.query<{ id: string }>({
        text: 'SELECT id FROM search_document_deletions WHERE index_id = $1::uuid AND version > $2',
        values: [index.id, version],
      })
    ).rows.map((row) => row.id),
});
