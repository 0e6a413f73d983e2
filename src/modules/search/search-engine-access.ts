/** A proxy key as a search engine: its access rule and its search settings, shared by searching and events. */
import type { Db } from '../../kernel/db';
import { AppError, notFound } from '../../kernel/errors';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import * as proxies from '../proxies';
import type { SearchSettingsData } from './search.schemas';

type StoredSettings = Omit<SearchSettingsData, 'indexes'> & {
  indexes: (Omit<SearchSettingsData['indexes'][number], 'sort' | 'sort_options'> &
    Partial<Pick<SearchSettingsData['indexes'][number], 'sort' | 'sort_options'>>)[];
};

/** Settings stored before an index entry had `sort` and `sort_options` read as having none. */
export const settingsOf = (stored: unknown): SearchSettingsData => {
  const settings = stored as StoredSettings;
  return {
    ...settings,
    indexes: settings.indexes.map((entry) => ({
      ...entry,
      sort: entry.sort ?? [],
      sort_options: entry.sort_options ?? [],
    })),
  };
};

const routesOf = (routes: unknown) =>
  (Array.isArray(routes) ? routes : [routes]) as {
    settings?: { auth?: { is_required?: boolean | null } | null } | null;
  }[];

/** The proxy and its search settings, after the proxy's access rule: a route that requires auth makes it private. */
export async function searchEngineOf(db: Db, caller: Principal | null, key: string) {
  const found = await proxies.proxyWithSearchSettings(db, key);
  const proxy = found?.proxy;
  if (!proxy || !proxy.isActive) throw notFound(`no search engine with key "${key}"`);
  if (routesOf(proxy.routes).some((route) => route.settings?.auth?.is_required === true)) {
    if (!caller)
      throw new AppError('UNAUTHORIZED', 'this search engine is private: send a bearer token with scope search');
    if (caller.tenantId !== proxy.tenantId) throw notFound(`no search engine with key "${key}"`);
    requireScope(caller, 'search');
  }
  if (proxy.isSuspended) throw new AppError('FORBIDDEN', 'the proxy is suspended');
  const settings = found.settings;
  if (!settings) throw notFound(`the proxy "${key}" has no search settings`);
  return { proxy, settings };
}
