import { AppError } from '../../kernel/errors';

/** The error codes of RFC 6749 (sections 4.1.2.1 and 5.2), RFC 7009 and RFC 8707 that this server answers. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  /** RFC 8707: a `resource` that is unknown, malformed or not allowed. */
  | 'invalid_target';

/** `WWW-Authenticate` of an invalid_client 401: the client authenticates with HTTP Basic. */
export const CLIENT_AUTH_CHALLENGE = 'Basic realm="oauth", error="invalid_client"';

/**
 * An OAuth error in the envelope: the RFC 6749 code leads the reason, so the message reads
 * `Bad request: ...; invalid_grant: <why>`. invalid_client is a 401, everything else a 400.
 */
export function oauthError(code: OAuthErrorCode, description: string): AppError {
  if (code === 'invalid_client') {
    return new AppError('UNAUTHORIZED', `${code}: ${description}`, {
      headers: { 'WWW-Authenticate': CLIENT_AUTH_CHALLENGE },
    });
  }
  return new AppError('BAD_REQUEST', `${code}: ${description}`);
}
