import type { CursorCodec } from '../../kernel/cursor';
import { writeTransaction, type Db, type Tx } from '../../kernel/db';
import { notFound } from '../../kernel/errors';
import { uuidv7 } from '../../kernel/ids';
import { paginate, type PageArguments } from '../../kernel/pagination';
import { deleteTenantCounters } from '../../kernel/rate-limit';
import * as repository from './auth.repository';
import type { Authenticator } from './authenticator';
import { generateApiKey } from './credentials';
import type { GrantableScope } from '../../kernel/scopes';

/** A tenant deletion may cascade through millions of rows: far longer than a request's write may take. */
const TENANT_DELETION_TIMEOUT_MS = 10 * 60_000;

const noTenant = () => notFound('no tenant with this id');

/** How the search engine's copies of a deleted tenant's indexes go (they live outside PostgreSQL). */
export interface DeletedIndexes {
  /** In the deleting transaction, the ids of the tenant's indexes (the search module's rows). */
  idsOfTenant(tx: Tx, tenantId: string): Promise<string[]>;
  /** In the deleting transaction: remembers that the copies of the index must be dropped. */
  record(tx: Tx, indexId: string): Promise<unknown>;
  /** After the commit: drops the copies, or has them dropped; never rejects. */
  drop(indexId: string): Promise<void>;
}

/** Operator actions behind the master key: tenants and their API keys. */
export class AdminService {
  constructor(
    private readonly db: Db,
    private readonly cursors: CursorCodec,
    private readonly authenticator: Authenticator,
    /** Told when a tenant's rate limit changed or the tenant is gone, so that this process applies it at once. */
    private readonly forgetTenantLimit: (tenantId: string) => void = () => {},
    private readonly deletedIndexes: DeletedIndexes,
  ) {}

  /** Whether a tenant with this id exists (for the admin operations of other modules). */
  tenantExists(tenantId: string): Promise<boolean> {
    return repository.tenantExists(this.db, tenantId);
  }

  /** Creates a tenant, with a rate limit of its own or none (RATE_LIMIT_PER_MINUTE then applies). */
  async createTenant(name: string, rateLimitPerMinute: number | null = null) {
    return tenantView(await repository.insertTenant(this.db, { id: uuidv7(), name, rateLimitPerMinute }));
  }

  /** Lists every tenant in order of creation. */
  async listTenants(page: PageArguments) {
    const result = await paginate(this.cursors, 'tenants', page, repository.tenantList(this.db));
    return { ...result, items: result.items.map(tenantView) };
  }

  async getTenant(tenantId: string) {
    const tenant = await repository.findTenant(this.db, tenantId);
    if (!tenant) throw noTenant();
    return tenantView(tenant);
  }

  /** Changes a tenant's name or rate limit (null: back to RATE_LIMIT_PER_MINUTE). */
  async updateTenant(tenantId: string, changes: { name?: string; rateLimitPerMinute?: number | null }) {
    const tenant = await repository.updateTenant(this.db, tenantId, changes);
    if (!tenant) throw noTenant();
    this.forgetTenantLimit(tenantId);
    return tenantView(tenant);
  }

  /**
   * Deletes a tenant with every row it owns, in one transaction. Its credentials answer 401 at once
   * here; other processes forget them, its proxies and its sales channels when the database's
   * notifications of the deleted rows reach them. The search engine's copies of its indexes are
   * dropped like those of a deleted index.
   */
  async deleteTenant(tenantId: string) {
    const indexIds = await writeTransaction(
      this.db,
      async (tx) => {
        if (!(await repository.lockTenant(tx, tenantId))) throw noTenant();
        const ids = await this.deletedIndexes.idsOfTenant(tx, tenantId);
        for (const id of ids) await this.deletedIndexes.record(tx, id);
        await repository.deleteTenant(tx, tenantId);
        await deleteTenantCounters(tx, tenantId);
        return ids;
      },
      { timeout: TENANT_DELETION_TIMEOUT_MS },
    );
    this.authenticator.forgetTenant(tenantId);
    this.forgetTenantLimit(tenantId);
    await Promise.all(indexIds.map((id) => this.deletedIndexes.drop(id)));
  }

  /** Issues an API key; the returned `key` is the only time the secret is visible. */
  async createApiKey(tenantId: string, input: { name: string; scopes: GrantableScope[] }) {
    if (!(await repository.tenantExists(this.db, tenantId))) throw noTenant();
    const id = uuidv7();
    const { key, secretHash } = generateApiKey(id);
    const scopes = [...new Set(input.scopes)];
    await repository.insertApiKey(this.db, { id, tenantId, name: input.name, secretHash, scopes });
    return { id, name: input.name, key, scopes };
  }

  /** Lists a tenant's API keys, revoked ones included, in order of creation; never their secrets. */
  async listApiKeys(tenantId: string, page: PageArguments) {
    if (!(await repository.tenantExists(this.db, tenantId))) throw noTenant();
    const result = await paginate(this.cursors, `api-keys:${tenantId}`, page, repository.apiKeyList(this.db, tenantId));
    return { ...result, items: result.items.map(apiKeyView) };
  }

  async getApiKey(tenantId: string, keyId: string) {
    const key = await repository.findTenantApiKey(this.db, tenantId, keyId);
    if (!key) throw noApiKey();
    return apiKeyView(key);
  }

  /** Renames an API key (a revoked one too); its secret and scopes stay. */
  async renameApiKey(tenantId: string, keyId: string, name: string) {
    const key = await repository.renameApiKey(this.db, tenantId, keyId, name);
    if (!key) throw noApiKey();
    return apiKeyView(key);
  }

  /** Revokes an API key; requests with it answer 401 from then on. */
  async revokeApiKey(tenantId: string, keyId: string) {
    if (!(await repository.revokeApiKey(this.db, tenantId, keyId)))
      throw notFound('no live API key with this id for this tenant');
    this.authenticator.forget(keyId);
  }
}

const noApiKey = () => notFound('no API key with this id for this tenant');

const tenantView = (tenant: repository.TenantRow) => ({
  id: tenant.id,
  name: tenant.name,
  rate_limit_per_minute: tenant.rateLimitPerMinute,
  created_at: tenant.createdAt.toISOString(),
});

const apiKeyView = (key: repository.ApiKeyRow) => ({
  id: key.id,
  name: key.name,
  scopes: key.scopes as GrantableScope[],
  created_at: key.createdAt.toISOString(),
  revoked_at: key.revokedAt?.toISOString() ?? null,
});
