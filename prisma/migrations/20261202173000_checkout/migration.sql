-- Checkouts: a buyer's lines, buyer, destination and choices with the totals the server computed,
-- the holds of its lines and its status. A cart is a checkout without a buyer yet. The lines are a
-- JSON column: a checkout is always read, computed and replaced whole (an update is a full
-- replace), no query looks into its lines, and one row write keeps each change atomic.
CREATE TABLE "checkouts" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "business_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "status" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "tax_inclusive" BOOLEAN NOT NULL,
    "buyer" JSONB,
    "destination" JSONB,
    "lines" JSONB NOT NULL DEFAULT '[]',
    "discount_codes" JSONB NOT NULL DEFAULT '[]',
    "fulfillment_option_id" TEXT,
    -- The fulfillment options offered at the last change, and the discounts applied then.
    "fulfillment_options" JSONB NOT NULL DEFAULT '[]',
    "applied_discounts" JSONB NOT NULL DEFAULT '[]',
    "payment" JSONB,
    "totals" JSONB NOT NULL,
    "tax_lines" JSONB NOT NULL DEFAULT '[]',
    "messages" JSONB NOT NULL DEFAULT '[]',
    -- Holds a change replaced, released once the change is written (kept here until then, so that
    -- a process stopped in between leaves them named by their checkout).
    "pending_releases" JSONB NOT NULL DEFAULT '[]',
    "order_id" UUID,
    "continue_url" TEXT,
    "version" INTEGER NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkouts_pkey" PRIMARY KEY ("tenant_id", "id"),
    CONSTRAINT "checkouts_status_check" CHECK ("status" IN ('incomplete', 'ready_for_complete',
        'complete_in_progress', 'completed', 'canceled', 'requires_escalation')),
    CONSTRAINT "checkouts_currency_check" CHECK ("currency" ~ '^[A-Z]{3}$'),
    CONSTRAINT "checkouts_completed_check" CHECK (("status" = 'completed') = ("order_id" IS NOT NULL))
);

-- Open checkouts past their expiry, for the sweep that marks them canceled.
CREATE INDEX "checkouts_status_expires_at_idx" ON "checkouts"("status", "expires_at");

ALTER TABLE "checkouts" ADD CONSTRAINT "checkouts_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
