-- Every process keeps the proxies it serves in memory. A proxy that is created, replaced or
-- deleted, by any code or with its tenant, is announced on channel `proxy_changed`: its key,
-- followed for a proxy that still exists by the id of the writing transaction (the row's xmin),
-- so that a process that has already read that version of the row keeps what it cached with it.
CREATE OR REPLACE FUNCTION "notify_proxy_changed"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.key <> NEW.key) THEN
        PERFORM pg_notify('proxy_changed', OLD.key);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM pg_notify('proxy_changed', NEW.key || ' ' || (txid_current() % 4294967296)::text);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER "proxies_notify_changed"
    AFTER INSERT OR UPDATE OR DELETE ON proxies
    FOR EACH ROW EXECUTE FUNCTION notify_proxy_changed();
