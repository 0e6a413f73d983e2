-- Rate limits per credential, shared by every process: a tenant's own limit (requests per minute,
-- over RATE_LIMIT_PER_MINUTE), and the counters of rate-limiter-flexible's PostgreSQL store.
ALTER TABLE "tenants" ADD COLUMN "rate_limit_per_minute" INTEGER;
ALTER TABLE "tenants" ADD CONSTRAINT "tenants_rate_limit_per_minute_check" CHECK ("rate_limit_per_minute" > 0);

CREATE TABLE "rate_limits" (
    "key" VARCHAR(255) NOT NULL,
    "points" INTEGER NOT NULL DEFAULT 0,
    "expire" BIGINT,
    CONSTRAINT "rate_limits_pkey" PRIMARY KEY ("key")
);
