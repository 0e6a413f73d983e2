import type { Module } from '../context';
import { oauthAdminOperations } from './oauth-admin.routes';
import { mountOAuthHttp } from './oauth.http';
import { oauthOperations } from './oauth.routes';
import { createOAuthServices, type OAuthServices } from './oauth-services';

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
      // The authenticator forgets a revoked grant's tokens at once in this process.
      forgetGrant: (grantId) => services.authenticator.forget(grantId),
    }),
  }),
  rest: [...oauthAdminOperations, ...oauthOperations],
  http: mountOAuthHttp,
};
