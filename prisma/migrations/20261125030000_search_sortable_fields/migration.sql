-- Fields a search may sort by (`sort` in a search context); empty means the default, every NUMBER
-- and BOOLEAN field.
ALTER TABLE "search_indexes" ADD COLUMN "sortable_fields" TEXT[] DEFAULT ARRAY[]::TEXT[];
