-- id_keys_in_range: the ids of the events with after < seq <= through, in seq order (the caller
-- derives each id's key, EventIdKey). Used to catch the id index up and to rebuild the
-- in-memory tail. Parameters (positional): after, through. Idempotent: yes (read-only).
SELECT event_id, seq FROM events WHERE seq > ? AND seq <= ? ORDER BY seq
