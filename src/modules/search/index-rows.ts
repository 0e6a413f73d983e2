/**
 * Index rows of searches, kept in memory by each process and checked against PostgreSQL with one
 * primary-key read of the row's version per search instead of reading (and parsing) the whole
 * row. Every change of an index moves its version (definition, rules, documents, clearing), so a
 * row whose version is unchanged is the stored row; a changed or deleted one is read again. The
 * check reads PostgreSQL on every search, so what any process committed is seen by the next
 * search in every process, as without the cache.
 */
import { LRUCache } from 'lru-cache';
import type pg from 'pg';
import { poolOf, type Db } from '../../kernel/db';
import * as repository from './search.repository';

/** Indexes kept per process; the least recently searched go first beyond the bound. */
const MAX_ENTRIES = 10_000;

/** A named statement: PostgreSQL parses and plans it once per connection. */
const VERSION_STATEMENT = {
  name: 'search-index-version',
  text: 'SELECT version::text AS version FROM search_indexes WHERE id = $1::uuid',
};

export class IndexRows {
  private readonly entries = new LRUCache<string, repository.IndexRow>({ max: MAX_ENTRIES });
  private readonly pool: pg.Pool;

  constructor(private readonly db: Db) {
    this.pool = poolOf(db);
  }

  /** The tenant's index with this alias as stored now, or null when there is none. */
  async find(tenantId: string, alias: string): Promise<repository.IndexRow | null> {
    const key = `${tenantId}:${alias}`;
    const cached = this.entries.get(key);
    if (cached && (await this.storedVersion(cached.id)) === cached.version) return cached;
    const row = await repository.findIndex(this.db, tenantId, alias);
    if (row) this.entries.set(key, row);
    else this.entries.delete(key);
    return row;
  }

  /** Records that the engine has applied the row's version, in PostgreSQL and in the kept row. */
  async markProcessed(row: repository.IndexRow): Promise<void> {
    await repository.markProcessed(this.db, row.id, row.version);
    row.processedVersion = Math.max(row.processedVersion, row.version);
  }

  private async storedVersion(id: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ version: string }>({ ...VERSION_STATEMENT, values: [id] });
    return rows[0] ? Number(rows[0].version) : undefined;
  }
}
