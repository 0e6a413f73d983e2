import { AppError } from '../../kernel/errors';
import type { Authenticator } from '../auth';
import { hasScope, insufficientScope, type Scope } from '../../kernel/scopes';
import type { EdgeProxy } from './edge-proxy';
import type { EdgeRequest, EdgeResponse } from './edge.types';
import { headerTokens, headerValue } from './headers';
import type { EdgeAuthSettings } from './routing';

/**
 * Checks the bearer token of a route that needs one: a credential of the proxy's tenant with the
 * route's scope. A browser without a token is sent to the proxy's login page when it has one.
 */
export async function authorizeRoute(
  authenticator: Authenticator,
  proxy: EdgeProxy,
  auth: EdgeAuthSettings,
  request: EdgeRequest,
): Promise<EdgeResponse | null> {
  const header = headerValue(request.headers.authorization);
  if (header === undefined) {
    const login = proxy.oauth.authorize_url;
    if (login !== null && headerTokens(request.headers.accept).some((type) => type.startsWith('text/html'))) {
      const location = new URL(login);
      location.searchParams.set(
        proxy.oauth.return_url_key ?? 'return_url',
        `${request.protocol}://${request.host}${request.originalUrl}`,
      );
      return { status: 302, headers: { location: location.href, 'cache-control': 'no-store', 'x-cache': 'MISS' } };
    }
    throw new AppError('UNAUTHORIZED', 'this route needs a bearer token');
  }
  const principal = await authenticator.authenticate(header);
  if (principal.tenantId !== proxy.tenantId)
    throw new AppError('FORBIDDEN', 'the token belongs to another tenant than the proxy');
  if (auth.scope !== null && !hasScope(principal, auth.scope as Scope)) {
    throw insufficientScope(auth.scope, 'this route');
  }
  return null;
}
