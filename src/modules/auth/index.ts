import type { Module } from '../context';
import { adminOperations } from './admin.routes';
import { AdminService, type DeletedIndexes } from './admin.service';
import { createAuthenticator, CREDENTIALS_REVOKED_CHANNEL, type Authenticator } from './authenticator';

declare module '../context' {
  interface Services {
    authenticator: Authenticator;
    admin: AdminService;
  }
}

/** Tenants, API keys and the verification of every bearer credential. */
export const authModule: Module = {
  name: 'auth',
  services: (services) => {
    const authenticator = createAuthenticator(services.db, services.masterKey, {
      cacheTtlMs: services.authCacheTtlMs,
      // The OAuth module is built after this one; its verifier is needed only once a token arrives.
      accessTokens: { verify: (token) => services.oauth.accessTokens.verify(token) },
      resourceMetadataUrl: `${services.baseUrl}/.well-known/oauth-protected-resource`,
    });
    // Revocations made by any process (or with a deleted tenant) arrive through the database.
    services.notifications.on(CREDENTIALS_REVOKED_CHANNEL, (id) => authenticator.forget(id));
    services.notifications.onReconnect(() => authenticator.forgetAll());
    // The search module is built after this one; it is asked only when a tenant is deleted. Its
    // indexes go as a deleted index goes: through the delivery queue to Typesense, which every
    // process works off, or straight out of this process's embedded engine.
    const deletedIndexes: DeletedIndexes = {
      idsOfTenant: (tx, tenantId) => services.search.indexes.idsOfTenant(tx, tenantId),
      record: (tx, indexId) => services.search.deliveries?.recordChange(tx, indexId) ?? Promise.resolve(),
      drop: async (indexId) => {
        const { deliveries, engine } = services.search;
        if (deliveries) await deliveries.deliver(indexId);
        else await engine.indexDeleted({ id: indexId });
      },
    };
    const admin = new AdminService(
      services.db,
      services.cursors,
      authenticator,
      (tenantId) => services.rateLimits.forget(tenantId),
      deletedIndexes,
    );
    return { authenticator, admin };
  },
  rest: adminOperations,
};

/** How a bearer credential is verified, for the modules that authenticate requests of their own. */
export { bearerChallenge } from './authenticator';
export type { AccessTokenVerifier, Authenticator, VerifiedBearer } from './authenticator';
/** Secrets are stored only as SHA-256 hashes and compared in constant time, by every module that keeps one. */
export { bearerToken, secretMatchesHash, secretsEqual, sha256 } from './credentials';
