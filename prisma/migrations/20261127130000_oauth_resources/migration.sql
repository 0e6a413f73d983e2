-- RFC 8707 resource indicators: the resources a client may ask for (empty: every resource), and
-- those an authorization request, its code and its grant were made for (empty: none asked, so
-- tokens for the API as before).
ALTER TABLE "oauth_clients" ADD COLUMN "resources" TEXT[] DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "oauth_grants" ADD COLUMN "resources" TEXT[] DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "oauth_authorization_codes" ADD COLUMN "resources" TEXT[] DEFAULT ARRAY[]::TEXT[];
ALTER TABLE "oauth_authorization_sessions" ADD COLUMN "resources" TEXT[] DEFAULT ARRAY[]::TEXT[];
