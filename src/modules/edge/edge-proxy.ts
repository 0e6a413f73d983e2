/** A proxy's configuration as the data plane reads it, from its row. */
import type { ProxyVersionRow } from '../proxies';
import type { EdgeAuthSettings, EdgeCacheSettings, EdgeRoute } from './routing';

/** A proxy as the data plane reads it. */
export interface EdgeProxy {
  key: string;
  tenantId: string;
  routes: EdgeRoute[];
  signature: { secret: string | null; cache: EdgeCacheSettings; auth: EdgeAuthSettings };
  oauth: {
    issuer: string | null;
    client_id: string | null;
    authorize_url: string | null;
    return_url_key: string | null;
  };
  isActive: boolean;
  isSuspended: boolean;
  /** The writing transaction of the row this was read from (see `forgetProxy`). */
  version: string;
}

const nullCache: EdgeCacheSettings = { age: null, is_as_origin: null, is_public: null, stale_while_revalidate: null };
const nullAuth: EdgeAuthSettings = { is_required: null, scope: null };

/** Settings for signed requests: the signature block's, falling back field by field to the route's. */
export const overlay = <T extends object>(over: T, under: T): T => {
  const result = { ...under } as Record<string, unknown>;
  for (const [name, value] of Object.entries(over)) if (value !== null && value !== undefined) result[name] = value;
  return result as T;
};

export function toEdgeProxy(row: ProxyVersionRow): EdgeProxy {
  const routes = (Array.isArray(row.routes) ? row.routes : [row.routes]) as unknown as EdgeRoute[];
  const auth = row.auth as { signature?: Partial<EdgeProxy['signature']> } | null;
  const oauth = (row.oauth ?? {}) as Partial<EdgeProxy['oauth']>;
  return {
    key: row.key,
    tenantId: row.tenantId,
    routes,
    signature: {
      secret: auth?.signature?.secret ?? null,
      cache: auth?.signature?.cache ?? nullCache,
      auth: auth?.signature?.auth ?? nullAuth,
    },
    oauth: {
      issuer: oauth.issuer ?? null,
      client_id: oauth.client_id ?? null,
      authorize_url: oauth.authorize_url ?? null,
      return_url_key: oauth.return_url_key ?? null,
    },
    isActive: row.isActive,
    isSuspended: row.isSuspended,
    version: row.version,
  };
}
