-- Every process trusts a verified API key for a few seconds without asking the database. A key
-- that is revoked, or deleted with its tenant, is announced on channel `credentials_revoked` (its
-- id) whichever code changed it, so that every process forgets it at once.
CREATE OR REPLACE FUNCTION "notify_credential_revoked"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('credentials_revoked', OLD.id::text);
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER "api_keys_notify_revoked"
    AFTER UPDATE OF revoked_at OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notify_credential_revoked();
