-- newest_hot_seq: the highest seq still in event_rows (0 when it is empty). Sealing never moves
-- that row: SQLite gives a new row the highest rowid plus one, so the newest row must stay for
-- the next event's seq to follow every seq ever given. Idempotent: yes (read only).
SELECT coalesce(max(seq), 0) FROM event_rows
