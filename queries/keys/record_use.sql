-- record_use: when a key was last used, never moved backwards (daemons write their own
-- sightings, each at most once a minute per key).
-- Parameters: :id, :used_at_ms. Idempotent: yes.
UPDATE access_keys SET last_used_at_ms = max(coalesce(last_used_at_ms, 0), :used_at_ms) WHERE id = :id
