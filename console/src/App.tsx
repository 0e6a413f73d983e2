import { useEffect, useState } from 'react';
import { setToken } from './api';
import { beginSignIn, clientIdFromPage, completeSignIn, refresh, signOut, type Session } from './auth';
import { EdgeArea } from './areas/Edge';
import { OrdersArea } from './areas/Orders';
import { SearchArea } from './areas/Search';
import { StockArea } from './areas/Stock';
import { ErrorMessage } from './ui';

/** A scope check as the API makes it: `*` allows everything. */
export type Can = (scope: string) => boolean;

const AREAS = [
  { id: 'stock', title: 'Stock', scope: 'inventory:read', View: StockArea },
  { id: 'orders', title: 'Orders', scope: 'orders:read', View: OrdersArea },
  { id: 'edge', title: 'Edge', scope: 'proxies:read', View: EdgeArea },
  { id: 'search', title: 'Search', scope: 'indexes:read', View: SearchArea },
] as const;

// The code in the address bar is exchanged once, however often the app mounts.
const arrival = completeSignIn();

export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [ready, setReady] = useState(false);
  const [clientId, setClientId] = useState(clientIdFromPage);
  const [area, setArea] = useState(() => location.hash.slice(1) || 'stock');

  useEffect(() => {
    arrival.then(setSession, setError).finally(() => setReady(true));
  }, []);

  useEffect(() => {
    if (!session?.refreshToken) return;
    // Renews a minute before the access token expires; a refused refresh ends the session.
    const timer = setTimeout(
      () =>
        refresh(session).then(setSession, (failure: unknown) => {
          setSession(null);
          setError(failure);
        }),
      Math.max(5_000, session.expiresAt - Date.now() - 60_000),
    );
    return () => clearTimeout(timer);
  }, [session]);

  useEffect(() => {
    const onHash = () => setArea(location.hash.slice(1) || 'stock');
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  if (!ready) return <p role="status">Loading…</p>;

  if (!session)
    return (
      <main className="sign-in">
        <h1>Console</h1>
        <p>Sign in with your shop's account to see and change its stock, orders, proxies, search and webhooks.</p>
        <ErrorMessage error={error} />
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void beginSignIn(clientId.trim());
          }}
        >
          <label htmlFor="client-id">Console client id</label>
          <input id="client-id" value={clientId} required onChange={(event) => setClientId(event.target.value)} />
          <button type="submit">Sign in</button>
        </form>
      </main>
    );

  // Set before the areas render: their first requests go out from their own effects, which run before this one's.
  setToken(session.accessToken);
  const can: Can = (scope) => session.scopes.has('*') || session.scopes.has(scope);
  const visible = AREAS.filter((entry) => can(entry.scope));
  const current = visible.find((entry) => entry.id === area) ?? visible[0];

  return (
    <>
      <header className="top">
        <strong>Console</strong>
        <nav aria-label="Areas">
          {visible.map((entry) => (
            <a key={entry.id} href={`#${entry.id}`} aria-current={entry === current ? 'page' : undefined}>
              {entry.title}
            </a>
          ))}
        </nav>
        <span className="who">Tenant {session.tenantId}</span>
        <button
          type="button"
          onClick={() => {
            void signOut(session).finally(() => {
              setToken('');
              setSession(null);
            });
          }}
        >
          Sign out
        </button>
      </header>
      <main>
        <h1>{current?.title ?? 'Nothing to show'}</h1>
        {current ? <current.View can={can} /> : <p>Your access allows none of the console's areas.</p>}
      </main>
    </>
  );
}
