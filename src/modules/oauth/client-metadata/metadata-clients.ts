/**
 * Clients identified by a Client ID Metadata Document: a `client_id` that is an https URL is a
 * public client (PKCE, no secret) described by the document at that URL. Each is kept as a row of
 * `oauth_clients` (id of its own, no tenant, `metadata_url` the URL) updated to what the document
 * says whenever an authorization fetches it, so codes, grants and consents refer to it as to any
 * client. Its tokens belong to the tenant of the user who approves it, when that tenant allows
 * such clients (the default).
 */
import { isUniqueViolation, type Db } from '../../../kernel/db';
import { uuidv7 } from '../../../kernel/ids';
import type { OAuthClient } from '../../../__generated__/prisma/client';
import { oauthError } from '../oauth.errors';
import { AGENT_CLIENT_SCOPES } from '../oauth.scopes';
import { ClientMetadataError, isClientIdUrl, type ClientMetadata } from './document';
import type { ClientMetadataDocuments } from './documents';

function scopesOf(metadata: ClientMetadata): string[] {
  if (metadata.scope === undefined) return [...AGENT_CLIENT_SCOPES];
  const asked = new Set(metadata.scope.trim().split(/\s+/));
  const scopes = AGENT_CLIENT_SCOPES.filter((scope) => asked.has(scope));
  if (scopes.length === 0)
    throw oauthError('invalid_request', "the client metadata document's scope names none of this server's scopes");
  return scopes;
}

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((value, i) => value === b[i]);

export { isClientIdUrl };

export class MetadataDocumentClients {
  constructor(
    private readonly db: Db,
    private readonly documents: ClientMetadataDocuments,
  ) {}

  /**
   * For an authorization request: the client as its document says now (fetched, or kept per its
   * caching). A document that cannot be used is an `invalid_request` saying why.
   */
  async fromDocument(url: string): Promise<OAuthClient> {
    let metadata: ClientMetadata;
    try {
      metadata = await this.documents.get(url);
    } catch (error) {
      if (error instanceof ClientMetadataError) throw oauthError('invalid_request', error.message);
      throw error;
    }
    const wanted = {
      name: metadata.client_name,
      redirectUris: [...new Set(metadata.redirect_uris)],
      scopes: scopesOf(metadata),
    };
    const stored = await this.stored(url);
    if (stored) {
      const unchanged =
        stored.name === wanted.name &&
        sameList(stored.redirectUris, wanted.redirectUris) &&
        sameList(stored.scopes, wanted.scopes);
      return unchanged ? stored : this.db.oAuthClient.update({ where: { id: stored.id }, data: wanted });
    }
    try {
      return await this.db.oAuthClient.create({
        data: {
          id: uuidv7(),
          tenantId: null,
          secretHash: null,
          isConfidential: false,
          resources: [],
          metadataUrl: url,
          ...wanted,
        },
      });
    } catch (error) {
      // Another authorization of the same client stored it first.
      if (!isUniqueViolation(error)) throw error;
      return this.fromDocument(url);
    }
  }

  /** For the token, revocation and introspection endpoints: the client stored for the URL, without fetching. */
  stored(url: string): Promise<OAuthClient | null> {
    return this.db.oAuthClient.findUnique({ where: { metadataUrl: url } });
  }
}
