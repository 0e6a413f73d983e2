import type { Db } from '../../kernel/db';
import { notFound } from '../../kernel/errors';
import { uuidv7 } from '../../kernel/ids';
import { insertApiKey, insertTenant, revokeApiKey, tenantExists, updateTenant } from './auth.repository';
import type { Authenticator } from './authenticator';
import { generateApiKey } from './credentials';
import type { GrantableScope } from './scopes';

/** Operator actions behind the master key: tenants and their API keys. */
export class AdminService {
  constructor(
    private readonly db: Db,
    private readonly authenticator: Authenticator,
    /** Told when a tenant's rate limit changed, so that this process applies it at once. */
    private readonly onTenantLimitChanged: (tenantId: string) => void = () => {},
  ) {}

  /** Creates a tenant, with a rate limit of its own or none (RATE_LIMIT_PER_MINUTE then applies). */
  async createTenant(name: string, rateLimitPerMinute: number | null = null) {
    return tenantView(await insertTenant(this.db, { id: uuidv7(), name, rateLimitPerMinute }));
  }

  /** Changes a tenant's name or rate limit (null: back to RATE_LIMIT_PER_MINUTE). */
  async updateTenant(tenantId: string, changes: { name?: string; rateLimitPerMinute?: number | null }) {
    if (!(await tenantExists(this.db, tenantId))) throw notFound('no tenant with this id');
    const tenant = await updateTenant(this.db, tenantId, changes);
    this.onTenantLimitChanged(tenantId);
    return tenantView(tenant);
  }

  /** Issues an API key; the returned `key` is the only time the secret is visible. */
  async createApiKey(tenantId: string, input: { name: string; scopes: GrantableScope[] }) {
    if (!(await tenantExists(this.db, tenantId))) throw notFound('no tenant with this id');
    const id = uuidv7();
    const { key, secretHash } = generateApiKey(id);
    const scopes = [...new Set(input.scopes)];
    await insertApiKey(this.db, { id, tenantId, name: input.name, secretHash, scopes });
    return { id, name: input.name, key, scopes };
  }

  /** Revokes an API key; requests with it answer 401 from then on. */
  async revokeApiKey(tenantId: string, keyId: string) {
    if (!(await revokeApiKey(this.db, tenantId, keyId))) throw notFound('no live API key with this id for this tenant');
    this.authenticator.forget(keyId);
  }
}

const tenantView = (tenant: { id: string; name: string; rateLimitPerMinute: number | null }) => ({
  id: tenant.id,
  name: tenant.name,
  rate_limit_per_minute: tenant.rateLimitPerMinute,
});
