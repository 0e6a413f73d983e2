/**
 * The embedded engine: an in-memory copy of each index in this process, rebuilt from PostgreSQL
 * (which holds the documents durably) the first time the index is searched, and caught up before
 * each search whose definition is newer than the copy. Catching up reads one consistent snapshot
 * (REPEATABLE READ), so a copy never holds part of a batch; every process keeps its own copies in
 * step this way, whoever wrote. The process that wrote a change applies it to its copy as written
 * when nothing else came between.
 */
import type { Db } from '../../../kernel/db';
import { resolveDefinition, storedDocumentMapper } from '../definition';
import { readIndexSnapshot } from '../index-snapshot';
import type { EngineQuery, EngineResult, IndexDefinition, IndexedDocument, SearchEngine } from './engine';
import { MemoryIndex } from './memory-index';

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

  /**
   * The process that wrote a change tells its engine with every document of it (InProcessDelivery).
   * When the copy is at the version just before and of the same shape, this change is the only one
   * between the two, so its documents are applied as written instead of read back; otherwise they
   * are read back from PostgreSQL with any other writer's, in version order.
   */
  async documentsWritten(definition: IndexDefinition, documents: IndexedDocument[]) {
    const copy = this.copies.get(definition.id);
    if (
      copy &&
      !this.catchingUp.has(definition.id) &&
      copy.version === definition.version - 1 &&
      copy.rebuildVersion === definition.rebuildVersion &&
      copy.shape === shapeOf(definition)
    ) {
      copy.index.upsert(documents);
      copy.version = definition.version;
      return;
    }
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
    // Reads in one snapshot, so a copy never holds part of a batch; returns how to apply what it read.
    const apply = await readIndexSnapshot(this.db, indexId, async (snapshot): Promise<() => void> => {
      const row = snapshot.index;
      const definition = resolveDefinition(row);
      const shape = shapeOf(definition);
      const map = storedDocumentMapper(row, row.seenFieldTypes);
      const mapped = (stored: unknown[]) => {
        const indexed: IndexedDocument[] = [];
        for (const data of stored) {
          const document = map(data);
          if (document) indexed.push(document);
        }
        return indexed;
      };
      if (!copy || copy.rebuildVersion !== row.rebuildVersion || copy.shape !== shape) {
        // A new copy, indexed chunk by chunk as the documents arrive; nothing searches it before it is whole.
        const index = new MemoryIndex(definition);
        await snapshot.allDocuments((chunk) => index.upsert(mapped(chunk)));
        return () =>
          this.copies.set(indexId, { version: row.version, rebuildVersion: row.rebuildVersion, shape, index });
      }
      const deleted = await snapshot.deletionsSince(copy.version);
      const written = mapped((await snapshot.documentsSince(copy.version)).map((stored) => stored.data));
      return () => {
        // Deletions first: a document deleted and then written again since the copy's version is in both.
        copy.index.remove(deleted);
        copy.index.upsert(written);
        copy.version = row.version;
      };
    });
    // Nothing awaits from here to the end: searches see the copy before or after the whole change.
    if (apply) apply();
    else this.copies.delete(indexId);
  }
}
