-- version: a number that changes whenever a key is created or revoked (keys are never
-- deleted and a revocation is never undone, so the sum only grows), and not when a key's
-- last use is written. Every daemon reads it every second and reloads the keys when it moved.
-- Parameters: none. Idempotent: yes (read-only).
SELECT count(*) + count(revoked_at_ms) FROM lp_access_keys
