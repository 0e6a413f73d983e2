/**
 * Index rows of searches, kept in memory by each process and checked against PostgreSQL with one
 * primary-key read of the row's version per search instead of reading (and parsing) the whole
 * row. Every change of an index moves its version (definition, rules, documents, clearing), so a
 * row whose version is unchanged is the stored row; a changed or deleted one is read again.
 *
 * Checks that arrive while one is under way wait for it and then go together in one statement:
 * under load a round trip serves many searches. Every check is still answered by a statement sent
 * after it was asked for, so what any process committed before a search began is what that search
 * sees, in every process, as without the kept rows.
 */
import { LRUCache } from 'lru-cache';
import { poolOf, type Db } from '../../kernel/db';
import { HotKeyBatcher } from '../../kernel/hot-key-batcher';
import * as repository from './search.repository';

/** Indexes kept per process; the least recently searched go first beyond the bound. */
const MAX_ENTRIES = 10_000;

/** Checks answered by one statement at most. */
const MAX_CHECKS = 500;

const VERSIONS_SQL = 'SELECT id::text AS id, version::text AS version FROM search_indexes WHERE id = ANY($1::uuid[])';

/**
 * The version check as a named statement, which PostgreSQL parses and plans once per connection;
 * unnamed when the pool goes through a transaction pooler, which hands each statement to any server
 * session (PgBouncer 1.18 keeps no prepared statements: "already exists" / "does not exist").
 */
const versionsStatement = (named: boolean) =>
  named ? { name: 'search-index-versions', text: VERSIONS_SQL } : { text: VERSIONS_SQL };

export class IndexRows {
  private readonly entries = new LRUCache<string, repository.IndexRow>({ max: MAX_ENTRIES });
  /** One statement in flight at a time; the checks asked for meanwhile form the next one. */
  private readonly versions = new HotKeyBatcher<string, number | undefined>({
    inFlightPerKey: 1,
    maxBatch: MAX_CHECKS,
    run: async (ids) => {
      const { rows } = await poolOf(this.db).query<{ id: string; version: string }>({
        ...this.statement,
        values: [[...new Set(ids)]],
      });
      const stored = new Map(rows.map((row) => [row.id, Number(row.version)]));
      return ids.map((id) => ({ ok: true, value: stored.get(id) }));
    },
  });

  private readonly statement: { name?: string; text: string };

  /** `pooled`: the pool goes through a transaction pooler (DATABASE_DIRECT_URL is set). */
  constructor(
    private readonly db: Db,
    { pooled = false } = {},
  ) {
    this.statement = versionsStatement(!pooled);
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

  /** The version stored now (undefined when the index is gone), read after this call. */
  private storedVersion(id: string): Promise<number | undefined> {
    return this.versions.submit('versions', id);
  }
}
