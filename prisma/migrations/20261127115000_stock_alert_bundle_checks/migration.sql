-- The bundles whose level a transaction's writes of their components may have changed: written by
-- the ledger's statement trigger, read and deleted by the same transaction when it commits
-- (`check_bundle_stock_alerts`), so that no row outlives its transaction.
CREATE TABLE "stock_alert_bundle_checks" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "bundle_id" UUID NOT NULL,
    "warehouse_id" UUID NOT NULL,
    "mutation_id" UUID NOT NULL,
    "sequence" BIGINT NOT NULL,
    "transaction_id" BIGINT NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),

    CONSTRAINT "stock_alert_bundle_checks_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "stock_alert_bundle_checks_transaction_id_idx" ON "stock_alert_bundle_checks"("transaction_id");
