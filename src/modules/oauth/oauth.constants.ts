/**
 * The constants the tokens, their signing keys, their grants and the published metadata agree on:
 * how long each credential the authorization server issues lives, the signing algorithm, the
 * protected resources. One file that imports nothing, so that the files which use them never
 * import each other for a number.
 */

/** Lifetimes, in seconds. */
export const ACCESS_TOKEN_TTL = 3600;
export const ID_TOKEN_TTL = 3600;
export const REFRESH_TOKEN_TTL = 30 * 24 * 3600;
export const AUTHORIZATION_CODE_TTL = 60;

/** The JWS algorithm of every token and of the published signing keys. */
export const SIGNING_ALGORITHM = 'ES256';

/** How long a process signs with the key it loaded before it looks for a newer one (after a rotation elsewhere). */
export const CURRENT_KEY_RECHECK_MS = 30_000;

/**
 * How long a superseded key keeps verifying: the longest a token it signed lives, after the last
 * process that had it loaded stopped signing with it.
 */
export const RETIREMENT_DELAY_MS = Math.max(ACCESS_TOKEN_TTL, ID_TOKEN_TTL) * 1000 + 2 * CURRENT_KEY_RECHECK_MS;

/**
 * How long after its creation a client_credentials grant is deleted: its only access token was
 * issued with it and expires ACCESS_TOKEN_TTL later; the hour after that covers clocks of the
 * issuing process and the database that disagree. Until then the grant must stay, since a token
 * whose grant is missing is refused as revoked.
 */
export const CLIENT_CREDENTIALS_GRANT_LIFETIME_SECONDS = ACCESS_TOKEN_TTL + 3600;

/** The resources whose metadata is published, by path under the issuer. */
export const PROTECTED_RESOURCE_PATHS = ['', '/mcp'] as const;
