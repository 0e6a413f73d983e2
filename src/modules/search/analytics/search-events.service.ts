import type { Db } from '../../../kernel/db';
import type { FieldProblem } from '../../../kernel/errors';
import { invalidInput } from '../../../kernel/validation';
import { uuidv7 } from '../../../kernel/ids';
import type { Principal } from '../../../kernel/principal';
import { searchEngineOf, settingsOf } from '../search-engine-access';
import * as searchRepository from '../search.repository';
import type { SearchEventData } from '../search.schemas';
import * as repository from './analytics.repository';
import { hourOf, type QueryIdCodec } from './query-ids';
import { retentionCutoff } from './retention';

const EVENT_TYPES = {
  view: 'VIEW',
  click: 'CLICK',
  add_to_cart: 'ADD_TO_CART',
  conversion: 'CONVERSION',
} as const satisfies Record<SearchEventData['type'], repository.SearchEventRecord['type']>;

/** What a shop front end reports about the hits of its searches: views, clicks, add-to-carts and conversions. */
export class SearchEventsService {
  constructor(
    private readonly db: Db,
    private readonly queryIds: QueryIdCodec,
    /** SEARCH_EVENTS_RETENTION_DAYS (at most the analytics one): older searches' clicks and events are not stored. */
    private readonly retentionDays: number,
  ) {}

  /**
   * Stores a batch of events about searches of a proxy key's search engine, all or none, with the
   * access rule of searching through the key.
   *
   * Every event must name a search made through the key: a `query_id` is signed for the index it
   * searched, so one that is made up, edited, or of an index the key does not search is a 400
   * naming it, and nothing of the batch is stored. An event never waits for its search to be
   * written (searches are counted in batches, up to a second later, by whichever process answered
   * them): the signed id is proof enough, and the event joins the counts once they are written.
   * Events of a search older than the events retention are accepted but not stored: its rows were
   * counted already, or it could never count.
   */
  async record(caller: Principal | null, key: string, events: SearchEventData[]): Promise<void> {
    const { settings } = await searchEngineOf(this.db, caller, key);
    const tenantId = settings.tenantId;
    const aliases = settingsOf(settings.settings).indexes.map((entry) => entry.alias);
    const indexIds = await searchRepository.findIndexIdsByAlias(this.db, tenantId, aliases);
    const cutoff = retentionCutoff(this.retentionDays);
    const problems: FieldProblem[] = [];
    const records: repository.SearchEventRecord[] = [];
    events.forEach((event, i) => {
      const search = this.queryIds.verify(event.query_id, indexIds);
      if (!search) {
        problems.push({ field: `[${i}].query_id`, message: `is not the query_id of a search through ${key}` });
        return;
      }
      const searchHour = hourOf(search.searchedAt);
      if (searchHour < cutoff) return;
      records.push({
        id: uuidv7(),
        tenantId,
        indexId: search.indexId,
        // PostgreSQL writes a UUID in lowercase: stored as it will be compared, whatever case the client sent.
        searchId: event.query_id.toLowerCase(),
        searchHour,
        queryKey: search.queryKey,
        type: EVENT_TYPES[event.type],
        documentId: event.document_id,
        position: event.position ?? null,
        sessionId: event.session_id ?? null,
        value: event.value ?? null,
      });
    });
    if (problems.length > 0) throw invalidInput(problems);
    if (records.length > 0) await repository.insertEvents(this.db, records);
  }
}
