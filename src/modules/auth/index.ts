import type { Module } from '../context';
import { adminOperations } from './admin.routes';
import { AdminService } from './admin.service';
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
    });
    // Revocations made by any process (or with a deleted tenant) arrive through the database.
    services.notifications.on(CREDENTIALS_REVOKED_CHANNEL, (id) => authenticator.forget(id));
    services.notifications.onReconnect(() => authenticator.forgetAll());
    const admin = new AdminService(services.db, services.cursors, authenticator, (tenantId) =>
      services.rateLimits.forget(tenantId),
    );
    return { authenticator, admin };
  },
  rest: adminOperations,
};
