-- Search events a shop front end reports (`POST /api/instant/search/{key}/events`): views, clicks,
-- add-to-carts and conversions of the hits of a stored search. `search_id` has no foreign key: the
-- search is written in a batch and may not be stored yet when its events arrive. `index_id` is the
-- search's index when it was already stored at write time (so deleting the index deletes them),
-- null otherwise; analytics join the events to their searches and never read it.
CREATE TYPE "search_event_type" AS ENUM ('VIEW', 'CLICK', 'ADD_TO_CART', 'CONVERSION');

CREATE TABLE "search_events" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "index_id" UUID,
    "search_id" UUID NOT NULL,
    "type" "search_event_type" NOT NULL,
    "document_id" TEXT NOT NULL,
    "position" INTEGER,
    "session_id" TEXT,
    "value" DECIMAL(18,4),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "search_events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "search_events_search_id_idx" ON "search_events"("search_id");
CREATE INDEX "search_events_index_id_idx" ON "search_events"("index_id");
ALTER TABLE "search_events" ADD CONSTRAINT "search_events_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "search_events" ADD CONSTRAINT "search_events_index_id_fkey"
    FOREIGN KEY ("index_id") REFERENCES "search_indexes"("id") ON DELETE CASCADE ON UPDATE CASCADE;
