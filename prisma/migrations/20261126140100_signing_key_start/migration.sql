-- A rotated-in signing key is published in the JWKS before it signs: verifiers that cache the JWKS
-- learn it before they meet a token it signed.
ALTER TABLE "oauth_signing_keys" ADD COLUMN "signs_from" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;
