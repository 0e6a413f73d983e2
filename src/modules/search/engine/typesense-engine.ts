/**
 * The Typesense adapter: one collection per index version behind an alias, so a rebuild (new
 * definition, new field types, cleared documents) fills a new collection while searches still use
 * the old one. Documents are read from PostgreSQL, which stays the source of truth.
 */
import { Client, Errors } from 'typesense';
import type { CollectionCreateSchema } from 'typesense/lib/Typesense/Collections';
import type { ImportResponse } from 'typesense/lib/Typesense/Documents';
import type { Db } from '../../../kernel/db';
import { mapStoredDocument } from '../definition';
import * as repository from '../search.repository';
import type { EngineQuery, EngineResult, IndexDefinition, IndexedDocument, SearchEngine } from './engine';
import {
  aliasName,
  builtByEarlierRelease,
  collectionFits,
  collectionName,
  collectionSchema,
  deletionsOf,
  fromSearchResults,
  legacyStopwordSetName,
  migratedSynonymSetName,
  searchResultOf,
  singleStopWords,
  stopwordSetName,
  synonymSetName,
  toSearches,
  toTypesenseDocuments,
  toTypesenseSynonyms,
  type TypesenseMultiSearchEntry,
} from './typesense-mapping';
import { protocolFor, type TypesenseProtocol } from './typesense-version';

const IMPORT_CHUNK = 1_000;

export interface TypesenseOptions {
  url: string;
  apiKey: string;
  /** Pause between retries of a request that failed with a 5xx or a network error. */
  retryIntervalSeconds?: number;
}

const isNotFound = (error: unknown) => (error as { httpStatus?: number })?.httpStatus === 404;

/** The `typesense` client for a server URL such as `https://search.example.com:8108/prefix`. */
export function typesenseClient(options: TypesenseOptions) {
  const url = new URL(options.url);
  return new Client({
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
    retryIntervalSeconds: options.retryIntervalSeconds ?? 0.1,
    logLevel: 'silent',
  });
}

/** Reads the server's version (`GET /debug`) and the protocol to speak with it. */
export async function detectProtocol(client: Client): Promise<TypesenseProtocol> {
  const debug = (await client.debug.retrieve()) as { version?: unknown };
  return protocolFor(String(debug.version ?? 'unknown'));
}

export class TypesenseEngine implements SearchEngine {
  readonly name = 'typesense' as const;
  readonly catchesUpOnSearch = false;
  private readonly client: Client;
  private protocol: Promise<TypesenseProtocol> | undefined;
  /** Per index id, the collection this process last saw behind the alias: searches need no alias lookup. */
  private readonly searched = new Map<string, string>();

  constructor(
    private readonly db: Db,
    options: TypesenseOptions,
  ) {
    this.client = typesenseClient(options);
  }

  /** Reads the server version once; rejects with UnsupportedTypesenseVersion for a server outside the range. */
  async start() {
    await this.serverProtocol();
  }

  async definitionChanged(definition: IndexDefinition) {
    await this.rebuild(definition);
  }

  async documentsWritten(definition: IndexDefinition, documents: IndexedDocument[]) {
    const current = await this.currentCollection(definition);
    // New fields or field types change the schema: the collection is rebuilt, with these documents.
    if (!current || !collectionFits(current, definition)) {
      await this.rebuild(definition, current);
      return;
    }
    await this.importDocuments(definition, current, documents);
  }

  async documentsDeleted(definition: IndexDefinition, ids: string[]) {
    const current = await this.currentCollection(definition);
    // Without a collection there is nothing to delete from: the next rebuild reads what PostgreSQL holds.
    if (!current) return;
    const { filters, oneByOne } = deletionsOf(ids);
    for (const filter of filters) {
      await this.client.collections(current).documents().delete({ filter_by: filter, batch_size: IMPORT_CHUNK });
    }
    for (const id of oneByOne) {
      await this.ignoreMissing(() => this.client.collections(current).documents(id).delete());
    }
  }

  async documentsCleared(definition: IndexDefinition) {
    await this.rebuild(definition);
  }

  async indexDeleted(definition: IndexDefinition) {
    const current = await this.currentCollection(definition);
    this.searched.delete(definition.id);
    await this.ignoreMissing(() => this.client.aliases(aliasName(definition)).delete());
    if (current) await this.dropCollection(current);
  }

  async search(definition: IndexDefinition, query: EngineQuery): Promise<EngineResult> {
    const searched = this.searched.get(definition.id) ?? (await this.collectionToSearch(definition));
    try {
      return await this.searchIn(searched, definition, query);
    } catch (error) {
      const status = (error as { httpStatus?: number }).httpStatus;
      if (status !== 404 && status !== 400) throw error;
      // The collection is gone or lacks what the search names: another process may have moved the alias.
      const current = await this.currentCollection(definition);
      if (current !== null && current !== searched) return this.searchIn(current, definition, query);
      // Nothing else builds a missing collection or replaces one of an earlier release; a collection
      // awaiting a pending change is left to the delivery of that change.
      if (current !== null && !builtByEarlierRelease(current)) throw error;
      return this.searchIn(await this.rebuild(definition, current), definition, query);
    }
  }

  async close() {}

  private serverProtocol(): Promise<TypesenseProtocol> {
    this.protocol ??= detectProtocol(this.client).catch((error: unknown) => {
      // An unreachable server is asked again next time; an unsupported version stays refused.
      if (!(error instanceof Error && error.name === 'UnsupportedTypesenseVersion')) this.protocol = undefined;
      throw error;
    });
    return this.protocol;
  }

  /** The alias's collection; without one (never delivered, or the engine changed), it is built first. */
  private async collectionToSearch(definition: IndexDefinition) {
    return (await this.currentCollection(definition)) ?? (await this.rebuild(definition, null));
  }

  /**
   * Searches the collection itself, not the alias, so that it and its stopwords set belong together.
   * Searches go out as `multi_search` POSTs: a GET's query string is limited to 4 000 characters.
   */
  private async searchIn(collection: string, definition: IndexDefinition, query: EngineQuery) {
    const protocol = await this.serverProtocol();
    const { searches, facetSearchFields } = toSearches(definition, collection, query, protocol);
    const response = (await this.client.multiSearch.perform({ searches } as never)) as unknown as {
      results: TypesenseMultiSearchEntry[];
    };
    return fromSearchResults(
      definition,
      query,
      facetSearchFields,
      searches.map((_, i) => searchResultOf(response.results[i])),
    );
  }

  /** The collection the alias points at, remembered for searches. */
  private async currentCollection(definition: IndexDefinition): Promise<string | null> {
    try {
      const collection = (await this.client.aliases(aliasName(definition)).retrieve()).collection_name;
      this.searched.set(definition.id, collection);
      return collection;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      this.searched.delete(definition.id);
      return null;
    }
  }

  /**
   * Fills a new collection (its synonym and stopwords sets first) from PostgreSQL, then points the
   * alias at it and drops the old one with its sets. `current`: the alias's collection, when just read.
   */
  private async rebuild(definition: IndexDefinition, current?: string | null): Promise<string> {
    const protocol = await this.serverProtocol();
    const previous = current === undefined ? await this.currentCollection(definition) : current;
    const name = collectionName(definition);
    if (previous === name) return name;
    const synonyms = toTypesenseSynonyms(definition);
    if (protocol.synonyms === 'synonym-sets' && synonyms.length > 0) {
      await this.client.synonymSets(synonymSetName(name)).upsert({ items: synonyms });
    }
    if (singleStopWords(definition).length > 0) {
      await this.client.stopwords().upsert(stopwordSetName(name), { stopwords: singleStopWords(definition) });
    }
    await this.createCollection(collectionSchema(definition, name, protocol));
    try {
      await this.fill(definition, name, protocol);
    } catch (error) {
      // Searches stay on the previous collection; the half-built one goes. Should that fail too, the
      // original failure is the one to report, and a rebuild of the same version replaces it (409).
      await this.dropCollection(name).catch(() => undefined);
      throw error;
    }
    await this.client.aliases().upsert(aliasName(definition), { collection_name: name });
    this.searched.set(definition.id, name);
    if (previous) await this.dropCollection(previous);
    return name;
  }

  /** Synonyms of the collection (before v30), then every stored document. */
  private async fill(definition: IndexDefinition, name: string, protocol: TypesenseProtocol) {
    if (protocol.synonyms === 'collection-synonyms') {
      // Through the plain API call: the client's Synonyms class warns of its v30 deprecation on use.
      for (const { id, ...synonym } of toTypesenseSynonyms(definition)) {
        await this.client.apiCall.put(`/collections/${name}/synonyms/${encodeURIComponent(id)}`, synonym);
      }
    }
    const row = await repository.findIndexById(this.db, definition.id);
    if (!row) return;
    for (let afterId: string | undefined; ;) {
      const chunk = await repository.readDocuments(this.db, definition.id, { afterId, limit: IMPORT_CHUNK });
      const documents = chunk
        .map((stored) => mapStoredDocument(stored.data, row, row.seenFieldTypes))
        .filter((d): d is IndexedDocument => d !== null);
      await this.importDocuments(definition, name, documents);
      if (chunk.length < IMPORT_CHUNK) break;
      afterId = chunk.at(-1)!.id;
    }
  }

  private async createCollection(schema: CollectionCreateSchema) {
    try {
      await this.client.collections().create(schema);
    } catch (error) {
      // Left over from a rebuild that failed half-way: its documents may be stale.
      if (!(error instanceof Errors.ObjectAlreadyExists)) throw error;
      await this.client.collections(schema.name).delete();
      await this.client.collections().create(schema);
    }
  }

  /** Deletes a collection and every set that belongs to it, including the set v30 migrated its synonyms to. */
  private async dropCollection(name: string) {
    const protocol = await this.serverProtocol();
    await this.ignoreMissing(() => this.client.collections(name).delete());
    if (protocol.synonyms === 'synonym-sets') {
      await this.ignoreMissing(() => this.client.synonymSets(synonymSetName(name)).delete());
      await this.ignoreMissing(() => this.client.synonymSets(migratedSynonymSetName(name)).delete());
    }
    await this.ignoreMissing(() => this.client.stopwords(stopwordSetName(name)).delete());
    const legacy = legacyStopwordSetName(name);
    if (legacy) await this.ignoreMissing(() => this.client.stopwords(legacy).delete());
  }

  private async importDocuments(definition: IndexDefinition, collection: string, documents: IndexedDocument[]) {
    if (documents.length === 0) return;
    try {
      await this.client
        .collections(collection)
        .documents()
        .import(toTypesenseDocuments(definition, documents) as never[], { action: 'upsert' });
    } catch (error) {
      if (!(error instanceof Errors.ImportError)) throw error;
      const failed = error.importResults.filter((result: ImportResponse) => !result.success);
      throw new Error(
        `Typesense refused ${failed.length} of ${documents.length} documents; the first: ${failed[0]?.error}`,
        { cause: error },
      );
    }
  }

  private async ignoreMissing(action: () => Promise<unknown>) {
    try {
      await action();
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
