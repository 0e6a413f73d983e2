import { randomBytes } from 'node:crypto';
import { isUniqueViolation, type Db } from '../../kernel/db';
import { idTaken, notFound } from '../../kernel/errors';
import { uuidv7 } from '../../kernel/ids';
import { tenantExists } from '../auth/auth.repository';
import { sha256 } from '../auth/credentials';
import * as repository from './oauth.repository';
import type { ClientScope } from './oauth.scopes';
import { hashPassword } from './passwords';

export interface OAuthClientInput {
  name: string;
  redirect_uris: string[];
  scopes: ClientScope[];
  is_confidential: boolean;
}

/** Operator actions behind the master key: OAuth clients and the users who sign in on the login page. */
export class OAuthAdminService {
  constructor(private readonly db: Db) {}

  /** Registers a client; a confidential client's secret is returned here only, and stored as its SHA-256. */
  async createClient(tenantId: string, input: OAuthClientInput) {
    if (!(await tenantExists(this.db, tenantId))) throw notFound('no tenant with this id');
    const id = uuidv7();
    // 256 random bits: a fast hash is right for a random secret, as for API keys.
    const secret = input.is_confidential ? `cps_${randomBytes(32).toString('base64url')}` : null;
    const scopes = [...new Set(input.scopes)];
    const redirectUris = [...new Set(input.redirect_uris)];
    await repository.insertClient(this.db, {
      id,
      tenantId,
      name: input.name,
      secretHash: secret ? sha256(secret) : null,
      isConfidential: input.is_confidential,
      redirectUris,
      scopes,
    });
    return {
      client_id: id,
      client_secret: secret,
      name: input.name,
      redirect_uris: redirectUris,
      scopes,
      is_confidential: input.is_confidential,
      tenant_id: tenantId,
    };
  }

  /** Creates a user of the tenant; the password is kept only as a salted scrypt hash. */
  async createUser(tenantId: string, input: { email: string; password: string }) {
    if (!(await tenantExists(this.db, tenantId))) throw notFound('no tenant with this id');
    const email = input.email.toLowerCase();
    try {
      const user = await repository.insertUser(this.db, {
        id: uuidv7(),
        tenantId,
        email,
        passwordHash: await hashPassword(input.password),
      });
      return { id: user.id, email: user.email, tenant_id: tenantId };
    } catch (error) {
      if (isUniqueViolation(error)) throw idTaken(`a user with e-mail ${email} already exists in this tenant`);
      throw error;
    }
  }
}
