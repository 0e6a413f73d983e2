import { useState } from 'react';
import { rest } from '../api';
import type { Can } from '../App';
import { ErrorMessage, Section, useAction, useLoad, type Cursor } from '../ui';

interface Synonym {
  root?: string;
  synonyms: string[];
}

interface IndexDefinition {
  alias: string;
  name: string;
  state: string;
  synonyms: Synonym[];
  stop_words: string[];
  ranking_rules: string[];
  facet_fields: string[];
  [field: string]: unknown;
}

interface RestPage {
  after: string | null;
  before: string | null;
}

/** Indexes, one index's synonyms, adding a synonym, and a live preview of a query. */
export function SearchArea({ can }: { can: Can }) {
  const [cursor, setCursor] = useState<Cursor>({});
  const [alias, setAlias] = useState<string | null>(null);
  const query = new URLSearchParams({ 'page[size]': '10' });
  if (cursor.after) query.set('page[after]', cursor.after);
  if (cursor.before) query.set('page[before]', cursor.before);
  const { data, error } = useLoad(
    () => rest<{ data: IndexDefinition[]; page: RestPage }>('GET', `/api/instant/indexes?${query}`),
    [cursor.after, cursor.before],
  );
  const indexes = data?.data ?? [];
  return (
    <div className="search">
      <Section title="Indexes">
        <ErrorMessage error={error} />
        {data && indexes.length === 0 && <p>No indexes yet.</p>}
        {indexes.length > 0 && (
          <table>
            <thead>
              <tr>
                <th scope="col">Alias</th>
                <th scope="col">Name</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {indexes.map((index) => (
                <tr key={index.alias}>
                  <td>
                    <button type="button" className="link" onClick={() => setAlias(index.alias)}>
                      {index.alias}
                    </button>
                  </td>
                  <td>{index.name}</td>
                  <td>{index.state}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <nav className="pager" aria-label="Indexes pages">
          <button type="button" disabled={!data?.page.before} onClick={() => setCursor({ before: data!.page.before! })}>
            Previous
          </button>
          <button type="button" disabled={!data?.page.after} onClick={() => setCursor({ after: data!.page.after! })}>
            Next
          </button>
        </nav>
      </Section>
      {alias && <IndexSettings key={alias} alias={alias} can={can} />}
      {alias && can('search') && <Preview key={`preview:${alias}`} alias={alias} />}
    </div>
  );
}

const indexPath = (alias: string) => `/api/instant/indexes/${encodeURIComponent(alias)}`;

function IndexSettings({ alias, can }: { alias: string; can: Can }) {
  const { data, error, reload } = useLoad(() => rest<{ data: IndexDefinition }>('GET', indexPath(alias)), [alias]);
  const [root, setRoot] = useState('');
  const [words, setWords] = useState('');
  const { error: writeError, busy, run } = useAction();
  const index = data?.data;
  return (
    <Section title={`Settings of ${alias}`}>
      <ErrorMessage error={error} />
      {index && (
        <dl className="settings">
          <dt>Ranking</dt>
          <dd>{index.ranking_rules.join(', ') || '—'}</dd>
          <dt>Facets</dt>
          <dd>{index.facet_fields.join(', ') || '—'}</dd>
          <dt>Stop words</dt>
          <dd>{index.stop_words.join(', ') || '—'}</dd>
        </dl>
      )}
      <h3>Synonyms</h3>
      <ul className="synonyms">
        {index?.synonyms.map((entry, position) => (
          <li key={position}>
            {entry.root ? `${entry.root} → ${entry.synonyms.join(', ')}` : entry.synonyms.join(' = ')}
          </li>
        ))}
      </ul>
      {index && index.synonyms.length === 0 && <p>No synonyms.</p>}
      {can('indexes:write') && (
        <form
          className="inline"
          aria-label="Add a synonym"
          onSubmit={async (event) => {
            event.preventDefault();
            const synonym: Synonym = {
              ...(root.trim() ? { root: root.trim() } : {}),
              synonyms: words
                .split(',')
                .map((word) => word.trim())
                .filter(Boolean),
            };
            // PUT replaces the whole definition: the current one, read just now, with one more synonym.
            const done = await run(async () => {
              const current = (await rest<{ data: IndexDefinition }>('GET', indexPath(alias))).data;
              await rest('PUT', indexPath(alias), { data: { ...current, synonyms: [...current.synonyms, synonym] } });
            });
            if (done) {
              setRoot('');
              setWords('');
              reload();
            }
          }}
        >
          <label htmlFor="synonym-root">Word (empty: all words are equal)</label>
          <input id="synonym-root" value={root} onChange={(event) => setRoot(event.target.value)} />
          <label htmlFor="synonym-words">Also finds (comma-separated)</label>
          <input id="synonym-words" required value={words} onChange={(event) => setWords(event.target.value)} />
          <button type="submit" disabled={busy}>
            Add synonym
          </button>
          <ErrorMessage error={writeError} />
        </form>
      )}
    </Section>
  );
}

interface Hit {
  id: string;
  name?: string;
  title?: string;
}

/** What a query finds with the index's current settings (POST /api/instant/search/indexes/{alias}). */
function Preview({ alias }: { alias: string }) {
  const [q, setQ] = useState('');
  const [result, setResult] = useState<{ count: number; hits: Hit[] } | null>(null);
  const { error, busy, run } = useAction();
  return (
    <Section title="Preview">
      <form
        className="inline"
        role="search"
        onSubmit={async (event) => {
          event.preventDefault();
          await run(async () => {
            const answer = await rest<{ data: { results: { count: number; hits: Hit[] }[] }[] }>(
              'POST',
              `/api/instant/search/indexes/${encodeURIComponent(alias)}`,
              { data: [{ q, limit: 10 }] },
            );
            setResult(answer.data[0]?.results[0] ?? { count: 0, hits: [] });
          });
        }}
      >
        <label htmlFor="preview-q">Query</label>
        <input id="preview-q" value={q} onChange={(event) => setQ(event.target.value)} />
        <button type="submit" disabled={busy}>
          Preview
        </button>
      </form>
      <ErrorMessage error={error} />
      {result && (
        <>
          <p role="status">
            {result.count} {result.count === 1 ? 'match' : 'matches'}
          </p>
          <ol className="hits">
            {result.hits.map((hit) => (
              <li key={hit.id}>{hit.name ?? hit.title ?? hit.id}</li>
            ))}
          </ol>
        </>
      )}
    </Section>
  );
}
