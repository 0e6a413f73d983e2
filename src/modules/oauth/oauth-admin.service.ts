import { randomBytes } from 'node:crypto';
import type { CursorCodec } from '../../kernel/cursor';
import { isUniqueViolation, writeTransaction, type Db } from '../../kernel/db';
import { badRequest, idTaken, invalidState, notFound } from '../../kernel/errors';
import { uuidv7 } from '../../kernel/ids';
import { paginate, type PageArguments } from '../../kernel/pagination';
import { sha256 } from '../auth';
import * as repository from './oauth.repository';
import { scopesCovered, type ClientScope } from './oauth.scopes';
import { hashPassword } from './passwords';
import { canonicalResource, clientResources, grantResources } from './resources';

export interface OAuthClientInput {
  name: string;
  redirect_uris: string[];
  scopes: ClientScope[];
  is_confidential: boolean;
  /** RFC 8707 resources the client may ask tokens for; omitted: every resource. */
  resources?: string[];
}

export type OAuthClientChanges = Partial<Pick<OAuthClientInput, 'name' | 'redirect_uris' | 'scopes' | 'resources'>>;

export interface OAuthAdminDependencies {
  db: Db;
  cursors: CursorCodec;
  /** Whether the tenant exists (the auth module owns tenants). */
  tenantExists: (tenantId: string) => Promise<boolean>;
  /** Drops what the authenticator cached for a revoked or deleted grant. */
  forgetGrant: (grantId: string) => void;
  /** The RFC 8707 resources this server protects (absolute URIs). */
  knownResources: string[];
  /** The issuer: the API's resource, what tokens are for when no resource was asked. */
  issuer: string;
}

/** 256 random bits and the SHA-256 it is stored as: a fast hash is right for a random secret, as for API keys. */
function newClientSecret() {
  const secret = `cps_${randomBytes(32).toString('base64url')}`;
  return { secret, secretHash: sha256(secret) };
}

const noClient = () => notFound('no OAuth client with this id for this tenant');
const noUser = () => notFound('no user with this id for this tenant');

/** Operator actions behind the master key: OAuth clients and the users who sign in on the login page. */
export class OAuthAdminService {
  private readonly db: Db;

  constructor(private readonly deps: OAuthAdminDependencies) {
    this.db = deps.db;
  }

  /**
   * A client's resources as stored: canonical, each one this server protects (else 400), without
   * duplicates; every known resource is stored as none (the default, which also covers resources
   * added later). Undefined when not given.
   */
  private resourcesOf(input: string[] | undefined): string[] | undefined {
    if (input === undefined) return undefined;
    const resources: string[] = [];
    for (const [index, value] of input.entries()) {
      const resource = canonicalResource(value);
      if (resource === null || !this.deps.knownResources.includes(resource)) {
        const message = `is not a resource of this server (${this.deps.knownResources.join(', ')})`;
        throw badRequest(`data.resources.${index} ${message}`, [{ field: `data.resources.${index}`, message }]);
      }
      if (!resources.includes(resource)) resources.push(resource);
    }
    return this.deps.knownResources.every((known) => resources.includes(known)) ? [] : resources;
  }

  private clientView(client: repository.ClientRow) {
    return clientView(client, clientResources(client, this.deps.knownResources));
  }

  private async requireTenant(tenantId: string) {
    if (!(await this.deps.tenantExists(tenantId))) throw notFound('no tenant with this id');
  }

  /** Registers a client; a confidential client's secret is returned here only, and stored as its SHA-256. */
  async createClient(tenantId: string, input: OAuthClientInput) {
    await this.requireTenant(tenantId);
    const credential = input.is_confidential ? newClientSecret() : null;
    const client = await repository.insertClient(this.db, {
      id: uuidv7(),
      tenantId,
      name: input.name,
      secretHash: credential?.secretHash ?? null,
      isConfidential: input.is_confidential,
      redirectUris: [...new Set(input.redirect_uris)],
      scopes: [...new Set(input.scopes)],
      resources: this.resourcesOf(input.resources) ?? [],
    });
    return { ...this.clientView(client), client_secret: credential?.secret ?? null };
  }

  /** Lists a tenant's clients in order of creation; never their secrets. */
  async listClients(tenantId: string, page: PageArguments) {
    await this.requireTenant(tenantId);
    const list = repository.clientList(this.db, tenantId);
    const result = await paginate(this.deps.cursors, `oauth-clients:${tenantId}`, page, list);
    return { ...result, items: result.items.map((client) => this.clientView(client)) };
  }

  async getClient(tenantId: string, clientId: string) {
    const client = await repository.findTenantClient(this.db, tenantId, clientId);
    if (!client) throw noClient();
    return this.clientView(client);
  }

  /**
   * Changes a client's name, redirect URIs or scopes. What the client can no longer ask for stops
   * working at once: grants holding a scope it lost are revoked, and authorization requests and
   * codes not exchanged yet that name a lost redirect URI or scope are dropped.
   */
  async updateClient(tenantId: string, clientId: string, changes: OAuthClientChanges) {
    const redirectUris = changes.redirect_uris && [...new Set(changes.redirect_uris)];
    const scopes = changes.scopes && [...new Set(changes.scopes)];
    const resources = this.resourcesOf(changes.resources);
    const { client, revoked } = await writeTransaction(this.db, async (tx) => {
      if (!(await repository.lockClient(tx, tenantId, clientId))) throw noClient();
      const client = await repository.updateClient(tx, clientId, {
        name: changes.name,
        redirectUris,
        scopes,
        resources,
      });
      if (!redirectUris && !scopes && !resources) return { client, revoked: [] };
      const mayUse = clientResources(client, this.deps.knownResources);
      const allowed = (request: { redirectUri?: string; scopes: string[]; resources: string[] }) =>
        scopesCovered(request.scopes, client.scopes) &&
        grantResources(request, this.deps.issuer).every((resource) => mayUse.includes(resource)) &&
        (request.redirectUri === undefined || client.redirectUris.includes(request.redirectUri));
      const pending = await repository.pendingAuthorizations(tx, clientId);
      await repository.deletePendingAuthorizations(
        tx,
        pending.sessions.filter((session) => !allowed(session)).map((session) => session.id),
        pending.codes.filter((code) => !allowed(code)).map((code) => code.codeHash),
      );
      const grants = await repository.liveGrantsOfClient(tx, clientId);
      const lost = grants.filter((grant) => !allowed(grant)).map((grant) => grant.id);
      return { client, revoked: await repository.revokeGrants(tx, lost) };
    });
    for (const grantId of revoked) this.deps.forgetGrant(grantId);
    return this.clientView(client);
  }

  /**
   * Gives a confidential client a new secret, returned here only; the old one stops working at once,
   * and so do the tokens the client obtained for itself with it (client_credentials). Users' grants
   * stay: refreshing them needs the new secret.
   */
  async rotateClientSecret(tenantId: string, clientId: string) {
    const { secret, secretHash } = newClientSecret();
    const { client, revoked } = await writeTransaction(this.db, async (tx) => {
      const found = (await repository.lockClient(tx, tenantId, clientId))
        ? await repository.findTenantClient(tx, tenantId, clientId)
        : null;
      if (!found) throw noClient();
      if (!found.isConfidential) throw invalidState('a public client has no secret to rotate');
      const client = await repository.updateClient(tx, clientId, { secretHash });
      const grants = await repository.liveGrantsOfClient(tx, clientId);
      const own = grants.filter((grant) => grant.grantType === 'client_credentials').map((grant) => grant.id);
      return { client, revoked: await repository.revokeGrants(tx, own) };
    });
    for (const grantId of revoked) this.deps.forgetGrant(grantId);
    return { ...this.clientView(client), client_secret: secret };
  }

  /** Deletes a client: every token issued to it stops working, its grants, codes and consents go with it. */
  async deleteClient(tenantId: string, clientId: string) {
    const grants = await writeTransaction(this.db, (tx) => repository.deleteClient(tx, tenantId, clientId));
    if (grants === null) throw noClient();
    for (const grantId of grants) this.deps.forgetGrant(grantId);
  }

  /** Creates a user of the tenant; the password is kept only as a salted scrypt hash. */
  async createUser(tenantId: string, input: { email: string; password: string }) {
    await this.requireTenant(tenantId);
    const email = input.email.toLowerCase();
    try {
      const user = await repository.insertUser(this.db, {
        id: uuidv7(),
        tenantId,
        email,
        passwordHash: await hashPassword(input.password),
      });
      return userView(user);
    } catch (error) {
      if (isUniqueViolation(error)) throw idTaken(`a user with e-mail ${email} already exists in this tenant`);
      throw error;
    }
  }

  /** Lists a tenant's users in order of creation, or finds one by e-mail (compared without regard to case). */
  async listUsers(tenantId: string, page: PageArguments, filter: { email?: string } = {}) {
    await this.requireTenant(tenantId);
    const email = filter.email?.toLowerCase();
    const scope = email === undefined ? `users:${tenantId}` : `users:${tenantId}:${email}`;
    const result = await paginate(this.deps.cursors, scope, page, repository.userList(this.db, tenantId, email));
    return { ...result, items: result.items.map(userView) };
  }

  async getUser(tenantId: string, userId: string) {
    const user = await repository.findTenantUser(this.db, tenantId, userId);
    if (!user) throw noUser();
    return userView(user);
  }

  /**
   * Sets a user's password (hashed as at creation) and revokes every grant they hold: their tokens
   * stop working and their codes not exchanged yet are dropped.
   */
  async changePassword(tenantId: string, userId: string, password: string) {
    const passwordHash = await hashPassword(password);
    const revoked = await writeTransaction(this.db, (tx) =>
      repository.replacePassword(tx, tenantId, userId, passwordHash),
    );
    if (revoked === null) throw noUser();
    for (const grantId of revoked) this.deps.forgetGrant(grantId);
  }

  /** Deletes a user: their tokens stop working, their grants, codes and consents go with them. */
  async deleteUser(tenantId: string, userId: string) {
    const grants = await writeTransaction(this.db, (tx) => repository.deleteUser(tx, tenantId, userId));
    if (grants === null) throw noUser();
    for (const grantId of grants) this.deps.forgetGrant(grantId);
  }
}

const clientView = (client: repository.ClientRow, resources: string[]) => ({
  client_id: client.id,
  name: client.name,
  redirect_uris: client.redirectUris,
  scopes: client.scopes as ClientScope[],
  resources,
  is_confidential: client.isConfidential,
  // The operator's operations look clients up by tenant: they never meet one without a tenant.
  tenant_id: client.tenantId!,
  created_at: client.createdAt.toISOString(),
});

const userView = (user: repository.UserRow) => ({
  id: user.id,
  email: user.email,
  tenant_id: user.tenantId,
  created_at: user.createdAt.toISOString(),
});
