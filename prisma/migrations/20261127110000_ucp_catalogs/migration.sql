-- The catalog a tenant offers to agents (UCP): which search index holds it and how a document of
-- that index reads as a product with one variant (the field of each product property).
CREATE TABLE "ucp_catalogs" (
    "tenant_id" UUID NOT NULL,
    "index_alias" TEXT NOT NULL,
    "mapping" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ucp_catalogs_pkey" PRIMARY KEY ("tenant_id")
);

ALTER TABLE "ucp_catalogs" ADD CONSTRAINT "ucp_catalogs_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
