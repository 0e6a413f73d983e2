-- The W3C trace context (`traceparent`) of the transaction that queued a delivery, so that the
-- delivery continues the trace of the request whose write caused it. With tracing on, the service
-- records the trace context of every transaction it begins inside a span in the transaction-local
-- setting `commerce.traceparent`; the triggers that queue deliveries leave the column to this
-- default. Null when tracing is off (the setting is then unset, or empty after an earlier use).
ALTER TABLE "stock_broadcasts"
    ADD COLUMN "traceparent" TEXT DEFAULT NULLIF(current_setting('commerce.traceparent', true), '');
