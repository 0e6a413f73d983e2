-- Orders that carry money: the buyer, the currency, the totals (integers in the currency's minor
-- units), the payment status, the fulfillment chosen and the checkout the order came from. Orders
-- made without money (createOrder, convertReservation) keep these columns null.
CREATE TYPE "order_payment_status" AS ENUM ('PENDING', 'AUTHORIZED', 'PAID', 'REFUNDED', 'CANCELED');

ALTER TABLE "orders"
    ADD COLUMN "checkout_id" UUID,
    ADD COLUMN "buyer_email" TEXT,
    ADD COLUMN "buyer_name" TEXT,
    ADD COLUMN "buyer_phone" TEXT,
    ADD COLUMN "currency" TEXT,
    ADD COLUMN "tax_inclusive" BOOLEAN,
    ADD COLUMN "subtotal" BIGINT,
    ADD COLUMN "discount_total" BIGINT,
    ADD COLUMN "fulfillment_total" BIGINT,
    ADD COLUMN "tax_total" BIGINT,
    ADD COLUMN "total" BIGINT,
    ADD COLUMN "tax_lines" JSONB,
    ADD COLUMN "discounts" JSONB,
    ADD COLUMN "payment_status" "order_payment_status",
    ADD COLUMN "fulfillment" JSONB,
    ADD COLUMN "destination" JSONB,
    ADD CONSTRAINT "orders_money_check" CHECK (
        ("currency" IS NULL AND "total" IS NULL AND "payment_status" IS NULL)
        OR ("currency" ~ '^[A-Z]{3}$' AND "subtotal" >= 0 AND "discount_total" >= 0 AND "fulfillment_total" >= 0
            AND "tax_total" >= 0 AND "total" >= 0 AND "payment_status" IS NOT NULL AND "tax_inclusive" IS NOT NULL));

-- One order per checkout.
CREATE UNIQUE INDEX "orders_tenant_id_checkout_id_key" ON "orders"("tenant_id", "checkout_id");

ALTER TABLE "order_items"
    ADD COLUMN "unit_price" BIGINT,
    ADD COLUMN "discount" BIGINT,
    ADD COLUMN "tax" BIGINT,
    ADD CONSTRAINT "order_items_money_check" CHECK (
        ("unit_price" IS NULL AND "discount" IS NULL AND "tax" IS NULL)
        OR ("unit_price" >= 0 AND "discount" >= 0 AND "tax" >= 0));
