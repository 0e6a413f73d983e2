-- Ids of documents deleted one by one (or by a filter), with the index version that deleted them:
-- a process catching its in-memory copy up reads these beside the documents written since its version.
-- A clear or a definition change rebuilds every copy, so it drops the index's rows here.
CREATE TABLE "search_document_deletions" (
    "index_id" UUID NOT NULL,
    "id" TEXT NOT NULL,
    "version" BIGINT NOT NULL,
    CONSTRAINT "search_document_deletions_pkey" PRIMARY KEY ("index_id", "id")
);
CREATE INDEX "search_document_deletions_index_id_version_idx" ON "search_document_deletions"("index_id", "version");
ALTER TABLE "search_document_deletions" ADD CONSTRAINT "search_document_deletions_index_id_fkey"
    FOREIGN KEY ("index_id") REFERENCES "search_indexes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
