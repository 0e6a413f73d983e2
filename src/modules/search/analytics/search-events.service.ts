import type { Db } from '../../kernel/db';
import type { FieldProblem } from '../../kernel/errors';
import { invalidInput } from '../../kernel/validation';
import { uuidv7 } from '../../kernel/ids';
import type { Principal } from '../auth/scopes';
import { searchEngineOf, settingsOf } from './search-engine-access';
import * as repository from './search.repository';
import type { SearchEventData } from './search.schemas';

const EVENT_TYPES = {
  view: 'VIEW',
  click: 'CLICK',
  add_to_cart: 'ADD_TO_CART',
  conversion: 'CONVERSION',
} as const satisfies Record<SearchEventData['type'], repository.SearchEventRecord['type']>;

/** What a shop front end reports about the hits of its searches: views, clicks, add-to-carts and conversions. */
export class SearchEventsService {
  constructor(private readonly db: Db) {}

  /**
   * Stores a batch of events about searches of a proxy key's search engine, all or none, with the
   * access rule of searching through the key.
   *
   * An event whose `query_id` is not a stored search is accepted: searches are written in batches,
   * up to 200 ms later and by whichever process answered them, so a front end that reports a view
   * as soon as it shows the hits is routinely faster than the search's batch, and refusing it would
   * lose real events (or make every client retry). Analytics join events to their searches, so an
   * event whose search never gets stored (a made-up id) counts nowhere. A `query_id` that is a
   * stored search of another index of the tenant is a mistake the service can see, and a 400.
   */
  async record(caller: Principal | null, key: string, events: SearchEventData[]): Promise<void> {
    const { settings } = await searchEngineOf(this.db, caller, key);
    // PostgreSQL writes a UUID in lowercase: compared as stored, whatever case the client sent.
    const searchIds = events.map((event) => event.query_id.toLowerCase());
    const tenantId = settings.tenantId;
    const aliases = settingsOf(settings.settings).indexes.map((entry) => entry.alias);
    const [indexIds, stored] = await Promise.all([
      repository.findIndexIdsByAlias(this.db, tenantId, aliases),
      repository.findSearchIndexes(this.db, tenantId, [...new Set(searchIds)]),
    ]);
    const ofThisEngine = new Set(indexIds);
    const indexOf = new Map(stored.map((search) => [search.id, search.index_id]));
    const problems: FieldProblem[] = [];
    searchIds.forEach((searchId, i) => {
      const indexId = indexOf.get(searchId);
      if (indexId !== undefined && !ofThisEngine.has(indexId)) {
        problems.push({ field: `[${i}].query_id`, message: `is a search of an index that ${key} does not search` });
      }
    });
    if (problems.length > 0) throw invalidInput(problems);
    await repository.insertEvents(
      this.db,
      events.map((event, i) => ({
        id: uuidv7(),
        tenantId,
        indexId: indexOf.get(searchIds[i]!) ?? null,
        searchId: searchIds[i]!,
        type: EVENT_TYPES[event.type],
        documentId: event.document_id,
        position: event.position ?? null,
        sessionId: event.session_id ?? null,
        value: event.value ?? null,
      })),
    );
  }
}
