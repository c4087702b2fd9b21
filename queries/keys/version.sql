-- version: a number that changes whenever a key is created or revoked (keys are never
-- deleted and a revocation is never undone, so the sum only grows), and not when a key's
-- last use is written. Daemons read it every second and reload the keys when it moved.
-- Parameters: none. Idempotent: yes (read-only).
SELECT count(*) + count(revoked_at_ms) FROM access_keys
