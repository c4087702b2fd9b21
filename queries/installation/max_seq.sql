-- max_seq: the highest seq stored (NULL when there is no event). Run on the events database.
-- Parameters: none. Idempotent: yes (read-only).
SELECT max(seq) FROM event_rows
