-- Search: indexes and their documents, the search settings of a proxy key, and the searches and
-- clicks that analytics read.

CREATE TABLE "search_indexes" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "alias" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "source_id" TEXT,
    "source_type" TEXT NOT NULL,
    "fields" JSONB NOT NULL,
    "search_fields" TEXT[],
    "display_fields" TEXT[],
    "filters" JSONB NOT NULL,
    "facet_fields" TEXT[],
    "distinct_field" TEXT,
    "synonyms" JSONB NOT NULL,
    "stop_words" TEXT[],
    "ranking_rules" TEXT[],
    "seen_field_types" JSONB NOT NULL,
    "is_active" BOOLEAN NOT NULL DEFAULT true,
    "version" BIGINT NOT NULL DEFAULT 1,
    "rebuild_version" BIGINT NOT NULL DEFAULT 1,
    "processed_version" BIGINT NOT NULL DEFAULT 0,
    "last_processed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "search_indexes_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "search_indexes_tenant_id_alias_key" ON "search_indexes"("tenant_id", "alias");
ALTER TABLE "search_indexes" ADD CONSTRAINT "search_indexes_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "search_documents" (
    "index_id" UUID NOT NULL,
    "id" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "version" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "search_documents_pkey" PRIMARY KEY ("index_id", "id")
);
CREATE INDEX "search_documents_index_id_version_idx" ON "search_documents"("index_id", "version");
ALTER TABLE "search_documents" ADD CONSTRAINT "search_documents_index_id_fkey"
    FOREIGN KEY ("index_id") REFERENCES "search_indexes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "search_settings" (
    "proxy_key" TEXT NOT NULL,
    "tenant_id" UUID NOT NULL,
    "settings" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "search_settings_pkey" PRIMARY KEY ("proxy_key")
);
CREATE INDEX "search_settings_tenant_id_idx" ON "search_settings"("tenant_id");
ALTER TABLE "search_settings" ADD CONSTRAINT "search_settings_proxy_key_fkey"
    FOREIGN KEY ("proxy_key") REFERENCES "proxies"("key") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "search_settings" ADD CONSTRAINT "search_settings_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "search_queries" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "index_id" UUID NOT NULL,
    "query" TEXT NOT NULL,
    "result_count" INTEGER NOT NULL,
    "session_id" TEXT,
    "user_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "search_queries_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "search_queries_index_id_created_at_idx" ON "search_queries"("index_id", "created_at");
ALTER TABLE "search_queries" ADD CONSTRAINT "search_queries_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "search_queries" ADD CONSTRAINT "search_queries_index_id_fkey"
    FOREIGN KEY ("index_id") REFERENCES "search_indexes"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "search_clicks" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "index_id" UUID NOT NULL,
    "search_id" UUID NOT NULL,
    "document_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "search_clicks_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "search_clicks_index_id_created_at_idx" ON "search_clicks"("index_id", "created_at");
CREATE INDEX "search_clicks_search_id_idx" ON "search_clicks"("search_id");
ALTER TABLE "search_clicks" ADD CONSTRAINT "search_clicks_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "search_clicks" ADD CONSTRAINT "search_clicks_index_id_fkey"
    FOREIGN KEY ("index_id") REFERENCES "search_indexes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
