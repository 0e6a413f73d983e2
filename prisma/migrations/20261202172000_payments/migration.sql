-- Payments: how each order with money was paid, its refunds, and the tenant's payment settings.
-- The payments module writes these tables; amounts are integers in the currency's minor units.
CREATE TYPE "payment_status" AS ENUM ('PENDING', 'AUTHORIZED', 'CAPTURED', 'VOIDED', 'REFUNDED', 'PARTIALLY_REFUNDED');

CREATE TABLE "payments" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "handler" TEXT NOT NULL,
    "reference" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "status" "payment_status" NOT NULL,
    "refunded_amount" BIGINT NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payments_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "payments_currency_check" CHECK ("currency" ~ '^[A-Z]{3}$'),
    CONSTRAINT "payments_amount_check" CHECK ("amount" >= 0),
    CONSTRAINT "payments_refunded_amount_check" CHECK ("refunded_amount" >= 0 AND "refunded_amount" <= "amount")
);
-- One payment per order.
CREATE UNIQUE INDEX "payments_tenant_id_order_id_key" ON "payments"("tenant_id", "order_id");
ALTER TABLE "payments" ADD CONSTRAINT "payments_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "payments" ADD CONSTRAINT "payments_tenant_id_order_id_fkey"
    FOREIGN KEY ("tenant_id", "order_id") REFERENCES "orders"("tenant_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "payment_refunds" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "payment_id" UUID NOT NULL,
    "amount" BIGINT NOT NULL,
    "reference" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payment_refunds_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "payment_refunds_amount_check" CHECK ("amount" > 0)
);
CREATE INDEX "payment_refunds_payment_id_idx" ON "payment_refunds"("payment_id");
ALTER TABLE "payment_refunds" ADD CONSTRAINT "payment_refunds_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "payment_refunds" ADD CONSTRAINT "payment_refunds_payment_id_fkey"
    FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The sandbox handler is off until the tenant switches it on.
CREATE TABLE "payment_settings" (
    "tenant_id" UUID NOT NULL,
    "sandbox_enabled" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payment_settings_pkey" PRIMARY KEY ("tenant_id")
);
ALTER TABLE "payment_settings" ADD CONSTRAINT "payment_settings_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A payment waiting for the buyer in a browser (a handler's redirect to a page of this service).
CREATE TYPE "payment_action_status" AS ENUM ('WAITING', 'APPROVED', 'DECLINED', 'USED');
CREATE TABLE "payment_actions" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "handler" TEXT NOT NULL,
    "checkout_id" UUID NOT NULL,
    "amount" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "status" "payment_action_status" NOT NULL DEFAULT 'WAITING',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "payment_actions_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "payment_actions_tenant_id_checkout_id_idx" ON "payment_actions"("tenant_id", "checkout_id");
ALTER TABLE "payment_actions" ADD CONSTRAINT "payment_actions_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Outbox of order events to the sales channel's webhook (the broadcasts module delivers and writes it).
CREATE TABLE "order_event_deliveries" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "type" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "status" "broadcast_status" NOT NULL DEFAULT 'PENDING',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "claimed_until" TIMESTAMPTZ(3),
    "last_message" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "order_event_deliveries_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "order_event_deliveries_status_next_attempt_at_idx" ON "order_event_deliveries"("status", "next_attempt_at");
CREATE INDEX "order_event_deliveries_tenant_id_order_id_idx" ON "order_event_deliveries"("tenant_id", "order_id");
ALTER TABLE "order_event_deliveries" ADD CONSTRAINT "order_event_deliveries_tenant_id_fkey"
    FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
