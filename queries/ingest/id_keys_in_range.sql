-- id_keys_in_range: id keys of the events with after < seq <= through, in seq order. Used to
-- rebuild the writer's in-memory tail at start and to feed merges into the id index.
-- Parameters (positional): after, through. Idempotent: yes (read-only).
SELECT id_key, seq FROM events WHERE seq > ? AND seq <= ? ORDER BY seq
