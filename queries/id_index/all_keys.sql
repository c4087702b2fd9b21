-- all_keys: every key of the id index (both levels), to build the in-memory filter. Run on the
-- id index file. Parameters: none. Idempotent: yes (read-only).
SELECT id_key FROM event_ids
UNION ALL
SELECT id_key FROM recent_event_ids
