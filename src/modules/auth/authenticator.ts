import { LRUCache } from 'lru-cache';
import type { Db } from '../../kernel/db';
import { AppError } from '../../kernel/errors';
import { findApiKey } from './auth.repository';
import { bearerToken, parseApiKey, secretMatchesHash, secretsEqual } from './credentials';
import type { Principal } from '../../kernel/principal';

const unauthorized = (reason: string) => new AppError('UNAUTHORIZED', reason);

/** A stored hash that no secret matches, compared against when the key id is unknown. */
const UNKNOWN_KEY_HASH = new Uint8Array(32);

/** What an OAuth access token comes to once verified. */
export interface VerifiedBearer {
  principal: Principal;
  /** What revoking forgets. */
  grantId: string;
  /** Milliseconds. */
  expiresAt: number;
  /** The token's `aud` (RFC 8707 resources): only those resources accept it. */
  audiences: string[];
  /** The token's issuer, which is also the resource identifier of the REST and GraphQL API. */
  issuer: string;
}

/** Verifies OAuth access tokens (JWTs) locally; provided by the OAuth module. */
export interface AccessTokenVerifier {
  verify(token: string): Promise<VerifiedBearer>;
}

/** The notification channel of revoked API keys and OAuth grants (sql/notify-revoked-keys.sql): their id. */
export const CREDENTIALS_REVOKED_CHANNEL = 'credentials_revoked';

const jwtPattern = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export interface AuthenticateOptions {
  /**
   * The protected resource asking (RFC 8707 resource identifier, e.g. `${issuer}/mcp`): an OAuth
   * access token is accepted only when its audience includes it. Default: the REST and GraphQL API,
   * whose identifier is the issuer. API keys are the tenant's own credential and not bound to a resource.
   */
  resource?: string;
}

export interface Authenticator {
  /** Resolves the bearer credential of a request to its principal; throws UNAUTHORIZED otherwise. */
  authenticate(authorizationHeader: string | undefined, options?: AuthenticateOptions): Promise<Principal>;
  /** Whether the header carries the operator's master key (admin API only). */
  isMasterKey(authorizationHeader: string | undefined): boolean;
  /** Forgets any cached verdict for a key (or an OAuth grant's tokens), after it was revoked. */
  forget(keyId: string): void;
  /** Forgets every cached verdict for a tenant's credentials, after the tenant was deleted. */
  forgetTenant(tenantId: string): void;
  /** Forgets every cached verdict, when revocations may have been missed. */
  forgetAll(): void;
}

/**
 * The RFC 6750 / RFC 9728 challenge of a refused request to a protected resource: where the client
 * learns which authorization server to ask, and `invalid_token` when a credential was sent (none
 * when it was missing).
 */
export function bearerChallenge(
  resourceMetadataUrl: string,
  authorizationHeader: string | undefined,
  scopes: readonly string[] = [],
): string {
  const params = [`resource_metadata="${resourceMetadataUrl}"`];
  // The scopes the resource's operations need (RFC 6750): what an MCP client asks for first.
  if (scopes.length > 0) params.push(`scope="${scopes.join(' ')}"`);
  if (authorizationHeader) params.push('error="invalid_token"');
  return `Bearer ${params.join(', ')}`;
}

/**
 * Verified keys are remembered for `cacheTtlMs` (at least 1) so that a hot client costs one hash,
 * not one query, per request. A revocation is seen at once by the process that revoked, by the
 * others as soon as the database's notification arrives, and within the TTL should it be lost.
 */
export function createAuthenticator(
  db: Db,
  masterKey: string,
  options: {
    cacheTtlMs?: number;
    accessTokens?: AccessTokenVerifier;
    /** RFC 9728 metadata of the API: named in the challenge of every refusal (a 401). */
    resourceMetadataUrl?: string;
  } = {},
): Authenticator {
  const ttl = options.cacheTtlMs ?? 5_000;
  /** `audiences` and `issuer` for OAuth access tokens; null for API keys, which any resource accepts. */
  type Entry = { principal: Principal; keyId: string; audience: { audiences: string[]; issuer: string } | null };
  const cache = new LRUCache<string, Entry>({ max: 10_000, ttl });

  const challenged = (error: unknown, header: string | undefined): unknown => {
    if (!options.resourceMetadataUrl || !(error instanceof AppError) || error.key !== 'UNAUTHORIZED') return error;
    return new AppError('UNAUTHORIZED', error.reason, {
      details: error.details ?? undefined,
      headers: { ...error.headers, 'WWW-Authenticate': bearerChallenge(options.resourceMetadataUrl, header) },
    });
  };

  return {
    async authenticate(header, authenticateOptions = {}) {
      try {
        const entry = await verify(header);
        if (entry.audience) {
          const resource = authenticateOptions.resource ?? entry.audience.issuer;
          if (!entry.audience.audiences.includes(resource))
            throw unauthorized(
              `the access token is not for this resource (${resource}); ask for one with resource=${resource}`,
            );
        }
        return entry.principal;
      } catch (error) {
        throw challenged(error, header);
      }
    },
    isMasterKey(header) {
      const token = bearerToken(header);
      return token !== null && secretsEqual(token, masterKey);
    },
    forget(keyId) {
      // Copied first: lru-cache does not promise that iteration survives deletes.
      for (const [token, entry] of [...cache.entries()]) if (entry.keyId === keyId) cache.delete(token);
    },
    forgetTenant(tenantId) {
      for (const [token, entry] of [...cache.entries()]) if (entry.principal.tenantId === tenantId) cache.delete(token);
    },
    forgetAll() {
      cache.clear();
    },
  };

  async function verify(header: string | undefined): Promise<Entry> {
    if (!header) throw unauthorized('the Authorization header is missing');
    const token = bearerToken(header);
    if (!token) throw unauthorized('expected "Authorization: Bearer <token>"');
    const cached = cache.get(token);
    if (cached) return cached;
    if (options.accessTokens && jwtPattern.test(token)) {
      const verified = await options.accessTokens.verify(token);
      // A token is never trusted past its own expiry (a TTL of 0 would mean "no TTL" to lru-cache).
      const trustMs = Math.min(ttl, verified.expiresAt - Date.now());
      const entry: Entry = {
        principal: verified.principal,
        keyId: verified.grantId,
        audience: { audiences: verified.audiences, issuer: verified.issuer },
      };
      if (trustMs >= 1) cache.set(token, entry, { ttl: trustMs });
      return entry;
    }
    const parsed = parseApiKey(token);
    if (!parsed) throw unauthorized('the bearer token is not a valid credential');
    const row = await findApiKey(db, parsed.id);
    const matches = secretMatchesHash(parsed.secret, row?.secretHash ?? UNKNOWN_KEY_HASH);
    if (!row || !matches) throw unauthorized('the bearer token is not a valid credential');
    if (row.revokedAt) throw unauthorized('the API key has been revoked');
    const principal: Principal = {
      tenantId: row.tenantId,
      scopes: new Set(row.scopes),
      actor: { type: 'api_key', id: row.id },
    };
    const entry: Entry = { principal, keyId: row.id, audience: null };
    cache.set(token, entry);
    return entry;
  }
}
