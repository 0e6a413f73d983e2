import type { Db } from '../../kernel/db';
import { notFound } from '../../kernel/errors';
import { uuidv7 } from '../../kernel/ids';
import { insertApiKey, insertTenant, revokeApiKey, tenantExists } from './auth.repository';
import type { Authenticator } from './authenticator';
import { generateApiKey } from './credentials';
import type { GrantableScope } from './scopes';

/** Operator actions behind the master key: tenants and their API keys. */
export class AdminService {
  constructor(
    private readonly db: Db,
    private readonly authenticator: Authenticator,
  ) {}

  /** Creates a tenant. */
  async createTenant(name: string) {
    const tenant = await insertTenant(this.db, { id: uuidv7(), name });
    return { id: tenant.id, name: tenant.name };
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
