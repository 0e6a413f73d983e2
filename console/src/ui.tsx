import { useCallback, useEffect, useState, type ReactNode } from 'react';
import type { PageInfo } from './api';

/** The API's refusal or failure, in its own words. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p role="alert" className="error">
      {error instanceof Error ? error.message : String(error)}
    </p>
  );
}

/** Loads `load()` now and again whenever `reload` is called or a dependency changes. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (value) => {
        if (!live) return;
        setError(null);
        setData(value);
      },
      (failure: unknown) => live && setError(failure),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { data, error, reload };
}

/** Cursor paging as every list of the API pages: forwards with `after`, backwards with `before`. */
export interface Cursor {
  after?: string;
  before?: string;
}

export function Pager({ info, onPage, label }: { info?: PageInfo; onPage: (cursor: Cursor) => void; label: string }) {
  if (!info) return null;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={!info.hasPreviousPage} onClick={() => onPage({ before: info.startCursor ?? '' })}>
        Previous
      </button>
      <button type="button" disabled={!info.hasNextPage} onClick={() => onPage({ after: info.endCursor ?? '' })}>
        Next
      </button>
    </nav>
  );
}

export const pageArgs = (cursor: Cursor, size = 10) =>
  cursor.before ? { last: size, before: cursor.before } : { first: size, after: cursor.after ?? null };

export function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

/** A write button's handler: runs `action`, shows its error, tells the caller when it succeeded. */
export function useAction() {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (failure) {
      setError(failure);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { error, busy, run };
}
