/**
 * Index definitions and states for the search engine's unit tests: every field a test does not
 * name takes the value of an empty index (no fields, the default ranking rules), so a test spells
 * out only what it is about.
 */
import type { IndexSettings, IndexState } from '../../src/modules/search/definition';
import { DEFAULT_RANKING_RULES, type IndexDefinition } from '../../src/modules/search/engine/engine';

/** An index definition as the engines receive it: `overrides` over an empty index. */
export const indexDefinition = (overrides: Partial<IndexDefinition> = {}): IndexDefinition => ({
  id: 'index',
  tenantId: 'tenant',
  alias: 'products',
  version: 1,
  rebuildVersion: 1,
  fields: [],
  searchFields: [],
  filterFields: [],
  facetFields: [],
  distinctField: null,
  synonyms: [],
  stopWords: [],
  rankingRules: [...DEFAULT_RANKING_RULES],
  sortableFields: [],
  ...overrides,
});

/** An index's settings as stored: `overrides` over an empty index's. */
export const indexSettings = (overrides: Partial<IndexSettings> = {}): IndexSettings => ({
  fields: [],
  searchFields: [],
  displayFields: [],
  filters: [],
  facetFields: [],
  distinctField: null,
  synonyms: [],
  stopWords: [],
  rankingRules: [],
  sortableFields: [],
  matching: {},
  ...overrides,
});

/** An index's stored state (its settings and the field types seen so far): `overrides` over an empty index. */
export const indexState = (overrides: Partial<IndexState> = {}): IndexState => ({
  id: 'index',
  tenantId: 'tenant',
  alias: 'products',
  version: 1,
  rebuildVersion: 1,
  seenFieldTypes: {},
  ...indexSettings(),
  ...overrides,
});
