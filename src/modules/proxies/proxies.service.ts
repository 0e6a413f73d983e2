import type { CursorCodec } from '../../kernel/cursor';
import { isUniqueViolation, type Db } from '../../kernel/db';
import { idTaken, notFound } from '../../kernel/errors';
import { invalidField } from '../../kernel/validation';
import { paginate, type PageArguments } from '../../kernel/pagination';
import type { Proxy as ProxyRow } from '../../__generated__/prisma/client';
import { requireScope } from '../../kernel/scopes';
import type { Principal } from '../../kernel/principal';
import * as repository from './proxies.repository';
import type { CacheKeySettings, ProxyInput, ProxyRecord } from './proxies.schemas';
import type { z } from '../../kernel/rest/schemas';

type RouteInput = Exclude<ProxyInput['routes'], unknown[]>;
type CacheKeyInput = z.output<typeof CacheKeySettings>;
type CacheInput = Partial<Record<'age' | 'stale_while_revalidate', number | null>> &
  Partial<Record<'is_as_origin' | 'is_public', boolean | null>> & {
    key?: CacheKeyInput | null;
    compression?: { is_enabled?: boolean | null; min_bytes?: number | null } | null;
  };

const cacheKeySettings = (key: CacheKeyInput | null | undefined) =>
  key === null || key === undefined
    ? null
    : {
        ignore_query: key.ignore_query ?? null,
        only_query: key.only_query ?? null,
        ignore_tracking_query: key.ignore_tracking_query ?? null,
        sort_query: key.sort_query ?? null,
        headers: key.headers ?? null,
        cookies: key.cookies ?? null,
        origin_query: key.origin_query ?? null,
      };
type AuthInput = { is_required?: boolean | null; scope?: string | null } | null | undefined;

const cacheSettings = (cache: CacheInput | null | undefined) => ({
  age: cache?.age ?? null,
  is_as_origin: cache?.is_as_origin ?? null,
  is_public: cache?.is_public ?? null,
  stale_while_revalidate: cache?.stale_while_revalidate ?? null,
  key: cacheKeySettings(cache?.key),
  compression:
    cache?.compression == null
      ? null
      : { is_enabled: cache.compression.is_enabled ?? null, min_bytes: cache.compression.min_bytes ?? null },
});
const authSettings = (auth: AuthInput) => ({ is_required: auth?.is_required ?? null, scope: auth?.scope ?? null });

const route = (input: RouteInput) => ({
  path: input.path,
  origin: { uri: input.origin.uri, is_bucket: input.origin.is_bucket ?? null },
  settings: {
    cache: cacheSettings(input.settings?.cache),
    auth: authSettings(input.settings?.auth),
    image: imageSettings(input.settings?.image),
  },
});

type ImageInput = { is_enabled?: boolean | null; sizes?: string[] | null; max_input_pixels?: number | null };
const imageSettings = (image: ImageInput | null | undefined) =>
  image == null
    ? null
    : {
        is_enabled: image.is_enabled ?? null,
        sizes: image.sizes ?? null,
        max_input_pixels: image.max_input_pixels ?? null,
      };

/** Every optional field spelled out as null, so stored and returned proxies always have one shape. */
function toStored(key: string, input: ProxyInput): repository.StoredProxy {
  const signature = input.auth?.signature;
  return {
    key,
    routes: Array.isArray(input.routes) ? input.routes.map(route) : route(input.routes),
    auth: {
      signature: {
        secret: signature?.secret ?? null,
        cache: cacheSettings(signature?.cache),
        auth: authSettings(signature?.auth),
      },
    },
    oauth: {
      issuer: input.oauth?.issuer ?? null,
      client_id: input.oauth?.client_id ?? null,
      authorize_url: input.oauth?.authorize_url ?? null,
      return_url_key: input.oauth?.return_url_key ?? null,
    },
    isActive: input.is_active ?? true,
    isSuspended: input.is_suspended ?? false,
  };
}

type RouteRecord = Exclude<ProxyRecord['routes'], unknown[]>;

/** A stored route with the cache settings added since it was stored spelled out as null too. */
const routeRecord = (stored: RouteRecord): RouteRecord => ({
  ...stored,
  settings: {
    ...stored.settings,
    cache: cacheSettings(stored.settings.cache),
    image: imageSettings(stored.settings.image),
  },
});

export function toRecord(row: ProxyRow): ProxyRecord {
  const routes = row.routes as ProxyRecord['routes'];
  const { signature } = row.auth as ProxyRecord['auth'];
  return {
    key: row.key,
    routes: Array.isArray(routes) ? routes.map(routeRecord) : routeRecord(routes),
    auth: { signature: { ...signature, cache: cacheSettings(signature.cache) } },
    oauth: row.oauth as ProxyRecord['oauth'],
    is_active: row.isActive,
    is_suspended: row.isSuspended,
    tenant_id: row.tenantId,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** Edge proxy configuration of a tenant. */
export class ProxyService {
  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
    /** Called with the key of a proxy that was created, replaced or deleted, for caches of proxies to drop it. */
    private readonly onChange: (key: string) => void = () => {},
  ) {}

  /** Lists the tenant's proxies ordered by key. */
  async list(principal: Principal, page: PageArguments) {
    requireScope(principal, 'proxies:read');
    const { tenantId } = principal;
    const result = await paginate<ProxyRow, string>(
      this.cursors,
      `proxies:${tenantId}`,
      page,
      repository.proxyList(this.db, tenantId),
    );
    return { ...result, items: result.items.map(toRecord) };
  }

  /** Fetches one proxy of the tenant; another tenant's proxy is not found. */
  async get(principal: Principal, key: string): Promise<ProxyRecord> {
    requireScope(principal, 'proxies:read');
    const row = await repository.findProxy(this.db, principal.tenantId, key);
    if (!row) throw notFound(`no proxy with key "${key}"`);
    return toRecord(row);
  }

  /** Creates a proxy; keys are unique across all tenants because they appear in public URLs. */
  async create(principal: Principal, input: ProxyInput & { key: string }): Promise<ProxyRecord> {
    requireScope(principal, 'proxies:write');
    try {
      const created = toRecord(await repository.insertProxy(this.db, principal.tenantId, toStored(input.key, input)));
      this.onChange(input.key);
      return created;
    } catch (error) {
      if (isUniqueViolation(error)) throw idTaken(`a proxy with key "${input.key}" already exists`);
      throw error;
    }
  }

  /** Replaces the whole proxy: fields left out return to their defaults. */
  async replace(principal: Principal, key: string, input: ProxyInput): Promise<void> {
    requireScope(principal, 'proxies:write');
    if (input.key !== undefined && input.key !== key) {
      throw invalidField('key', 'must equal the key in the path');
    }
    if (!(await repository.replaceProxy(this.db, principal.tenantId, toStored(key, input)))) {
      throw notFound(`no proxy with key "${key}"`);
    }
    this.onChange(key);
  }

  /** Deletes a proxy. */
  async remove(principal: Principal, key: string): Promise<void> {
    requireScope(principal, 'proxies:write');
    if (!(await repository.deleteProxy(this.db, principal.tenantId, key))) throw notFound(`no proxy with key "${key}"`);
    this.onChange(key);
  }
}
