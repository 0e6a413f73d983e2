-- The broadcast state of ledger rows (`status`, `messages`), which the broadcasts module keeps,
-- written here, by the ledger's one writer: the broadcasts' trigger marks the rows it queued
-- deliveries for (../../broadcasts/sql/queue-broadcasts.sql), and their deliveries record their
-- outcomes (`refreshSubject` in ../../broadcasts/broadcasts.repository.ts).
CREATE OR REPLACE FUNCTION "stock_mutations_mark_pending"(p_ids uuid[]) RETURNS void
LANGUAGE sql AS $$
    UPDATE stock_mutations SET status = 'PENDING' WHERE id = ANY(p_ids);
$$;

CREATE OR REPLACE FUNCTION "stock_mutation_broadcast_state"(p_id uuid, p_status text, p_messages jsonb) RETURNS void
LANGUAGE sql AS $$
    UPDATE stock_mutations SET status = p_status::stock_mutation_status, messages = p_messages WHERE id = p_id;
$$;
