-- key_count: how many keys the id index holds (to size the filter). Run on the id index file.
-- Parameters: none. Idempotent: yes (read-only).
SELECT count(*) FROM event_ids
