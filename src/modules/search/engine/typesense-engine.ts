/**
 * The Typesense adapter: one collection per index version behind an alias, so a rebuild (new
 * definition, new field types, cleared documents) fills a new collection while searches still use
 * the old one. Documents are read from PostgreSQL, which stays the source of truth.
 */
import { Client, Errors } from 'typesense';
import type { CollectionCreateSchema } from 'typesense/lib/Typesense/Collections';
import type { ImportResponse } from 'typesense/lib/Typesense/Documents';
import type { Db, DbOrTx } from '../../../kernel/db';
import { mapStoredDocument } from '../definition';
import * as repository from '../search.repository';
import type { EngineQuery, EngineResult, IndexDefinition, IndexedDocument, SearchEngine } from './engine';
import {
  aliasName,
  builtByEarlierRelease,
  collectionFits,
  collectionName,
  collectionSchema,
  legacyStopwordSetName,
  migratedSynonymSetName,
  stopwordSetName,
  synonymSetName,
  toTypesenseDocuments,
  toTypesenseSynonyms,
} from './typesense-mapping';
import { deletionsOf } from './typesense-filters';
import { singleStopWords, toSearches } from './typesense-query';
import { fromSearchResults, searchResultOf, type TypesenseMultiSearchEntry } from './typesense-results';
import { protocolFor, type TypesenseProtocol } from './typesense-version';

const IMPORT_CHUNK = 1_000;

export interface TypesenseOptions {
  /** The cluster's nodes: one URL, or several separated by commas (`https://ts-1:8108,https://ts-2:8108`). */
  url: string;
  apiKey: string;
  /** A node asked first while it answers (one in the same zone as this process); the others when it does not. */
  nearestUrl?: string;
  /** How long one request to one node may take before it counts as failed. */
  timeoutSeconds?: number;
  /**
   * Further tries of a request that failed with a 5xx (503 "Not Ready or Lagging" included), a
   * timeout or a network error, each on the next node not marked failed. Default: one per node,
   * at least 2.
   */
  retries?: number;
  /** Pause between those tries. */
  retryIntervalSeconds?: number;
  /** How long a node that failed is left out before requests try it again. */
  healthcheckIntervalSeconds?: number;
}

/** How long a readiness probe waits for each node at most. */
const PROBE_TIMEOUT_SECONDS = 2;

const isNotFound = (error: unknown) => (error as { httpStatus?: number })?.httpStatus === 404;

/** A node of the `typesense` client for a server URL such as `https://search.example.com:8108/prefix`. */
function nodeOf(serverUrl: string) {
  const url = new URL(serverUrl);
  return {
    host: url.hostname,
    port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    protocol: url.protocol.replace(':', ''),
    path: url.pathname.replace(/\/$/, ''),
  };
}

/** The server URLs of a `TYPESENSE_URL`: one, or several separated by commas. */
export const typesenseUrls = (url: string) =>
  url
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');

/**
 * The `typesense` client for the cluster's nodes. It sends each request to the next node in turn
 * (from a random first one, so processes spread over the nodes), and tries a request that failed
 * with a 5xx, a timeout or a network error again on the next node, leaving the failed node out
 * for `healthcheckIntervalSeconds`.
 */
export function typesenseClient(options: TypesenseOptions) {
  const nodes = typesenseUrls(options.url).map(nodeOf);
  const nearestNode = options.nearestUrl === undefined ? undefined : nodeOf(options.nearestUrl);
  return new Client({
    nodes,
    nearestNode,
    apiKey: options.apiKey,
    connectionTimeoutSeconds: options.timeoutSeconds ?? 10,
    numRetries: options.retries ?? Math.max(2, nodes.length + (nearestNode ? 1 : 0)),
    retryIntervalSeconds: options.retryIntervalSeconds ?? 0.1,
    healthcheckIntervalSeconds: options.healthcheckIntervalSeconds ?? 60,
    logLevel: 'silent',
  });
}

/** Reads the server's version (`GET /debug`) and the protocol to speak with it. */
export async function detectProtocol(client: Client): Promise<TypesenseProtocol> {
  const debug = (await client.debug.retrieve()) as { version?: unknown };
  return protocolFor(String(debug.version ?? 'unknown'));
}

/** The alias may or may not have moved to a new collection: its request failed and it could not be read back. */
class AliasMoveUnknown extends Error {
  constructor(cause: unknown) {
    super('moving the alias failed, and where it points could not be read', { cause });
  }
}

export class TypesenseEngine implements SearchEngine {
  readonly name = 'typesense' as const;
  readonly catchesUpOnSearch = false;
  private readonly client: Client;
  /** One client per node, without retries: a readiness probe asks every node once. */
  private readonly probes: Client[];
  private protocol: Promise<TypesenseProtocol> | undefined;
  /** Per index id, the collection this process last saw behind the alias: searches need no alias lookup. */
  private readonly searched = new Map<string, string>();

  constructor(
    private readonly db: Db,
    options: TypesenseOptions,
  ) {
    this.client = typesenseClient(options);
    const timeoutSeconds = Math.min(options.timeoutSeconds ?? PROBE_TIMEOUT_SECONDS, PROBE_TIMEOUT_SECONDS);
    this.probes = typesenseUrls(options.url).map((url) =>
      typesenseClient({ url, apiKey: options.apiKey, timeoutSeconds, retries: 0 }),
    );
  }

  /** Reads the server version once; rejects with UnsupportedTypesenseVersion for a server outside the range. */
  async start() {
    await this.serverProtocol();
  }

  /** Ready while at least one node answers `GET /health` with `ok` (a lagging node answers 503): requests go there. */
  async probe() {
    const answers = await Promise.allSettled(this.probes.map((client) => client.health.retrieve()));
    if (answers.some((answer) => answer.status === 'fulfilled' && answer.value.ok === true)) return;
    const reasons = answers.map((answer) =>
      answer.status === 'rejected' ? String((answer.reason as Error)?.message ?? answer.reason) : 'not ok',
    );
    throw new Error(`no Typesense node is ready: ${reasons.join('; ')}`);
  }

  async definitionChanged(definition: IndexDefinition, reader: DbOrTx = this.db) {
    await this.rebuild(definition, undefined, reader);
  }

  async documentsWritten(definition: IndexDefinition, documents: IndexedDocument[], reader: DbOrTx = this.db) {
    const current = await this.currentCollection(definition);
    // New fields or field types change the schema: the collection is rebuilt, with these documents.
    if (!current || !collectionFits(current, definition)) {
      await this.rebuild(definition, current, reader);
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

  async indexDeleted(definition: Pick<IndexDefinition, 'id'>) {
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
  private async currentCollection(definition: Pick<IndexDefinition, 'id'>): Promise<string | null> {
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
   * alias at it and drops the old one with its sets. A failure at any step before the alias moved
   * leaves the alias and the old collection as they were and drops what was made of the new one.
   * `current`: the alias's collection, when just read; `reader`: where the documents are read.
   */
  private async rebuild(definition: IndexDefinition, current?: string | null, reader: DbOrTx = this.db) {
    const protocol = await this.serverProtocol();
    const previous = current === undefined ? await this.currentCollection(definition) : current;
    const name = collectionName(definition);
    if (previous === name) return name;
    try {
      const synonyms = toTypesenseSynonyms(definition);
      if (protocol.synonyms === 'synonym-sets' && synonyms.length > 0) {
        await this.client.synonymSets(synonymSetName(name)).upsert({ items: synonyms });
      }
      if (singleStopWords(definition).length > 0) {
        await this.client.stopwords().upsert(stopwordSetName(name), { stopwords: singleStopWords(definition) });
      }
      await this.createCollection(collectionSchema(definition, name, protocol));
      await this.fill(definition, name, protocol, reader);
      await this.moveAlias(definition, name);
    } catch (error) {
      // Searches stay on the previous collection; the half-built one goes. Should that fail too, the
      // original failure is the one to report, and a rebuild of the same version replaces it (409).
      if (error instanceof AliasMoveUnknown) throw error.cause;
      await this.dropCollection(name).catch(() => undefined);
      throw error;
    }
    this.searched.set(definition.id, name);
    if (previous) await this.dropCollection(previous);
    return name;
  }

  /**
   * Points the alias at a collection. When the request fails, the alias is read back: a request
   * that timed out may have moved it all the same, and then the new collection must stay. When
   * not even that can be read, AliasMoveUnknown: the collection is kept, complete, for the retry.
   */
  private async moveAlias(definition: IndexDefinition, collection: string) {
    try {
      await this.client.aliases().upsert(aliasName(definition), { collection_name: collection });
    } catch (error) {
      let now: string | null;
      try {
        now = await this.currentCollection(definition);
      } catch {
        throw new AliasMoveUnknown(error);
      }
      if (now !== collection) throw error;
    }
  }

  /** Synonyms of the collection (before v30), then every stored document. */
  private async fill(definition: IndexDefinition, name: string, protocol: TypesenseProtocol, reader: DbOrTx) {
    if (protocol.synonyms === 'collection-synonyms') {
      // Through the plain API call: the client's Synonyms class warns of its v30 deprecation on use.
      for (const { id, ...synonym } of toTypesenseSynonyms(definition)) {
        await this.client.apiCall.put(`/collections/${name}/synonyms/${encodeURIComponent(id)}`, synonym);
      }
    }
    const row = await repository.findIndexById(reader, definition.id);
    if (!row) return;
    for (let afterId: string | undefined; ;) {
      const chunk = await repository.readDocuments(reader, definition.id, { afterId, limit: IMPORT_CHUNK });
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
