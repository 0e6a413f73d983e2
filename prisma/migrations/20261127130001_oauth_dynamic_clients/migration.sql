-- RFC 7591 dynamic client registration: a client that registered itself belongs to no tenant (its
-- tokens belong to the tenant of the user who approves it) and is managed with its registration
-- access token (RFC 7592), stored as its SHA-256. Every client without a tenant has one.
ALTER TABLE "oauth_clients" ALTER COLUMN "tenant_id" DROP NOT NULL;
ALTER TABLE "oauth_clients" ADD COLUMN "registration_token_hash" BYTEA;
ALTER TABLE "oauth_clients" ADD CONSTRAINT "oauth_clients_owner_check"
  CHECK ("tenant_id" IS NOT NULL OR "registration_token_hash" IS NOT NULL);
ALTER TABLE "oauth_clients" ADD CONSTRAINT "oauth_clients_registration_token_hash_check"
  CHECK ("registration_token_hash" IS NULL OR octet_length("registration_token_hash") = 32);

-- A tenant's choices about such clients; no row: the defaults (its users may not approve them).
CREATE TABLE "oauth_tenant_settings" (
    "tenant_id" UUID NOT NULL,
    "dynamic_clients_allowed" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "oauth_tenant_settings_pkey" PRIMARY KEY ("tenant_id")
);

ALTER TABLE "oauth_tenant_settings" ADD CONSTRAINT "oauth_tenant_settings_tenant_id_fkey"
  FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
