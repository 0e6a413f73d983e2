-- Search indexes with committed changes the search engine (Typesense) has not been sent yet: one row
-- per index, written in the transaction of its first undelivered change and deleted once the engine
-- holds the index's latest version. A row outlives its index (no foreign key): the index's alias and
-- collection are then dropped. A failed delivery is tried again at `next_attempt_at`, later after
-- each failure.
CREATE TABLE "search_deliveries" (
    "index_id" UUID NOT NULL,
    "pending_since" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_error" TEXT,
    CONSTRAINT "search_deliveries_pkey" PRIMARY KEY ("index_id")
);
CREATE INDEX "search_deliveries_next_attempt_at_idx" ON "search_deliveries"("next_attempt_at");

-- Changes whose delivery failed before this table existed waited for the index's next change; now
-- they are delivered like any other.
INSERT INTO "search_deliveries" ("index_id", "pending_since")
SELECT "id", coalesce("last_processed_at", "updated_at") FROM "search_indexes" WHERE "processed_version" < "version";
