-- How an index matches words: exact fields, typo rules, token separators, indexed symbols and the
-- language whose stems are matched. Only the settings given are stored; the rest take their defaults.
ALTER TABLE "search_indexes" ADD COLUMN "matching" JSONB NOT NULL DEFAULT '{}';
