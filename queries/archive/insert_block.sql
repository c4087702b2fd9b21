-- insert_block: stores one sealed block. Parameters: first_seq, last_seq, row_count,
-- earliest_ms, latest_ms, data. Idempotent: no (run in the transaction that deletes its rows).
INSERT INTO event_blocks (first_seq, last_seq, row_count, earliest_ms, latest_ms, data) VALUES (:first_seq, :last_seq, :row_count, :earliest_ms, :latest_ms, :data)
