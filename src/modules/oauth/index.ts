import type { Db } from '../../kernel/db';
import type { Module } from '../context';
import { oauthAdminOperations } from './oauth-admin.routes';
import { mountOAuthHttp } from './oauth.http';
import { oauthOperations } from './oauth.routes';
import { registrationOperations } from './registration.routes';
import { createOAuthServices, type OAuthServices } from './oauth-services';
import * as repository from './oauth.repository';
import { deleteExpiredSignInThrottles } from './sign-in/sign-in-throttles.repository';

declare module '../context' {
  interface Services {
    oauth: OAuthServices;
  }
}

/** The OAuth 2.0 authorization server: clients, users, tokens, the login and consent pages. */
export const oauthModule: Module = {
  name: 'oauth',
  services: (services) => ({
    oauth: createOAuthServices({
      db: services.db,
      masterKey: services.masterKey,
      baseUrl: services.baseUrl,
      signInThrottle: services.config.signInThrottle,
      config: services.config.oauth,
      cursors: services.cursors,
      tenantExists: (tenantId) => services.admin.tenantExists(tenantId),
      // The authenticator forgets a revoked grant's tokens at once in this process.
      forgetGrant: (grantId) => services.authenticator.forget(grantId),
    }),
  }),
  rest: [...oauthAdminOperations, ...oauthOperations, ...registrationOperations],
  http: mountOAuthHttp,
};

/**
 * Deletes the authorization server's expired rows, for housekeeping: authorization sessions, codes
 * and refresh tokens, client_credentials grants whose tokens have expired, signing keys past their
 * retirement, and sign-in throttling counts past their expiry.
 */
export async function deleteExpiredOAuthState(db: Db, options: { stopping?: () => boolean } = {}) {
  const authorization = await repository.deleteExpiredAuthorizationState(db, options);
  const signingKeys = (await repository.deleteRetiredSigningKeys(db)).count;
  const signInThrottles = await deleteExpiredSignInThrottles(db);
  return { ...authorization, signingKeys, signInThrottles };
}
