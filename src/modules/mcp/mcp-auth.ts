/**
 * Who calls `/mcp`: the bearer credential of the request, verified by the authenticator as on the
 * REST and GraphQL API. A request without a valid credential is refused with a 401 whose
 * `WWW-Authenticate` challenge names the endpoint's protected resource metadata (RFC 9728), where
 * a client learns which authorization server to ask.
 */
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { errorBody } from '../../kernel/envelope';
import { AppError } from '../../kernel/errors';
import { HttpRefusal } from '../../kernel/mcp';
import type { Principal } from '../../kernel/principal';
import { bearerChallenge } from '../auth';
import type { Services } from '../context';

/** The path of the endpoint and of its protected resource metadata document. */
export const MCP_PATH = '/mcp';
export const resourceMetadataUrl = (services: Services) =>
  `${services.baseUrl}/.well-known/oauth-protected-resource${MCP_PATH}`;

/** What every operation of `/mcp` receives. */
export interface McpContext {
  principal: Principal;
  services: Services;
  log: FastifyBaseLogger;
}

/** The request's principal, or the 401 refusing it (with the challenge). */
export async function authenticateMcp(services: Services, request: FastifyRequest): Promise<McpContext | HttpRefusal> {
  const header = request.headers.authorization;
  try {
    const principal = await services.authenticator.authenticate(header, { resource: `${services.baseUrl}${MCP_PATH}` });
    return { principal, services, log: request.log };
  } catch (error) {
    if (!(error instanceof AppError) || error.key !== 'UNAUTHORIZED') throw error;
    return new HttpRefusal(401, errorBody(401, error.message), {
      'WWW-Authenticate': bearerChallenge(resourceMetadataUrl(services), header, services.mcpScopes),
    });
  }
}
