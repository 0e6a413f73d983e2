-- Sign-in throttling of the login page, shared by every process: one row per account (SHA-256 of
-- the e-mail address typed, whether or not a user of the tenant has it) and per client address
-- (SHA-256 of the address, an IPv6 one by its /64) of a tenant, counting sign-in attempts not known
-- to have succeeded within a window, and the lock they led to. Housekeeping deletes a row once
-- `expires_at` has passed (index on it), which also forgets how many locks it had.
CREATE TYPE "oauth_sign_in_throttle_kind" AS ENUM ('ACCOUNT', 'ADDRESS');

CREATE TABLE "oauth_sign_in_throttles" (
    "tenant_id" UUID NOT NULL,
    "kind" "oauth_sign_in_throttle_kind" NOT NULL,
    "subject_hash" BYTEA NOT NULL,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "locked_until" TIMESTAMPTZ(3),
    "lockouts" INTEGER NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "oauth_sign_in_throttles_pkey" PRIMARY KEY ("tenant_id", "kind", "subject_hash"),
    CONSTRAINT "oauth_sign_in_throttles_subject_hash_check" CHECK (octet_length("subject_hash") = 32),
    CONSTRAINT "oauth_sign_in_throttles_failures_check" CHECK ("failures" >= 0),
    CONSTRAINT "oauth_sign_in_throttles_lockouts_check" CHECK ("lockouts" >= 0)
);
CREATE INDEX "oauth_sign_in_throttles_expires_at_idx" ON "oauth_sign_in_throttles"("expires_at");
ALTER TABLE "oauth_sign_in_throttles" ADD CONSTRAINT "oauth_sign_in_throttles_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
