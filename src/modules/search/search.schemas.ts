/** Request and response shapes of indexes, documents, search, search settings and analytics. */
import { PageBlockSchema, z } from '../../kernel/rest/schemas';
import {
  DOCUMENT_EXAMPLE,
  DOCUMENTS_EXAMPLE,
  INDEX_EXAMPLE,
  INDEX_INPUT_EXAMPLE,
  SEARCH_REQUEST_EXAMPLE,
  SEARCH_RESPONSE_ENTRY_EXAMPLE,
  SEARCH_SETTINGS_EXAMPLE,
  SEARCH_SETTINGS_INPUT_EXAMPLE,
} from './search.examples';
import { BUILT_IN_RANKING_RULES, FIELD_TYPES, FILTER_OPERATORS } from './engine/engine';
import { GEO_SORT_RULE, MAX_DOCUMENT_ID_LENGTH, RESERVED_FIELD_NAMES, SORT_RULE } from './definition';
import { storableText, trimmedName } from '../../kernel/validation';
import { FacetRangesInput, FacetRangesOutput } from './facet-ranges.schemas';
import { Language, MatchingInput, MatchingOutput } from './matching.schemas';
import { tokenize } from './engine/text';
import {
  RuleDataOutput,
  RuleExtensionsInput,
  RuleExtensionsOutput,
  ruleBoostInput,
  activePeriodIsOrdered,
} from './rule-extensions.schemas';
import { SuggestionSettingsInput, SuggestionSettingsOutput } from './suggestions/suggestions.schemas';

export const MAX_DOCUMENTS_PER_REQUEST = 1000;
export const MAX_PHRASE_WORDS = 5;
export const MAX_SEARCH_LIMIT = 250;
export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_OFFSET = 10_000;
export const DEFAULT_THRESHOLD = 1;
export const MAX_CONTEXTS_PER_REQUEST = 10;

export const ALIAS_PATTERN = /^[a-z0-9](?:[a-z0-9_-]{0,62}[a-z0-9])?$/;

export const IndexAlias = z
  .string()
  .max(64)
  .regex(
    ALIAS_PATTERN,
    'must be 1-64 lowercase letters, digits, hyphens or underscores, starting and ending with a letter or digit',
  )
  .openapi({
    description: 'Alias of the index, unique per tenant: 1-64 of `a-z`, `0-9`, `-`, `_`.',
    example: 'products',
  });

const FieldName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_-]*$/, 'must be letters, digits, hyphens or underscores')
  .refine((name) => !RESERVED_FIELD_NAMES.includes(name), `must not be one of ${RESERVED_FIELD_NAMES.join(', ')}`)
  .openapi({ description: 'An index field name.' });

const FieldType = z.enum(FIELD_TYPES).openapi('SearchFieldType', {
  description:
    '`STRING`, `NUMBER`, `BOOLEAN` or `GEOPOINT` (one point per document, `{"lat", "lng"}` or `[lat, lng]` in ' +
    'degrees, returned as `{"lat", "lng"}`).',
});

/** A synonym or stop word: a word, or a phrase of up to 5 words matched as the words in a row. */
const Phrase = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine((phrase) => {
    const words = tokenize(phrase);
    return words.length >= 1 && words.length <= MAX_PHRASE_WORDS;
  }, `must hold 1 to ${MAX_PHRASE_WORDS} words`);

const FieldInput = z
  .object({
    from: z
      .string()
      .min(1)
      .max(200)
      .openapi({ description: 'Source field of the document; `a.b` reaches into nested objects.' }),
    to: FieldName.optional().openapi({ description: 'Index field the value lands in; defaults to `from`.' }),
    type: FieldType.nullable()
      .optional()
      .openapi({ description: 'Without a type, the field takes the type of the first document that has it.' }),
    label: z.string().max(200).nullable().optional(),
  })
  .strict()
  .openapi('SearchFieldInput');

const SynonymInput = z
  .object({
    root: Phrase.optional().openapi({
      description: 'One-way synonym: a query for `root` also finds `synonyms`, not the other way round.',
    }),
    synonyms: z.array(Phrase).min(1).max(50),
  })
  .strict()
  .refine(
    (synonym) => synonym.root !== undefined || synonym.synonyms.length >= 2,
    'a multi-way synonym needs at least two words',
  )
  .openapi('Synonym', {
    description:
      'Words or phrases of up to 5 words (matched as the words in a row: `t shirt` finds `tee`). Without `root`, ' +
      'each finds the others (multi-way); with `root`, only the root finds the synonyms (one-way).',
  });

const RankingRule = z
  .string()
  .refine(
    (rule) => (BUILT_IN_RANKING_RULES as readonly string[]).includes(rule) || SORT_RULE.test(rule),
    'must be typo, words, proximity, attribute, exactness or <field>:asc|desc',
  )
  .openapi({
    description: '`words`, `typo`, `proximity`, `attribute`, `exactness`, or `<field>:asc` / `<field>:desc`.',
  });

const uniqueList = <T extends z.ZodType<string>>(item: T, max: number) =>
  z
    .array(item)
    .max(max)
    .refine((list) => new Set(list).size === list.length, 'must not repeat a value');

const readOnly = (description: string) => z.unknown().optional().openapi({ readOnly: true, description });

export const IndexInput = z
  .object({
    name: trimmedName(200),
    alias: IndexAlias.optional().openapi({
      description: 'Generated from the name when left out (and made unique with `-2`, `-3`, ...).',
    }),
    source: z
      .object({
        id: z.string().max(200).nullable().optional(),
        type: z.enum(['API', 'CSV_INTEGRATION']).nullable().optional().openapi({
          description: '`API` (default) or `CSV_INTEGRATION`, which also takes `text/csv` document uploads.',
        }),
      })
      .strict()
      .nullable()
      .optional(),
    fields: z.array(FieldInput).max(100).optional().openapi({
      description:
        'Maps source fields to index fields. Without any, every top-level field of the documents is an index field.',
    }),
    search_fields: uniqueList(FieldName, 100)
      .optional()
      .openapi({ description: 'Fields matched by the query, most important first. Default: every STRING field.' }),
    display_fields: uniqueList(FieldName, 100)
      .optional()
      .openapi({ description: 'Fields returned in hits. Default: every field.' }),
    filters: z
      .array(z.object({ key: FieldName, type: z.unknown().optional(), is_processed: z.unknown().optional() }).strict())
      .max(100)
      .optional()
      .openapi({
        description: 'Filterable fields, `[{key}]` (`type` and `is_processed` are output only and ignored).',
      }),
    facet_fields: uniqueList(FieldName, 50).optional().openapi({
      description: 'Fields that facets can be requested for (and filtered on). Default: the `filters` keys.',
    }),
    distinct_field: FieldName.nullable()
      .optional()
      .openapi({ description: 'Only the best-ranked document per value of this field is returned.' }),
    synonyms: z.array(SynonymInput).max(1000).optional(),
    stop_words: uniqueList(Phrase, 1000)
      .optional()
      .openapi({ description: 'Words, and phrases (the words in a row), left out of queries.' }),
    ranking_rules: uniqueList(RankingRule, 20)
      .optional()
      .openapi({ description: 'Default: `words`, `typo`, `proximity`, `attribute`, `exactness`.' }),
    sortable_fields: uniqueList(FieldName, 20).optional().openapi({
      description: 'Fields a search context may `sort` by. Default: every NUMBER, BOOLEAN and GEOPOINT field.',
    }),
    matching: MatchingInput.nullable().optional(),
    language: Language.nullable().optional(),
    is_active: z
      .boolean()
      .nullable()
      .optional()
      .openapi({ description: 'Inactive indexes keep their documents but are not searched. Default true.' }),
    id: readOnly('Ignored on input.'),
    state: readOnly('Ignored on input.'),
    available_fields: readOnly('Ignored on input.'),
    last_processed_at: readOnly('Ignored on input.'),
    has_pending_updates: readOnly('Ignored on input.'),
    created_at: readOnly('Ignored on input.'),
    updated_at: readOnly('Ignored on input.'),
  })
  .strict()
  .openapi('IndexInput', { example: INDEX_INPUT_EXAMPLE });

export type IndexInputData = z.output<typeof IndexInput>;

export const IndexOutput = z
  .object({
    id: z.uuid(),
    name: z.string(),
    alias: z.string(),
    state: z
      .enum(['LIVE', 'INACTIVE'])
      .openapi({ description: '`LIVE`: searchable; `INACTIVE`: `is_active` is false.' }),
    source: z.object({ id: z.string().nullable(), type: z.string() }),
    fields: z.array(
      z.object({ from: z.string(), to: z.string(), type: FieldType.nullable(), label: z.string().nullable() }),
    ),
    search_fields: z.array(z.string()),
    display_fields: z.array(z.string()),
    filters: z.array(
      z.object({
        key: z.string(),
        type: FieldType.nullable().openapi({ description: 'Null while no document has shown the field.' }),
        is_processed: z.boolean().openapi({ description: 'Whether the engine has indexed the current definition.' }),
      }),
    ),
    facet_fields: z.array(z.string()),
    distinct_field: z.string().nullable(),
    synonyms: z.array(z.object({ root: z.string().optional(), synonyms: z.array(z.string()) })),
    stop_words: z.array(z.string()),
    ranking_rules: z.array(z.string()),
    sortable_fields: z.array(z.string()).openapi({ description: 'Fields a search may sort by.' }),
    matching: MatchingOutput,
    language: Language.nullable(),
    available_fields: z
      .array(z.object({ key: z.string(), type: FieldType.nullable() }))
      .openapi({ description: 'The index fields with their types.' }),
    is_active: z.boolean(),
    has_pending_updates: z
      .boolean()
      .openapi({ description: 'True while a change is not yet applied by the search engine.' }),
    last_processed_at: z.iso
      .datetime()
      .nullable()
      .openapi({ description: 'When the engine last finished applying a change.' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .openapi('Index', { example: INDEX_EXAMPLE });

export type IndexRecord = z.output<typeof IndexOutput>;

export const INDEX_SORTS = [
  'name',
  '-name',
  'alias',
  '-alias',
  'created_at',
  '-created_at',
  'updated_at',
  '-updated_at',
] as const;

export const DocumentsBody = z
  .object({
    data: z
      .array(
        z.record(z.string(), z.unknown()).openapi({
          description:
            'A document: `id` (string or integer) identifies it, `metadata` is returned with hits and never searched.',
        }),
      )
      .min(1)
      .max(MAX_DOCUMENTS_PER_REQUEST),
  })
  .strict()
  .openapi('DocumentsUpsert', { example: DOCUMENTS_EXAMPLE });

export const DocumentsPatchBody = z
  .object({
    data: z
      .array(
        z.record(z.string(), z.unknown()).openapi({
          description:
            '`id` names a stored document; every other top-level key replaces the stored one, and a key set to ' +
            '`null` is removed (`metadata` included).',
        }),
      )
      .min(1)
      .max(MAX_DOCUMENTS_PER_REQUEST),
  })
  .strict()
  .openapi('DocumentsPatch');

export const DocumentId = z
  .string()
  .min(1)
  .max(MAX_DOCUMENT_ID_LENGTH)
  .openapi({ description: "The document's `id` (an integer id as its decimal digits)." });

export const StoredDocumentOutput = z.record(z.string(), z.unknown()).openapi('StoredDocument', {
  description: 'The document as it was last written (merged, after a PATCH).',
  example: DOCUMENT_EXAMPLE,
});

export const DeletedDocumentsOutput = z
  .object({ deleted: z.int().openapi({ description: 'Documents deleted; 0 when none matched.' }) })
  .openapi('DeletedDocuments');

export const MAX_SORT_KEYS = 3;

const SortList = z
  .array(
    z
      .string()
      .max(100)
      .regex(
        new RegExp(`(${SORT_RULE.source})|(${GEO_SORT_RULE.source})`),
        'must be <field>:asc or <field>:desc (a GEOPOINT field: <field>(<lat>, <lng>):asc|desc)',
      ),
  )
  .max(MAX_SORT_KEYS)
  .refine(
    (keys) => new Set(keys.map((key) => key.split(/[(:]/)[0])).size === keys.length,
    'must not sort by a field twice',
  );

const FilterValue = z.union([z.string().max(200), z.number(), z.boolean()]);

const FieldFilterInput = z
  .object({
    key: z.string().min(1).max(100),
    operator: z.enum(FILTER_OPERATORS),
    values: z
      .array(FilterValue)
      .min(1)
      .max(100)
      .optional()
      .openapi({
        description:
          "Coerced to the field's type; `gte`, `gt`, `lt` and `lte` take one number; `exists` and `not_exists` " +
          'none; `geo_radius` `[lat, lng, radius, "km" | "mi"]`; `geo_bbox` `[south, west, north, east]`; the ' +
          'others at least one.',
      }),
  })
  .strict()
  .openapi('SearchFilter', {
    description:
      '`in`: any of the values; `not_in`: none of them (a document without the field passes); `gte`, `gt`, ' +
      '`lt`, `lte`: a bound on a NUMBER field; `exists` / `not_exists`: whether the field has a value. On a ' +
      'GEOPOINT field, `geo_radius`: the point is within the radius (great-circle distance, above 0 and at most ' +
      '20015 km) of the center; `geo_bbox`: the point is inside the box of the south-west and north-east corners ' +
      '(edges included; west above east crosses the 180th meridian). A document without a point passes neither.',
  });

const filterList = z.array(FieldFilterInput).min(1).max(50);
const InnerAnyGroup = z.object({ any: filterList }).strict();
const InnerAllGroup = z.object({ all: filterList }).strict();

const AnyGroupInput = z
  .object({
    any: z
      .array(z.union([FieldFilterInput, InnerAnyGroup, InnerAllGroup]))
      .min(1)
      .max(50),
  })
  .strict()
  .openapi('SearchFilterGroup', { description: 'One of the members must hold.' });

export const SearchContext = z
  .object({
    q: z
      .string()
      .max(512)
      .nullable()
      .optional()
      .openapi({ description: 'The query; empty or left out matches every document.' }),
    indices: z
      .array(IndexAlias)
      .max(20)
      .nullable()
      .optional()
      .openapi({ description: "Aliases to search; default all of the search engine's indexes." }),
    facets: z
      .array(z.string().min(1).max(100))
      .max(50)
      .nullable()
      .optional()
      .openapi({ description: 'Facet fields to count values of; `*` for all.' }),
    filters: z
      .array(z.union([FieldFilterInput, AnyGroupInput]))
      .max(50)
      .nullable()
      .optional()
      .openapi({
        description:
          'All must hold. Each is a field filter or `{any: [...]}` (one of them must hold), whose members may be ' +
          'field filters or one more level of `{any: [...]}` / `{all: [...]}` groups of field filters.',
      }),
    facet_query: z
      .object({
        field: z.string().min(1).max(100),
        q: z.string().max(100),
      })
      .strict()
      .nullable()
      .optional()
      .openapi({
        description:
          'Searches the values of one facet field: `facet_hits` lists the values whose words match `q` (each ' +
          'word, the last also as a prefix, with the typo budget of its length) with their counts under the ' +
          "query and filters (without the field's own filters when `disjunctive_facets` is true).",
      }),
    facet_ranges: FacetRangesInput.nullable().optional(),
    disjunctive_facets: z
      .boolean()
      .nullable()
      .optional()
      .openapi({
        description:
          "Count each facet without the filters on that facet's own field (top-level filters, or `any` groups, " +
          'about that field only), so a filter sidebar lists every value one could add. Default false.',
      }),
    sort: SortList.nullable()
      .optional()
      .openapi({
        description:
          `Up to ${MAX_SORT_KEYS} \`<field>:asc\` / \`<field>:desc\` over the index's \`sortable_fields\`, ` +
          'applied before relevance (the ranking rules order documents with equal values); documents without the ' +
          "field come last. Default: the search settings' `sort` of the index, else relevance. A GEOPOINT field " +
          'sorts by distance from a point, `<field>(<lat>, <lng>):asc` (nearest first) or `:desc`, and each hit ' +
          'then has `_geo_distance_meters`.',
      }),
    limit: z
      .int()
      .min(0)
      .max(MAX_SEARCH_LIMIT)
      .nullable()
      .optional()
      .openapi({ description: `Hits per index, 0-${MAX_SEARCH_LIMIT}; default ${DEFAULT_SEARCH_LIMIT}.` }),
    offset: z
      .int()
      .min(0)
      .max(MAX_SEARCH_OFFSET)
      .nullable()
      .optional()
      .openapi({ description: `Hits to skip, 0-${MAX_SEARCH_OFFSET}; default 0.` }),
    threshold: z
      .int()
      .min(0)
      .max(1000)
      .nullable()
      .optional()
      .openapi({
        description:
          `When fewer documents than this match every query word, the last words are dropped one by one ` +
          `until enough do (0: never). Default ${DEFAULT_THRESHOLD}.`,
      }),
    session_id: z.string().max(200).nullable().optional(),
    user_id: z.string().max(200).nullable().optional(),
    __queryID: z
      .string()
      .max(200)
      .nullable()
      .optional()
      .openapi({ description: 'Echoed in the response entry of this context.' }),
  })
  .strict()
  .openapi('SearchContext');

export type SearchContextData = z.output<typeof SearchContext>;

/** Ids of pinned and hidden documents: Typesense lists them separated by commas, each as `id:position`. */
const RuleDocumentId = z
  .string()
  .min(1)
  .max(MAX_DOCUMENT_ID_LENGTH)
  .regex(/^[^,:]+$/, 'must not contain a comma or a colon');

export const MAX_RULES = 100;
export const MAX_PINNED_POSITION = MAX_SEARCH_LIMIT;

const RuleInput = z
  .object({
    id: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9_.-]+$/, 'must be letters, digits, `_`, `.` or `-`'),
    query: z
      .object({
        text: z.string().max(200),
        match: z.enum(['exact', 'contains']).openapi({
          description: '`exact`: the query is these words; `contains`: it holds them in a row.',
        }),
      })
      .strict()
      .nullable()
      .optional()
      .openapi({ description: 'Without one, the rule applies to every query (e.g. a category page).' }),
    filters: z.array(FieldFilterInput).max(10).optional().openapi({
      description: "The search context's filters must include each of these (same key, operator and values).",
    }),
    pin: z
      .array(z.object({ id: RuleDocumentId, position: z.int().min(1).max(MAX_PINNED_POSITION) }).strict())
      .max(20)
      .optional()
      .openapi({ description: '1-based positions; a pinned document shows when it passes the filters.' }),
    hide: z.array(RuleDocumentId).max(100).optional().openapi({ description: 'Documents never shown.' }),
    ...RuleExtensionsInput,
    ...ruleBoostInput(FieldFilterInput),
  })
  .strict()
  .refine(activePeriodIsOrdered, { message: 'active_from must be before active_to', path: ['active_to'] })
  .openapi('MerchandisingRuleInput');

export const RulesBody = z
  .object({
    data: z
      .array(RuleInput)
      .max(MAX_RULES)
      .refine((rules) => new Set(rules.map((rule) => rule.id)).size === rules.length, 'must not repeat a rule id'),
  })
  .strict()
  .openapi('MerchandisingRules');

export type RuleInputData = z.output<typeof RuleInput>;

export const RuleOutput = z
  .object({
    id: z.string(),
    query: z.object({ text: z.string(), match: z.enum(['exact', 'contains']) }).nullable(),
    filters: z.array(z.object({ key: z.string(), operator: z.string(), values: z.array(z.unknown()).optional() })),
    pin: z.array(z.object({ id: z.string(), position: z.int() })),
    hide: z.array(z.string()),
    ...RuleExtensionsOutput,
  })
  .openapi('MerchandisingRule');
export type FieldFilterData = z.output<typeof FieldFilterInput>;
export type FilterData = NonNullable<SearchContextData['filters']>[number];

export const SearchBody = z
  .object({ data: z.array(SearchContext).min(1).max(MAX_CONTEXTS_PER_REQUEST) })
  .strict()
  .openapi('SearchRequest', { example: SEARCH_REQUEST_EXAMPLE });

const HighlightResult = z
  .object({
    value: z.string(),
    matchLevel: z.enum(['none', 'partial', 'full']),
    matchedWords: z.array(z.string()),
  })
  .openapi('SearchHighlight');

const Hit = z
  .object({
    id: z.string(),
    objectID: z.string().openapi({ description: 'Equals `id` (InstantSearch keys hits by it).' }),
    metadata: z.unknown().openapi({ description: 'As stored; null when the document has none.' }),
    _highlightResult: z
      .record(z.string(), z.union([HighlightResult, z.array(HighlightResult)]))
      .openapi({ description: 'Each search field with matched words wrapped in `<mark>`, HTML-escaped.' }),
    __position: z.int().openapi({ description: '1-based position in the results.' }),
    _rule: z.string().nullable().openapi({
      description: 'Id of the merchandising rule that shaped these results (pinned or hid documents), or null.',
    }),
    click_url: z.string().nullable().openapi({
      description:
        "Signed URL that records a click and redirects to the document's `url` (or `metadata.url`); null without one.",
    }),
    _geo_distance_meters: z
      .int()
      .nullable()
      .optional()
      .openapi({
        description:
          "With a sort by distance: whole meters from the first such sort's point to the document's point (null " +
          'when it has none). Left out otherwise.',
      }),
  })
  .catchall(z.unknown())
  .openapi('SearchHit', { description: "The document's display fields, plus the keys below." });

const IndexResult = z
  .object({
    id: z.string().openapi({ description: 'Alias of the index.' }),
    query_id: z.uuid().openapi({
      description:
        'Id of this search of the index, signed, saying when it was made and what was searched: the `query_id` of ' +
        'the events reported about its hits.',
    }),
    hits: z.array(Hit),
    count: z.int().openapi({ description: 'Matching documents across all indexes of the request.' }),
    facets: z.record(z.string(), z.record(z.string(), z.int())),
    facet_hits: z
      .array(z.object({ value: z.string(), count: z.int() }))
      .optional()
      .openapi({ description: 'With a `facet_query`: the matching values, most frequent first (at most 100).' }),
    facet_ranges: FacetRangesOutput.optional(),
    facets_stats: z.record(
      z.string(),
      z.object({ min: z.number(), max: z.number(), avg: z.number(), sum: z.number() }),
    ),
    rule_data: RuleDataOutput,
  })
  .openapi('SearchIndexResult');

export const SearchResponseEntry = z
  .object({ __queryID: z.string().nullable(), results: z.array(IndexResult) })
  .openapi('SearchResponseEntry', { example: SEARCH_RESPONSE_ENTRY_EXAMPLE });

export const SearchResponseArray = z.array(SearchResponseEntry).openapi('InstantSearchResponse', {
  description: 'For `Accept: application/vnd.instantsearch+json`: one entry per context, bare.',
});
export const SearchResponseEnvelope = z.object({
  data: z.array(SearchResponseEntry),
  page: PageBlockSchema,
  meta: z.null(),
});

export type SearchResponseEntryData = z.output<typeof SearchResponseEntry>;

const optionsCount = z.int().min(0).max(1000).nullable().optional();

const SettingsFilterInput = z
  .object({
    key: z.string().min(1).max(64),
    label: z.string().max(200).nullable().optional(),
    type: FieldType.nullable().optional().openapi({ description: "Default: the field's type in the index." }),
    options_count: optionsCount,
    max_options_count: optionsCount,
  })
  .strict();

export const SearchSettingsInput = z
  .object({
    indexes: z
      .array(
        z
          .object({
            alias: IndexAlias,
            template: z
              .object({
                name: z.string().max(100).nullable().optional().openapi({ example: 'PRODUCTS' }),
                mapping: z
                  .array(z.object({ from: z.string().min(1).max(200), to: z.string().min(1).max(200) }).strict())
                  .max(100)
                  .optional(),
              })
              .strict()
              .nullable()
              .optional(),
            filters: z.array(SettingsFilterInput).max(50).optional(),
            results_per_page: z.int().min(1).max(MAX_SEARCH_LIMIT).nullable().optional(),
            sort: SortList.optional().openapi({
              description: 'Sort of searches of this index whose context has no `sort`. Default: relevance.',
            }),
            sort_options: z
              .array(z.object({ label: z.string().min(1).max(200), sort: SortList }).strict())
              .max(20)
              .optional()
              .openapi({
                description: 'Named sorts for the front end to offer (`[{label, sort}]`); it sends the chosen `sort`.',
              }),
          })
          .strict(),
      )
      .min(1)
      .max(20)
      .refine(
        (indexes) => new Set(indexes.map((i) => i.alias)).size === indexes.length,
        'must not name an index twice',
      ),
    filters: z
      .object({
        show_for: IndexAlias.nullable().optional(),
        sorting: z.array(z.string().min(1).max(100)).max(50).optional(),
        options_count: optionsCount,
        max_options_count: optionsCount,
      })
      .strict()
      .nullable()
      .optional(),
    is_autocomplete: z.boolean().nullable().optional(),
    suggestions: SuggestionSettingsInput.nullable().optional(),
  })
  .strict()
  .openapi('SearchSettingsInput', { example: SEARCH_SETTINGS_INPUT_EXAMPLE });

export type SearchSettingsInputData = z.output<typeof SearchSettingsInput>;

export const SearchSettingsOutput = z
  .object({
    indexes: z.array(
      z.object({
        alias: z.string(),
        template: z.object({
          name: z.string().nullable(),
          mapping: z.array(z.object({ from: z.string(), to: z.string() })),
        }),
        filters: z.array(
          z.object({
            key: z.string(),
            label: z.string().nullable(),
            type: z.string(),
            options_count: z.int().nullable(),
            max_options_count: z.int().nullable(),
          }),
        ),
        results_per_page: z.int().nullable(),
        sort: z.array(z.string()),
        sort_options: z.array(z.object({ label: z.string(), sort: z.array(z.string()) })),
      }),
    ),
    filters: z.object({
      show_for: z.string().nullable(),
      sorting: z.array(z.string()),
      options_count: z.int().nullable(),
      max_options_count: z.int().nullable(),
    }),
    is_autocomplete: z.boolean(),
    suggestions: SuggestionSettingsOutput.optional().openapi({
      description: 'The query suggestions block, when the settings have one.',
    }),
  })
  .openapi('SearchSettings', { example: SEARCH_SETTINGS_EXAMPLE });

export type SearchSettingsData = z.output<typeof SearchSettingsOutput>;

export const AnalyticsQuery = z
  .object({
    from: z.iso.datetime({ offset: true }).optional().openapi({
      description:
        'Start of the range (inclusive), ISO 8601, counted from the start of its hour; default 30 days before `to`.',
    }),
    to: z.iso
      .datetime({ offset: true })
      .optional()
      .openapi({ description: 'End of the range (exclusive), ISO 8601, counted to the end of its hour; default now.' }),
    limit: z.coerce.number().int().min(1).max(100).default(10).openapi({
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 10,
      description: 'Entries per list, 1-100; default 10.',
    }),
  })
  .strict();

export const MAX_EVENTS_PER_REQUEST = 100;
export const SEARCH_EVENT_TYPES = ['view', 'click', 'add_to_cart', 'conversion'] as const;
/** Below 10^14, so that any value fits the stored NUMERIC(18,4). */
const MAX_EVENT_VALUE = 1_000_000_000_000;

const SearchEventInput = z
  .object({
    type: z.enum(SEARCH_EVENT_TYPES).openapi({
      description:
        '`view`: the hit was shown; `click`: it was clicked (without following its `click_url`, which counts ' +
        'the click itself); `add_to_cart`: its product was added to the cart; `conversion`: it was bought.',
    }),
    query_id: z.uuid().openapi({ description: 'The `query_id` of the search result the document was a hit of.' }),
    document_id: storableText().min(1).max(MAX_DOCUMENT_ID_LENGTH).openapi({ description: "The hit's `id`." }),
    position: z
      .int()
      .min(1)
      .max(MAX_SEARCH_OFFSET + MAX_SEARCH_LIMIT)
      .nullable()
      .optional()
      .openapi({ description: "The hit's 1-based `__position`." }),
    session_id: storableText().max(200).nullable().optional(),
    value: z.number().min(0).max(MAX_EVENT_VALUE).nullable().optional().openapi({
      description: "A conversion's revenue in the shop's currency (kept to 4 decimals); only a `conversion` has one.",
    }),
  })
  .strict()
  .superRefine((event, context) => {
    if (event.type !== 'conversion' && event.value !== undefined && event.value !== null) {
      context.addIssue({ code: 'custom', path: ['value'], message: 'only a conversion has a value' });
    }
  })
  .openapi('SearchEvent');

export const SearchEventsBody = z
  .object({ data: z.array(SearchEventInput).min(1).max(MAX_EVENTS_PER_REQUEST) })
  .strict()
  .openapi('SearchEvents');

export type SearchEventData = z.output<typeof SearchEventInput>;

const rate = z.number().openapi({ description: 'Between 0 and 1; 0 when there were no searches.' });
const conversionRate = rate.openapi({ description: 'Conversions per search; 0 when there were no searches.' });
const revenue = z.number().openapi({ description: 'Sum of the values of the conversions.' });

export const AnalyticsOutput = z
  .object({
    from: z.iso.datetime().openapi({ description: 'Start of the range counted: `from` at the start of its hour.' }),
    to: z.iso.datetime().openapi({ description: 'End of the range counted (exclusive): `to` at the end of its hour.' }),
    searches: z.int(),
    clicks: z.int().openapi({ description: 'Followed click URLs and `click` events.' }),
    click_through_rate: rate.openapi({ description: 'Share of searches with at least one click.' }),
    no_result_rate: rate.openapi({ description: 'Share of searches without results.' }),
    views: z.int().openapi({ description: '`view` events of the searches in the range.' }),
    add_to_carts: z.int().openapi({ description: '`add_to_cart` events of the searches in the range.' }),
    conversions: z.int().openapi({ description: '`conversion` events of the searches in the range.' }),
    conversion_rate: conversionRate,
    revenue,
    top_queries: z.array(
      z.object({
        query: z.string(),
        searches: z.int(),
        clicks: z.int(),
        click_through_rate: rate,
        average_result_count: z.number(),
        views: z.int(),
        add_to_carts: z.int(),
        conversions: z.int(),
        conversion_rate: conversionRate,
        revenue,
      }),
    ),
    no_result_queries: z.array(z.object({ query: z.string(), searches: z.int() })),
    click_through_rate_by_position: z.array(
      z.object({
        position: z.int(),
        clicks: z.int(),
        click_through_rate: rate.openapi({ description: 'Clicks at this position per search.' }),
      }),
    ),
  })
  .openapi('IndexAnalytics');

export type AnalyticsData = z.output<typeof AnalyticsOutput>;
