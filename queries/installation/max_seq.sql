-- max_seq: the highest seq stored (NULL when there is no event). Run on the events database.
-- Sealing never moves the newest row out of event_rows (archive/newest_hot_seq.sql), so its
-- highest seq is the highest stored. Parameters: none. Idempotent: yes (read-only).
SELECT max(seq) FROM event_rows
