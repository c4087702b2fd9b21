-- id_keys_in_range: the ids of the events with after < seq <= through, in seq order (the caller
-- derives each id's key, EventIdKey). Used to catch the id index up and to rebuild the
-- in-memory tail. Parameters: after, through. Idempotent: yes (read-only).
-- The ids as stored (see migrations/0004: the caller gives them their text); sealed events
-- (event_archive) beside event_rows, merged in seq order.
SELECT event_id, seq FROM event_rows WHERE seq > :after_seq AND seq <= :through_seq
UNION ALL
SELECT event_id, seq FROM event_archive WHERE seq > :after_seq AND seq <= :through_seq
ORDER BY 2
