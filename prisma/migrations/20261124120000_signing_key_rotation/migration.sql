-- Signing key rotation: a key superseded by a newer one keeps verifying (and stays in the JWKS)
-- until `retire_at`, when every token it signed has expired; the housekeeping job then deletes it.
ALTER TABLE "oauth_signing_keys" ADD COLUMN "retire_at" TIMESTAMPTZ(3);
