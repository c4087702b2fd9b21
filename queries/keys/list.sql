-- list: every stored access key, revoked ones included, oldest first.
-- Parameters: none. Idempotent: yes (read-only).
SELECT id, name, kind, digest, created_at_ms, last_used_at_ms, revoked_at_ms
FROM access_keys
ORDER BY created_at_ms, id
