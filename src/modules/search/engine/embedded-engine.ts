/**
 * The embedded engine: an in-memory copy of each index in this process, rebuilt from PostgreSQL
 * (which holds the documents durably) the first time the index is searched, and caught up before
 * each search whose definition is newer than the copy. Catching up reads one consistent snapshot
 * (REPEATABLE READ), so a copy never holds part of a batch; every process keeps its own copies in
 * step this way, whoever wrote.
 */
import type { Db } from '../../../kernel/db';
import { mapStoredDocument, resolveDefinition } from '../definition';
import * as repository from '../search.repository';
import type { EngineQuery, EngineResult, IndexDefinition, IndexedDocument, SearchEngine } from './engine';
import { MemoryIndex } from './memory-index';

const READ_CHUNK = 5_000;
/** A rebuild of a large index reads for a while; the default 5 s transaction timeout is too short. */
const SNAPSHOT_TIMEOUT_MS = 10 * 60_000;

interface Copy {
  version: number;
  rebuildVersion: number;
  /** The definition the copy was built with, less its version counters. */
  shape: string;
  index: MemoryIndex;
}

/** Two definitions of one index that differ in this need different copies (new fields change the searched ones). */
const shapeOf = (definition: IndexDefinition) => JSON.stringify({ ...definition, version: 0, rebuildVersion: 0 });

export class EmbeddedEngine implements SearchEngine {
  readonly name = 'embedded' as const;
  readonly catchesUpOnSearch = true;
  private readonly copies = new Map<string, Copy>();
  private readonly catchingUp = new Map<string, Promise<void>>();

  constructor(private readonly db: Db) {}

  async definitionChanged(definition: IndexDefinition) {
    await this.current(definition);
  }

  async documentsWritten(definition: IndexDefinition, _documents: IndexedDocument[]) {
    // The documents are read back from PostgreSQL with any other writer's, in version order.
    await this.current(definition);
  }

  async documentsDeleted(definition: IndexDefinition, _ids: string[]) {
    // Deletions are read back from PostgreSQL like writes, so every process applies them in version order.
    await this.current(definition);
  }

  async documentsCleared(definition: IndexDefinition) {
    await this.current(definition);
  }

  async indexDeleted(definition: Pick<IndexDefinition, 'id'>) {
    this.copies.delete(definition.id);
  }

  async search(definition: IndexDefinition, query: EngineQuery): Promise<EngineResult> {
    return (await this.current(definition)).index.search(query);
  }

  async close() {
    await Promise.allSettled(this.catchingUp.values());
    this.copies.clear();
  }

  /** Documents held in memory for an index, for tests and the benchmark. */
  documentCount(indexId: string) {
    return this.copies.get(indexId)?.index.size ?? 0;
  }

  /** The copy of the index at `definition.version` or later; one catch-up at a time per index. */
  private async current(definition: IndexDefinition): Promise<Copy> {
    for (;;) {
      const copy = this.copies.get(definition.id);
      if (copy && copy.version >= definition.version) return copy;
      const running = this.catchingUp.get(definition.id);
      if (running) {
        await running;
        continue;
      }
      const catchUp = this.catchUp(definition.id).finally(() => this.catchingUp.delete(definition.id));
      this.catchingUp.set(definition.id, catchUp);
      await catchUp;
      const after = this.copies.get(definition.id);
      // The index was deleted meanwhile, or its stored version is behind the caller's (cannot happen): search what
      // there is.
      if (!after)
        return {
          version: definition.version,
          rebuildVersion: definition.rebuildVersion,
          shape: '',
          index: new MemoryIndex(definition),
        };
      if (after.version < definition.version) return after;
    }
  }

  private async catchUp(indexId: string) {
    const copy = this.copies.get(indexId);
    const snapshot = await this.db.$transaction(
      async (tx) => {
        const row = await repository.findIndexById(tx, indexId);
        if (!row) return null;
        const whole =
          !copy || copy.rebuildVersion !== row.rebuildVersion || copy.shape !== shapeOf(resolveDefinition(row));
        const documents: repository.StoredDocument[] = [];
        for (let afterId: string | undefined; ;) {
          const chunk = await repository.readDocuments(tx, indexId, {
            afterId,
            sinceVersion: whole ? undefined : copy.version,
            limit: READ_CHUNK,
          });
          documents.push(...chunk);
          if (chunk.length < READ_CHUNK) break;
          afterId = chunk.at(-1)!.id;
        }
        const deleted = whole ? [] : await repository.readDeletions(tx, indexId, copy.version);
        return { row, whole, documents, deleted };
      },
      { isolationLevel: 'RepeatableRead', timeout: SNAPSHOT_TIMEOUT_MS, maxWait: SNAPSHOT_TIMEOUT_MS },
    );
    if (!snapshot) {
      this.copies.delete(indexId);
      return;
    }
    const { row, whole, documents, deleted } = snapshot;
    const mapped = documents
      .map((stored) => mapStoredDocument(stored.data, row, row.seenFieldTypes))
      .filter((document): document is IndexedDocument => document !== null);
    // From here to the end nothing awaits: searches see the copy before or after the whole change.
    if (whole) {
      const definition = resolveDefinition(row);
      const index = new MemoryIndex(definition);
      index.upsert(mapped);
      this.copies.set(indexId, {
        version: row.version,
        rebuildVersion: row.rebuildVersion,
        shape: shapeOf(definition),
        index,
      });
    } else {
      // Deletions first: a document deleted and then written again since the copy's version is in both.
      copy!.index.remove(deleted);
      copy!.index.upsert(mapped);
      copy!.version = row.version;
    }
  }
}
