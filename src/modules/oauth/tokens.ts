import { createHash, randomBytes } from 'node:crypto';
import { errors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { uuidv7 } from '../../kernel/ids';
import { knownResources } from './resources';
import type { SigningKeys } from './signing-keys';
import { ACCESS_TOKEN_TTL, ID_TOKEN_TTL, SIGNING_ALGORITHM } from './oauth.constants';

const ACCESS_TOKEN_TYPE = 'at+jwt';

/** What an access token says about its bearer. */
export interface AccessTokenGrant {
  tenantId: string;
  clientId: string;
  /** The signed-in user, or null for client_credentials (the client acts for itself). */
  userId: string | null;
  scopes: string[];
  /** The grant (rotation family) the token was issued under; revoking it revokes the token. */
  grantId: string;
  /** RFC 8707: the resources the token is for (its `aud`); none (or omitted) means the issuer, the API. */
  resources?: string[];
}

export interface VerifiedAccessToken extends Omit<AccessTokenGrant, 'resources'> {
  /** The token's `aud`: the resources that accept it. */
  audiences: string[];
  jti: string;
  subject: string;
  issuedAt: number;
  /** Unix seconds. */
  expiresAt: number;
}

/** A token's `aud`: one resource as a string, several as an array, the issuer when none were asked. */
export const audienceOf = (resources: string[], issuer: string): string | string[] =>
  resources.length === 0 ? issuer : resources.length === 1 ? resources[0]! : resources;

/** Random opaque secrets (authorization codes, refresh tokens) and the hash under which they are stored. */
export const opaqueToken = () => randomBytes(32).toString('base64url');
export const tokenHash = (token: string) => createHash('sha256').update(token).digest();

const claimsOf = (payload: JWTPayload): VerifiedAccessToken | null => {
  const { sub, jti, iat, exp, tenant_id, client_id, scope, sid, user_id, aud } = payload as Record<string, unknown>;
  const audiences =
    typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];
  if (typeof sub !== 'string' || typeof jti !== 'string' || typeof exp !== 'number' || typeof iat !== 'number')
    return null;
  if (
    typeof tenant_id !== 'string' ||
    typeof client_id !== 'string' ||
    typeof scope !== 'string' ||
    typeof sid !== 'string'
  )
    return null;
  return {
    subject: sub,
    jti,
    issuedAt: iat,
    expiresAt: exp,
    tenantId: tenant_id,
    clientId: client_id,
    userId: typeof user_id === 'string' ? user_id : null,
    scopes: scope === '' ? [] : scope.split(' '),
    grantId: sid,
    audiences,
  };
};

/**
 * Mints and verifies the signed JWTs: access tokens (RFC 9068 profile, `typ: at+jwt`, audience the
 * resources asked for with RFC 8707 `resource`, or the issuer itself when none were) and OpenID
 * Connect ID tokens (audience the client).
 */
export class TokenIssuer {
  /** The audiences an access token of this issuer may have: the resources it protects. */
  readonly resources: string[];

  constructor(
    private readonly keys: SigningKeys,
    readonly issuer: string,
  ) {
    this.resources = knownResources(issuer);
  }

  async accessToken(grant: AccessTokenGrant, options: { ttlSeconds?: number; now?: number } = {}) {
    const { kid, privateKey } = await this.keys.signingKey();
    const now = options.now ?? Math.floor(Date.now() / 1000);
    const expiresIn = options.ttlSeconds ?? ACCESS_TOKEN_TTL;
    const token = await new SignJWT({
      tenant_id: grant.tenantId,
      client_id: grant.clientId,
      ...(grant.userId ? { user_id: grant.userId } : {}),
      scope: grant.scopes.join(' '),
      sid: grant.grantId,
    })
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid, typ: ACCESS_TOKEN_TYPE })
      .setIssuer(this.issuer)
      .setAudience(audienceOf(grant.resources ?? [], this.issuer))
      .setSubject(grant.userId ?? grant.clientId)
      .setIssuedAt(now)
      .setExpirationTime(now + expiresIn)
      .setJti(uuidv7())
      .sign(privateKey);
    return { token, expiresIn };
  }

  async idToken(claims: { userId: string; clientId: string; tenantId: string; email: string; nonce: string | null }) {
    const { kid, privateKey } = await this.keys.signingKey();
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      email: claims.email,
      tenant_id: claims.tenantId,
      ...(claims.nonce !== null ? { nonce: claims.nonce } : {}),
    })
      .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid, typ: 'JWT' })
      .setIssuer(this.issuer)
      .setAudience(claims.clientId)
      .setSubject(claims.userId)
      .setIssuedAt(now)
      .setExpirationTime(now + ID_TOKEN_TTL)
      .sign(privateKey);
  }

  /**
   * Checks an access token's signature, issuer, audience and type, and its expiry unless
   * `allowExpired` (revocation accepts expired tokens). Null when it is not a valid access token;
   * `expired` when only its expiry fails.
   */
  async verifyAccessToken(
    token: string,
    options: { allowExpired?: boolean } = {},
  ): Promise<VerifiedAccessToken | null | 'expired'> {
    try {
      const { payload } = await jwtVerify(
        token,
        async (header) => {
          const key = await this.keys.verificationKey(header.kid);
          if (!key) throw new errors.JWKSNoMatchingKey();
          return key;
        },
        { issuer: this.issuer, audience: this.resources, typ: ACCESS_TOKEN_TYPE, algorithms: [SIGNING_ALGORITHM] },
      );
      return claimsOf(payload);
    } catch (error) {
      if (error instanceof errors.JWTExpired) return options.allowExpired ? claimsOf(error.payload) : 'expired';
      if (error instanceof errors.JOSEError) return null;
      throw error;
    }
  }
}
