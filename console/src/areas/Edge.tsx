import { useState } from 'react';
import { rest } from '../api';
import type { Can } from '../App';
import { ErrorMessage, Section, useAction, useLoad, type Cursor } from '../ui';

interface Proxy {
  key: string;
  routes: { path: string; origin?: { uri: string } }[] | { path: string; origin?: { uri: string } };
}

interface RestPage {
  after: string | null;
  before: string | null;
}

const routesOf = (proxy: Proxy) => (Array.isArray(proxy.routes) ? proxy.routes : [proxy.routes]);

/** Proxies with their routes, purging a proxy's cache by path or tag, and deleting a proxy. */
export function EdgeArea({ can }: { can: Can }) {
  const [cursor, setCursor] = useState<Cursor>({});
  const query = new URLSearchParams({ 'page[size]': '10' });
  if (cursor.after) query.set('page[after]', cursor.after);
  if (cursor.before) query.set('page[before]', cursor.before);
  const { data, error, reload } = useLoad(
    () => rest<{ data: Proxy[]; page: RestPage }>('GET', `/api/storage/edge/proxies?${query}`),
    [cursor.after, cursor.before],
  );
  const writer = can('proxies:write');
  const proxies = data?.data ?? [];
  return (
    <div className="edge">
      <Section title="Proxies">
        <ErrorMessage error={error} />
        {data && proxies.length === 0 && <p>No proxies yet.</p>}
        {proxies.length > 0 && (
          <table>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Routes</th>
                {writer && <th scope="col">Delete</th>}
              </tr>
            </thead>
            <tbody>
              {proxies.map((proxy) => (
                <tr key={proxy.key}>
                  <td>{proxy.key}</td>
                  <td>
                    <ul className="plain">
                      {routesOf(proxy).map((route) => (
                        <li key={route.path}>
                          {route.path} → {route.origin?.uri ?? '—'}
                        </li>
                      ))}
                    </ul>
                  </td>
                  {writer && (
                    <td>
                      <DeleteProxy proxyKey={proxy.key} onDone={reload} />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <nav className="pager" aria-label="Proxies pages">
          <button type="button" disabled={!data?.page.before} onClick={() => setCursor({ before: data!.page.before! })}>
            Previous
          </button>
          <button type="button" disabled={!data?.page.after} onClick={() => setCursor({ after: data!.page.after! })}>
            Next
          </button>
        </nav>
      </Section>
      {writer && proxies.length > 0 && <Purge keys={proxies.map((proxy) => proxy.key)} />}
    </div>
  );
}

function DeleteProxy({ proxyKey, onDone }: { proxyKey: string; onDone: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const { error, busy, run } = useAction();
  if (!confirming)
    return (
      <button type="button" onClick={() => setConfirming(true)} aria-label={`Delete proxy ${proxyKey}`}>
        Delete
      </button>
    );
  return (
    <div role="group" aria-label={`Confirm deleting ${proxyKey}`}>
      <span>Delete {proxyKey} and its cache?</span>
      <button
        type="button"
        disabled={busy}
        onClick={async () => {
          if (await run(() => rest('DELETE', `/api/storage/edge/proxies/${encodeURIComponent(proxyKey)}`))) onDone();
        }}
      >
        Yes, delete
      </button>
      <button type="button" onClick={() => setConfirming(false)}>
        Keep it
      </button>
      <ErrorMessage error={error} />
    </div>
  );
}

/** DELETE /api/storage/edge/proxies/{key}/cache with `path`, `tag` and `soft`. */
function Purge({ keys }: { keys: string[] }) {
  const [proxyKey, setProxyKey] = useState(keys[0] ?? '');
  const [path, setPath] = useState('');
  const [tag, setTag] = useState('');
  const [soft, setSoft] = useState(false);
  const [done, setDone] = useState('');
  const { error, busy, run } = useAction();
  return (
    <Section title="Purge">
      <form
        className="purge"
        onSubmit={async (event) => {
          event.preventDefault();
          setDone('');
          const query = new URLSearchParams();
          if (path.trim()) query.set('path', path.trim());
          if (tag.trim()) query.set('tag', tag.trim());
          if (soft) query.set('soft', 'true');
          const key = keys.includes(proxyKey) ? proxyKey : keys[0]!;
          const url = `/api/storage/edge/proxies/${encodeURIComponent(key)}/cache?${query}`;
          if (await run(() => rest('DELETE', url))) setDone(`Purged ${query.toString() || 'everything'} on ${key}.`);
        }}
      >
        <label htmlFor="purge-proxy">Proxy</label>
        <select id="purge-proxy" value={proxyKey} onChange={(event) => setProxyKey(event.target.value)}>
          {keys.map((key) => (
            <option key={key}>{key}</option>
          ))}
        </select>
        <label htmlFor="purge-path">Path prefix</label>
        <input id="purge-path" value={path} onChange={(event) => setPath(event.target.value)} />
        <label htmlFor="purge-tag">Tags (comma-separated)</label>
        <input id="purge-tag" value={tag} onChange={(event) => setTag(event.target.value)} />
        <label className="check">
          <input type="checkbox" checked={soft} onChange={(event) => setSoft(event.target.checked)} /> Soft (serve stale
          while refetching)
        </label>
        <button type="submit" disabled={busy}>
          Purge
        </button>
        {done && <p role="status">{done}</p>}
        <ErrorMessage error={error} />
      </form>
    </Section>
  );
}
