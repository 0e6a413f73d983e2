import { readFileSync } from 'node:fs';
import type { OAuthConfig, SignInThrottleConfig } from '../../kernel/config';
import type { CursorCodec } from '../../kernel/cursor';
import type { Db } from '../../kernel/db';
import type { AccessTokenVerifier } from '../auth';
import { AuthorizationService } from './authorization.service';
import { ClientMetadataDocuments } from './client-metadata/documents';
import { MetadataDocumentClients } from './client-metadata/metadata-clients';
import { BrowserSessions } from './browser-session';
import { OAuthAdminService } from './oauth-admin.service';
import { OAuthService } from './oauth.service';
import { RegistrationService } from './registration.service';
import { SignInThrottle } from './sign-in/sign-in-throttle';
import { SigningKeys } from './signing-keys';
import { knownResources } from './resources';
import { TokenIssuer } from './tokens';

/** The OAuth authorization server's parts, as the service container holds them. */
export interface OAuthServices {
  /** The issuer identifier: the service's public origin. */
  issuer: string;
  keys: SigningKeys;
  tokens: OAuthService;
  authorization: AuthorizationService;
  admin: OAuthAdminService;
  /** RFC 7591 / RFC 7592 dynamic client registration, and the tenants' switch for such clients. */
  registration: RegistrationService;
  browser: BrowserSessions;
  /** What the authenticator uses to accept access tokens on every request. */
  accessTokens: AccessTokenVerifier;
}

export function createOAuthServices(deps: {
  db: Db;
  masterKey: string;
  baseUrl: string;
  signInThrottle: SignInThrottleConfig;
  config: OAuthConfig;
  cursors: CursorCodec;
  tenantExists: (tenantId: string) => Promise<boolean>;
  forgetGrant: (grantId: string) => void;
}): OAuthServices {
  const keys = new SigningKeys(deps.db, deps.masterKey, deps.config.jwksMaxAgeSeconds * 1000);
  const documents = new ClientMetadataDocuments({
    allowPrivate: deps.config.allowPrivateClientMetadata,
    ca: deps.config.clientMetadataCaFile ? readFileSync(deps.config.clientMetadataCaFile, 'utf8') : undefined,
  });
  const metadataClients = new MetadataDocumentClients(deps.db, documents);
  const tokens = new OAuthService(
    deps.db,
    new TokenIssuer(keys, deps.baseUrl),
    deps.forgetGrant,
    { refreshGraceMs: deps.config.refreshGraceSeconds * 1000 },
    metadataClients,
  );
  return {
    issuer: deps.baseUrl,
    keys,
    tokens,
    authorization: new AuthorizationService(
      deps.db,
      deps.baseUrl,
      new SignInThrottle(deps.db, deps.signInThrottle),
      metadataClients,
    ),
    admin: new OAuthAdminService({
      db: deps.db,
      cursors: deps.cursors,
      tenantExists: deps.tenantExists,
      forgetGrant: deps.forgetGrant,
      knownResources: knownResources(deps.baseUrl),
      issuer: deps.baseUrl,
    }),
    registration: new RegistrationService(deps.db, deps.baseUrl, deps.forgetGrant),
    browser: new BrowserSessions(deps.masterKey, deps.baseUrl.startsWith('https:')),
    accessTokens: { verify: (token) => tokens.verifyBearer(token) },
  };
}
