import type { FastifyRequest } from 'fastify';
import { list, single } from '../../kernel/envelope';
import { defineOperation } from '../context';
import { invalidInput, underField } from '../../kernel/validation';
import { MAX_SELECTED_IDS, parseDocumentSelection, SELECTION_OPERATORS } from './document-selection';
import { pageBlock } from '../../kernel/rest/page-links';
import { listEnvelope, pageQuery, singleEnvelope, z } from '../../kernel/rest/schemas';
import {
  AnalyticsOutput,
  AnalyticsQuery,
  DeletedDocumentsOutput,
  DocumentId,
  DocumentsBody,
  DocumentsPatchBody,
  INDEX_SORTS,
  IndexAlias,
  IndexInput,
  IndexOutput,
  MAX_DOCUMENTS_PER_REQUEST,
  MAX_RULES,
  RuleOutput,
  RulesBody,
  SearchBody,
  SearchEventsBody,
  MAX_EVENTS_PER_REQUEST,
  SearchResponseArray,
  SearchResponseEnvelope,
  SearchSettingsInput,
  SearchSettingsOutput,
  StoredDocumentOutput,
  type SearchResponseEntryData,
} from './search.schemas';
import { getSearchSuggestions } from './suggestions/suggestions.routes';

// Declared beside the suggestions; exported here too, where the module's operations are listed.
export { getSearchSuggestions };

const indexTag = 'Search indexes';
const searchTag = 'Search';
const INSTANT_SEARCH_MEDIA_TYPE = 'application/vnd.instantsearch+json';

const AliasParams = z.object({ alias: IndexAlias });
/** Any alias is accepted where the specification lists no 400: one that could never exist is simply not found. */
const AnyAliasParams = z.object({ alias: z.string().max(200).openapi({ description: 'Alias of the index.' }) });
const KeyParams = z.object({
  key: z.string().max(200).openapi({ description: 'Key of the proxy whose search settings are used.' }),
});

/** Both response forms of a search: the bare array for the instant-search client, the envelope otherwise. */
function searchResponse(request: FastifyRequest, baseUrl: string, entries: SearchResponseEntryData[]) {
  if (String(request.headers.accept ?? '').includes(INSTANT_SEARCH_MEDIA_TYPE)) {
    return { status: 201, body: entries, headers: { 'Content-Type': INSTANT_SEARCH_MEDIA_TYPE } };
  }
  // Paging is per context (limit/offset), so the page block only names the request itself.
  const page = { first: `${baseUrl}${request.url}`, next: null, after: null, previous: null, before: null };
  return { status: 201, body: { data: entries, page, meta: null } };
}

const searchResponses = {
  201: {
    description:
      `One entry per context. With \`Accept: ${INSTANT_SEARCH_MEDIA_TYPE}\` the entries come bare (an array, as ` +
      `the Afosto instant-search client expects); otherwise in the envelope, where \`page\` only names the request ` +
      `(each context pages with \`limit\`/\`offset\`).`,
    schema: SearchResponseEnvelope,
    otherMediaTypes: { [INSTANT_SEARCH_MEDIA_TYPE]: SearchResponseArray },
  },
};

export const listIndexes = defineOperation({
  operationId: 'listIndexes',
  method: 'get',
  path: '/api/instant/indexes',
  summary: 'List indexes',
  description: "The tenant's indexes with cursor pagination, ordered by `sort`.",
  tag: indexTag,
  security: 'bearer',
  scopes: ['indexes:read'],
  query: z
    .object({
      ...pageQuery,
      sort: z.enum(INDEX_SORTS).default('created_at').openapi({
        description:
          'Order: `name`, `alias`, `created_at` or `updated_at`, descending with a leading `-`. Default `created_at`.',
      }),
    })
    .strict(),
  responses: { 200: { description: 'A page of indexes.', schema: listEnvelope(IndexOutput) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN'],
  async handler({ query, principal, services, request }) {
    const page = await services.search.indexes.list(principal, query.sort, {
      size: query['page[size]'],
      after: query['page[after]'],
      before: query['page[before]'],
    });
    return { status: 200, body: list(page.items, pageBlock(services.baseUrl, request.url, page)) };
  },
});

export const createIndex = defineOperation({
  operationId: 'createIndex',
  method: 'post',
  path: '/api/instant/indexes',
  summary: 'Create an index',
  tag: indexTag,
  security: 'bearer',
  scopes: ['indexes:write'],
  body: z.object({ data: IndexInput }).strict(),
  responses: { 201: { description: 'The created index.', schema: singleEnvelope(IndexOutput) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'ID_TAKEN'],
  async handler({ body, principal, services }) {
    return {
      status: 201,
      body: single(await underField('body.data', () => services.search.indexes.create(principal, body.data))),
    };
  },
});

export const getIndex = defineOperation({
  operationId: 'getIndex',
  method: 'get',
  path: '/api/instant/indexes/{alias}',
  summary: 'View an index',
  tag: indexTag,
  security: 'bearer',
  scopes: ['indexes:read'],
  params: AliasParams,
  responses: { 200: { description: 'The index.', schema: singleEnvelope(IndexOutput) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, principal, services }) {
    return { status: 200, body: single(await services.search.indexes.get(principal, params.alias)) };
  },
});

export const updateIndex = defineOperation({
  operationId: 'updateIndex',
  method: 'put',
  path: '/api/instant/indexes/{alias}',
  summary: 'Replace an index definition',
  description:
    'Replaces the whole definition: settings left out return to their defaults. The alias cannot change. The ' +
    'documents stay; the engine re-indexes them after the response, and `has_pending_updates` is true until it has.',
  tag: indexTag,
  security: 'bearer',
  scopes: ['indexes:write'],
  params: AliasParams,
  body: z.object({ data: IndexInput }).strict(),
  responses: { 204: { description: 'Replaced.' } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND', 'WRITE_INTERRUPTED'],
  async handler({ params, body, principal, services }) {
    await underField('body.data', () => services.search.indexes.replace(principal, params.alias, body.data));
    return { status: 204 };
  },
});

export const deleteIndex = defineOperation({
  operationId: 'deleteIndex',
  method: 'delete',
  path: '/api/instant/indexes/{alias}',
  summary: 'Delete an index',
  description: 'Deletes the index with its documents, searches, clicks and events.',
  tag: indexTag,
  security: 'bearer',
  scopes: ['indexes:write'],
  params: AnyAliasParams,
  responses: { 204: { description: 'Deleted.' } },
  errors: ['FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, principal, services }) {
    await services.search.indexes.remove(principal, params.alias);
    return { status: 204 };
  },
});

export const upsertDocuments = defineOperation({
  operationId: 'upsertDocuments',
  method: 'put',
  path: '/api/instant/indexes/{alias}/documents',
  summary: 'Upsert documents',
  description:
    `Inserts or replaces documents by their \`id\` (a string of 1-512 characters or an integer), 1 to ` +
    `${MAX_DOCUMENTS_PER_REQUEST} per request, all or none: ` +
    "a document that does not fit the index's fields (a value of the wrong type, an object where a value belongs, " +
    'a missing or repeated id) rejects the request. ' +
    '`metadata` (any JSON) is stored and returned with hits but never searched. ' +
    'Indexes whose `source.type` is `CSV_INTEGRATION` also take a `text/csv` body: the first line names the ' +
    'columns, which `fields[].from` map.',
  tag: indexTag,
  security: 'bearer',
  scopes: ['indexes:write'],
  params: AliasParams,
  body: DocumentsBody,
  bodyMediaTypes: {
    'text/csv': {
      kind: 'text',
      description: `CSV with a header line and 1 to ${MAX_DOCUMENTS_PER_REQUEST} rows; an \`id\` column is required.`,
    },
  },
  responses: { 204: { description: 'Stored and searchable.' } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND', 'WRITE_INTERRUPTED'],
  async handler({ params, body, textBody, principal, services }) {
    // Problems of a CSV body are named by row: body[0].price.
    if (textBody)
      await underField('body', () => services.search.indexes.upsertCsv(principal, params.alias, textBody.text));
    else
      await underField('body.data', () => services.search.indexes.upsertDocuments(principal, params.alias, body.data));
    return { status: 204 };
  },
});

export const patchDocuments = defineOperation({
  operationId: 'patchDocuments',
  method: 'patch',
  path: '/api/instant/indexes/{alias}/documents',
  summary: 'Update fields of documents',
  description:
    `Merges the given top-level fields into stored documents by \`id\`, 1 to ${MAX_DOCUMENTS_PER_REQUEST} per ` +
    'request: a field set to `null` is removed, fields left out stay. All or none: an `id` the index does not ' +
    "hold is a 404 for the whole request, and a merged document that does not fit the index's fields a 400, " +
    'as for an upsert.',
  tag: indexTag,
  security: 'bearer',
  scopes: ['indexes:write'],
  params: AliasParams,
  body: DocumentsPatchBody,
  responses: { 204: { description: 'Stored and searchable.' } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND', 'WRITE_INTERRUPTED'],
  async handler({ params, body, principal, services }) {
    await underField('body.data', () => services.search.indexes.patchDocuments(principal, params.alias, body.data));
    return { status: 204 };
  },
});

export const clearDocuments = defineOperation({
  operationId: 'clearDocuments',
  method: 'delete',
  path: '/api/instant/indexes/{alias}/documents',
  summary: 'Delete documents',
  description:
    'Without a filter, deletes every document of the index (the index itself stays) and answers 204. With ' +
    `filters, deletes the documents that pass all of them in one change and answers 200 with how many: ` +
    `\`filter[id][in]=a,b,c\` (up to ${MAX_SELECTED_IDS} ids) or \`filter[id][eq]=a\`, and ` +
    `\`filter[<field>][<op>]=<value>\` on any index field, with op ` +
    `${SELECTION_OPERATORS.map((op) => `\`${op}\``).join(', ')} ` +
    '(`in` takes comma-separated values; `gte`, `gt`, `lt`, `lte` a number), e.g. `filter[brand][eq]=Acme`. ' +
    'An unknown field or a value of the wrong type is a 400 and deletes nothing.',
  tag: indexTag,
  security: 'bearer',
  scopes: ['indexes:write'],
  params: AnyAliasParams,
  query: z
    .object({
      'filter[id][in]': z
        .string()
        .optional()
        .openapi({ description: `Comma-separated ids of up to ${MAX_SELECTED_IDS} documents.` }),
      'filter[id][eq]': z.string().optional().openapi({ description: 'Id of one document.' }),
    })
    .catchall(z.unknown())
    .openapi({ description: 'Also `filter[<field>][<op>]` on index fields.' }),
  responses: {
    200: { description: 'Deleted what the filters selected.', schema: singleEnvelope(DeletedDocumentsOutput) },
    204: { description: 'Cleared.' },
  },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND', 'WRITE_INTERRUPTED'],
  async handler({ params, query, principal, services }) {
    const parsed = parseDocumentSelection(query);
    if (parsed === null) {
      await services.search.indexes.clearDocuments(principal, params.alias);
      return { status: 204 };
    }
    if (parsed.problems) throw invalidInput(parsed.problems.map((p) => ({ ...p, field: `query.${p.field}` })));
    const deleted = await underField('query', () =>
      services.search.indexes.deleteDocuments(principal, params.alias, parsed.selection),
    );
    return { status: 200, body: single({ deleted }) };
  },
});

export const getRules = defineOperation({
  operationId: 'getRules',
  method: 'get',
  path: '/api/instant/indexes/{alias}/rules',
  summary: 'Merchandising rules of an index',
  tag: indexTag,
  security: 'bearer',
  scopes: ['indexes:read'],
  params: AliasParams,
  responses: {
    200: { description: 'The rules, in the order they are tried.', schema: singleEnvelope(z.array(RuleOutput)) },
  },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, principal, services }) {
    return { status: 200, body: single(await services.search.indexes.getRules(principal, params.alias)) };
  },
});

export const putRules = defineOperation({
  operationId: 'putRules',
  method: 'put',
  path: '/api/instant/indexes/{alias}/rules',
  summary: 'Replace the merchandising rules of an index',
  description:
    `Up to ${MAX_RULES} rules, tried in order: the first whose \`query\` (\`exact\`: the query is these words; ` +
    '`contains`: it holds them in a row; none: any query) and `filters` (the search context has each of these ' +
    'filters) hold applies to the search. Its `pin` documents appear at their 1-based positions when they pass ' +
    "the search's filters, even without the query words; its `hide` documents never appear. Hits carry `_rule`, " +
    'the id of the rule applied. A rule may also search `replace_query` instead of the typed query, return its ' +
    '`data` object (at most 4096 bytes as JSON) as `rule_data` of each index result it applies to, and be active ' +
    'only from `active_from` and before `active_to` (ISO timestamps with an offset; rules outside their period are ' +
    'skipped). `boost` and `bury` (up to 10 filters each) move documents matching them before / after the others ' +
    'of equal relevance; a document matching both is buried. The rules are versioned with the index.',
  tag: indexTag,
  security: 'bearer',
  scopes: ['indexes:write'],
  params: AliasParams,
  body: RulesBody,
  responses: { 200: { description: 'The stored rules.', schema: singleEnvelope(z.array(RuleOutput)) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND', 'WRITE_INTERRUPTED'],
  async handler({ params, body, principal, services }) {
    return {
      status: 200,
      body: single(
        await underField('body.data', () => services.search.indexes.replaceRules(principal, params.alias, body.data)),
      ),
    };
  },
});

const DocumentParams = z.object({ alias: IndexAlias, id: DocumentId });

export const getDocument = defineOperation({
  operationId: 'getDocument',
  method: 'get',
  path: '/api/instant/indexes/{alias}/documents/{id}',
  summary: 'View a document',
  description: 'The stored document as it was last written, `metadata` included.',
  tag: indexTag,
  security: 'bearer',
  scopes: ['indexes:read'],
  params: DocumentParams,
  responses: { 200: { description: 'The document.', schema: singleEnvelope(StoredDocumentOutput) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, principal, services }) {
    return { status: 200, body: single(await services.search.indexes.getDocument(principal, params.alias, params.id)) };
  },
});

export const deleteDocument = defineOperation({
  operationId: 'deleteDocument',
  method: 'delete',
  path: '/api/instant/indexes/{alias}/documents/{id}',
  summary: 'Delete a document',
  tag: indexTag,
  security: 'bearer',
  scopes: ['indexes:write'],
  params: DocumentParams,
  responses: { 204: { description: 'Deleted.' } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND', 'WRITE_INTERRUPTED'],
  async handler({ params, principal, services }) {
    await services.search.indexes.deleteDocument(principal, params.alias, params.id);
    return { status: 204 };
  },
});

export const getIndexAnalytics = defineOperation({
  operationId: 'getIndexAnalytics',
  method: 'get',
  path: '/api/instant/indexes/{alias}/analytics',
  summary: 'Search analytics of an index',
  description:
    'Over `[from, to)`: searches, clicks, top queries, queries without results, click-through rates per query and ' +
    'per position, and the reported events (views, add-to-carts, conversions) with conversion rates and revenue. ' +
    'Clicks are followed click URLs and `click` events; clicks and events count with their search (those of the ' +
    'searches made in the range). Searches are counted per hour, so the range counted is the whole hours that ' +
    'cover `[from, to)`, given back as `from` and `to`; analytics are kept `SEARCH_ANALYTICS_RETENTION_DAYS` ' +
    '(default 90) days.',
  tag: indexTag,
  security: 'bearer',
  scopes: ['indexes:read'],
  params: AliasParams,
  query: AnalyticsQuery,
  responses: { 200: { description: 'The analytics.', schema: singleEnvelope(AnalyticsOutput) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, query, principal, services }) {
    return {
      status: 200,
      body: single(await underField('query', () => services.search.analytics.forIndex(principal, params.alias, query))),
    };
  },
});

export const searchIndex = defineOperation({
  operationId: 'searchIndex',
  method: 'post',
  path: '/api/instant/search/indexes/{alias}',
  summary: 'Search one index',
  description: "Searches one index of the caller's tenant, bypassing any proxy.",
  tag: searchTag,
  security: 'bearer',
  scopes: ['search'],
  params: AliasParams,
  body: SearchBody,
  responses: searchResponses,
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, body, principal, services, request }) {
    return searchResponse(
      request,
      services.baseUrl,
      await underField('body.data', () => services.search.search.searchIndex(principal, params.alias, body.data)),
    );
  },
});

export const searchProxy = defineOperation({
  operationId: 'searchProxy',
  method: 'post',
  path: '/api/instant/search/{key}',
  summary: 'Search via a proxy key',
  description:
    "Searches the indexes named in the proxy's search settings. Public unless a route of the proxy has " +
    "`settings.auth.is_required`: then a bearer token of the proxy's tenant with scope `search` is needed. " +
    'Callable from browsers (CORS); a JSON body sent as `text/plain` (as `fetch` does for a string) is read as JSON.',
  tag: searchTag,
  security: 'bearer-optional',
  scopes: ['search'],
  cors: true,
  params: KeyParams,
  body: SearchBody,
  bodyMediaTypes: { 'text/plain': { kind: 'json', description: 'The same JSON body.' } },
  responses: searchResponses,
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, body, optionalPrincipal, services, request }) {
    return searchResponse(
      request,
      services.baseUrl,
      await underField('body.data', () => services.search.search.searchProxy(optionalPrincipal, params.key, body.data)),
    );
  },
});

export const getSearchSettings = defineOperation({
  operationId: 'getSearchSettings',
  method: 'get',
  path: '/api/instant/search/{key}/settings',
  summary: 'Get search settings',
  description:
    'The search settings of a proxy key, with the same access rule as searching through it. Callable from browsers ' +
    '(CORS).',
  tag: searchTag,
  security: 'bearer-optional',
  scopes: ['search'],
  cors: true,
  params: KeyParams,
  responses: { 200: { description: 'The search settings.', schema: singleEnvelope(SearchSettingsOutput) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, optionalPrincipal, services }) {
    return { status: 200, body: single(await services.search.search.getSettings(optionalPrincipal, params.key)) };
  },
});

export const putSearchSettings = defineOperation({
  operationId: 'putSearchSettings',
  method: 'put',
  path: '/api/instant/search/{key}/settings',
  summary: 'Set search settings',
  description:
    "Creates or replaces the search settings of one of the tenant's proxies. Every alias must be an index of the " +
    'tenant, every filter key a filterable field of it.',
  tag: searchTag,
  security: 'bearer',
  scopes: ['indexes:write'],
  params: KeyParams,
  body: z.object({ data: SearchSettingsInput }).strict(),
  responses: { 200: { description: 'The stored settings.', schema: singleEnvelope(SearchSettingsOutput) } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, body, principal, services }) {
    return {
      status: 200,
      body: single(
        await underField('body.data', () => services.search.search.putSettings(principal, params.key, body.data)),
      ),
    };
  },
});

export const measureClick = defineOperation({
  operationId: 'measureClick',
  method: 'get',
  path: '/api/instant/search/{alias}/click/{code}',
  summary: 'Measure a click',
  description:
    "The `click_url` of a hit: records the click (for click-through rates) and redirects to the document's URL. " +
    'Needs no token (a browser follows it); the code is signed (HMAC-SHA256) and bound to the index, so an edited ' +
    'code or one of another index is a 400.',
  tag: searchTag,
  security: 'bearer-optional',
  cors: true,
  params: z.object({
    alias: z.string().max(200).openapi({ description: 'Alias of the index.' }),
    code: z.string().max(4096).openapi({ description: 'The signed click code.' }),
  }),
  responses: {
    307: {
      description: "Recorded; redirects to the hit's URL.",
      headers: {
        Location: { description: "The hit's URL." },
        'Cache-Control': { description: '`no-store`: every click is measured.' },
      },
    },
  },
  errors: ['BAD_REQUEST', 'NOT_FOUND'],
  async handler({ params, services }) {
    const location = await underField('path', () => services.search.search.click(params.alias, params.code));
    return { status: 307, headers: { Location: location, 'Cache-Control': 'no-store' } };
  },
});

export const recordSearchEvents = defineOperation({
  operationId: 'recordSearchEvents',
  method: 'post',
  path: '/api/instant/search/{key}/events',
  summary: 'Report search events',
  description:
    `Stores 1 to ${MAX_EVENTS_PER_REQUEST} events about the hits of searches made through the key (\`view\`, ` +
    '`click`, `add_to_cart`, `conversion`), all or none, for the conversion rates and revenue of the analytics. ' +
    "`query_id` is the `query_id` of the search's result, which is signed: one that is not the id of a search of " +
    'an index the key searches (made up, edited, or of another index) is a 400 naming it. An event may arrive ' +
    'before its search is counted (searches are counted in batches) and counts once it is; one of a search older ' +
    'than the analytics retention is accepted and not stored. ' +
    'Same access rule as searching through the key; callable from browsers (CORS), a JSON body sent as ' +
    '`text/plain` (what `navigator.sendBeacon` sends for a string) is read as JSON. Each client address may send ' +
    '`SEARCH_EVENTS_PER_MINUTE` requests per minute (default 300), then gets a 429 with `Retry-After`.',
  tag: searchTag,
  security: 'bearer-optional',
  scopes: ['search'],
  cors: true,
  params: KeyParams,
  body: SearchEventsBody,
  bodyMediaTypes: { 'text/plain': { kind: 'json', description: 'The same JSON body.' } },
  // Public, so there may be no credential to count against: each client address is counted.
  limitPerAddress: { name: 'search events', perMinute: (services) => services.config.searchEventsPerMinute },
  responses: { 204: { description: 'Stored.' } },
  errors: ['BAD_REQUEST', 'FORBIDDEN', 'NOT_FOUND', 'TOO_MANY_REQUESTS'],
  async handler({ params, body, optionalPrincipal, services }) {
    await underField('body.data', () => services.search.events.record(optionalPrincipal, params.key, body.data));
    return { status: 204 };
  },
});

export const searchOperations = [
  listIndexes,
  createIndex,
  getIndex,
  updateIndex,
  deleteIndex,
  upsertDocuments,
  patchDocuments,
  clearDocuments,
  getDocument,
  deleteDocument,
  getRules,
  putRules,
  getIndexAnalytics,
  searchIndex,
  searchProxy,
  getSearchSettings,
  putSearchSettings,
  measureClick,
  recordSearchEvents,
  getSearchSuggestions,
];
