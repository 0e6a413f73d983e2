/**
 * The Typesense adapter: one collection per index version behind an alias, so a rebuild (new
 * definition, cleared documents) fills a new collection while searches still use the old one.
 * Documents are read from PostgreSQL, which stays the source of truth.
 */
import { Client } from 'typesense';
import type { Db } from '../../../kernel/db';
import { mapStoredDocument } from '../definition';
import * as repository from '../search.repository';
import type { EngineQuery, EngineResult, IndexDefinition, IndexedDocument, SearchEngine } from './engine';
import {
  aliasName,
  collectionName,
  collectionSchema,
  fromSearchResponse,
  stopwordSetName,
  toSearchParams,
  toTypesenseDocument,
  toTypesenseSynonyms,
  type TypesenseSearchResponse,
} from './typesense-mapping';

const IMPORT_CHUNK = 1_000;

export interface TypesenseOptions {
  url: string;
  apiKey: string;
}

const isNotFound = (error: unknown) => (error as { httpStatus?: number })?.httpStatus === 404;

export class TypesenseEngine implements SearchEngine {
  readonly name = 'typesense' as const;
  readonly catchesUpOnSearch = false;
  private readonly client: Client;

  constructor(
    private readonly db: Db,
    options: TypesenseOptions,
  ) {
    const url = new URL(options.url);
    this.client = new Client({
      nodes: [
        {
          host: url.hostname,
          port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
          protocol: url.protocol.replace(':', ''),
          path: url.pathname.replace(/\/$/, ''),
        },
      ],
      apiKey: options.apiKey,
      connectionTimeoutSeconds: 10,
      numRetries: 2,
      logLevel: 'silent',
    });
  }

  async definitionChanged(definition: IndexDefinition) {
    await this.rebuild(definition);
  }

  async documentsWritten(definition: IndexDefinition, documents: IndexedDocument[]) {
    if (!(await this.currentCollection(definition))) return this.rebuild(definition);
    await this.importDocuments(aliasName(definition), documents);
  }

  async documentsCleared(definition: IndexDefinition) {
    await this.rebuild(definition);
  }

  async indexDeleted(definition: IndexDefinition) {
    const current = await this.currentCollection(definition);
    await this.ignoreMissing(() => this.client.aliases(aliasName(definition)).delete());
    if (current) await this.ignoreMissing(() => this.client.collections(current).delete());
    await this.ignoreMissing(() => this.client.stopwords(stopwordSetName(definition)).delete());
  }

  async search(definition: IndexDefinition, query: EngineQuery): Promise<EngineResult> {
    if (!(await this.currentCollection(definition))) await this.rebuild(definition);
    const response = await this.client
      .collections(aliasName(definition))
      .documents()
      .search(toSearchParams(definition, query) as never);
    return fromSearchResponse(definition, query, response as unknown as TypesenseSearchResponse);
  }

  async close() {}

  private async currentCollection(definition: IndexDefinition): Promise<string | null> {
    try {
      return (await this.client.aliases(aliasName(definition)).retrieve()).collection_name;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  /** Fills a new collection from PostgreSQL, then points the alias at it and drops the old one. */
  private async rebuild(definition: IndexDefinition) {
    const previous = await this.currentCollection(definition);
    const name = collectionName(definition);
    if (previous === name) return;
    await this.ignoreMissing(() => this.client.collections(name).delete());
    await this.client.collections().create(collectionSchema(definition));
    for (const synonym of toTypesenseSynonyms(definition)) {
      await this.client.collections(name).synonyms().upsert(synonym.id, synonym);
    }
    if (definition.stopWords.length > 0) {
      await this.client.stopwords().upsert(stopwordSetName(definition), { stopwords: definition.stopWords });
    }
    const row = await repository.findIndexById(this.db, definition.id);
    if (row) {
      for (let afterId: string | undefined; ;) {
        const chunk = await repository.readDocuments(this.db, definition.id, { afterId, limit: IMPORT_CHUNK });
        const documents = chunk
          .map((stored) => mapStoredDocument(stored.data, row, row.seenFieldTypes))
          .filter((d): d is IndexedDocument => d !== null);
        await this.importDocuments(name, documents);
        if (chunk.length < IMPORT_CHUNK) break;
        afterId = chunk.at(-1)!.id;
      }
    }
    await this.client.aliases().upsert(aliasName(definition), { collection_name: name });
    if (previous) await this.ignoreMissing(() => this.client.collections(previous).delete());
  }

  private async importDocuments(collection: string, documents: IndexedDocument[]) {
    if (documents.length === 0) return;
    const results = await this.client
      .collections(collection)
      .documents()
      .import(documents.map(toTypesenseDocument) as never[], { action: 'upsert' });
    const failed = (results as { success: boolean; error?: string }[]).find((result) => !result.success);
    if (failed) throw new Error(`Typesense refused a document: ${failed.error}`);
  }

  private async ignoreMissing(action: () => Promise<unknown>) {
    try {
      await action();
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
