-- by_id: one stored key (no row: no such id).
-- Parameters: :id. Idempotent: yes (read-only).
SELECT id, name, kind, digest, created_at_ms, last_used_at_ms, revoked_at_ms
FROM access_keys
WHERE id = :id
