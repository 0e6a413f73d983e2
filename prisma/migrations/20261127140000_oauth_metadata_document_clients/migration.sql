-- Clients identified by a Client ID Metadata Document: their client_id is the document's https URL,
-- kept here with what the document last said. Like a self-registered client, such a client belongs
-- to no tenant.
ALTER TABLE "oauth_clients" ADD COLUMN "metadata_url" TEXT;
CREATE UNIQUE INDEX "oauth_clients_metadata_url_key" ON "oauth_clients"("metadata_url");
ALTER TABLE "oauth_clients" DROP CONSTRAINT "oauth_clients_owner_check";
ALTER TABLE "oauth_clients" ADD CONSTRAINT "oauth_clients_owner_check"
  CHECK ("tenant_id" IS NOT NULL OR "registration_token_hash" IS NOT NULL OR "metadata_url" IS NOT NULL);

-- Whether a tenant's users may approve such clients: yes unless the tenant says no (their
-- documents are fetched from the host that names them, unlike open registrations).
ALTER TABLE "oauth_tenant_settings" ADD COLUMN "metadata_document_clients_allowed" BOOLEAN NOT NULL DEFAULT true;
