-- block_of_seq: the sealed block whose seq range holds :seq, if any (the last to start at or before
-- it; the caller checks last_seq). Yields: id, last_seq, data. Idempotent: yes (read only).
SELECT id, last_seq, data FROM event_blocks WHERE first_seq <= :seq ORDER BY first_seq DESC LIMIT 1
