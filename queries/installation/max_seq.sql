-- max_seq: the highest seq stored (NULL when there is no event). Run on the events database.
-- Parameters: none. Idempotent: yes (read-only).
-- Sealed events (event_blocks) included.
SELECT nullif(max(coalesce((SELECT max(seq) FROM event_rows), 0), coalesce((SELECT max(last_seq) FROM event_blocks), 0)), 0)
