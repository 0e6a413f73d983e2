import type { Db } from '../../../kernel/db';
import { notFound } from '../../../kernel/errors';
import { invalidField } from '../../../kernel/validation';
import { requireScope } from '../../../kernel/scopes';
import type { Principal } from '../../../kernel/principal';
import * as searchRepository from '../search.repository';
import type { AnalyticsData } from '../search.schemas';
import * as repository from './analytics.repository';
import { HOUR_MS } from './query-ids';
import type { SearchLog } from './search-log';

const DEFAULT_RANGE_MS = 30 * 24 * HOUR_MS;

const ratio = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);

/** Search analytics of an index: what people search for, what finds nothing, what they click and buy. */
export class AnalyticsService {
  constructor(
    private readonly db: Db,
    private readonly log: SearchLog,
  ) {}

  /**
   * Top queries, queries without results, click-through and conversion rates of an index over a time
   * range. Searches are counted per hour, so the range counted is the whole hours that cover the one
   * asked for; the answer's `from` and `to` say which.
   */
  async forIndex(
    principal: Principal,
    alias: string,
    range: { from?: string; to?: string; limit: number },
  ): Promise<AnalyticsData> {
    requireScope(principal, 'indexes:read');
    const index = await searchRepository.findIndex(this.db, principal.tenantId, alias);
    if (!index) throw notFound(`no index with alias "${alias}"`);
    const asked = range.to ? new Date(range.to) : new Date();
    const from = range.from ? new Date(range.from) : new Date(asked.getTime() - DEFAULT_RANGE_MS);
    if (from >= asked) throw invalidField('from', 'must be before to');
    const hours = {
      from: new Date(Math.floor(from.getTime() / HOUR_MS) * HOUR_MS),
      to: new Date(Math.ceil(asked.getTime() / HOUR_MS) * HOUR_MS),
    };
    // Searches of this process still waiting for their batch count too.
    await this.log.flush();
    const query = { indexId: index.id, ...hours, limit: range.limit };
    const [totals, top, noResults, positions] = await Promise.all([
      repository.countSearchesAndEvents(this.db, query),
      repository.topQueries(this.db, query),
      repository.noResultQueries(this.db, query),
      repository.clicksByPosition(this.db, query),
    ]);
    return {
      from: hours.from.toISOString(),
      to: hours.to.toISOString(),
      searches: totals.searches,
      clicks: totals.clicks,
      click_through_rate: ratio(totals.clickedSearches, totals.searches),
      no_result_rate: ratio(totals.noResults, totals.searches),
      views: totals.views,
      add_to_carts: totals.addToCarts,
      conversions: totals.conversions,
      conversion_rate: ratio(totals.conversions, totals.searches),
      revenue: totals.revenue,
      top_queries: top.map((row) => ({
        query: row.query,
        searches: row.searches,
        clicks: row.clicks,
        click_through_rate: ratio(row.clicked, row.searches),
        average_result_count: row.average_result_count,
        views: row.views,
        add_to_carts: row.add_to_carts,
        conversions: row.conversions,
        conversion_rate: ratio(row.conversions, row.searches),
        revenue: row.revenue,
      })),
      no_result_queries: noResults.map((row) => ({ query: row.query, searches: row.searches })),
      click_through_rate_by_position: positions.map((row) => ({
        position: row.position,
        clicks: row.clicks,
        click_through_rate: ratio(row.clicks, totals.searches),
      })),
    };
  }
}
