/**
 * A stand-in for a Typesense server on 127.0.0.1: the subset of the v30 and v29 HTTP API that the
 * adapter uses (endpoints, status codes, error bodies and response shapes as in Typesense's API
 * specification, typesense/typesense-api-spec openapi.yml, and its server source). It keeps
 * collections, aliases, synonym and stopwords sets, checks imported documents against the
 * collection's field types, and records every request so tests can assert the exact protocol.
 * Searches are answered by the test (`answerSearch`): the stand-in does not rank.
 *
 * It can also be a cluster: several nodes (ports) sharing one state, as the nodes of a Typesense
 * cluster share theirs. Tests make a node fail or never answer (`fail`, `failNext`, `stall`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Parsed JSON, JSON lines as an array for imports, or undefined without a body. */
  body: unknown;
}

interface Field {
  name: string;
  type: string;
  optional?: boolean;
  index?: boolean;
  facet?: boolean;
  sort?: boolean;
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

export type SearchAnswer = Record<string, unknown> | { code: number; error: string };

/** The API key the stand-in accepts. */
export const STAND_IN_API_KEY = 'stand-in-key';

/** Answers with JSON, or with the text as it is (the JSON lines of an import). */
const json = (response: ServerResponse, status: number, body: unknown) => {
  const text = typeof body === 'string';
  response.writeHead(status, { 'content-type': `${text ? 'text/plain' : 'application/json'}; charset=utf-8` });
  response.end(text ? body : JSON.stringify(body));
};
const notFound = (response: ServerResponse, message = 'Not Found') => json(response, 404, { message });

/** The error Typesense gives for a document value that does not fit the field's type. */
function typeError(field: Field, value: unknown): string | null {
  // validator.cpp: a point is `[lat, lng]` (Typesense would coerce numeric strings; the adapter sends numbers).
  if (field.type === 'geopoint') {
    const point = Array.isArray(value) && value.length === 2 && value.every((item) => typeof item === 'number');
    return point ? null : `Field \`${field.name}\` must be a 2 element array: [lat, lng].`;
  }
  const array = field.type.endsWith('[]');
  const base = field.type.replace('[]', '');
  if (array && !Array.isArray(value)) return `Field \`${field.name}\` must be an array.`;
  if (!array && Array.isArray(value)) return `Field \`${field.name}\` must be a ${base}.`;
  const fits = (item: unknown) =>
    base === 'string'
      ? typeof item === 'string'
      : base === 'bool'
        ? typeof item === 'boolean'
        : typeof item === 'number';
  const items = array ? (value as unknown[]) : [value];
  if (!items.every(fits)) return `Field \`${field.name}\` must be ${array ? 'an array of ' : 'a '}${base}.`;
  return null;
}

const names = (list: unknown) => (typeof list === 'string' && list !== '' ? list.split(',') : []);

/** The entries of `facet_by`: split at commas outside a range facet's parentheses. */
function facetEntries(list: unknown): string[] {
  if (typeof list !== 'string' || list === '') return [];
  const entries: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    if (list[i] === '(') depth += 1;
    else if (list[i] === ')') depth -= 1;
    else if (list[i] === ',' && depth === 0) {
      entries.push(list.slice(start, i).trim());
      start = i + 1;
    }
  }
  entries.push(list.slice(start).trim());
  return entries;
}

/**
 * A range facet `field(Label:[from, to], ...)` checked as Typesense checks it (collection.cpp,
 * test/collection_faceting_test.cpp): alphanumeric labels, numeric bounds, contiguous ranges, and
 * an integer or float facet field. Returns the error message, or null.
 */
function rangeFacetRefusal(entry: string, field: Field | undefined): string | null {
  const inner = /^[\w.]+\((.*)\)$/.exec(entry)?.[1];
  if (inner === undefined) return null;
  if (!/^(int32|int64|float)(\[\])?$/.test(field?.type ?? ''))
    return 'Range facet is restricted to only integer and float fields.';
  let previousEnd: number | undefined;
  for (const range of inner.split(/\]\s*,\s*/)) {
    const parts = /^([A-Za-z0-9]+):\[([^,\]]*),([^\]]*)\]?$/.exec(range.trim());
    if (!parts) return 'Error splitting the facet range values.';
    const from = Number(parts[2]!.trim());
    const to = Number(parts[3]!.trim());
    if (parts[2]!.trim() === '' || parts[3]!.trim() === '' || !Number.isFinite(from) || !Number.isFinite(to))
      return 'Facet range value is not valid.';
    if (previousEnd !== undefined && from !== previousEnd) return 'Ranges in range facet syntax should be continous.';
    previousEnd = to;
  }
  return null;
}

/** One part of `sort_by`: a field (`missing_values` and the like left out), or an `_eval` with its scores. */
export type SortPart =
  { field: string; order: string } | { eval: { expression: string; score: number }[]; order: string };

const MALFORMED_SORT = { code: 400, error: 'Parameter `sort_by` is malformed.' };

/** Splits at commas outside parentheses, brackets and backticks. */
function topLevelParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '`') quoted = !quoted;
    else if (quoted) continue;
    else if (c === '(' || c === '[') depth += 1;
    else if (c === ')' || c === ']') depth -= 1;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** The text inside the parentheses opening at `text[at]` (backticks quote), and the index after the closing one. */
function parenthesized(text: string, at: number): { inner: string; end: number } | null {
  if (text[at] !== '(') return null;
  let depth = 0;
  let quoted = false;
  for (let i = at; i < text.length; i++) {
    const c = text[i];
    if (c === '`') quoted = !quoted;
    else if (!quoted && c === '(') depth += 1;
    else if (!quoted && c === ')' && --depth === 0) return { inner: text.slice(at + 1, i), end: i + 1 };
  }
  return null;
}

/**
 * An `_eval` part as Typesense parses it (collection_manager.cpp `parse_eval`, `parse_multi_eval`):
 * `_eval(<expr>):<order>` (score 1) or `_eval([ (<expr>):<int64 score>, ... ]):<order>`.
 */
function parseEval(part: string): SortPart | null {
  const outer = parenthesized(part, part.indexOf('('));
  if (!outer) return null;
  const order = /^\s*:\s*(\w+)\s*$/.exec(part.slice(outer.end))?.[1];
  if (order === undefined) return null;
  const body = outer.inner.trim();
  if (!body.startsWith('[')) return { eval: [{ expression: body, score: 1 }], order: order.toUpperCase() };
  if (!body.endsWith(']')) return null;
  const entries: { expression: string; score: number }[] = [];
  for (const entry of topLevelParts(body.slice(1, -1))) {
    const trimmed = entry.trim();
    const expression = parenthesized(trimmed, 0);
    const score = expression && /^\s*:\s*([+-]?\d+)\s*$/.exec(trimmed.slice(expression.end))?.[1];
    if (!expression || score === undefined || score === null) return null;
    entries.push({ expression: expression.inner.trim(), score: Number(score) });
  }
  return { eval: entries, order: order.toUpperCase() };
}

/** `sort_by` in parts, or what Typesense answers for a malformed one (collection.cpp). */
export function parseSortBy(sortBy: unknown): SortPart[] | { code: number; error: string } {
  if (typeof sortBy !== 'string' || sortBy.trim() === '') return [];
  const parts: SortPart[] = [];
  for (const raw of topLevelParts(sortBy)) {
    const part = raw.trim();
    if (part.startsWith('_eval')) {
      const parsed = parseEval(part);
      if (!parsed) return MALFORMED_SORT;
      parts.push(parsed);
      continue;
    }
    const colon = part.lastIndexOf(':');
    if (colon < 0 || colon === part.length - 1) return MALFORMED_SORT;
    parts.push({
      field: part
        .slice(0, colon)
        .replace(/\(.*\)/, '')
        .trim(),
      order: part.slice(colon + 1).trim(),
    });
  }
  for (const part of parts) {
    if ('eval' in part) {
      if (part.eval.some((entry) => entry.expression === '')) {
        return { code: 400, error: 'The eval expression in sort_by is empty.' };
      }
    } else if (!['ASC', 'DESC'].includes(part.order.toUpperCase())) {
      return { code: 400, error: `Order for field\` ${part.field}\` should be either ASC or DESC.` };
    }
  }
  if (parts.length > 3) return { code: 422, error: 'Only upto 3 sort_by fields can be specified.' };
  if (parts.filter((part) => 'eval' in part).length > 1) {
    return { code: 422, error: 'Only one sorting eval expression is allowed.' };
  }
  return parts;
}

/**
 * A geopoint filter value as Typesense parses it (filter.cpp `parse_geopoint_filter_value`, the
 * current format): `([lat, lng], radius: <d> km|mi[, exact_filter_radius: <d> km|mi])` or a polygon
 * `([lat, lng, lat, lng, lat, lng, ...][, exact_filter_radius: ...])`. Returns the error, or null.
 */
export function geoFilterRefusal(field: string, value: string): string | null {
  const format =
    `Value of filter field \`${field}\`: must be in the ` +
    '`([-44.50, 170.29], radius: 0.75 km, exact_filter_radius: 5 km)` or ' +
    '([56.33, -65.97, 23.82, -127.82], exact_filter_radius: 7 km) format.';
  const parts = /^\(\s*\[([^\]]*)\]([^)]*)\)$/.exec(value.trim());
  if (!parts) return format;
  const points = parts[1]!.split(',').map((point) => point.trim());
  const isFloat = (text: string) => /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text);
  if (points.length < 2 || points.length % 2 !== 0 || !points.every(isFloat)) return format;
  const polygon = points.length > 2;
  let radius = false;
  for (const option of parts[2]!.split(',').map((text) => text.trim())) {
    const [key, distance] = option.split(':').map((text) => text.trim());
    if (distance === undefined) continue;
    if (key !== 'radius' && key !== 'exact_filter_radius') continue;
    const unit = distance.slice(-2);
    if (unit !== 'km' && unit !== 'mi') return 'Unit must be either `km` or `mi`.';
    if (!isFloat(distance.slice(0, -2).trim())) return format;
    if (key === 'radius' && !polygon) radius = true;
  }
  return polygon || radius ? null : format;
}

/** The fields a filter expression names (`field:` after its start, a `(`, `&&` or `||`). */
const filterFieldNames = (expression: string) =>
  [...expression.matchAll(/(?:^|&& |\|\| |\()\s*([\w.]+):/g)].map((match) => match[1]!);

/**
 * What Typesense answers when a search names a field the schema lacks or whose flags do not allow
 * the use (status and message as in its server source, collection.cpp and filter.cpp).
 */
function refusal(search: Record<string, unknown>, fields: Field[]): SearchAnswer | null {
  const field = (name: string) => fields.find((candidate) => candidate.name === name && candidate.index !== false);
  for (const name of names(search.query_by)) {
    if (!field(name)) return { code: 404, error: `Could not find a field named \`${name}\` in the schema.` };
  }
  for (const entry of facetEntries(search.facet_by)) {
    const name = entry.replace(/\(.*$/, '');
    if (!field(name)?.facet)
      return { code: 404, error: `Could not find a facet field named \`${name}\` in the schema.` };
    const refused = rangeFacetRefusal(entry, field(name));
    if (refused) return { code: 400, error: refused };
  }
  for (const name of names(search.group_by)) {
    if (!field(name)?.facet) return { code: 400, error: `Group by field \`${name}\` should be a facet field.` };
  }
  const sortParts = parseSortBy(search.sort_by);
  if (!Array.isArray(sortParts)) return sortParts;
  for (const part of sortParts) {
    if ('eval' in part) {
      // An unknown field fails the filter's parse, whose status Typesense keeps (404) under its own message.
      const unknown = part.eval.some((entry) => filterFieldNames(entry.expression).some((name) => !field(name)));
      if (unknown) return { code: 404, error: 'Error parsing eval expression in sort_by clause.' };
      continue;
    }
    const name = part.field;
    // Numbers and points sort without `sort: true` (a point by its distance from the point given).
    const sortable = (candidate: Field | undefined) =>
      candidate?.sort === true || (candidate !== undefined && /^(float|int32|int64|geopoint)$/.test(candidate.type));
    if (name !== '_text_match' && !sortable(field(name))) {
      return { code: 404, error: `Could not find a field named \`${name}\` in the schema for sorting.` };
    }
  }
  for (const [, name] of String(search.filter_by ?? '').matchAll(/(?:^|&& )([\w.]+):/g)) {
    if (!field(name!)) return { code: 404, error: `Could not find a filter field named \`${name}\` in the schema.` };
  }
  // Each filter on a geopoint field: its value, up to the parenthesis that closes it.
  for (const match of String(search.filter_by ?? '').matchAll(/(?:^|&& |\|\| |\()\s*([\w.]+):\s*\(/g)) {
    if (field(match[1]!)?.type !== 'geopoint') continue;
    const value = parenthesized(match.input, match.index + match[0].length - 1);
    const refused = geoFilterRefusal(match[1]!, value ? `(${value.inner})` : match.input.slice(match.index));
    if (refused) return { code: 400, error: refused };
  }
  return null;
}

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
