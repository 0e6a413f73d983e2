/** The popular queries of an index's search log that found results, for its query suggestions. SQL only. */
import { z } from 'zod';
import type { Db } from '../../../kernel/db';
import { int8, parseRows } from '../../../kernel/rows';

const PopularQuery = z.object({ query: z.string(), searches: int8, hits: int8 });
export type PopularQuery = z.output<typeof PopularQuery>;

/**
 * The `limit` queries of the index searched most often with results since `since`, with how often
 * (`searches`: the searches that found something) and the average result count of those searches
 * (a search without results adds 0 to `result_count_sum`, so the sum over the searches with results
 * is the whole sum). One statement, over the primary key's (index, hour) prefix.
 */
export const popularQueries = async (db: Db, indexId: string, since: Date, limit: number) =>
  parseRows(
    PopularQuery,
    await db.$queryRaw<unknown[]>`
    SELECT query, sum(searches - no_results)::bigint AS searches,
           round(sum(result_count_sum) / sum(searches - no_results))::bigint AS hits
      FROM search_query_stats
     WHERE index_id = ${indexId}::uuid AND hour >= ${since} AND query <> ''
     GROUP BY query
    HAVING sum(searches - no_results) > 0
     ORDER BY sum(searches - no_results) DESC, query
     LIMIT ${limit}`,
  );
