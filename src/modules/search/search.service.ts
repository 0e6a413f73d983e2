import type { Db } from '../../kernel/db';
import { notFound, type FieldProblem } from '../../kernel/errors';
import { invalidField, invalidInput, isStorableText } from '../../kernel/validation';
import { isUuid, uuidv7 } from '../../kernel/ids';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import { clickTarget, type ClickCodec } from './click-codes';
import { effectiveDisplayFields, fieldType, filterableFields, resolveDefinition } from './definition';
import type { EngineResult, SearchEngine } from './engine/engine';
import * as proxies from '../proxies';
import * as repository from './search.repository';
import * as analytics from './analytics/analytics.repository';
import { hourOf, queryKeyOf, type QueryIdCodec } from './analytics/query-ids';
import { retentionCutoff } from './analytics/retention';
import type { SearchLog, SearchRecord } from './analytics/search-log';
import type { IndexRows } from './index-rows';
import { boostsOf } from './rule-boosts';
import { ruleFor } from './rules';
import { searchEngineOf, settingsOf } from './search-engine-access';
import { toEngineQuery, toSortKeys, type QueryDefaults } from './search-query';
import { suggestionSettingsOf } from './suggestions/suggestions.schemas';
import type {
  SearchContextData,
  SearchResponseEntryData,
  SearchSettingsData,
  SearchSettingsInputData,
} from './search.schemas';

interface Target {
  index: repository.IndexRow;
  /** What the context leaves out, from the search settings (`results_per_page`, `sort`). */
  defaults?: QueryDefaults;
}

/** Searching (per index and per proxy key), the search settings of a proxy key, and click redirects. */
export class SearchService {
  constructor(
    private readonly db: Db,
    private readonly engine: SearchEngine,
    private readonly clicks: ClickCodec,
    private readonly queryIds: QueryIdCodec,
    private readonly log: SearchLog,
    private readonly baseUrl: string,
    private readonly rows: IndexRows,
    /** SEARCH_EVENTS_RETENTION_DAYS (at most the analytics one): older searches' clicks and events are not stored. */
    private readonly retentionDays: number,
  ) {}

  /** Searches one index of the caller's tenant. */
  async searchIndex(
    principal: Principal,
    alias: string,
    contexts: SearchContextData[],
  ): Promise<SearchResponseEntryData[]> {
    requireScope(principal, 'search');
    const index = await this.rows.find(principal.tenantId, alias);
    if (!index || !index.isActive) throw notFound(`no index with alias "${alias}"`);
    contexts.forEach((context, i) => {
      if (context.indices && context.indices.some((name) => name !== alias)) {
        throw invalidField(`[${i}].indices`, `may only name ${alias}`);
      }
    });
    return this.run(
      contexts.map(() => [{ index }]),
      contexts,
    );
  }

  /** Searches the indexes of a proxy key's search settings: public, or for the proxy's tenant with scope `search`. */
  async searchProxy(
    caller: Principal | null,
    key: string,
    contexts: SearchContextData[],
  ): Promise<SearchResponseEntryData[]> {
    const { settings } = await searchEngineOf(this.db, caller, key);
    const tenantId = settings.tenantId;
    const configured = settingsOf(settings.settings).indexes;
    const rows = await Promise.all(configured.map((entry) => this.rows.find(tenantId, entry.alias)));
    const available = new Map(
      configured
        .map((entry, i) => ({ entry, index: rows[i] ?? undefined }))
        .filter(
          (target): target is { entry: (typeof configured)[number]; index: repository.IndexRow } =>
            target.index !== undefined && target.index.isActive,
        )
        .map(({ entry, index }) => [
          entry.alias,
          { index, defaults: { limit: entry.results_per_page ?? undefined, sort: entry.sort } } satisfies Target,
        ]),
    );
    const targets = contexts.map((context, i) => {
      if (!context.indices || context.indices.length === 0) return [...available.values()];
      return context.indices.map((alias, j) => {
        const target = available.get(alias);
        if (!target) throw invalidField(`[${i}].indices[${j}]`, `${alias} is not an index of this search engine`);
        return target;
      });
    });
    return this.run(targets, contexts);
  }

  /** The search settings of a proxy key, as a front end reads them. */
  async getSettings(caller: Principal | null, key: string): Promise<SearchSettingsData> {
    return (await this.searchEngine(caller, key)).settings;
  }

  /** A proxy key's search settings and the tenant of its proxy, with the same access rule as searching through it. */
  async searchEngine(
    caller: Principal | null,
    key: string,
  ): Promise<{ tenantId: string; settings: SearchSettingsData }> {
    const { proxy, settings } = await searchEngineOf(this.db, caller, key);
    return { tenantId: proxy.tenantId, settings: settingsOf(settings.settings) };
  }

  /** Creates or replaces the search settings of one of the tenant's proxies. */
  async putSettings(principal: Principal, key: string, input: SearchSettingsInputData): Promise<SearchSettingsData> {
    requireScope(principal, 'indexes:write');
    const proxy = await proxies.proxyOfKey(this.db, key);
    if (!proxy || proxy.tenantId !== principal.tenantId) throw notFound(`no proxy with key "${key}"`);
    const rows = await repository.findIndexesByAlias(
      this.db,
      principal.tenantId,
      input.indexes.map((index) => index.alias),
    );
    const problems: FieldProblem[] = [];
    const settings: SearchSettingsData = {
      indexes: input.indexes.map((entry, i) => {
        const index = rows.find((row) => row.alias === entry.alias);
        if (!index) problems.push({ field: `indexes[${i}].alias`, message: `no index with alias "${entry.alias}"` });
        const filterable = index ? filterableFields(index) : [];
        if (index) {
          problems.push(...toSortKeys(index, entry.sort ?? [], `indexes[${i}].sort`).problems);
          (entry.sort_options ?? []).forEach((option, j) =>
            problems.push(...toSortKeys(index, option.sort, `indexes[${i}].sort_options[${j}].sort`).problems),
          );
        }
        return {
          alias: entry.alias,
          template: { name: entry.template?.name ?? null, mapping: entry.template?.mapping ?? [] },
          filters: (entry.filters ?? []).map((filter, j) => {
            if (index && !filterable.includes(filter.key)) {
              problems.push({
                field: `indexes[${i}].filters[${j}].key`,
                message: `${filter.key} is not a filterable field of index ${entry.alias}`,
              });
            }
            return {
              key: filter.key,
              label: filter.label ?? null,
              type: filter.type ?? (index ? fieldType(index, filter.key) : null) ?? 'STRING',
              options_count: filter.options_count ?? null,
              max_options_count: filter.max_options_count ?? null,
            };
          }),
          results_per_page: entry.results_per_page ?? null,
          sort: entry.sort ?? [],
          sort_options: (entry.sort_options ?? []).map((option) => ({ label: option.label, sort: option.sort })),
        };
      }),
      filters: {
        show_for: input.filters?.show_for ?? null,
        sorting: input.filters?.sorting ?? [],
        options_count: input.filters?.options_count ?? null,
        max_options_count: input.filters?.max_options_count ?? null,
      },
      is_autocomplete: input.is_autocomplete ?? false,
      ...(input.suggestions ? { suggestions: suggestionSettingsOf(input.suggestions) } : {}),
    };
    if (
      settings.filters.show_for !== null &&
      !input.indexes.some((index) => index.alias === settings.filters.show_for)
    ) {
      problems.push({ field: 'filters.show_for', message: 'must be one of the aliases in indexes' });
    }
    if (problems.length > 0) throw invalidInput(problems);
    await repository.saveSearchSettings(this.db, key, principal.tenantId, settings);
    return settings;
  }

  /** Records a click from a signed click code and returns where it leads. */
  async click(alias: string, code: string): Promise<string> {
    if (!(await repository.aliasExistsInAnyTenant(this.db, alias))) throw notFound(`no index with alias "${alias}"`);
    const click = this.clicks.decode(code);
    // Signed codes only carry what this service encoded, but a value the insert would refuse must be a 400, not a 500.
    if (!click || !isUuid(click.indexId) || !isUuid(click.searchId) || !isStorableText(click.documentId)) {
      throw invalidField('code', 'is not a valid click code');
    }
    const index = await repository.findIndexById(this.db, click.indexId);
    if (!index || index.alias !== alias) {
      throw invalidField('code', 'belongs to another index');
    }
    // The code is signed, so its query id is one this service issued; an id of an older kind (from a code
    // made before searches were counted per hour), or of a search past the retention, could never count.
    const search = this.queryIds.read(click.searchId);
    const searchHour = search ? hourOf(search.searchedAt) : undefined;
    if (search && searchHour && searchHour >= retentionCutoff(this.retentionDays)) {
      await analytics.insertClick(this.db, {
        id: uuidv7(),
        tenantId: index.tenantId,
        indexId: index.id,
        searchId: click.searchId.toLowerCase(),
        searchHour,
        queryKey: search.queryKey,
        documentId: click.documentId,
        position: click.position,
      });
    }
    return click.url;
  }

  /** Runs every context against its indexes; `count` of each result is the total over the context's indexes. */
  private async run(targetsPerContext: Target[][], contexts: SearchContextData[]): Promise<SearchResponseEntryData[]> {
    const problems: FieldProblem[] = [];
    const now = Date.now();
    const plans = contexts.map((context, i) =>
      targetsPerContext[i]!.map((target) => {
        const rule = ruleFor(target.index.rules, context, now);
        // A rule's replacement query is searched in place of the typed one (its conditions matched the typed one).
        const searched = rule?.replace_query !== undefined ? { ...context, q: rule.replace_query } : context;
        const translated = toEngineQuery(target.index, searched, `[${i}]`, target.defaults);
        if (translated.problems) problems.push(...translated.problems);
        const query = rule
          ? { ...translated.query!, pin: rule.pin, hide: rule.hide, ...boostsOf(target.index, rule) }
          : translated.query!;
        return { target, query, rule: rule?.id ?? null, ruleData: rule?.data };
      }),
    );
    if (problems.length > 0) throw invalidInput(problems);

    const records: SearchRecord[] = [];
    const searchedAt = Math.floor(Date.now() / 1000);
    const entries = await Promise.all(
      plans.map(async (plan, i) => {
        const context = contexts[i]!;
        const results = await Promise.all(plan.map(({ target, query }) => this.searchOne(target.index, query)));
        const count = results.reduce((sum, result) => sum + result.count, 0);
        // By code point: cutting at 512 UTF-16 units could split a pair into text PostgreSQL refuses.
        const text = Array.from((context.q ?? '').trim().toLowerCase())
          .slice(0, 512)
          .join('');
        const queryKey = queryKeyOf(text);
        return {
          __queryID: context.__queryID ?? null,
          results: results.map((result, j) => {
            const { index } = plan[j]!.target;
            const searchId = this.queryIds.issue(index.id, { searchedAt, queryKey });
            records.push({
              tenantId: index.tenantId,
              indexId: index.id,
              searchedAt,
              queryKey,
              query: text,
              resultCount: result.count,
            });
            return this.presentResult(
              index,
              result,
              plan[j]!.query.offset,
              searchId,
              count,
              plan[j]!.rule,
              plan[j]!.ruleData,
            );
          }),
        };
      }),
    );
    this.log.record(records);
    return entries;
  }

  private async searchOne(index: repository.IndexRow, query: Parameters<SearchEngine['search']>[1]) {
    const result = await this.engine.search(resolveDefinition(index), query);
    // The engine has caught up with this version (a write whose processing was cut short, or another process's).
    if (this.engine.catchesUpOnSearch && index.processedVersion < index.version) await this.rows.markProcessed(index);
    return result;
  }

  private presentResult(
    index: repository.IndexRow,
    result: EngineResult,
    offset: number,
    searchId: string,
    count: number,
    rule: string | null,
    ruleData?: Record<string, unknown>,
  ) {
    const display = effectiveDisplayFields(index);
    const clickBase = `${this.baseUrl}/api/instant/search/${index.alias}/click/`;
    return {
      id: index.alias,
      query_id: searchId,
      count,
      facets: result.facets,
      ...(result.facetHits ? { facet_hits: result.facetHits } : {}),
      ...(result.facetRanges ? { facet_ranges: result.facetRanges } : {}),
      facets_stats: result.facetsStats,
      ...(ruleData !== undefined ? { rule_data: ruleData } : {}),
      hits: result.hits.map((hit, i) => {
        const position = offset + i + 1;
        const target = clickTarget(hit.document.values, hit.document.metadata);
        const code = target
          ? this.clicks.encode({ indexId: index.id, searchId, documentId: hit.document.id, position, url: target })
          : null;
        // Built in place, in the order of the response: the display fields, then the members of every hit (which
        // take the place of a display field of the same name).
        const presented: Record<string, unknown> = {};
        for (const field of display) presented[field] = hit.document.values[field] ?? null;
        presented.id = hit.document.id;
        presented.objectID = hit.document.id;
        presented.metadata = hit.document.metadata ?? null;
        presented._highlightResult = hit.highlight;
        presented.__position = position;
        presented._rule = rule;
        presented.click_url = code ? `${clickBase}${code}` : null;
        if (hit.geoDistanceMeters !== undefined) presented._geo_distance_meters = hit.geoDistanceMeters;
        return presented as SearchResponseEntryData['results'][number]['hits'][number];
      }),
    };
  }
}
