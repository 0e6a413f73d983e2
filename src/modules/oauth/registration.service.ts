import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { writeTransaction, type Db } from '../../kernel/db';
import { isUuid, uuidv7 } from '../../kernel/ids';
import type { OAuthClient } from '../../__generated__/prisma/client';
import { bearerToken, secretMatchesHash, sha256 } from '../auth';
import * as repository from './oauth.repository';
import { AGENT_CLIENT_SCOPES } from './oauth.scopes';
import { REGISTERED_GRANT_TYPES, RegistrationMetadata, type AgentClientSettingsData } from './registration.schemas';

/** An RFC 7591 or RFC 7592 error, in the form those RFCs fix. */
export interface RegistrationErrorBody {
  error: 'invalid_redirect_uri' | 'invalid_client_metadata' | 'invalid_token';
  error_description: string;
}

export type RegistrationOutcome<T> =
  { ok: true; value: T } | { ok: false; status: 400 | 401; body: RegistrationErrorBody };

/** A stored hash that no token matches, compared against for unknown clients so both take as long. */
const UNKNOWN_TOKEN_HASH = new Uint8Array(32);

const refusedToken = (): RegistrationOutcome<never> => ({
  ok: false,
  status: 401,
  body: { error: 'invalid_token', error_description: 'the registration access token is missing or not valid' },
});

/** The first problem of a refused registration, as RFC 7591 section 3.2.2 names it. */
function registrationError(error: z.ZodError): RegistrationErrorBody {
  const issue = error.issues[0]!;
  const field = issue.path.map(String).join('.') || 'body';
  return {
    error: issue.path[0] === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata',
    error_description: `${field}: ${issue.message}`,
  };
}

/**
 * RFC 7591 dynamic client registration and RFC 7592 management: a public client (PKCE, no secret)
 * that belongs to no tenant; its tokens belong to the tenant of the user who approves it, when that
 * tenant allows such clients (`setAgentClientSettings`).
 */
export class RegistrationService {
  constructor(
    private readonly db: Db,
    private readonly issuer: string,
    /** Drops what the authenticator cached for a revoked grant. */
    private readonly forgetGrant: (grantId: string) => void,
  ) {}

  registrationUri(clientId: string) {
    return `${this.issuer}/api/oauth/register/${clientId}`;
  }

  /** Registers a client from RFC 7591 metadata; its registration access token is returned here only. */
  async register(body: unknown): Promise<RegistrationOutcome<ReturnType<RegistrationService['view']>>> {
    const parsed = RegistrationMetadata.safeParse(body ?? {});
    if (!parsed.success) return { ok: false, status: 400, body: registrationError(parsed.error) };
    const metadata = parsed.data;
    const redirectUris = [...new Set(metadata.redirect_uris)];
    const scopes = metadata.scope === undefined ? AGENT_CLIENT_SCOPES : [...new Set(metadata.scope.trim().split(/ +/))];
    const token = `crt_${randomBytes(32).toString('base64url')}`;
    const client = await repository.insertClient(this.db, {
      id: uuidv7(),
      tenantId: null,
      name: metadata.client_name ?? new URL(redirectUris[0]!).host,
      secretHash: null,
      isConfidential: false,
      redirectUris,
      scopes,
      resources: [],
      registrationTokenHash: sha256(token),
    });
    return { ok: true, value: this.view(client, token) };
  }

  /** RFC 7592 read: the registration, for the bearer of its registration access token. */
  async read(clientId: string, authorization: string | undefined) {
    const found = await this.authorized(clientId, authorization);
    return found ? { ok: true as const, value: this.view(found.client, found.token) } : refusedToken();
  }

  /** RFC 7592 delete: the client, its grants (every token stops working), codes, sessions and consents. */
  async delete(clientId: string, authorization: string | undefined): Promise<RegistrationOutcome<null>> {
    const found = await this.authorized(clientId, authorization);
    if (!found) return refusedToken();
    const grants = await writeTransaction(this.db, (tx) => repository.deleteRegisteredClient(tx, clientId));
    for (const grantId of grants ?? []) this.forgetGrant(grantId);
    return { ok: true, value: null };
  }

  /** Whether the tenant's users may approve self-registered clients, and clients identified by a metadata document. */
  async agentClientSettings(tenantId: string): Promise<AgentClientSettingsData> {
    const settings = await repository.findTenantSettings(this.db, tenantId);
    return {
      dynamic_clients_allowed: settings?.dynamicClientsAllowed ?? false,
      metadata_document_clients_allowed: settings?.metadataDocumentClientsAllowed ?? true,
    };
  }

  /**
   * Lets the tenant's users approve such clients, or stops them: then the grants those clients hold
   * from its users are revoked (their tokens stop working), their codes not exchanged yet are
   * dropped and the users' consents forgotten. Members left out stay as they are.
   */
  async setAgentClientSettings(tenantId: string, change: Partial<AgentClientSettingsData>) {
    const revoked = await writeTransaction(this.db, async (tx) => {
      await repository.upsertTenantSettings(tx, tenantId, {
        dynamicClientsAllowed: change.dynamic_clients_allowed,
        metadataDocumentClientsAllowed: change.metadata_document_clients_allowed,
      });
      const grants: string[] = [];
      if (change.dynamic_clients_allowed === false)
        grants.push(...(await repository.revokeAgentClientGrantsOfTenant(tx, tenantId, 'registered')));
      if (change.metadata_document_clients_allowed === false)
        grants.push(...(await repository.revokeAgentClientGrantsOfTenant(tx, tenantId, 'metadata-document')));
      return grants;
    });
    for (const grantId of revoked) this.forgetGrant(grantId);
    return this.agentClientSettings(tenantId);
  }

  /** The self-registered client the header's registration access token is for, or null (one answer for both). */
  private async authorized(clientId: string, authorization: string | undefined) {
    const token = bearerToken(authorization);
    const client = isUuid(clientId) ? await repository.findClient(this.db, clientId) : null;
    const hash = client?.tenantId === null ? client.registrationTokenHash : null;
    const matches = secretMatchesHash(token ?? '', hash ?? UNKNOWN_TOKEN_HASH);
    return client && hash && token && matches ? { client, token } : null;
  }

  private view(client: OAuthClient, token: string) {
    return {
      client_id: client.id,
      client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
      registration_access_token: token,
      registration_client_uri: this.registrationUri(client.id),
      client_name: client.name,
      redirect_uris: client.redirectUris,
      grant_types: [...REGISTERED_GRANT_TYPES],
      response_types: ['code'],
      token_endpoint_auth_method: 'none' as const,
      scope: client.scopes.join(' '),
    };
  }
}
