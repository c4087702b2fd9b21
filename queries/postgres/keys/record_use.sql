-- record_use: when a key was last used, never moved backwards (each daemon writes its own
-- sightings, at most once a minute per key).
-- Parameters: :id, :used_at_ms. Idempotent: yes.
UPDATE lp_access_keys SET last_used_at_ms = greatest(coalesce(last_used_at_ms, 0), :used_at_ms) WHERE id = :id
