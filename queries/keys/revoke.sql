-- revoke: revokes a key; a key revoked already keeps its first revocation time.
-- Parameters: :id, :revoked_at_ms. Idempotent: yes.
UPDATE access_keys SET revoked_at_ms = coalesce(revoked_at_ms, :revoked_at_ms) WHERE id = :id
