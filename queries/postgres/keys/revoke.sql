-- revoke: revokes a key (a key revoked already keeps its first revocation time) and answers
-- it; no row: no such id.
-- Parameters: :id, :revoked_at_ms. Idempotent: yes.
UPDATE lp_access_keys SET revoked_at_ms = coalesce(revoked_at_ms, :revoked_at_ms) WHERE id = :id
RETURNING id, name, kind, digest, created_at_ms, last_used_at_ms, revoked_at_ms
