/**
 * Pure rules of an index definition: which fields an index has and of what type, the effective
 * settings when some are left out, and how a source document maps onto the index's fields.
 */
import {
  DEFAULT_RANKING_RULES,
  BUILT_IN_RANKING_RULES,
  type FieldType,
  type FieldValue,
  type IndexDefinition,
  type IndexedDocument,
  type RankingRule,
  type Scalar,
  type Synonym,
} from './engine/engine';
import { geoPointOf } from './engine/geo';
import { DEFAULT_MATCHING, type MatchingSettings } from './engine/matching';

export interface FieldMapping {
  from: string;
  to: string;
  type: FieldType | null;
  label: string | null;
}

/** The settings of an index as stored: lists left empty take their defaults. */
export interface IndexSettings {
  fields: FieldMapping[];
  searchFields: string[];
  displayFields: string[];
  filters: { key: string }[];
  facetFields: string[];
  distinctField: string | null;
  synonyms: Synonym[];
  stopWords: string[];
  rankingRules: string[];
  sortableFields: string[];
  /** The matching settings given; the others take their defaults. */
  matching: Partial<MatchingSettings>;
}

export interface IndexState extends IndexSettings {
  id: string;
  tenantId: string;
  alias: string;
  version: number;
  rebuildVersion: number;
  /** Type of each field as first seen in the documents. */
  seenFieldTypes: Record<string, FieldType>;
}

/** Keys of a document that are not index fields. */
export const ID_KEY = 'id';
export const METADATA_KEY = 'metadata';
/** Names a hit uses for itself, so no index field may take them. */
export const RESERVED_FIELD_NAMES = [
  ID_KEY,
  METADATA_KEY,
  'objectID',
  '_highlightResult',
  '__position',
  'click_url',
  '_geo_distance_meters',
  // Set on a plain object, this name replaces the object's prototype instead of adding a field.
  '__proto__',
];

/**
 * The type `types` holds for a field, from its own keys only: a field may be called `constructor`
 * or `toString`, which every plain object also answers from its prototype.
 */
export const typeIn = (types: Readonly<Record<string, FieldType>>, name: string): FieldType | undefined =>
  Object.hasOwn(types, name) ? types[name] : undefined;

export const SORT_RULE = /^([A-Za-z0-9_.-]+):(asc|desc)$/;
/** A sort by distance from a point: `<field>(<lat>, <lng>):asc|desc`, as Typesense writes it. */
export const GEO_SORT_RULE = /^([A-Za-z0-9_.-]+)\(\s*([-+0-9.eE]{1,30})\s*,\s*([-+0-9.eE]{1,30})\s*\):(asc|desc)$/;

export function parseRankingRule(rule: string): RankingRule {
  if ((BUILT_IN_RANKING_RULES as readonly string[]).includes(rule)) return rule as RankingRule;
  const match = SORT_RULE.exec(rule);
  if (!match) throw new Error(`not a ranking rule: ${rule}`);
  return { field: match[1]!, direction: match[2] as 'asc' | 'desc' };
}

/**
 * Index field names: the declared targets, or (without declarations) every field the documents showed, alphabetically.
 */
export function fieldNames(settings: IndexSettings, seen: Record<string, FieldType>): string[] {
  if (settings.fields.length > 0) return settings.fields.map((field) => field.to);
  return Object.keys(seen).sort();
}

export const fieldType = (state: Pick<IndexState, 'fields' | 'seenFieldTypes'>, name: string): FieldType | null =>
  state.fields.find((field) => field.to === name)?.type ?? typeIn(state.seenFieldTypes, name) ?? null;

export const effectiveSearchFields = (state: IndexState) =>
  state.searchFields.length > 0
    ? state.searchFields
    : fieldNames(state, state.seenFieldTypes).filter((name) => (fieldType(state, name) ?? 'STRING') === 'STRING');

export const effectiveDisplayFields = (state: IndexState) =>
  state.displayFields.length > 0 ? state.displayFields : fieldNames(state, state.seenFieldTypes);

export const effectiveFacetFields = (state: IndexSettings) =>
  state.facetFields.length > 0 ? state.facetFields : state.filters.map((filter) => filter.key);

export const effectiveRankingRules = (state: IndexSettings): string[] =>
  state.rankingRules.length > 0 ? state.rankingRules : [...DEFAULT_RANKING_RULES];

/** Fields a search may sort by: the declared ones, or every NUMBER, BOOLEAN and GEOPOINT field (by distance). */
export const effectiveSortableFields = (state: IndexState) =>
  state.sortableFields.length > 0
    ? state.sortableFields
    : fieldNames(state, state.seenFieldTypes).filter((name) => {
        const type = fieldType(state, name);
        return type === 'NUMBER' || type === 'BOOLEAN' || type === 'GEOPOINT';
      });

/** Fields that take filters: the `filters` keys and the facet fields (a facet is refined by filtering on it). */
export const filterableFields = (state: IndexSettings) => [
  ...new Set([...state.filters.map((f) => f.key), ...effectiveFacetFields(state)]),
];

/** The matching settings of an index: the ones given, the defaults for the others. */
export const effectiveMatching = (state: Pick<IndexSettings, 'matching'>): MatchingSettings => ({
  ...DEFAULT_MATCHING,
  ...state.matching,
});

export function resolveDefinition(state: IndexState): IndexDefinition {
  return {
    id: state.id,
    tenantId: state.tenantId,
    alias: state.alias,
    version: state.version,
    rebuildVersion: state.rebuildVersion,
    fields: fieldNames(state, state.seenFieldTypes).map((name) => ({ name, type: fieldType(state, name) })),
    searchFields: effectiveSearchFields(state),
    filterFields: filterableFields(state),
    facetFields: effectiveFacetFields(state),
    distinctField: state.distinctField,
    synonyms: state.synonyms,
    stopWords: state.stopWords,
    rankingRules: effectiveRankingRules(state).map(parseRankingRule),
    sortableFields: effectiveSortableFields(state),
    matching: effectiveMatching(state),
  };
}

/** A value as the field's type, or undefined when it cannot be one (CSV and the public client send strings). */
export function coerceScalar(value: unknown, type: FieldType): Scalar | undefined {
  switch (type) {
    case 'STRING':
      if (typeof value === 'string') return value;
      if (typeof value === 'number' && Number.isFinite(value)) return String(value);
      return undefined;
    case 'NUMBER':
      if (typeof value === 'number' && Number.isFinite(value)) return value;
      if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
      return undefined;
    case 'BOOLEAN':
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === '1') return true;
      if (value === 'false' || value === '0') return false;
      return undefined;
    case 'GEOPOINT':
      // A point is two numbers, never one value of a list (see `geoPointOf`).
      return undefined;
  }
}

/** What a GEOPOINT value must be. */
export const GEOPOINT_RULE =
  'must be a point, {"lat": <-90..90>, "lng": <-180..180>} or [lat, lng] in degrees (one point per document)';

/** An object naming `lat` and `lng` is taken for a point, and checked as one. */
const looksLikePoint = (value: unknown) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && 'lat' in value && 'lng' in value;

const typeOfValue = (value: unknown): FieldType | undefined =>
  typeof value === 'string'
    ? 'STRING'
    : typeof value === 'number'
      ? 'NUMBER'
      : typeof value === 'boolean'
        ? 'BOOLEAN'
        : undefined;

/** A field's value in a document: `path` is its `from`, split at the dots. */
function valueAt(document: Record<string, unknown>, path: string[]): unknown {
  let current: unknown = document;
  for (let i = 0; i < path.length; i++) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[path[i]!];
  }
  return current;
}

export interface DocumentProblem {
  field: string;
  message: string;
}

export const MAX_DOCUMENT_ID_LENGTH = 512;
export const DOCUMENT_ID_RULE = `is required: a string of 1-${MAX_DOCUMENT_ID_LENGTH} characters or an integer`;

/** A document's id as stored (integers as their decimal string), or undefined when the value cannot be one. */
export function documentIdOf(value: unknown): string | undefined {
  if (typeof value === 'string' && value.length > 0 && value.length <= MAX_DOCUMENT_ID_LENGTH) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

/**
 * A stored source document with a partial update merged in: each top-level key given replaces the
 * stored one, and a key given as null is removed. The id stays as stored.
 */
export function mergeDocument(stored: Record<string, unknown>, patch: Record<string, unknown>) {
  const merged = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (key === ID_KEY) continue;
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** An empty set of types, read where a document has shown no new type yet. */
const NO_TYPES: Readonly<Record<string, FieldType>> = Object.freeze({});

/**
 * Maps source documents onto an index's fields: made once for many documents, so that the paths
 * of the declared fields are split once, not once per document. A document's scalar values are
 * taken without allocating; only its values object, and arrays for array values, are new.
 */
class DocumentMapper {
  /** The declared fields with their source paths split, or null: every key of a document is a field. */
  private readonly declared: { name: string; path: string[]; type: FieldType | null }[] | null;
  /** What the last document mapped did not fit, if anything. */
  problems: DocumentProblem[] | null = null;
  /** Types the last document mapped showed for fields not typed before. */
  newTypes: Record<string, FieldType> | null = null;

  constructor(
    settings: IndexSettings,
    private readonly seen: Record<string, FieldType>,
  ) {
    this.declared =
      settings.fields.length > 0
        ? settings.fields.map((field) => ({ name: field.to, path: field.from.split('.'), type: field.type }))
        : null;
  }

  /** The document mapped, or undefined with `problems` set when it does not fit. */
  map(source: Record<string, unknown>): IndexedDocument | undefined {
    this.problems = null;
    this.newTypes = null;
    const id = documentIdOf(source[ID_KEY]);
    if (id === undefined) this.problem(ID_KEY, DOCUMENT_ID_RULE);
    const values = fieldValues();
    if (this.declared)
      for (const field of this.declared) this.field(values, field.name, valueAt(source, field.path), field.type);
    else
      for (const key of Object.keys(source))
        if (key !== ID_KEY && key !== METADATA_KEY) this.field(values, key, source[key], null);
    if (this.problems) return undefined;
    return { id: id!, values, metadata: source[METADATA_KEY] ?? null };
  }

  private problem(field: string, message: string) {
    (this.problems ??= []).push({ field, message });
  }

  private learn(name: string, type: FieldType, declared: FieldType | null) {
    if (!declared && !typeIn(this.seen, name)) (this.newTypes ??= {})[name] = type;
  }

  private field(values: Record<string, FieldValue>, name: string, value: unknown, declared: FieldType | null) {
    if (value === undefined || value === null || value === '') {
      values[name] = null;
      return;
    }
    if (!this.declared && RESERVED_FIELD_NAMES.includes(name)) {
      this.problem(name, 'is a reserved name; map it to another field with `fields`');
      return;
    }
    const isArray = Array.isArray(value);
    const type =
      declared ??
      typeIn(this.seen, name) ??
      typeIn(this.newTypes ?? NO_TYPES, name) ??
      (looksLikePoint(value) ? 'GEOPOINT' : typeOfValue(isArray ? firstNonNull(value) : value));
    if (!type) {
      this.problem(name, 'must be a string, number or boolean, an array of one of them, or a point {"lat", "lng"}');
      return;
    }
    if (type === 'GEOPOINT') {
      const point = geoPointOf(value);
      if (!point) {
        this.problem(name, GEOPOINT_RULE);
        return;
      }
      this.learn(name, type, declared);
      values[name] = point;
      return;
    }
    if (!isArray) {
      const coerced = coerceScalar(value, type);
      if (coerced === undefined) {
        this.problem(name, `must be of type ${type}`);
        return;
      }
      this.learn(name, type, declared);
      values[name] = coerced;
      return;
    }
    const coerced: Scalar[] = [];
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      // Nulls are left out, and so are holes (as `filter` would).
      if (item === null || (item === undefined && !(i in value))) continue;
      const one = coerceScalar(item, type);
      if (one === undefined) {
        this.problem(name, `must be of type ${type} (each element)`);
        return;
      }
      coerced.push(one);
    }
    this.learn(name, type, declared);
    values[name] = coerced;
  }
}

/** The first element that is not null (undefined when there is none), as `find` gives it. */
function firstNonNull(items: unknown[]): unknown {
  for (let i = 0; i < items.length; i++) if (items[i] !== null) return items[i];
  return undefined;
}

/**
 * A document's values by field, on a prototype of nothing: the engines read `values[field]` for
 * fields a document lacks, and a field called `constructor` must then be missing, not Object's. (An
 * object of `Object.create(null)` itself would be kept as a dictionary: 40% more memory per document
 * and slower reads.)
 */
const NO_INHERITED_VALUES: object = Object.freeze(Object.create(null));
const fieldValues = (): Record<string, FieldValue> => Object.create(NO_INHERITED_VALUES) as Record<string, FieldValue>;

const isObject = (raw: unknown): raw is Record<string, unknown> =>
  raw !== null && typeof raw === 'object' && !Array.isArray(raw);

/**
 * Maps a source document onto the index's fields. `seen` carries the types seen so far in this
 * batch and the index; a new field's type is added to it. Returns the problems instead when the
 * document does not fit.
 */
export function mapDocument(
  raw: unknown,
  settings: IndexSettings,
  seen: Record<string, FieldType>,
): { document: IndexedDocument; problems?: undefined } | { document?: undefined; problems: DocumentProblem[] } {
  if (!isObject(raw)) return { problems: [{ field: '', message: 'must be an object' }] };
  const mapper = new DocumentMapper(settings, seen);
  const document = mapper.map(raw);
  if (!document) return { problems: mapper.problems! };
  if (mapper.newTypes) Object.assign(seen, mapper.newTypes);
  return { document };
}

/**
 * Maps stored documents for an engine under the current definition, leaving out values that no
 * longer fit (the definition may have changed since a document was written). For many documents
 * of one index: the mapping is prepared once.
 */
export function storedDocumentMapper(
  settings: IndexSettings,
  seen: Record<string, FieldType>,
): (raw: unknown) => IndexedDocument | null {
  // Types a document shows are not learnt: a stored document is mapped as if it were the only one.
  const mapper = new DocumentMapper(settings, seen);
  return (raw) => (isObject(raw) && mapper.map(raw)) || mapStoredParts(raw, settings, seen);
}

/** Maps one stored document for an engine under the current definition (see `storedDocumentMapper`). */
export const mapStoredDocument = (raw: unknown, settings: IndexSettings, seen: Record<string, FieldType>) =>
  storedDocumentMapper(settings, seen)(raw);

/** A stored document that does not fit as a whole, with the values that still fit, field by field. */
function mapStoredParts(
  raw: unknown,
  settings: IndexSettings,
  seen: Record<string, FieldType>,
): IndexedDocument | null {
  const source = raw as Record<string, unknown> | null;
  if (!source || typeof source !== 'object') return null;
  const id = typeof source[ID_KEY] === 'number' ? String(source[ID_KEY]) : source[ID_KEY];
  if (typeof id !== 'string' || id === '') return null;
  const document: IndexedDocument = { id, values: fieldValues(), metadata: source[METADATA_KEY] ?? null };
  const names =
    settings.fields.length > 0
      ? settings.fields
      : Object.keys(source).map((key) => ({ from: key, to: key, type: null }));
  for (const field of names) {
    if (field.to === ID_KEY || field.to === METADATA_KEY) continue;
    const type = field.type ?? typeIn(seen, field.to);
    const one = mapDocument(
      { id, [field.to]: valueAt(source, field.from.split('.')) },
      { ...settings, fields: [] },
      type ? { [field.to]: type } : {},
    );
    document.values[field.to] = one.document?.values[field.to] ?? null;
  }
  return document;
}
