/**
 * A stand-in for a Typesense server on 127.0.0.1: the subset of the v30 and v29 HTTP API that the
 * adapter uses (endpoints, status codes, error bodies and response shapes as in Typesense's API
 * specification, typesense/typesense-api-spec openapi.yml, and its server source). It keeps
 * collections, aliases, synonym and stopwords sets, checks imported documents against the
 * collection's field types, and records every request so tests can assert the exact protocol.
 * What it checks as Typesense does is in typesense-stand-in-checks.ts. Searches are answered by
 * the test (`answerSearch`): the stand-in does not rank.
 *
 * It can also be a cluster: several nodes (ports) sharing one state, as the nodes of a Typesense
 * cluster share theirs. Tests make a node fail or never answer (`fail`, `failNext`, `stall`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  refusal,
  typeError,
  parseSortBy,
  type Field,
  type SearchAnswer,
  type SortPart,
} from './typesense-stand-in-checks';

export { geoFilterRefusal, parseSortBy, type SearchAnswer, type SortPart } from './typesense-stand-in-checks';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Parsed JSON, JSON lines as an array for imports, or undefined without a body. */
  body: unknown;
}

interface Collection {
  schema: { name: string; fields: Field[]; synonym_sets?: string[] } & Record<string, unknown>;
  documents: Map<string, Record<string, unknown>>;
  synonyms: Map<string, unknown>;
  createdAt: number;
}

/**
 * An injected answer: the next `times` requests matching `method` (`*`: any) and `path` (on `node`,
 * or on any node) get this status and body, after the first `after` of them were answered as usual.
 * `stall`: they get no answer at all.
 */
interface Failure {
  method: string;
  path: RegExp;
  status: number;
  body: unknown;
  times: number;
  after: number;
  node?: number;
  stall?: boolean;
}

export interface FailureOptions {
  /** Only requests to this node (0-based, in the order of `urls`). */
  node?: number;
  /** Let this many matching requests through first. */
  after?: number;
}

/** What a Typesense node answers while it lags behind the cluster (typesense/typesense#316). */
export const NOT_READY = { message: 'Not Ready or Lagging' };

/** The API key the stand-in accepts. */
export const STAND_IN_API_KEY = 'stand-in-key';

/** Answers with JSON, or with the text as it is (the JSON lines of an import). */
const json = (response: ServerResponse, status: number, body: unknown) => {
  const text = typeof body === 'string';
  response.writeHead(status, { 'content-type': `${text ? 'text/plain' : 'application/json'}; charset=utf-8` });
  response.end(text ? body : JSON.stringify(body));
};
const notFound = (response: ServerResponse, message = 'Not Found') => json(response, 404, { message });

export class TypesenseStandIn {
  readonly requests: RecordedRequest[] = [];
  /** The node that received each of `requests`, by the same index. */
  readonly requestNodes: number[] = [];
  readonly collections = new Map<string, Collection>();
  readonly aliases = new Map<string, string>();
  readonly synonymSets = new Map<string, { items: unknown[] }>();
  readonly stopwordSets = new Map<string, { stopwords: string[] }>();
  /** The `_eval` parts of the searches answered, as parsed, in order. */
  readonly evalSorts: Extract<SortPart, { eval: unknown }>[] = [];
  /** Answers each search of a `multi_search` whose collection exists; the default finds nothing. */
  answerSearch: (search: Record<string, unknown>, collection: Collection) => SearchAnswer = () => ({
    found: 0,
    hits: [],
    facet_counts: [],
    out_of: 0,
    page: 1,
    search_time_ms: 0,
    request_params: {},
  });
  private readonly failures: Failure[] = [];
  private readonly servers: Server[] = [];
  private clock = 1_700_000_000;

  private constructor(readonly version: string) {}

  /** Starts a stand-in that reports this version (`"30.0"`, `"29.0"`) on random ports, one per node. */
  static async start(version: string, options: { nodes?: number } = {}): Promise<TypesenseStandIn> {
    const standIn = new TypesenseStandIn(version);
    for (let node = 0; node < (options.nodes ?? 1); node++) {
      const server = createServer((request, response) => void standIn.handle(node, request, response));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      standIn.servers.push(server);
    }
    return standIn;
  }

  /** The first node's URL. */
  get url() {
    return this.urls[0]!;
  }

  /** Every node's URL. */
  get urls() {
    return this.servers.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  /** The nodes as TYPESENSE_URL lists them: separated by commas. */
  get clusterUrl() {
    return this.urls.join(',');
  }

  get major() {
    return Number(this.version.split('.')[0]);
  }

  /** The next `times` requests of this method (`*`: any) to a path matching `path` fail with `status` and `body`. */
  fail(method: string, path: RegExp, status: number, body: unknown, times = 1, options: FailureOptions = {}) {
    this.failures.push({ method, path, status, body, times, after: options.after ?? 0, node: options.node });
  }

  /** The next `times` requests, whatever they ask, answer 503 "Not Ready or Lagging". */
  failNext(times: number, options: FailureOptions = {}) {
    this.fail('*', /.*/, 503, NOT_READY, times, options);
  }

  /** The next `times` matching requests get no answer, as from a node that hangs. */
  stall(method: string, path: RegExp, times = Infinity, options: FailureOptions = {}) {
    this.failures.push({
      method,
      path,
      status: 0,
      body: undefined,
      times,
      after: options.after ?? 0,
      node: options.node,
      stall: true,
    });
  }

  /** Every injected failure is dropped: the cluster answers again. */
  recover() {
    this.failures.length = 0;
  }

  /** Recorded requests from index `from` on, as `<node> METHOD /path` lines. */
  nodeLines(from = 0) {
    return this.lines(from).map((line, i) => `${this.requestNodes[from + i]} ${line}`);
  }

  /** Recorded requests from index `from` on, as `METHOD /path` lines (query strings left out). */
  lines(from = 0) {
    return this.requests.slice(from).map((request) => `${request.method} ${request.path}`);
  }

  async close() {
    for (const server of this.servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  private async handle(node: number, request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url!, 'http://stand-in');
    const text = await new Promise<string>((resolve) => {
      let data = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (data += chunk));
      request.on('end', () => resolve(data));
    });
    const path = decodeURIComponent(url.pathname);
    const isImport = path.endsWith('/documents/import');
    const body =
      text === '' ? undefined : isImport ? text.split('\n').map((line) => JSON.parse(line)) : JSON.parse(text);
    const method = request.method!;
    this.requests.push({ method, path, query: Object.fromEntries(url.searchParams), body });
    this.requestNodes.push(node);

    if (request.headers['x-typesense-api-key'] !== STAND_IN_API_KEY) {
      return json(response, 401, { message: 'Forbidden - a valid `x-typesense-api-key` header must be sent.' });
    }
    const failure = this.failures.find(
      (f) =>
        (f.method === '*' || f.method === method) &&
        f.path.test(path) &&
        (f.node === undefined || f.node === node) &&
        f.times > 0,
    );
    if (failure && failure.after > 0) failure.after -= 1;
    else if (failure) {
      failure.times -= 1;
      // A node that hangs: the socket stays open, unanswered, until the client gives up or the stand-in closes.
      if (failure.stall) return;
      return json(response, failure.status, failure.body);
    }
    this.route(method, path.split('/').slice(1), body, response, Object.fromEntries(url.searchParams));
  }

  private route(method: string, parts: string[], body: any, response: ServerResponse, query: Record<string, string>) {
    const [resource, name, sub, subName] = parts;
    if (method === 'POST' && resource === 'collections' && sub === 'documents' && subName === 'import') {
      return this.importDocuments(name!, body, response);
    }
    const route = `${method} /${resource}${name !== undefined ? '/:name' : ''}${sub ? `/${sub}` : ''}${
      subName ? '/:sub' : ''
    }`;
    switch (route) {
      case 'GET /debug':
        return json(response, 200, { state: 1, version: this.version });
      case 'GET /health':
        return json(response, 200, { ok: true });
      case 'GET /aliases/:name': {
        const collection = this.aliases.get(name!);
        return collection ? json(response, 200, { name, collection_name: collection }) : notFound(response);
      }
      case 'PUT /aliases/:name':
        this.aliases.set(name!, body.collection_name);
        return json(response, 200, { name, collection_name: body.collection_name });
      case 'DELETE /aliases/:name': {
        const collection = this.aliases.get(name!);
        if (!collection) return notFound(response);
        this.aliases.delete(name!);
        return json(response, 200, { name, collection_name: collection });
      }
      case 'POST /collections':
        return this.createCollection(body, response);
      case 'DELETE /collections/:name': {
        const collection = this.collections.get(name!);
        if (!collection) return notFound(response, `No collection with name \`${name}\` found.`);
        this.collections.delete(name!);
        return json(response, 200, this.describe(collection));
      }
      case 'DELETE /collections/:name/documents':
        return this.deleteDocuments(name!, query, response);
      case 'DELETE /collections/:name/documents/:sub': {
        const collection = this.collection(name!);
        const document = collection?.documents.get(subName!);
        if (!collection || !document) return notFound(response, `Could not find a document with id: ${subName}`);
        collection.documents.delete(subName!);
        return json(response, 200, document);
      }
      case 'PUT /collections/:name/synonyms/:sub': {
        // v30 moved synonyms to synonym sets; the old route is gone.
        if (this.major >= 30) return notFound(response);
        const collection = this.collection(name!);
        if (!collection) return notFound(response, 'Could not find that `collection`.');
        collection.synonyms.set(subName!, body);
        return json(response, 200, { id: subName, ...body });
      }
      case 'PUT /synonym_sets/:name':
        if (this.major < 30) return notFound(response);
        this.synonymSets.set(name!, body);
        return json(response, 200, { name, ...body });
      case 'DELETE /synonym_sets/:name':
        if (this.major < 30 || !this.synonymSets.delete(name!)) return notFound(response, 'Synonym index not found');
        return json(response, 200, { name });
      case 'PUT /stopwords/:name':
        this.stopwordSets.set(name!, body);
        return json(response, 200, { id: name, stopwords: body.stopwords });
      case 'DELETE /stopwords/:name':
        if (!this.stopwordSets.delete(name!)) return notFound(response, `Stopword \`${name}\` not found.`);
        return json(response, 200, { id: name });
      case 'POST /multi_search':
        return json(response, 200, { results: body.searches.map((search: any) => this.search(search)) });
      default:
        return notFound(response);
    }
  }

  private collection(name: string) {
    return this.collections.get(this.aliases.get(name) ?? name);
  }

  private describe(collection: Collection) {
    return {
      ...collection.schema,
      num_documents: collection.documents.size,
      created_at: collection.createdAt,
      ...(this.major >= 30 ? { synonym_sets: collection.schema.synonym_sets ?? [] } : {}),
    };
  }

  private createCollection(schema: Collection['schema'], response: ServerResponse) {
    if (this.collections.has(schema.name)) {
      return json(response, 409, { message: `A collection with name \`${schema.name}\` already exists.` });
    }
    for (const set of schema.synonym_sets ?? []) {
      if (!this.synonymSets.has(set)) return notFound(response, `Synonym set \`${set}\` not found.`);
    }
    // Typesense takes single-byte characters only (it compares the std::string's size with 1).
    for (const key of ['symbols_to_index', 'token_separators']) {
      const list = schema[key];
      if (list === undefined) continue;
      if (!Array.isArray(list) || list.some((item) => typeof item !== 'string' || Buffer.byteLength(item) !== 1)) {
        return json(response, 400, { message: `\`${key}\` should be an array of character symbols.` });
      }
    }
    for (const field of schema.fields) {
      if (field.index === false && field.optional !== true) {
        return json(response, 400, { message: `Field \`${field.name}\` must be optional since it is not indexed.` });
      }
    }
    const collection: Collection = {
      schema,
      documents: new Map(),
      synonyms: new Map(),
      createdAt: (this.clock += 1),
    };
    this.collections.set(schema.name, collection);
    return json(response, 201, this.describe(collection));
  }

  private importDocuments(name: string, documents: Record<string, unknown>[], response: ServerResponse) {
    const collection = this.collection(name);
    if (!collection) return notFound(response, 'Could not find a collection with name: ' + name);
    const lines = documents.map((document) => {
      for (const field of collection.schema.fields) {
        const value = document[field.name];
        if (value === undefined) {
          if (field.optional) continue;
          return {
            code: 400,
            document: JSON.stringify(document),
            error: `Field \`${field.name}\` has been declared in the schema, but is not found in the document.`,
            success: false,
          };
        }
        const error = typeError(field, value);
        if (error) return { code: 400, document: JSON.stringify(document), error, success: false };
      }
      collection.documents.set(String(document.id), document);
      return { success: true };
    });
    return json(response, 200, lines.map((line) => JSON.stringify(line)).join('\n'));
  }

  /** Deletes by a `filter_by` of the form the adapter sends, ``id:[`a`,`b`]``; answers `{num_deleted}`. */
  private deleteDocuments(name: string, query: Record<string, string>, response: ServerResponse) {
    const collection = this.collection(name);
    if (!collection) return notFound(response, `Collection \`${name}\` not found.`);
    const list = /^id:\[(.*)\]$/.exec(query.filter_by ?? '');
    if (!list) return json(response, 400, { message: 'Parameter `filter_by` must be provided.' });
    let deleted = 0;
    for (const [, id] of list[1]!.matchAll(/`([^`]*)`/g)) if (collection.documents.delete(id!)) deleted += 1;
    return json(response, 200, { num_deleted: deleted });
  }

  private search(search: Record<string, unknown>): SearchAnswer {
    const collection = this.collection(String(search.collection));
    if (!collection) return { code: 404, error: `Collection \`${search.collection}\` not found.` };
    const stopwords = search.stopwords as string | undefined;
    if (stopwords && !this.stopwordSets.has(stopwords)) {
      return { code: 404, error: `Could not find the stopword set named \`${stopwords}\`.` };
    }
    const refused = refusal(search, collection.schema.fields);
    if (refused) return refused;
    const sortParts = parseSortBy(search.sort_by) as SortPart[];
    for (const part of sortParts) if ('eval' in part) this.evalSorts.push(part);
    return this.answerSearch(search, collection);
  }
}
