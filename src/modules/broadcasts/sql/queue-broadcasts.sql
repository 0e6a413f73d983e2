-- Every ledger row written is announced to each sales channel of its tenant with a webhook: one
-- delivery per row and channel, queued in the transaction that wrote the rows, whichever code
-- wrote them. A row with deliveries is PENDING until every channel accepted (the stock module,
-- the ledger's writer, marks it: ../../stock/sql/5-ledger-broadcasts.sql).
CREATE OR REPLACE FUNCTION "queue_stock_broadcasts"() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    queued_ids uuid[];
BEGIN
    WITH queued AS (
        INSERT INTO stock_broadcasts (id, tenant_id, mutation_id, channel_id)
        SELECT gen_random_uuid(), m.tenant_id, m.id, w.channel_id
          FROM written m
          JOIN channel_webhooks w ON w.tenant_id = m.tenant_id
          JOIN sales_channels c ON c.id = w.channel_id
        RETURNING mutation_id)
    SELECT array_agg(mutation_id) INTO queued_ids FROM queued;
    IF queued_ids IS NOT NULL THEN
        PERFORM stock_mutations_mark_pending(queued_ids);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER "stock_mutations_queue_broadcasts"
    AFTER INSERT ON stock_mutations REFERENCING NEW TABLE AS written
    FOR EACH STATEMENT EXECUTE FUNCTION queue_stock_broadcasts();
