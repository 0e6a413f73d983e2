import { writeTransaction, type Db } from '../../kernel/db';
import { AppError } from '../../kernel/errors';
import { isUuid, uuidv7 } from '../../kernel/ids';
import type { OAuthClient } from '../../__generated__/prisma/client';
import { secretMatchesHash, secretsEqual, sha256, type VerifiedBearer } from '../auth';
import type { Principal } from '../../kernel/principal';
import { isClientIdUrl, type MetadataDocumentClients } from './client-metadata/metadata-clients';
import { oauthError } from './oauth.errors';
import * as repository from './oauth.repository';
import { OPENID, resolveScopes } from './oauth.scopes';
import { narrowedResources, requestedResources } from './resources';
import { REFRESH_TOKEN_TTL } from './oauth.constants';
import { audienceOf, opaqueToken, tokenHash, type TokenIssuer } from './tokens';

/** Token endpoint parameters, with their RFC 6749 names. */
export interface TokenRequest {
  grant_type?: string;
  client_id?: string;
  client_secret?: string;
  scope?: string;
  code?: string;
  redirect_uri?: string;
  code_verifier?: string;
  refresh_token?: string;
  /** RFC 8707: the resources the access token is for. */
  resource?: string | string[];
}

export interface TokenResponse {
  token_type: 'Bearer';
  expires_in: number;
  access_token: string;
  /** Absent for client_credentials: the client can simply ask again with its secret. */
  refresh_token?: string;
  scope: string;
  /** With the `openid` scope. */
  id_token?: string;
}

/** RFC 7662 introspection response. */
export interface Introspection {
  active: boolean;
  scope?: string;
  client_id?: string;
  sub?: string;
  exp?: number;
  iat?: number;
  iss?: string;
  aud?: string | string[];
  jti?: string;
  token_type?: string;
  tenant_id?: string;
}

/** Failed client authentications allowed per client within the window before answering 429. */
export const CLIENT_AUTH_FAILURE_LIMIT = 10;
export const CLIENT_AUTH_WINDOW_SECONDS = 300;

/** A SHA-256 no client secret matches, compared against for unknown clients so both take as long. */
const UNKNOWN_CLIENT_HASH = new Uint8Array(32);

/** RFC 7636: 43 to 128 characters of the unreserved set. */
const codeVerifierPattern = /^[A-Za-z0-9\-._~]{43,128}$/;

/** The id and secret of an HTTP Basic header, form-decoded as RFC 6749 section 2.3.1 asks. */
function parseBasic(header: string): { id: string; secret: string } | null {
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return null;
  try {
    const formDecode = (value: string) => decodeURIComponent(value.replaceAll('+', ' '));
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

const pkceChallenge = (verifier: string) => sha256(verifier).toString('base64url');

/**
 * The token endpoint (client_credentials, authorization_code with PKCE, refresh_token with
 * rotation), RFC 7009 revocation, RFC 7662 introspection, and the local verification of access
 * tokens that the authenticator uses on every request.
 */
export class OAuthService {
  constructor(
    private readonly db: Db,
    private readonly tokens: TokenIssuer,
    /** Drops what the authenticator cached for a revoked grant. */
    private readonly forgetGrant: (grantId: string) => void,
    private readonly options: { refreshGraceMs: number },
    /** Clients whose client_id is the URL of their metadata document. */
    private readonly metadataClients: MetadataDocumentClients,
  ) {}

  /** Issues tokens for a token request; throws the RFC 6749 error otherwise. */
  async token(request: TokenRequest, authorization: string | undefined): Promise<TokenResponse> {
    const client = await this.authenticateClient(request, authorization);
    switch (request.grant_type) {
      case undefined:
      case '':
        throw oauthError('invalid_request', 'grant_type is required');
      case 'client_credentials':
        return this.clientCredentials(client, request);
      case 'authorization_code':
        return this.authorizationCode(client, request);
      case 'refresh_token':
        return this.refreshToken(client, request);
      default:
        throw oauthError('unsupported_grant_type', `grant_type "${request.grant_type}" is not supported`);
    }
  }

  /** RFC 7009: revokes a refresh or access token of the calling client, and with it its whole grant. */
  async revoke(
    request: { token?: string; token_type_hint?: string; client_id?: string; client_secret?: string },
    authorization: string | undefined,
  ) {
    const client = await this.authenticateClient(request, authorization);
    if (!request.token) throw oauthError('invalid_request', 'token is required');
    const grantId = await this.grantOf(request.token, client.id);
    // A token that is unknown, or another client's, is answered the same way: nothing to revoke.
    if (grantId) {
      await repository.revokeGrant(this.db, grantId);
      this.forgetGrant(grantId);
    }
  }

  /** RFC 7662: whether a token is active, and what it grants; only for tokens of the caller's tenant. */
  async introspect(
    request: { token?: string; token_type_hint?: string; client_id?: string; client_secret?: string },
    authorization: string | undefined,
  ): Promise<Introspection> {
    const caller = await this.authenticateClient(request, authorization);
    if (!request.token) throw oauthError('invalid_request', 'token is required');
    const inactive = { active: false };
    const access = await this.tokens.verifyAccessToken(request.token);
    if (access && access !== 'expired') {
      const grant = await repository.findGrant(this.db, access.grantId);
      if (!grant || grant.revokedAt || access.tenantId !== caller.tenantId) return inactive;
      return {
        active: true,
        scope: access.scopes.join(' '),
        client_id: access.clientId,
        sub: access.subject,
        exp: access.expiresAt,
        iat: access.issuedAt,
        iss: this.tokens.issuer,
        aud: audienceOf(access.audiences, this.tokens.issuer),
        jti: access.jti,
        token_type: 'Bearer',
        tenant_id: access.tenantId,
      };
    }
    const refresh = await repository.findRefreshToken(this.db, tokenHash(request.token));
    if (!refresh || refresh.rotatedAt || refresh.expiresAt <= new Date() || refresh.grant.revokedAt) return inactive;
    const tenantId = repository.grantTenant(refresh.grant);
    if (tenantId === null || tenantId !== caller.tenantId) return inactive;
    return {
      active: true,
      scope: refresh.grant.scopes.join(' '),
      client_id: refresh.grant.clientId,
      sub: refresh.grant.userId ?? refresh.grant.clientId,
      exp: Math.floor(refresh.expiresAt.getTime() / 1000),
      iat: Math.floor(refresh.createdAt.getTime() / 1000),
      iss: this.tokens.issuer,
      tenant_id: tenantId,
    };
  }

  /** The authenticator's check of an OAuth access token: signature and expiry locally, revocation in the database. */
  async verifyBearer(token: string): Promise<VerifiedBearer> {
    const verified = await this.tokens.verifyAccessToken(token);
    if (verified === 'expired') throw new AppError('UNAUTHORIZED', 'the access token has expired');
    if (!verified) throw new AppError('UNAUTHORIZED', 'the bearer token is not a valid credential');
    const grant = await repository.findGrant(this.db, verified.grantId);
    if (!grant || grant.revokedAt) throw new AppError('UNAUTHORIZED', 'the access token has been revoked');
    const principal: Principal = {
      tenantId: verified.tenantId,
      scopes: new Set(verified.scopes.filter((scope) => scope !== OPENID)),
      actor: verified.userId
        ? { type: 'user', id: verified.userId, clientId: verified.clientId }
        : { type: 'oauth_client', id: verified.clientId },
    };
    return {
      principal,
      grantId: verified.grantId,
      expiresAt: verified.expiresAt * 1000,
      audiences: verified.audiences,
      issuer: this.tokens.issuer,
    };
  }

  /**
   * RFC 6749 section 2.3: HTTP Basic, or client_id (and client_secret) in the body, never both.
   * Confidential clients must prove their secret; failures are counted per client in PostgreSQL and
   * too many within the window answer 429 until it closes.
   */
  async authenticateClient(
    request: { client_id?: string; client_secret?: string },
    authorization: string | undefined,
  ): Promise<OAuthClient> {
    let clientId = request.client_id;
    let secret = request.client_secret;
    if (authorization !== undefined) {
      const basic = parseBasic(authorization);
      if (!basic)
        throw oauthError('invalid_client', 'the Authorization header must be HTTP Basic with the client id and secret');
      if (secret !== undefined)
        throw oauthError('invalid_request', 'the client authenticated twice: HTTP Basic and client_secret');
      if (clientId !== undefined && clientId !== basic.id)
        throw oauthError('invalid_client', 'client_id differs from the HTTP Basic user name');
      clientId = basic.id;
      secret = basic.secret;
    }
    if (!clientId) throw oauthError('invalid_client', 'no client authentication: send HTTP Basic or client_id');
    const client = isUuid(clientId)
      ? await repository.findClient(this.db, clientId)
      : isClientIdUrl(clientId)
        ? await this.metadataClients.stored(clientId)
        : null;
    if (!client) {
      secretMatchesHash(secret ?? '', UNKNOWN_CLIENT_HASH);
      throw oauthError('invalid_client', 'unknown client');
    }
    this.refuseWhileThrottled(client.failedAuthCount, client.failedAuthWindowStart);
    if (client.isConfidential) {
      if (!secret || !secretMatchesHash(secret, client.secretHash ?? UNKNOWN_CLIENT_HASH)) {
        await repository.recordFailedClientAuth(this.db, client.id, CLIENT_AUTH_WINDOW_SECONDS);
        throw oauthError(
          'invalid_client',
          secret ? 'the client secret is wrong' : 'this client must authenticate with its secret',
        );
      }
    } else if (secret) {
      throw oauthError('invalid_client', 'a public client has no secret');
    }
    return client;
  }

  private refuseWhileThrottled(failures: number, windowStart: Date | null) {
    if (failures < CLIENT_AUTH_FAILURE_LIMIT || !windowStart) return;
    const retryAfter = Math.ceil((windowStart.getTime() + CLIENT_AUTH_WINDOW_SECONDS * 1000 - Date.now()) / 1000);
    if (retryAfter <= 0) return;
    throw new AppError(
      'TOO_MANY_REQUESTS',
      `too many failed authentications of this client; retry in ${retryAfter} seconds`,
      {
        headers: { 'Retry-After': String(retryAfter) },
      },
    );
  }

  private async clientCredentials(client: OAuthClient, request: TokenRequest): Promise<TokenResponse> {
    if (client.tenantId === null)
      throw oauthError('unauthorized_client', 'a self-registered client cannot use client_credentials');
    if (!client.isConfidential)
      throw oauthError('unauthorized_client', 'a public client cannot use client_credentials');
    const scopes = resolveScopes(request.scope, client.scopes, { openid: false });
    const resources = requestedResources(request.resource, client, this.tokens.issuer);
    const grant = await repository.insertGrant(this.db, {
      id: uuidv7(),
      clientId: client.id,
      userId: null,
      grantType: 'client_credentials',
      scopes,
      resources,
    });
    const access = await this.tokens.accessToken({
      tenantId: client.tenantId,
      clientId: client.id,
      userId: null,
      scopes,
      grantId: grant.id,
      resources,
    });
    return { token_type: 'Bearer', expires_in: access.expiresIn, access_token: access.token, scope: scopes.join(' ') };
  }

  private async authorizationCode(client: OAuthClient, request: TokenRequest): Promise<TokenResponse> {
    if (!request.code) throw oauthError('invalid_request', 'code is required');
    if (!request.redirect_uri) throw oauthError('invalid_request', 'redirect_uri is required');
    if (request.code_verifier !== undefined && !codeVerifierPattern.test(request.code_verifier)) {
      throw oauthError('invalid_request', 'code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
    }
    const hash = tokenHash(request.code);
    const outcome = await writeTransaction(this.db, async (tx) => {
      const code = await repository.lockAuthorizationCode(tx, hash);
      if (!code || code.clientId !== client.id)
        throw oauthError('invalid_grant', 'the authorization code is unknown or was issued to another client');
      if (code.consumedAt) {
        // RFC 6749 section 4.1.2: a replayed code revokes what was issued from it.
        if (code.grantId) await repository.revokeGrant(tx, code.grantId);
        return { kind: 'replayed', grantId: code.grantId } as const;
      }
      if (code.expiresAt <= new Date()) throw oauthError('invalid_grant', 'the authorization code has expired');
      if (code.redirectUri !== request.redirect_uri) {
        throw oauthError('invalid_grant', 'redirect_uri differs from the one of the authorization request');
      }
      if (code.codeChallenge) {
        if (!request.code_verifier)
          throw oauthError(
            'invalid_grant',
            'code_verifier is required: the authorization request had a code_challenge',
          );
        if (!secretsEqual(pkceChallenge(request.code_verifier), code.codeChallenge)) {
          throw oauthError('invalid_grant', 'code_verifier does not match the code_challenge');
        }
      } else if (request.code_verifier !== undefined) {
        throw oauthError(
          'invalid_grant',
          'a code_verifier was sent but the authorization request had no code_challenge',
        );
      }
      const resources = narrowedResources(request.resource, code, this.tokens.issuer);
      const grant = await repository.insertGrant(tx, {
        id: uuidv7(),
        clientId: client.id,
        userId: code.userId,
        grantType: 'authorization_code',
        scopes: code.scopes,
        resources: code.resources,
      });
      await repository.consumeAuthorizationCode(tx, hash, grant.id);
      const refreshToken = opaqueToken();
      await repository.insertRefreshToken(tx, {
        tokenHash: tokenHash(refreshToken),
        grantId: grant.id,
        expiresAt: new Date(Date.now() + REFRESH_TOKEN_TTL * 1000),
      });
      return { kind: 'issued', grant, code, refreshToken, resources } as const;
    });
    if (outcome.kind === 'replayed') {
      if (outcome.grantId) this.forgetGrant(outcome.grantId);
      throw oauthError(
        'invalid_grant',
        'the authorization code was already used; the tokens issued from it are revoked',
      );
    }
    const { grant, code, refreshToken, resources } = outcome;
    // The user's tenant: the client's, or, for a self-registered client, the one of the user who approved it.
    const access = await this.tokens.accessToken({
      tenantId: code.user.tenantId,
      clientId: client.id,
      userId: code.userId,
      scopes: grant.scopes,
      grantId: grant.id,
      resources,
    });
    const idToken = grant.scopes.includes(OPENID)
      ? await this.tokens.idToken({
          userId: code.userId,
          clientId: client.id,
          tenantId: code.user.tenantId,
          email: code.user.email,
          nonce: code.nonce,
        })
      : undefined;
    return {
      token_type: 'Bearer',
      expires_in: access.expiresIn,
      access_token: access.token,
      refresh_token: refreshToken,
      scope: grant.scopes.join(' '),
      ...(idToken ? { id_token: idToken } : {}),
    };
  }

  private async refreshToken(client: OAuthClient, request: TokenRequest): Promise<TokenResponse> {
    if (!request.refresh_token) throw oauthError('invalid_request', 'refresh_token is required');
    const hash = tokenHash(request.refresh_token);
    const outcome = await writeTransaction(this.db, async (tx) => {
      const token = await repository.lockRefreshToken(tx, hash);
      if (!token || token.grant.clientId !== client.id)
        throw oauthError('invalid_grant', 'the refresh token is unknown or was issued to another client');
      if (token.grant.revokedAt) throw oauthError('invalid_grant', 'the refresh token has been revoked');
      // Presented again within the grace window after its rotation (two tabs refreshing at once, a
      // retry after a lost answer): answered like the first time, with a pair of its own. Later,
      // one of the presenters stole it: the whole family is revoked.
      const withinGrace =
        token.rotatedAt !== null && Date.now() - token.rotatedAt.getTime() <= this.options.refreshGraceMs;
      if (token.rotatedAt && !withinGrace) {
        await repository.revokeGrant(tx, token.grantId);
        return { kind: 'reused', grantId: token.grantId } as const;
      }
      if (token.expiresAt <= new Date()) throw oauthError('invalid_grant', 'the refresh token has expired');
      const scopes =
        request.scope === undefined
          ? token.grant.scopes
          : resolveScopes(request.scope, token.grant.scopes, { openid: true });
      const resources = narrowedResources(request.resource, token.grant, this.tokens.issuer);
      // The window runs from the first rotation: a reuse does not extend it.
      if (!token.rotatedAt) await repository.markRefreshTokenRotated(tx, hash);
      const refreshToken = opaqueToken();
      await repository.insertRefreshToken(tx, {
        tokenHash: tokenHash(refreshToken),
        grantId: token.grantId,
        expiresAt: new Date(Date.now() + REFRESH_TOKEN_TTL * 1000),
      });
      return { kind: 'rotated', grant: token.grant, scopes, resources, refreshToken } as const;
    });
    if (outcome.kind === 'reused') {
      this.forgetGrant(outcome.grantId);
      throw oauthError('invalid_grant', 'the refresh token was already used; every token of its grant is revoked');
    }
    const { grant, scopes, resources, refreshToken } = outcome;
    const tenantId = repository.grantTenant(grant);
    if (tenantId === null) throw oauthError('invalid_grant', 'the refresh token belongs to no tenant');
    const access = await this.tokens.accessToken({
      tenantId,
      clientId: client.id,
      userId: grant.userId,
      scopes,
      grantId: grant.id,
      resources,
    });
    return {
      token_type: 'Bearer',
      expires_in: access.expiresIn,
      access_token: access.token,
      refresh_token: refreshToken,
      scope: scopes.join(' '),
    };
  }

  /** The grant a token of this client belongs to: a refresh token, or an access token (even expired). */
  private async grantOf(token: string, clientId: string): Promise<string | null> {
    const refresh = await repository.findRefreshToken(this.db, tokenHash(token));
    if (refresh) return refresh.grant.clientId === clientId ? refresh.grantId : null;
    const access = await this.tokens.verifyAccessToken(token, { allowExpired: true });
    return access && access !== 'expired' && access.clientId === clientId ? access.grantId : null;
  }
}
