/**
 * Pure translation between this service's index definitions and documents and Typesense's
 * collections and documents; queries are translated in typesense-query.ts and typesense-filters.ts,
 * responses in typesense-results.ts. See docs/guides/search.md ("How settings map onto Typesense") for
 * what maps to what and where the engines differ.
 */
import { createHash } from 'node:crypto';
import type { CollectionCreateSchema } from 'typesense/lib/Typesense/Collections';
import type { CollectionFieldSchema } from 'typesense/lib/Typesense/Collection';
import { hasValue, isGeoPoint, valuesOf, type FieldType, type IndexDefinition, type IndexedDocument } from './engine';
import { DEFAULT_MATCHING } from './matching';
import type { TypesenseProtocol } from './typesense-version';

/** Where metadata travels in a Typesense document: a string field that is stored, not indexed. */
export const METADATA_FIELD = '__metadata';
/** The document's values as sent, returned with hits (indexed copies may be reshaped, see `schemaFields`). */
export const VALUES_FIELD = '__values';
/**
 * The filterable fields a document has a value for, and `*` so that no document lacks the field:
 * Typesense cannot filter on whether a field exists.
 */
export const PRESENT_FIELDS_FIELD = '__has';
const ALWAYS_PRESENT = '*';
/** A sortable copy of the id: Typesense cannot sort by `id`, and ties are broken by id. */
export const SORT_ID_FIELD = '__id';
/**
 * A single-valued copy of a sortable field that query sorts use: the field itself stays an array, so
 * filters still match every value; a document sorts by its first value, as in the embedded engine.
 */
export const sortCopyField = (field: string) => `__sort_${field}`;
/** Facet counts of a NUMBER field come from the original text, not from Typesense's 32-bit float. */
export const numberFacetField = (field: string) => `__text_${field}`;
/** Typesense looks for typo variants while it has fewer results than this. */
export const TYPO_TOKENS_THRESHOLD = 100;
/** Typesense sorts by at most three fields. */
export const MAX_TYPESENSE_SORT_FIELDS = 3;
/** With a distinct field, groups are counted exactly up to this many (v30; v29 estimates). */
export const GROUP_MAX_CANDIDATES = 10_000;

/** The alias that always points at the current collection of an index. */
export const aliasName = (definition: Pick<IndexDefinition, 'id'>) => `idx_${definition.id.replaceAll('-', '')}`;

const TYPESENSE_TYPES: Record<FieldType, string> = {
  STRING: 'string',
  NUMBER: 'float',
  BOOLEAN: 'bool',
  GEOPOINT: 'geopoint',
};
/**
 * Booleans sort as 0 and 1: false first ascending, as the embedded engine orders them. A geopoint
 * needs no copy: it sorts by distance, `field(lat, lng):asc`, and holds one point anyway.
 */
const SORT_COPY_TYPES: Record<Exclude<FieldType, 'GEOPOINT'>, string> = {
  STRING: 'string',
  NUMBER: 'float',
  BOOLEAN: 'int32',
};

const sortFieldsOf = (definition: IndexDefinition) =>
  new Set(definition.rankingRules.flatMap((rule) => (typeof rule === 'object' ? [rule.field] : [])));

/** Fields Typesense must hold one value in (it sorts and groups single values): the first value is sent. */
const singleValued = (definition: IndexDefinition, field: string) =>
  sortFieldsOf(definition).has(field) || field === definition.distinctField;

export const matchingOf = (definition: IndexDefinition) => definition.matching ?? DEFAULT_MATCHING;

/**
 * Whether a field is a GEOPOINT field: it neither groups nor sorts by value (a point is no value),
 * so a distinct field or a `<field>:asc|desc` rule naming it does nothing, as in the embedded engine.
 */
export const isGeoField = (definition: IndexDefinition, name: string) =>
  definition.fields.some((field) => field.name === name && field.type === 'GEOPOINT');

/** STRING until a document shows a field's type: a later type changes the schema and rebuilds the collection. */
const typeOf = (field: IndexDefinition['fields'][number]): FieldType => field.type ?? 'STRING';

/**
 * The index fields, then every field a setting names that no document has shown yet: Typesense
 * refuses a search naming a field its schema lacks.
 */
function declaredFields(definition: IndexDefinition): IndexDefinition['fields'] {
  const known = new Set(definition.fields.map((field) => field.name));
  const named = new Set([
    ...definition.searchFields,
    ...definition.filterFields,
    ...definition.facetFields,
    ...sortFieldsOf(definition),
    ...definition.sortableFields,
    ...(definition.distinctField ? [definition.distinctField] : []),
  ]);
  return [...definition.fields, ...[...named].filter((name) => !known.has(name)).map((name) => ({ name, type: null }))];
}

/** Fields the query matches: Typesense searches string fields only. */
export const queryFields = (definition: IndexDefinition) =>
  definition.searchFields.filter(
    (name) => typeOf(definition.fields.find((field) => field.name === name) ?? { name, type: null }) === 'STRING',
  );

/**
 * Every index field with its type and the flags it needs: `facet` for facet and distinct fields,
 * `sort` for the fields of sort rules, `index: false` for fields only displayed. Fields hold arrays
 * (a value may be one value or several), except single-valued sort and distinct fields.
 */
export function schemaFields(definition: IndexDefinition): CollectionFieldSchema[] {
  const sortFields = sortFieldsOf(definition);
  const indexed = new Set([
    ...definition.searchFields,
    ...definition.filterFields,
    ...definition.facetFields,
    ...sortFields,
    ...(definition.distinctField ? [definition.distinctField] : []),
  ]);
  const fields: CollectionFieldSchema[] = [];
  const { language, exactFields } = matchingOf(definition);
  // Stems are matched in the search fields that are not matched word for word.
  const stemmed = new Set(language ? queryFields(definition).filter((name) => !exactFields.includes(name)) : []);
  for (const field of declaredFields(definition)) {
    const type = typeOf(field);
    if (type === 'GEOPOINT') {
      // One point per document: filtered and sorted by distance, never faceted.
      const used = indexed.has(field.name) || definition.sortableFields.includes(field.name);
      fields.push({ name: field.name, type: 'geopoint', optional: true, ...(used ? {} : { index: false }) });
      continue;
    }
    const facet = definition.facetFields.includes(field.name) || field.name === definition.distinctField;
    fields.push({
      name: field.name,
      type: `${TYPESENSE_TYPES[type]}${singleValued(definition, field.name) ? '' : '[]'}`,
      optional: true,
      ...(facet ? { facet: true } : {}),
      ...(sortFields.has(field.name) ? { sort: true } : {}),
      ...(indexed.has(field.name) ? {} : { index: false }),
      ...(stemmed.has(field.name) ? { stem: true, locale: language } : {}),
    } as CollectionFieldSchema);
    if (type === 'NUMBER' && definition.facetFields.includes(field.name)) {
      fields.push({ name: numberFacetField(field.name), type: 'string[]', optional: true, facet: true });
    }
    if (definition.sortableFields.includes(field.name)) {
      fields.push({
        name: sortCopyField(field.name),
        type: SORT_COPY_TYPES[type] as CollectionFieldSchema['type'],
        optional: true,
        sort: true,
      });
    }
  }
  return [
    ...fields,
    { name: PRESENT_FIELDS_FIELD, type: 'string[]', optional: true },
    { name: SORT_ID_FIELD, type: 'string', sort: true },
    { name: VALUES_FIELD, type: 'string', optional: true, index: false },
    { name: METADATA_FIELD, type: 'string', optional: true, index: false },
  ];
}

/** The collection's own tokenizer settings, when the index has any. */
function tokenizerSettings(definition: IndexDefinition) {
  const { tokenSeparators, symbolsToIndex } = matchingOf(definition);
  return {
    ...(tokenSeparators.length > 0 ? { token_separators: tokenSeparators } : {}),
    ...(symbolsToIndex.length > 0 ? { symbols_to_index: symbolsToIndex } : {}),
  };
}

/** Eight hex digits that change whenever the fields of the schema or its tokenizer settings do. */
export const schemaFingerprint = (definition: IndexDefinition) => {
  const tokenizer = tokenizerSettings(definition);
  const fields = JSON.stringify(schemaFields(definition));
  return createHash('sha256')
    .update(Object.keys(tokenizer).length > 0 ? fields + JSON.stringify(tokenizer) : fields)
    .digest('hex')
    .slice(0, 8);
};

/**
 * A collection per rebuild, named by the index version and the schema's fingerprint, so a rebuild
 * fills a new collection while searches use the old one, and a change of field types is noticed.
 */
export const collectionName = (definition: IndexDefinition) =>
  `${aliasName(definition)}_v${definition.version}_${schemaFingerprint(definition)}`;

/** Whether a collection was built with the schema this definition needs. */
export const collectionFits = (collection: string, definition: IndexDefinition) =>
  collection.startsWith(`${aliasName(definition)}_v`) && collection.endsWith(`_${schemaFingerprint(definition)}`);

/** The synonym set (v30) and the stopwords set of one collection, created before it and deleted with it. */
export const synonymSetName = (collection: string) => `${collection}_synonyms`;
export const stopwordSetName = (collection: string) => `${collection}_stopwords`;
/** Earlier releases named collections `<alias>_v<version>` (no fingerprint) and kept one stopwords set per index. */
const EARLIER_RELEASE_COLLECTION = /^(idx_[0-9a-f]{32})_v\d+$/;
export const builtByEarlierRelease = (collection: string) => EARLIER_RELEASE_COLLECTION.test(collection);
export const legacyStopwordSetName = (collection: string) => {
  const alias = EARLIER_RELEASE_COLLECTION.exec(collection)?.[1];
  return alias === undefined ? null : `${alias}_stopwords`;
};
/** The set Typesense v30 makes of a collection's synonyms when it upgrades a server that had them. */
export const migratedSynonymSetName = (collection: string) => `${collection}_synonyms_index`;

export function collectionSchema(
  definition: IndexDefinition,
  name: string,
  protocol: TypesenseProtocol,
): CollectionCreateSchema {
  const withSynonymSet = protocol.synonyms === 'synonym-sets' && definition.synonyms.length > 0;
  return {
    name,
    fields: schemaFields(definition),
    ...tokenizerSettings(definition),
    ...(withSynonymSet ? { synonym_sets: [synonymSetName(name)] } : {}),
  } as CollectionCreateSchema;
}

/** Synonyms as Typesense synonym items (one-way when `root` is set), for a set or a collection. */
export const toTypesenseSynonyms = (definition: IndexDefinition) =>
  definition.synonyms.map((synonym, i) => ({
    id: `synonym-${i}`,
    synonyms: synonym.synonyms,
    ...(synonym.root !== undefined ? { root: synonym.root } : {}),
  }));

/** Documents as Typesense documents of the definition's collection (the schema is worked out once). */
export function toTypesenseDocuments(
  definition: IndexDefinition,
  documents: IndexedDocument[],
): Record<string, unknown>[] {
  const indexedFields = schemaFields(definition).filter((field) => field.index !== false);
  const facetFields = new Set(definition.facetFields);
  return documents.map((document) => {
    const indexed: Record<string, unknown> = {};
    for (const field of indexedFields) {
      const value = document.values[field.name];
      // Typesense takes a point as `[lat, lng]`.
      if (isGeoPoint(value)) {
        if (field.type === 'geopoint') indexed[field.name] = [value.lat, value.lng];
        continue;
      }
      const values = valuesOf(value);
      if (values.length === 0) continue;
      indexed[field.name] = field.type.endsWith('[]') ? values : values[0];
      if (facetFields.has(field.name) && typeof values[0] === 'number') {
        indexed[numberFacetField(field.name)] = values.map(String);
      }
    }
    for (const field of definition.sortableFields) {
      const first = valuesOf(document.values[field] ?? null)[0];
      if (first !== undefined) indexed[sortCopyField(field)] = typeof first === 'boolean' ? Number(first) : first;
    }
    const present = definition.filterFields.filter((field) => hasValue(document.values[field]));
    return {
      id: document.id,
      [SORT_ID_FIELD]: document.id,
      ...indexed,
      [PRESENT_FIELDS_FIELD]: [ALWAYS_PRESENT, ...present],
      [VALUES_FIELD]: JSON.stringify(document.values),
      ...(document.metadata !== null && document.metadata !== undefined
        ? { [METADATA_FIELD]: JSON.stringify(document.metadata) }
        : {}),
    };
  });
}

export const isNumberFacet = (definition: IndexDefinition, field: string) =>
  definition.facetFields.includes(field) &&
  definition.fields.find((candidate) => candidate.name === field)?.type === 'NUMBER';
