-- An OAuth grant that is revoked (revocation, a reused refresh token or code) or deleted with its
-- client or tenant is announced like a revoked API key, so that every process forgets the access
-- tokens it trusted under it at once.
CREATE OR REPLACE TRIGGER "oauth_grants_notify_revoked"
    AFTER UPDATE OF revoked_at OR DELETE ON oauth_grants
    FOR EACH ROW EXECUTE FUNCTION notify_credential_revoked();
