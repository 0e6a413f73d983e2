-- Merchandising rules of an index (`PUT /api/instant/indexes/{alias}/rules`): which documents a
-- matching search pins to positions or hides. Applied at query time; a change raises the version.
ALTER TABLE "search_indexes" ADD COLUMN "rules" JSONB NOT NULL DEFAULT '[]';
