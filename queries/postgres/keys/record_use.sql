-- record_use: when a key was last used, never moved backwards (each daemon writes its own
-- sightings, at most once a minute per key).
-- Parameters: $1 id, $2 used_at_ms. Idempotent: yes.
UPDATE lp_access_keys SET last_used_at_ms = greatest(coalesce(last_used_at_ms, 0), $2) WHERE id = $1
